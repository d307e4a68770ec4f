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
 * rdma_proto_write_rndv.c: Write-RNDV.  Per message:
 *
 *   sender                                     receiver
 *   RTS (SEND: seq, length)            ->      maps a buffer of that length, registers it and
 *                                              binds a memory window over it for
 *                                              REMOTE_WRITE (rdma_conn_window.h)
 *                                      <-      CTS (control: seq, address, the window's key)
 *   WRITE of the transmit buffer + notice
 *   (SEND: seq), chained: one doorbell ->      frees the window and deregisters the buffer
 *                                              (the key dies with the transfer) and delivers
 *                                              the message in it;
 *                                              unmaps it when the reader is done
 *
 * The sender waits for the CTS in send_message (rdma_conn_wait_for: deadlines, interrupts
 * and a vanished peer end the wait), so nothing else of this direction can pass the message
 * and the receiver delivers in order without more ado.  Nothing is pinned for a connection
 * that does not use it, and only one message's worth while one is on the way.  Buffers and
 * limits: rdma_rndv.h.
 */
#include "config.h"

#include "../rdma_status.h"
#include "rdma_rndv.h"

typedef struct
{
  RdmaRndvRx rx;
  guint32 tx_seq;    /* of the next message sent */
  gboolean awaiting; /* an RTS is out and its CTS not yet here */
  guint32 await_seq, await_len;
  gboolean cts; /* the CTS came: */
  guint64 cts_addr;
  guint32 cts_rkey;
} WriteRndv;

static gboolean
wr_setup (RdmaConn *conn, GError **error)
{
  conn->proto_state[RDMA_PROTO_WRITE_RNDV] = g_new0 (WriteRndv, 1);
  return TRUE;
}

static void
wr_teardown (RdmaConn *conn)
{
  WriteRndv *st = conn->proto_state[RDMA_PROTO_WRITE_RNDV];

  if (st == NULL)
    return;
  rdma_rndv_rx_clear (conn, &st->rx);
  g_free (st);
  conn->proto_state[RDMA_PROTO_WRITE_RNDV] = NULL;
}

static gboolean
cts_came (RdmaConn *conn, gpointer data)
{
  return ((WriteRndv *) data)->cts;
}

static gboolean
wr_send_message (RdmaConn *conn, RdmaTx *tx, gint64 deadline_us, GError **error)
{
  WriteRndv *st = conn->proto_state[RDMA_PROTO_WRITE_RNDV];
  RdmaRndvMsg m = { .kind = RDMA_RNDV_RTS, .seq = st->tx_seq, .len = (guint32) tx->len };
  struct ibv_sge sge, wsge;
  struct ibv_send_wr send, write;
  RdmaOp *op;
  gboolean ok;

  if (!rdma_rndv_wait_room (conn, 1, deadline_us, error))
    return FALSE;
  rdma_rndv_prepare_send (conn, &rdma_proto_write_rndv_ops, &m, &sge, &send);
  if (!rdma_conn_post_wr (conn, &send, "SEND (request-to-send)", error))
    return FALSE;
  st->tx_seq++;
  if (m.len == 0)
    return TRUE;

  st->awaiting = TRUE;
  st->await_seq = m.seq;
  st->await_len = m.len;
  st->cts = FALSE;
  ok = rdma_conn_wait_for (conn, cts_came, st, deadline_us, error);
  st->awaiting = FALSE;
  if (!ok)
    return FALSE;
  st->cts = FALSE;

  /* the payload straight from the transmit buffer, then the notice, in one post; the WRITE
   * is unsignalled: the notice's completion retires both and frees the buffer */
  if (!rdma_rndv_wait_room (conn, 2, deadline_us, error))
    return FALSE;
  m.kind = RDMA_RNDV_NOTIFY;
  op = rdma_rndv_prepare_send (conn, &rdma_proto_write_rndv_ops, &m, &sge, &send);
  op->tx = tx;
  wsge = (struct ibv_sge){
    .addr = (uintptr_t) tx->base,
    .length = m.len,
    .lkey = tx->mr->lkey,
  };
  write = (struct ibv_send_wr){
    .wr_id = rdma_op_wr_id (&conn->quiet_op),
    .next = &send,
    .sg_list = &wsge,
    .num_sge = 1,
    .opcode = IBV_WR_RDMA_WRITE,
    .wr.rdma = { .remote_addr = st->cts_addr, .rkey = st->cts_rkey },
  };
  return rdma_conn_post_wr (conn, &write, "WRITE + SEND (rendezvous)", error);
}

static gboolean
send_cts (RdmaConn *conn, RdmaRndvBuf *buf, guint32 rkey, GError **error)
{
  RdmaRndvMsg cts = { .kind = RDMA_RNDV_CTS,
                      .seq = buf->seq,
                      .len = buf->len,
                      .addr = (guint64) (guintptr) buf->base,
                      .rkey = rkey };

  return rdma_rndv_send_control (conn, &rdma_proto_write_rndv_ops, &cts, error);
}

static gboolean
window_bound (RdmaConn *conn, RdmaWindow *w, gpointer data, GError **error)
{
  return send_cts (conn, data, rdma_window_rkey (w), error);
}

/* Sets up buffers for waiting RTSs while the bytes held allow, and answers each with a CTS
 * (once its window is bound: the binds complete in order, so do the CTSs). */
static gboolean
kick (RdmaConn *conn, WriteRndv *st, GError **error)
{
  gboolean windows = rdma_window_supported (conn);
  RdmaRndvBuf *buf;

  while (conn->state == RDMA_CONN_CONNECTED && (buf = g_queue_peek_head (&st->rx.waiting)) != NULL
         && rdma_rndv_rx_may_map (conn, &st->rx, buf->len))
  {
    g_queue_push_tail (&st->rx.active, g_queue_pop_head (&st->rx.waiting));
    if (!rdma_rndv_rx_map (conn, &st->rx, buf,
                           IBV_ACCESS_LOCAL_WRITE
                               | (windows ? IBV_ACCESS_MW_BIND : IBV_ACCESS_REMOTE_WRITE),
                           error))
      return FALSE;
    if (windows ? !rdma_window_bind (conn, &buf->window, buf->mr, buf->base, buf->len,
                                     IBV_ACCESS_REMOTE_WRITE, window_bound, buf, error)
                : !send_cts (conn, buf, buf->mr->rkey, error))
      return FALSE;
  }
  return TRUE;
}

static gboolean
wr_on_receive (RdmaConn *conn, guint32 slot, const RdmaWireHeader *hdr, const guint8 *payload,
               GError **error)
{
  WriteRndv *st = conn->proto_state[RDMA_PROTO_WRITE_RNDV];
  RdmaRndvMsg m;
  RdmaRndvBuf *buf;

  if (!rdma_rndv_decode_send (&rdma_proto_write_rndv_ops, hdr, payload, &m, error))
    return FALSE;
  switch (m.kind)
  {
  case RDMA_RNDV_RTS:
    if (!rdma_rndv_rx_rts (conn, &rdma_proto_write_rndv_ops, &st->rx, slot, &m, &buf, error))
      return FALSE;
    if (buf == NULL)
      return TRUE;
    g_queue_push_tail (&st->rx.waiting, buf);
    return kick (conn, st, error);
  case RDMA_RNDV_NOTIFY:
    buf = g_queue_peek_head (&st->rx.active);
    if (buf == NULL || buf->seq != m.seq || buf->len != m.len)
    {
      rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                             "garbage framing: write_rndv notice for message %u (%u bytes), "
                             "no such write was cleared",
                             m.seq, m.len);
      return FALSE;
    }
    if (!rdma_conn_repost (conn, slot, TRUE, error))
      return FALSE;
    g_queue_push_tail (&st->rx.delivered, g_queue_pop_head (&st->rx.active));
    rdma_rndv_rx_unpin (conn, buf);
    rdma_conn_deliver (conn, &rdma_proto_write_rndv_ops, buf->base, buf->len, RDMA_MSG_IN_PROTO, -1,
                       (guint64) (guintptr) buf);
    return TRUE;
  default:
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: write_rndv message of kind %u", m.kind);
    return FALSE;
  }
}

static gboolean
wr_on_control (RdmaConn *conn, guint8 kind, const guint8 *payload, guint32 len, GError **error)
{
  WriteRndv *st = conn->proto_state[RDMA_PROTO_WRITE_RNDV];
  RdmaRndvMsg m;

  if (!rdma_rndv_decode (&rdma_proto_write_rndv_ops, payload, len, &m, error))
    return FALSE;
  if (kind != RDMA_RNDV_CTS || m.kind != kind || !st->awaiting || st->cts || m.seq != st->await_seq
      || m.len != st->await_len)
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: write_rndv control of kind %u for message %u "
                           "(%u bytes), unexpected now",
                           kind, m.seq, m.len);
    return FALSE;
  }
  st->cts_addr = m.addr;
  st->cts_rkey = m.rkey;
  st->cts = TRUE;
  return TRUE;
}

static gboolean
wr_release (RdmaConn *conn, guint8 *data, gsize len, guint64 token, GError **error)
{
  WriteRndv *st = conn->proto_state[RDMA_PROTO_WRITE_RNDV];

  rdma_rndv_rx_release (conn, &st->rx, token);
  return kick (conn, st, error);
}

const RdmaProtoOps rdma_proto_write_rndv_ops = {
  .name = "write_rndv",
  .id = RDMA_PROTO_WRITE_RNDV,
  .hint = THRIFT_HINT_PROTO_WRITE_RNDV,
  .setup = wr_setup,
  .teardown = wr_teardown,
  .send_message = wr_send_message,
  .on_receive = wr_on_receive,
  .on_control = wr_on_control,
  .release = wr_release,
};
