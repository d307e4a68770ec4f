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

/* rdma_write_send.c: WRITE into the direct ring, then SEND a notice (see rdma_write_send.h). */
#include "config.h"

#include "../rdma_ring.h"
#include "../rdma_status.h"
#include "rdma_write_send.h"

static gboolean
can_notify (RdmaConn *conn, gpointer data)
{
  return conn->credits.send > 0 && conn->send_pool.n_free > 0
         && conn->sq_used + 2 <= conn->sq_depth;
}

gboolean
rdma_write_send_message (RdmaConn *conn, const RdmaProtoOps *ops, gboolean chained, RdmaTx *tx,
                         gint64 deadline_us, GError **error)
{
  gsize len = tx->len, off = 0;

  do
  {
    guint64 raddr;
    guint32 rkey, n, slot;
    guint8 flags;
    struct ibv_sge sge;
    struct ibv_send_wr write;
    RdmaOp *op;

    if (!rdma_ring_tx_place (conn, len - off, deadline_us, &raddr, &rkey, &n, error))
      return FALSE;
    if (!rdma_conn_wait_for (conn, can_notify, NULL, deadline_us, error))
      return FALSE;
    flags = (off == 0 ? RDMA_WIRE_FIRST : 0) | (off + n == len ? RDMA_WIRE_LAST : 0);
    rdma_credit_take (&conn->credits);
    rdma_pool_get (&conn->send_pool, &slot);
    rdma_conn_header (conn, rdma_pool_slot (&conn->send_pool, slot), ops->id, RDMA_WIRE_RING, flags,
                      n, (guint32) len);
    op = &conn->send_ops[slot];
    *op = (RdmaOp){ .kind = RDMA_OP_SEND, .proto = ops->id, .slot = slot, .tx = tx };
    {
      struct ibv_sge hsge = {
        .addr = (uintptr_t) rdma_pool_slot (&conn->send_pool, slot),
        .length = RDMA_WIRE_HEADER_SIZE,
        .lkey = conn->send_pool.mr->lkey,
      };
      struct ibv_send_wr send = {
        .wr_id = rdma_op_wr_id (op),
        .sg_list = &hsge,
        .num_sge = 1,
        .opcode = IBV_WR_SEND,
        .send_flags = IBV_SEND_SIGNALED,
      };

      sge = (struct ibv_sge){
        .addr = (uintptr_t) (tx->base + off),
        .length = n,
        .lkey = tx->mr->lkey,
      };
      write = (struct ibv_send_wr){
        .wr_id = rdma_op_wr_id (&conn->quiet_op),
        .sg_list = &sge,
        .num_sge = 1,
        .opcode = IBV_WR_RDMA_WRITE,
        .wr.rdma = { .remote_addr = raddr, .rkey = rkey },
      };
      if (n == 0)
      {
        /* nothing to write: the notice alone */
        if (!rdma_conn_post_wr (conn, &send, "SEND (ring notice)", error))
          return FALSE;
      }
      else if (chained)
      {
        write.next = &send;
        if (!rdma_conn_post_wr (conn, &write, "WRITE + SEND", error))
          return FALSE;
      }
      else if (!rdma_conn_post_wr (conn, &write, "WRITE", error)
               || !rdma_conn_post_wr (conn, &send, "SEND (ring notice)", error))
      {
        return FALSE;
      }
    }
    off += n;
  } while (off < len);
  return TRUE;
}

gboolean
rdma_write_send_on_receive (RdmaConn *conn, const RdmaProtoOps *ops, guint32 slot,
                            const RdmaWireHeader *hdr, GError **error)
{
  if (hdr->type != RDMA_WIRE_RING)
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: message type %u for %s", hdr->type, ops->name);
    return FALSE;
  }
  /* the notice's slot holds nothing more: it goes back at once */
  if (!rdma_conn_repost (conn, slot, TRUE, error))
    return FALSE;
  return rdma_ring_rx_chunk (conn, ops, hdr->frag_len, (hdr->flags & RDMA_WIRE_LAST) != 0, error);
}
