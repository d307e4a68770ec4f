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
 * rdma_keepalive.h: noticing a peer that vanished without a disconnect (its host or link went
 * down, or every packet is lost).  Nothing tells a side that only waits to receive: its QP
 * has nothing in flight, so no retransmission ever fails.  So once the peer has been quiet
 * for a quarter of settings.keepalive_ms, a side posts a probe, a zero-byte RDMA WRITE: the
 * peer's adapter acknowledges it without its software and without a receive slot (a
 * zero-length RDMA operation needs no memory key, IBTA C9-88).  A probe that is not
 * acknowledged within another quarter means the peer is gone, whatever the QP's retries do
 * (soft-RoCE keeps a probe to an unroutable peer pending without ever failing it).  A
 * vanished peer is so noticed between half and three quarters of keepalive_ms after its last
 * sign of life.  Silence alone proves nothing (a side that did not wait for a long time has
 * an old last sign of life): only an unanswered probe does.  Waits wake up for the ticks
 * (rdma_keepalive_due), and the clock is read only there: a completion just sets
 * conn->alive_seen, so completions must be taken before a tick judges.
 */
#ifndef _RDMA_KEEPALIVE_H
#define _RDMA_KEEPALIVE_H

#include <glib.h>

#include "rdma_conn.h"

G_BEGIN_DECLS

/* Starts the keepalive of a connection that just became CONNECTED. */
void rdma_keepalive_start (RdmaConn *conn, gint64 now);
/* Changes the keepalive of an open connection (0: none). */
void rdma_keepalive_set (RdmaConn *conn, guint keepalive_ms, gint64 now);
/* When the connection's next tick is due (monotonic us), or 0 if it has none. */
gint64 rdma_keepalive_due (const RdmaConn *conn);
/* Runs a tick: FALSE with @error (the connection failed) if the peer is dead. */
gboolean rdma_keepalive_tick (RdmaConn *conn, gint64 now, GError **error);
/* The probe completed successfully. */
void rdma_keepalive_probe_done (RdmaConn *conn);

G_END_DECLS

#endif
