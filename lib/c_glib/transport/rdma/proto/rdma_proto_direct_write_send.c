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
 * rdma_proto_direct_write_send.c: Direct-Write-Send: a WRITE into the peer's direct ring,
 * then a SEND that says it is there, as two posts (two doorbells).  See rdma_write_send.h.
 */
#include "config.h"

#include "../rdma_ring.h"
#include "rdma_write_send.h"

static gboolean
send_message (RdmaConn *conn, RdmaTx *tx, gint64 deadline_us, GError **error)
{
  return rdma_write_send_message (conn, &rdma_proto_direct_write_send_ops, FALSE, tx, deadline_us,
                                  error);
}

static gboolean
on_receive (RdmaConn *conn, guint32 slot, const RdmaWireHeader *hdr, const guint8 *payload,
            GError **error)
{
  return rdma_write_send_on_receive (conn, &rdma_proto_direct_write_send_ops, slot, hdr, error);
}

const RdmaProtoOps rdma_proto_direct_write_send_ops = {
  .name = "direct_write_send",
  .id = RDMA_PROTO_DIRECT_WRITE_SEND,
  .hint = THRIFT_HINT_PROTO_DIRECT_WRITE_SEND,
  .open = rdma_ring_tx_open,
  .send_message = send_message,
  .on_receive = on_receive,
  .release = rdma_ring_release,
};
