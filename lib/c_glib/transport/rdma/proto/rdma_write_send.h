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
 * rdma_write_send.h: what Direct-Write-Send and Chained-Write-Send share.  Both WRITE a chunk
 * into the peer's direct ring (rdma_ring.h) and then SEND a header-only notice
 * (RDMA_WIRE_RING) into a receive slot; Chained-Write-Send posts the two as one chained list
 * (one doorbell), Direct-Write-Send as two posts.  The WRITE is unsignalled: the SEND's
 * completion retires it.
 */
#ifndef _RDMA_WRITE_SEND_H
#define _RDMA_WRITE_SEND_H

#include "../rdma_conn_private.h"

G_BEGIN_DECLS

gboolean rdma_write_send_message (RdmaConn *conn, const RdmaProtoOps *ops, gboolean chained,
                                  RdmaTx *tx, gint64 deadline_us, GError **error);
gboolean rdma_write_send_on_receive (RdmaConn *conn, const RdmaProtoOps *ops, guint32 slot,
                                     const RdmaWireHeader *hdr, GError **error);

G_END_DECLS

#endif
