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

/* rdma_proto_rfp.h: what tests can see of RFP's state (see rdma_proto_rfp.c). */
#ifndef _RDMA_PROTO_RFP_H
#define _RDMA_PROTO_RFP_H

#include <glib.h>

#include "../rdma_conn_private.h"

G_BEGIN_DECLS

typedef struct
{
  gboolean peer_known; /* the peer advertised its response region */
  guint64 peer_addr;   /* ... and where it is */
  guint32 peer_rkey;
  guint32 peer_size;
  gboolean fetching_body; /* a READ of a message's body is in flight */
  gsize region_size;      /* this side's own region (0: none yet) */
  gboolean retired;       /* an outgrown region of this side's is still registered */
} RdmaRfpInfo;

void rdma_proto_rfp_info (RdmaConn *conn, RdmaRfpInfo *out);
/* Whether the peer asked for every RFP message of ours to be announced (RFP_NOTIFY): it does
 * not poll for them, its waits may block. */
gboolean rdma_proto_rfp_peer_announced (RdmaConn *conn);

G_END_DECLS

#endif
