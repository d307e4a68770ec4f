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
 * rdma_proto_read_rndv.c: Read-RNDV.  Per message:
 *
 *   sender                                     receiver
 *   RTS (SEND: seq, length, address, key) ->   takes the message's place in the received
 *                                              queue, maps and registers a buffer, READs
 *                                 (READ)  <-   the bytes into it
 *                                      <-      DONE (control: seq); the message is readable
 *   frees the transmit buffer
 *
 * The key is one memory window per transmit buffer (rdma_conn_window.h), over the whole of a
 * registration of it made at its first message and kept while the buffer is (the buffer's
 * own stays LOCAL_WRITE); a device without windows gives the registration REMOTE_READ.  A key per
 * message cost a registration and a deregistration per message, and a key deregistered after
 * its DONE could be reached by a retransmitted READ (see Key).  The peer may so read more of
 * the buffer than the message, for as long as the connection lives: bytes sent to it, or
 * being written for it, only.
 *
 * send_message returns once the RTS is posted: the transmit buffer stays busy (tx->busy) until
 * the DONE, so the next message goes into the other one and the one after waits for the DONE
 * in rdma_conn_tx_begin (rdma_conn_wait_for: deadlines, interrupts and a vanished peer end the
 * wait).  Two messages may so be on the way in one direction; the receiver READs them in RTS
 * order, at most conn->max_rd_atomic at a time, one READ per message, and answers in that
 * order.  The message's place in the received queue is taken when its RTS arrives, so a
 * message of another protocol sent after it is not read before it.  Buffers and limits:
 * rdma_rndv.h.
 */
#include "config.h"

#include "../rdma_conn_window.h"
#include "../rdma_resources.h"
#include "../rdma_status.h"
#include "rdma_rndv.h"

/* The bytes of one READ.  Its responses come back as one burst, unpaced: soft-RoCE under
 * emulation drops bursts of about a MiB (the READ then starts again after the ACK timeout:
 * 1 MiB took 1.3 s in one READ, 0.2 s in 256 KiB ones), and a message larger than one chunk
 * is read in several, conn->max_rd_atomic at a time. */
#define RDMA_RNDV_READ_CHUNK (256u << 10)

/* A transmit buffer the peer may read. */
typedef struct
{
  guint32 seq;
  RdmaTx *tx;
} Lent;

/* The peer's way into one transmit buffer.  A retransmitted READ can reach our device after
 * the DONE that ended its message: soft-RoCE re-checks the key of every response packet after
 * the first and of a duplicate READ (rxe_recheck_mr, Linux 6.1), and a dead key puts the QP in
 * error; under the throughput load in the guest one did, with the key of a message kept until
 * the next DONE.  A key that lives as long as its buffer leaves no such window but at the
 * buffer's growth, when the old one is deregistered at the next DONE. */
typedef struct
{
  guint8 *base;
  gsize cap;
  struct ibv_mr *mr;  /* (owned) (nullable): over base, cap bytes */
  RdmaWindow *window; /* REMOTE_READ over all of it (with windows) */
} Key;

typedef struct
{
  RdmaRndvRx rx;
  guint reads;     /* READs posted and not completed */
  guint32 tx_seq;  /* of the next message sent */
  GQueue lent;     /* Lent (owned), oldest first */
  Key keys[2];     /* one per transmit buffer of the connection (conn->tx) */
  GSList *retired; /* (owned) Key: keys of buffers replaced since the last DONE */
} ReadRndv;

static void
key_clear (RdmaConn *conn, Key *k)
{
  /* the window first: a registration with a bound window cannot be deregistered */
  rdma_window_free (conn, &k->window);
  rdma_res_mr_dereg (&k->mr);
}

static void
dereg_retired (RdmaConn *conn, ReadRndv *st)
{
  while (st->retired != NULL)
  {
    Key *k = st->retired->data;

    key_clear (conn, k);
    g_free (k);
    st->retired = g_slist_delete_link (st->retired, st->retired);
  }
}

/* The key of @tx's buffer as it is now (registered at its first message, or again after it
 * grew) into @rkey.  FALSE with @error. */
static gboolean
key_for (RdmaConn *conn, ReadRndv *st, RdmaTx *tx, gint64 deadline_us, guint32 *rkey,
         GError **error)
{
  Key *k = &st->keys[tx == &conn->tx[0] ? 0 : 1];
  gboolean windows = rdma_window_supported (conn);

  if (k->mr == NULL || k->base != tx->base || k->cap != tx->cap || rdma_window_pending (k->window))
  {
    if (rdma_window_pending (k->window))
      rdma_window_free (conn, &k->window); /* never given out: its bind did not complete */
    if (k->mr != NULL)
      st->retired = g_slist_prepend (st->retired, g_memdup2 (k, sizeof *k));
    memset (k, 0, sizeof *k);
    k->mr = rdma_res_mr_reg (conn->pd, tx->base, tx->cap,
                             windows ? IBV_ACCESS_MW_BIND : IBV_ACCESS_REMOTE_READ, error);
    if (k->mr == NULL)
      return FALSE;
    k->base = tx->base;
    k->cap = tx->cap;
    if (windows
        && !rdma_window_bind_wait (conn, &k->window, k->mr, k->base, k->cap, IBV_ACCESS_REMOTE_READ,
                                   deadline_us, error))
      return FALSE;
  }
  *rkey = windows ? rdma_window_rkey (k->window) : k->mr->rkey;
  return TRUE;
}

static gboolean
rr_setup (RdmaConn *conn, GError **error)
{
  conn->proto_state[RDMA_PROTO_READ_RNDV] = g_new0 (ReadRndv, 1);
  return TRUE;
}

static void
rr_teardown (RdmaConn *conn)
{
  ReadRndv *st = conn->proto_state[RDMA_PROTO_READ_RNDV];
  Lent *l;

  if (st == NULL)
    return;
  rdma_rndv_rx_clear (conn, &st->rx);
  /* the transmit buffers go with the connection: only the keys are ours */
  while ((l = g_queue_pop_head (&st->lent)) != NULL)
    g_free (l);
  for (guint i = 0; i < G_N_ELEMENTS (st->keys); i++)
    key_clear (conn, &st->keys[i]);
  dereg_retired (conn, st);
  g_free (st);
  conn->proto_state[RDMA_PROTO_READ_RNDV] = NULL;
}

static gboolean
rr_send_message (RdmaConn *conn, RdmaTx *tx, gint64 deadline_us, GError **error)
{
  ReadRndv *st = conn->proto_state[RDMA_PROTO_READ_RNDV];
  RdmaRndvMsg m = { .kind = RDMA_RNDV_RTS, .seq = st->tx_seq, .len = (guint32) tx->len };
  struct ibv_sge sge;
  struct ibv_send_wr send;

  /* the key first: a bind waits, and what it held back meanwhile may take the room */
  if (m.len > 0)
  {
    if (!key_for (conn, st, tx, deadline_us, &m.rkey, error))
      return FALSE;
    m.addr = (guint64) (guintptr) tx->base;
  }
  if (!rdma_rndv_wait_room (conn, 1, deadline_us, error))
    return FALSE;
  rdma_rndv_prepare_send (conn, &rdma_proto_read_rndv_ops, &m, &sge, &send);
  if (!rdma_conn_post_wr (conn, &send, "SEND (request-to-send)", error))
    return FALSE;
  st->tx_seq++;
  if (m.len > 0)
  {
    Lent *l = g_new (Lent, 1);
    l->seq = m.seq;
    l->tx = tx;
    g_queue_push_tail (&st->lent, l);
    tx->busy++; /* until the DONE */
  }
  return TRUE;
}

static gboolean read_done (RdmaConn *conn, RdmaOp *op, const struct ibv_wc *wc, GError **error);

/* The next message with bytes to READ: the newest being read, or the oldest waiting (its
 * buffer set up now, if the bytes held allow).  NULL: none, or not now. */
static RdmaRndvBuf *
next_to_read (RdmaConn *conn, ReadRndv *st, GError **error, gboolean *failed)
{
  RdmaRndvBuf *buf = g_queue_peek_tail (&st->rx.active);

  if (buf != NULL && buf->posted < buf->len)
    return buf;
  buf = g_queue_peek_head (&st->rx.waiting);
  if (buf == NULL || !rdma_rndv_rx_may_map (conn, &st->rx, buf->len))
    return NULL;
  g_queue_push_tail (&st->rx.active, g_queue_pop_head (&st->rx.waiting));
  if (!rdma_rndv_rx_map (conn, &st->rx, buf, IBV_ACCESS_LOCAL_WRITE, error))
  {
    *failed = TRUE;
    return NULL;
  }
  return buf;
}

/* Posts READs, in order, while READ slots (conn->max_rd_atomic), the bytes held and the send
 * queue allow.  Returns the number posted, -1 with @error. */
static gint
kick (RdmaConn *conn, ReadRndv *st, GError **error)
{
  gint started = 0;

  rdma_conn_want_progress (conn, RDMA_PROTO_READ_RNDV, FALSE);
  while (conn->state == RDMA_CONN_CONNECTED && st->reads < MAX (conn->max_rd_atomic, 1))
  {
    gboolean failed = FALSE;
    RdmaRndvBuf *buf;
    struct ibv_sge sge;
    struct ibv_send_wr wr;
    RdmaOp *op;
    guint32 n;

    if (conn->sq_used + 1 > conn->sq_depth)
    {
      /* rare (the queue has room beyond the send slots): try again in the next wait */
      rdma_conn_want_progress (conn, RDMA_PROTO_READ_RNDV, TRUE);
      break;
    }
    buf = next_to_read (conn, st, error, &failed);
    if (failed)
      return -1;
    if (buf == NULL)
      break;
    n = MIN (buf->len - buf->posted, RDMA_RNDV_READ_CHUNK);
    op = rdma_conn_op_get (conn, RDMA_OP_READ, RDMA_PROTO_READ_RNDV);
    op->done = read_done;
    op->data = buf;
    op->arg = n;
    sge = (struct ibv_sge){
      .addr = (uintptr_t) (buf->base + buf->posted),
      .length = n,
      .lkey = buf->mr->lkey,
    };
    wr = (struct ibv_send_wr){
      .wr_id = rdma_op_wr_id (op),
      .sg_list = &sge,
      .num_sge = 1,
      .opcode = IBV_WR_RDMA_READ,
      .send_flags = IBV_SEND_SIGNALED,
      .wr.rdma = { .remote_addr = buf->peer_addr + buf->posted, .rkey = buf->peer_rkey },
    };
    if (!rdma_conn_post_wr (conn, &wr, "READ (rendezvous)", error))
      return -1;
    buf->posted += n;
    st->reads++;
    started++;
  }
  return started;
}

/* A READ completed; once all of a message's did, it is readable and the sender may drop its
 * key (READs complete in the order they were posted: messages in RTS order). */
static gboolean
read_done (RdmaConn *conn, RdmaOp *op, const struct ibv_wc *wc, GError **error)
{
  ReadRndv *st = conn->proto_state[RDMA_PROTO_READ_RNDV];
  RdmaRndvBuf *buf = op->data;
  RdmaRndvMsg done = { .kind = RDMA_RNDV_DONE, .seq = buf->seq, .len = buf->len };

  st->reads--;
  buf->arrived += (guint32) op->arg;
  if (buf->arrived == buf->len)
  {
    g_queue_remove (&st->rx.active, buf);
    g_queue_push_tail (&st->rx.delivered, buf);
    /* only our own key (lkey) was on it: the bytes stay mapped for the reader */
    rdma_rndv_rx_unpin (conn, buf);
    rdma_conn_deliver_ready (conn, buf->msg, buf->base);
    buf->msg = NULL;
    if (!rdma_rndv_send_control (conn, &rdma_proto_read_rndv_ops, &done, error))
      return FALSE;
  }
  return kick (conn, st, error) >= 0;
}

static gboolean
rr_on_receive (RdmaConn *conn, guint32 slot, const RdmaWireHeader *hdr, const guint8 *payload,
               GError **error)
{
  ReadRndv *st = conn->proto_state[RDMA_PROTO_READ_RNDV];
  RdmaRndvMsg m;
  RdmaRndvBuf *buf;

  if (!rdma_rndv_decode_send (&rdma_proto_read_rndv_ops, hdr, payload, &m, error))
    return FALSE;
  if (m.kind != RDMA_RNDV_RTS)
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: read_rndv message of kind %u", m.kind);
    return FALSE;
  }
  if (!rdma_rndv_rx_rts (conn, &rdma_proto_read_rndv_ops, &st->rx, slot, &m, &buf, error))
    return FALSE;
  if (buf == NULL)
    return TRUE;
  buf->peer_addr = m.addr;
  buf->peer_rkey = m.rkey;
  g_queue_push_tail (&st->rx.waiting, buf);
  buf->msg = rdma_conn_deliver_pending (conn, &rdma_proto_read_rndv_ops, buf->len,
                                        (guint64) (guintptr) buf);
  return kick (conn, st, error) >= 0;
}

static gboolean
rr_on_control (RdmaConn *conn, guint8 kind, const guint8 *payload, guint32 len, GError **error)
{
  ReadRndv *st = conn->proto_state[RDMA_PROTO_READ_RNDV];
  Lent *l = g_queue_peek_head (&st->lent);
  RdmaRndvMsg m;

  if (!rdma_rndv_decode (&rdma_proto_read_rndv_ops, payload, len, &m, error))
    return FALSE;
  if (kind != RDMA_RNDV_DONE || m.kind != kind || l == NULL || m.seq != l->seq)
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: read_rndv control of kind %u for message %u, "
                           "unexpected now",
                           kind, m.seq);
    return FALSE;
  }
  g_queue_pop_head (&st->lent);
  dereg_retired (conn, st);
  if (l->tx->busy > 0)
    l->tx->busy--;
  g_free (l);
  return TRUE;
}

static gint
rr_progress (RdmaConn *conn, GError **error)
{
  return kick (conn, conn->proto_state[RDMA_PROTO_READ_RNDV], error);
}

static gboolean
rr_release (RdmaConn *conn, guint8 *data, gsize len, guint64 token, GError **error)
{
  ReadRndv *st = conn->proto_state[RDMA_PROTO_READ_RNDV];

  rdma_rndv_rx_release (conn, &st->rx, token);
  return kick (conn, st, error) >= 0;
}

const RdmaProtoOps rdma_proto_read_rndv_ops = {
  .name = "read_rndv",
  .id = RDMA_PROTO_READ_RNDV,
  .hint = THRIFT_HINT_PROTO_READ_RNDV,
  .setup = rr_setup,
  .teardown = rr_teardown,
  .send_message = rr_send_message,
  .on_receive = rr_on_receive,
  .on_control = rr_on_control,
  .progress = rr_progress,
  .release = rr_release,
};
