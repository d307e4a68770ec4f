/*
 * Copyright 2026 The thrift-c-glib-rdma authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file
 * except in compliance with the License. You may obtain a copy of the License at
 *
 *   http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software distributed under the
 * License is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND,
 * either express or implied. See the License for the specific language governing permissions
 * and limitations under the License.
 */

/*
 * rdma_helper.h: what the connection's helpers (the direct ring, bulk lending, the keepalive)
 * plug into it, as the protocols do through rdma_proto.h (engine-internal).  The connection
 * reaches a helper only through its const table, in the NULL-terminated rdma_helpers list,
 * and includes none of the helpers' headers: the helpers use the connection, the connection
 * does not know them (test/unit/layering.sh).  Every slot may be NULL.
 */
#ifndef _RDMA_HELPER_H
#define _RDMA_HELPER_H

#include <glib.h>

/* RdmaConn from rdma_op.h, as for the protocols: the table does not depend on the connection */
#include "rdma_op.h"

G_BEGIN_DECLS

typedef struct
{
  const gchar *name;
  /* Engine control messages (RDMA_WIRE_PROTO_ENGINE) of kind @kind are the helper's... */
  gboolean (*owns_control) (guint8 kind);
  /* ... and handled here: FALSE with @error fails the connection. */
  gboolean (*control) (RdmaConn *conn, guint8 kind, const guint8 *payload, guint32 len,
                       GError **error);
  /* The connection is up. */
  void (*connected) (RdmaConn *conn, gint64 now);
  /* Its next timer (monotonic us; 0: none), and running it (FALSE with @error fails the
   * wait). */
  gint64 (*due) (RdmaConn *conn);
  gboolean (*tick) (RdmaConn *conn, gint64 now, GError **error);
  /* A probe (RDMA_OP_PROBE) completed. */
  void (*probe_done) (RdmaConn *conn);
  /* The header's "freed" count: what this side reports in each header it writes (at most
   * @max), whether it must report by a message of its own, and what the peer reported. */
  guint (*take_freed) (RdmaConn *conn, guint max);
  gboolean (*need_report) (RdmaConn *conn);
  gboolean (*peer_freed) (RdmaConn *conn, guint n, GError **error);
  /* The connection goes: its state goes too (after the QP). */
  void (*free) (RdmaConn *conn);
} RdmaHelperOps;

/* The helpers, NULL-terminated. */
extern const RdmaHelperOps *const rdma_helpers[];

/* The connection's uses of them, each over the list: */
gboolean rdma_helpers_control (RdmaConn *conn, guint8 kind, const guint8 *payload, guint32 len,
                               GError **error);
void rdma_helpers_connected (RdmaConn *conn, gint64 now);
gint64 rdma_helpers_due (RdmaConn *conn); /* the earliest, 0 for none */
gboolean rdma_helpers_tick (RdmaConn *conn, gint64 now, GError **error);
void rdma_helpers_probe_done (RdmaConn *conn);
guint rdma_helpers_take_freed (RdmaConn *conn, guint max);
gboolean rdma_helpers_need_report (RdmaConn *conn);
gboolean rdma_helpers_peer_freed (RdmaConn *conn, guint n, GError **error);
void rdma_helpers_free (RdmaConn *conn);

G_END_DECLS

#endif
