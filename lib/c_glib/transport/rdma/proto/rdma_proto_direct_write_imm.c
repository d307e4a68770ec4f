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
 * rdma_proto_direct_write_imm.c: Direct-WriteIMM.  One RDMA WRITE_WITH_IMM per chunk into the
 * peer's direct ring (rdma_ring.h): no SEND, no header.  The immediate says how much (the
 * place follows from the lengths) and whether the chunk ends the message, and returns credits
 * and freed ring chunks to the peer, so a ping-pong of small messages needs no other message:
 *
 *   bits 31..29  RDMA_PROTO_DIRECT_WRITE_IMM     bits 27..24  credits returned (0..15)
 *   bit  28      last chunk of the message       bits 23..20  ring chunks freed (0..15)
 *   bits 19..0   chunk length (RDMA_RING_MAX_CHUNK)
 *
 * The WRITE consumes a receive slot of the peer, so it takes a credit like a SEND.
 */
#include "config.h"

#include <arpa/inet.h>

#include "../rdma_conn_private.h"
#include "../rdma_ring.h"
#include "../rdma_status.h"

#define IMM_LAST (1u << 28)
#define IMM_CREDITS(rest) (((rest) >> 24) & 0xfu)
#define IMM_FREED(rest) (((rest) >> 20) & 0xfu)
#define IMM_LEN(rest) ((rest) &0xfffffu)

static gboolean
can_write (RdmaConn *conn, gpointer data)
{
  return conn->credits.send > 0 && conn->sq_used + 1 <= conn->sq_depth;
}

static gboolean
dwi_send_message (RdmaConn *conn, RdmaTx *tx, gint64 deadline_us, GError **error)
{
  gsize len = tx->len, off = 0;

  do
  {
    guint64 raddr;
    guint32 rkey, n, rest;
    struct ibv_sge sge;
    struct ibv_send_wr wr;
    RdmaOp *op;

    if (!rdma_conn_wait_for (conn, can_write, NULL, deadline_us, error))
      return FALSE;
    if (!rdma_ring_tx_place (conn, len - off, deadline_us, &raddr, &rkey, &n, error))
      return FALSE;
    /* the wait for room may have used the credit or the queue entry */
    if (!rdma_conn_wait_for (conn, can_write, NULL, deadline_us, error))
      return FALSE;
    rdma_credit_take (&conn->credits);
    rest = (off + n == len ? IMM_LAST : 0) | (rdma_credit_piggyback_max (&conn->credits, 15) << 24)
           | (rdma_ring_take_freed (conn, 15) << 20) | n;
    op = rdma_conn_op_get (conn, RDMA_OP_WRITE, RDMA_PROTO_DIRECT_WRITE_IMM);
    op->tx = tx;
    sge = (struct ibv_sge){
      .addr = (uintptr_t) (tx->base + off),
      .length = n,
      .lkey = tx->mr->lkey,
    };
    wr = (struct ibv_send_wr){
      .wr_id = rdma_op_wr_id (op),
      .sg_list = &sge,
      .num_sge = n > 0 ? 1 : 0,
      .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
      .send_flags = IBV_SEND_SIGNALED,
      .imm_data = htonl (RDMA_IMM_MAKE (RDMA_PROTO_DIRECT_WRITE_IMM, rest)),
      .wr.rdma = { .remote_addr = raddr, .rkey = rkey },
    };
    if (!rdma_conn_post_wr (conn, &wr, "WRITE_WITH_IMM", error))
      return FALSE;
    off += n;
  } while (off < len);
  return TRUE;
}

static gboolean
dwi_on_imm (RdmaConn *conn, guint32 imm, guint32 byte_len, GError **error)
{
  guint32 rest = RDMA_IMM_REST (imm);

  if (byte_len != IMM_LEN (rest))
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: a write with immediate announces %u bytes, %u "
                           "arrived",
                           IMM_LEN (rest), byte_len);
    return FALSE;
  }
  if (!rdma_credit_grant (&conn->credits, IMM_CREDITS (rest)))
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: the peer returns %u credits, only %u are "
                           "outstanding",
                           IMM_CREDITS (rest), conn->credits.in_flight);
    return FALSE;
  }
  if (IMM_FREED (rest) > 0 && !rdma_ring_tx_freed (conn, IMM_FREED (rest), error))
    return FALSE;
  return rdma_ring_rx_chunk (conn, &rdma_proto_direct_write_imm_ops, IMM_LEN (rest),
                             (rest & IMM_LAST) != 0, error);
}

const RdmaProtoOps rdma_proto_direct_write_imm_ops = {
  .name = "direct_write_imm",
  .id = RDMA_PROTO_DIRECT_WRITE_IMM,
  .hint = THRIFT_HINT_PROTO_DIRECT_WRITE_IMM,
  .open = rdma_ring_tx_open,
  .send_message = dwi_send_message,
  .on_imm = dwi_on_imm,
  .release = rdma_ring_release,
};
