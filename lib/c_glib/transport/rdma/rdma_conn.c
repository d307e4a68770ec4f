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
 * rdma_conn.c: connection set-up (client connect, server accept, the hello handshake),
 * teardown, the state machine, posting, and dispatching completions and CM events.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

#include <thrift/c_glib/transport/thrift_rdma_version.h>

#include "rdma_bulk.h"
#include "rdma_conn_private.h"
#include "rdma_keepalive.h"
#include "rdma_numa.h"
#include "rdma_resources.h"
#include "rdma_ring.h"
#include "rdma_status.h"
#include "rdma_verbs.h"

#define RDMA_DEFAULT_SLOT_SIZE 4096
#define RDMA_DEFAULT_CREDITS 32
#define RDMA_DEFAULT_SPIN_US 50
#define RDMA_DEFAULT_KEEPALIVE_MS 30000
/* Unread bytes a connection may hold before its credits stop: a few messages of the
 * largest size that fits the slots, and never less than one max-size message can need. */
#define RDMA_DEFAULT_UNREAD_LIMIT (4u << 20)
#define RDMA_RNR_RETRY_INFINITE 7
#define RDMA_DEFAULT_RING_SIZE (512u << 10)
/* Send queue entries beyond the send slots: WRITEs and READs of the protocols, and the
 * keepalive probe. */
#define RDMA_SQ_EXTRA 64
#define RDMA_OP_BLOCK 32
/* How long a closing connection waits for protocols to push out what is still queued. */
#define RDMA_CLOSE_FLUSH_US G_USEC_PER_SEC
G_STATIC_ASSERT (THRIFT_RDMA_PAIR_TOKEN_LEN == RDMA_WIRE_PAIR_TOKEN_LEN);

static const gchar *const state_names[] = {
  [RDMA_CONN_IDLE] = "idle",
  [RDMA_CONN_RESOLVING] = "resolving",
  [RDMA_CONN_CONNECTING] = "connecting",
  [RDMA_CONN_ACCEPTING] = "accepting",
  [RDMA_CONN_CONNECTED] = "connected",
  [RDMA_CONN_DISCONNECTED] = "disconnected",
  [RDMA_CONN_FAILED] = "failed",
  [RDMA_CONN_CLOSED] = "closed",
};

const gchar *
rdma_conn_state_name (RdmaConnState state)
{
  return (guint) state < G_N_ELEMENTS (state_names) ? state_names[state] : "?";
}

gboolean
rdma_conn_state_allowed (RdmaConnState from, RdmaConnState to)
{
  if (to == RDMA_CONN_CLOSED)
    return TRUE;
  if (to == RDMA_CONN_FAILED)
    return from != RDMA_CONN_CLOSED;
  switch (from) {
  case RDMA_CONN_IDLE:
    return to == RDMA_CONN_RESOLVING || to == RDMA_CONN_ACCEPTING;
  case RDMA_CONN_RESOLVING:
    return to == RDMA_CONN_CONNECTING;
  case RDMA_CONN_CONNECTING:
  case RDMA_CONN_ACCEPTING:
    return to == RDMA_CONN_CONNECTED;
  case RDMA_CONN_CONNECTED:
    return to == RDMA_CONN_DISCONNECTED;
  default:
    return FALSE;
  }
}

static void
set_state (RdmaConn *conn, RdmaConnState to)
{
  if (!rdma_conn_state_allowed (conn->state, to)) {
    g_critical ("RdmaConn: transition %s -> %s is not allowed", rdma_conn_state_name (conn->state),
                rdma_conn_state_name (to));
    return;
  }
  conn->state = to;
}

void
rdma_conn_settings_init (RdmaConnSettings *s, guint32 max_message, ThriftRdmaPolling polling)
{
  memset (s, 0, sizeof *s);
  s->slot_size = RDMA_DEFAULT_SLOT_SIZE;
  s->credits = RDMA_DEFAULT_CREDITS;
  s->max_message = max_message;
  s->polling = polling;
  s->spin_us = RDMA_DEFAULT_SPIN_US;
  s->wire_version = THRIFT_RDMA_WIRE_VERSION;
  s->keepalive_ms = RDMA_DEFAULT_KEEPALIVE_MS;
  s->unread_limit = RDMA_DEFAULT_UNREAD_LIMIT;
  s->rx_protocols = rdma_proto_implemented ();
  s->ring_size = RDMA_DEFAULT_RING_SIZE;
  s->numa_node = RDMA_NUMA_NONE;
  s->bulk_chunk = RDMA_BULK_DEFAULT_CHUNK;
  s->bulk_depth = RDMA_BULK_DEFAULT_DEPTH;
  s->rcache_entries = RDMA_BULK_DEFAULT_RCACHE_ENTRIES;
  s->rcache_bytes = RDMA_BULK_DEFAULT_RCACHE_BYTES;
}

void
rdma_conn_fail (RdmaConn *conn, const GError *cause)
{
  if (conn->state == RDMA_CONN_FAILED || conn->state == RDMA_CONN_CLOSED)
    return;
  conn->failure = g_error_copy (cause);
  set_state (conn, RDMA_CONN_FAILED);
}

gboolean
rdma_conn_check_usable (RdmaConn *conn, GError **error)
{
  switch (conn->state) {
  case RDMA_CONN_CONNECTED:
    return TRUE;
  case RDMA_CONN_FAILED:
    if (error != NULL)
      *error = g_error_copy (conn->failure);
    return FALSE;
  case RDMA_CONN_DISCONNECTED:
    rdma_status_set_error (error, RDMA_ERR_PEER_GONE, NULL, 0, -1, "connection closed");
    return FALSE;
  default:
    rdma_status_set_error (error, RDMA_ERR_NOT_OPEN, NULL, 0, -1, "connection %s",
                           rdma_conn_state_name (conn->state));
    return FALSE;
  }
}

static RdmaConn *
conn_new (const RdmaConnSettings *settings, gboolean is_client)
{
  RdmaConn *conn = g_new0 (RdmaConn, 1);
  conn->settings = *settings;
  rdma_conn_poller_init (conn);
  conn->is_client = is_client;
  conn->state = RDMA_CONN_IDLE;
  g_queue_init (&conn->received);
  g_queue_init (&conn->control_out);
  conn->held_slots = g_array_new (FALSE, FALSE, sizeof (guint32));
  conn->op_blocks = g_ptr_array_new_with_free_func (g_free);
  conn->tx_proto = &rdma_proto_eager_ops;
  conn->probe_op = (RdmaOp) { .kind = RDMA_OP_PROBE, .slot = -1, .sq_entries = 1 };
  conn->quiet_op = (RdmaOp) { .kind = RDMA_OP_QUIET, .slot = -1 };
  conn->max_rd_atomic = 1;
  return conn;
}

/* ---- posting ---- */

RdmaOp *
rdma_conn_op_get (RdmaConn *conn, RdmaOpKind kind, guint8 proto)
{
  RdmaOp *op;

  if (conn->free_ops == NULL) {
    RdmaOp *block = g_new0 (RdmaOp, RDMA_OP_BLOCK);
    g_ptr_array_add (conn->op_blocks, block);
    for (guint i = 0; i < RDMA_OP_BLOCK; i++) {
      block[i].next_free = conn->free_ops;
      conn->free_ops = &block[i];
    }
  }
  op = conn->free_ops;
  conn->free_ops = op->next_free;
  *op = (RdmaOp) { .kind = kind, .proto = proto, .slot = -1, .pooled = TRUE };
  return op;
}

static void
op_put (RdmaConn *conn, RdmaOp *op)
{
  op->next_free = conn->free_ops;
  conn->free_ops = op;
}

gboolean
rdma_conn_sq_reserve (RdmaConn *conn, guint n, gint64 deadline_us, GError **error)
{
  while (conn->sq_used + n > conn->sq_depth) {
    if (!rdma_conn_check_usable (conn, error) || !rdma_conn_progress (conn, deadline_us, error))
      return FALSE;
  }
  return rdma_conn_check_usable (conn, error);
}

static void
count_wr (RdmaConn *conn, const struct ibv_send_wr *wr)
{
  switch (wr->opcode) {
  case IBV_WR_SEND:
  case IBV_WR_SEND_WITH_IMM:
    conn->stats.sends++;
    break;
  case IBV_WR_RDMA_WRITE:
    conn->stats.writes++;
    break;
  case IBV_WR_RDMA_WRITE_WITH_IMM:
    conn->stats.write_imms++;
    break;
  case IBV_WR_RDMA_READ:
    conn->stats.reads++;
    break;
  case IBV_WR_BIND_MW:
    conn->stats.window_binds++;
    break;
  case IBV_WR_LOCAL_INV:
    conn->stats.window_invalidations++;
    break;
  default:
    break;
  }
}

gboolean
rdma_conn_post_wr (RdmaConn *conn, struct ibv_send_wr *wr, const gchar *what, GError **error)
{
  struct ibv_send_wr *bad = NULL;
  int rc;

  /* An unsignalled WR is retired by the next signalled one: that one's completion means the
   * send queue has moved past both.  Force a signal before the queue could fill up with
   * WRs nobody retires. */
  for (struct ibv_send_wr *w = wr; w != NULL; w = w->next) {
    RdmaOp *op = rdma_op_from_wr_id (w->wr_id);
    if (!(w->send_flags & IBV_SEND_SIGNALED) && conn->sq_unsignalled + 1 >= conn->sq_depth / 2)
      w->send_flags |= IBV_SEND_SIGNALED;
    if (w->send_flags & IBV_SEND_SIGNALED) {
      g_assert (op != &conn->quiet_op);
      op->sq_entries = conn->sq_unsignalled + 1;
      conn->sq_unsignalled = 0;
      if (op->tx != NULL)
        op->tx->busy++;
    } else {
      conn->sq_unsignalled++;
    }
    conn->sq_used++;
  }
  rc = rdma_verbs->post_send (conn->id->qp, wr, &bad);
  conn->stats.post_send_calls++;
  if (rc != 0) {
    GError *e = NULL;
    rdma_status_set_error (&e, rdma_status_from_errno (rc), "ibv_post_send", rc, -1, "%s",
                           what);
    /* what was not posted never completes: give back what it holds */
    for (struct ibv_send_wr *w = bad; w != NULL; w = w->next) {
      RdmaOp *op = rdma_op_from_wr_id (w->wr_id);
      conn->sq_used--;
      if ((w->send_flags & IBV_SEND_SIGNALED) && op->tx != NULL)
        op->tx->busy--;
      if (op->kind == RDMA_OP_SEND && op->slot >= 0)
        rdma_pool_put (&conn->send_pool, (guint32) op->slot);
      if (op->pooled)
        op_put (conn, op);
    }
    rdma_conn_fail (conn, e);
    g_propagate_error (error, e);
    return FALSE;
  }
  for (; wr != NULL; wr = wr->next) {
    conn->stats.wr_posted++;
    count_wr (conn, wr);
  }
  return TRUE;
}

gboolean
rdma_conn_post_send (RdmaConn *conn, guint8 proto, guint32 slot, guint32 len, RdmaTx *tx,
                     gsize tx_off, guint32 tx_len, GError **error)
{
  RdmaOp *op = &conn->send_ops[slot];
  struct ibv_sge sge[2] = {
    {
      .addr = (uintptr_t) rdma_pool_slot (&conn->send_pool, slot),
      .length = len,
      .lkey = conn->send_pool.mr->lkey,
    },
  };
  struct ibv_send_wr wr = {
    .wr_id = rdma_op_wr_id (op),
    .sg_list = sge,
    .num_sge = 1,
    .opcode = IBV_WR_SEND,
    .send_flags = IBV_SEND_SIGNALED,
  };

  *op = (RdmaOp) { .kind = RDMA_OP_SEND, .proto = proto, .slot = slot };
  if (tx != NULL && tx_len > 0) {
    /* gather the payload from the transmit buffer: no copy into the slot */
    sge[1] = (struct ibv_sge) {
      .addr = (uintptr_t) (tx->base + tx_off),
      .length = tx_len,
      .lkey = tx->mr->lkey,
    };
    wr.num_sge = 2;
    op->tx = tx;
  }
  return rdma_conn_post_wr (conn, &wr, "SEND", error);
}

void
rdma_conn_header (RdmaConn *conn, void *slot, guint8 proto, guint8 type, guint8 flags,
                  guint32 frag_len, guint32 msg_len)
{
  rdma_wire_header_write (slot, proto, type, flags, rdma_credit_piggyback (&conn->credits),
                          frag_len, msg_len);
  rdma_wire_header_set_freed (slot, (guint8) rdma_ring_take_freed (conn, G_MAXUINT8));
}

typedef struct
{
  guint8 proto;
  guint8 kind;
  guint32 len;
  guint8 payload[RDMA_WIRE_CONTROL_MAX];
} ControlMsg;

/* Sends queued control messages while send slots are free. */
static gboolean
flush_control (RdmaConn *conn, GError **error)
{
  ControlMsg *m;
  guint32 slot;

  while ((m = g_queue_peek_head (&conn->control_out)) != NULL) {
    guint8 *dst, proto;
    guint32 len;

    if (conn->state != RDMA_CONN_CONNECTED || conn->sq_used + 1 > conn->sq_depth
        || rdma_bulk_windows_busy (conn) || !rdma_pool_get (&conn->send_pool, &slot))
      return TRUE;
    g_queue_pop_head (&conn->control_out);
    dst = rdma_pool_slot (&conn->send_pool, slot);
    rdma_conn_header (conn, dst, m->proto, RDMA_WIRE_CONTROL, m->kind, m->len, m->len);
    memcpy (dst + RDMA_WIRE_HEADER_SIZE, m->payload, m->len);
    len = RDMA_WIRE_HEADER_SIZE + m->len;
    proto = m->proto;
    g_free (m);
    conn->stats.control_messages++;
    if (!rdma_conn_post_send (conn, proto, slot, len, NULL, 0, 0, error))
      return FALSE;
  }
  return TRUE;
}

gboolean
rdma_conn_send_control (RdmaConn *conn, guint8 proto, guint8 kind, const void *payload,
                        guint32 len, GError **error)
{
  ControlMsg *m = g_new (ControlMsg, 1);

  g_return_val_if_fail (len <= RDMA_WIRE_CONTROL_MAX, FALSE);
  m->proto = proto;
  m->kind = kind;
  m->len = len;
  if (len > 0)
    memcpy (m->payload, payload, len);
  g_queue_push_tail (&conn->control_out, m);
  return flush_control (conn, error);
}

gboolean
rdma_conn_post_empty_write (RdmaConn *conn, RdmaOp *op, const char *what, GError **error)
{
  struct ibv_send_wr wr = {
    .wr_id = rdma_op_wr_id (op),
    .opcode = IBV_WR_RDMA_WRITE,
    .send_flags = IBV_SEND_SIGNALED,
  };

  return rdma_conn_post_wr (conn, &wr, what, error);
}

gboolean
rdma_conn_retire_unsignalled (RdmaConn *conn, gint64 deadline_us, GError **error)
{
  if (conn->sq_unsignalled == 0)
    return TRUE;
  if (!rdma_conn_sq_reserve (conn, 1, deadline_us, error))
    return FALSE;
  return rdma_conn_post_empty_write (conn,
                                     rdma_conn_op_get (conn, RDMA_OP_WRITE,
                                                       RDMA_WIRE_PROTO_ENGINE),
                                     "RDMA WRITE (zero bytes, retiring unsignalled WRs)", error);
}

static gboolean
sent_all (RdmaConn *conn, gpointer data)
{
  return conn->sq_used == 0 && g_queue_is_empty (&conn->control_out);
}

gboolean
rdma_conn_wait_for (RdmaConn *conn, gboolean (*done) (RdmaConn *, gpointer), gpointer data,
                    gint64 deadline_us, GError **error)
{
  while (!done (conn, data)) {
    if (!rdma_conn_check_usable (conn, error) || !rdma_conn_progress (conn, deadline_us, error))
      return FALSE;
  }
  return TRUE;
}

static gboolean
post_recv_list (RdmaConn *conn, const guint32 *slots, guint n, GError **error)
{
  struct ibv_sge sge[n];
  struct ibv_recv_wr wr[n];
  struct ibv_recv_wr *bad = NULL;
  int rc;

  for (guint i = 0; i < n; i++) {
    sge[i] = (struct ibv_sge) {
      .addr = (uintptr_t) rdma_pool_slot (&conn->recv_pool, slots[i]),
      .length = conn->recv_pool.slot_size,
      .lkey = conn->recv_pool.mr->lkey,
    };
    conn->recv_ops[slots[i]] = (RdmaOp) { .kind = RDMA_OP_RECV, .slot = slots[i] };
    wr[i] = (struct ibv_recv_wr) {
      .wr_id = rdma_op_wr_id (&conn->recv_ops[slots[i]]),
      .sg_list = &sge[i],
      .num_sge = 1,
      .next = i + 1 < n ? &wr[i + 1] : NULL,
    };
  }
  rc = rdma_verbs->post_recv (conn->id->qp, wr, &bad);
  conn->stats.post_recv_calls++;
  if (rc != 0) {
    GError *e = NULL;
    rdma_status_set_error (&e, rdma_status_from_errno (rc), "ibv_post_recv", rc, -1, NULL);
    rdma_conn_fail (conn, e);
    g_propagate_error (error, e);
    return FALSE;
  }
  conn->stats.wr_posted += n;
  conn->stats.recvs += n;
  return TRUE;
}

gboolean
rdma_conn_repost (RdmaConn *conn, guint32 slot, gboolean data_slot, GError **error)
{
  /* Back-pressure, as TCP's window: while the reader is behind, freed data slots are held
   * instead of reposted, so no credit goes back and the peer's sends stop. */
  if (data_slot && conn->unread_bytes > conn->settings.unread_limit) {
    g_array_append_val (conn->held_slots, slot);
    conn->stats.slots_held++;
    return TRUE;
  }
  if (!post_recv_list (conn, &slot, 1, error))
    return FALSE;
  if (data_slot)
    rdma_credit_slot_freed (&conn->credits);
  return TRUE;
}

/* Reposts the held slots once the reader caught up. */
static gboolean
repost_held (RdmaConn *conn, GError **error)
{
  guint n = conn->held_slots->len;

  if (n == 0 || conn->unread_bytes > conn->settings.unread_limit)
    return TRUE;
  g_array_set_size (conn->held_slots, 0);
  if (!post_recv_list (conn, (const guint32 *) conn->held_slots->data, n, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    rdma_credit_slot_freed (&conn->credits);
  return TRUE;
}

gboolean
rdma_conn_return_credits (RdmaConn *conn, GError **error)
{
  guint32 slot;

  if (conn->state != RDMA_CONN_CONNECTED)
    return TRUE;
  if (!flush_control (conn, error))
    return FALSE;
  if (!rdma_credit_need_explicit (&conn->credits) && !rdma_ring_need_report (conn))
    return TRUE;
  if (conn->sq_used + 1 > conn->sq_depth || rdma_bulk_windows_busy (conn)
      || !rdma_pool_get (&conn->send_pool, &slot))
    return TRUE; /* deferred: tried again after the next completion */
  rdma_conn_header (conn, rdma_pool_slot (&conn->send_pool, slot), RDMA_PROTO_EAGER,
                    RDMA_WIRE_CREDIT, 0, 0, 0);
  conn->stats.credit_messages++;
  return rdma_conn_post_send (conn, RDMA_PROTO_EAGER, slot, RDMA_WIRE_HEADER_SIZE, NULL, 0, 0,
                              error);
}

static RdmaMessage *
queue_message (RdmaConn *conn, const RdmaProtoOps *proto, guint8 *data, gsize len,
               RdmaMsgOwner owner, gint64 slot, guint64 token)
{
  RdmaMessage *msg = g_new (RdmaMessage, 1);
  msg->data = data;
  msg->len = len;
  msg->owner = owner;
  msg->slot = slot;
  msg->token = token;
  msg->proto = proto;
  msg->pending = FALSE;
  g_queue_push_tail (&conn->received, msg);
  conn->unread_bytes += len;
  conn->stats.messages_received++;
  conn->msgs_received++;
  if (conn->is_client && conn->last_was_send)
    conn->stats.round_trips++;
  conn->last_was_send = FALSE;
  return msg;
}

void
rdma_conn_deliver (RdmaConn *conn, const RdmaProtoOps *proto, guint8 *data, gsize len,
                   RdmaMsgOwner owner, gint64 slot, guint64 token)
{
  queue_message (conn, proto, data, len, owner, slot, token);
}

RdmaMessage *
rdma_conn_deliver_pending (RdmaConn *conn, const RdmaProtoOps *proto, gsize len,
                           guint64 token)
{
  RdmaMessage *msg = queue_message (conn, proto, NULL, len, RDMA_MSG_IN_PROTO, -1, token);
  msg->pending = TRUE;
  return msg;
}

void
rdma_conn_deliver_ready (RdmaConn *conn, RdmaMessage *msg, guint8 *data)
{
  msg->data = data;
  msg->pending = FALSE;
}

/* ---- completions and CM events ---- */

gboolean
rdma_conn_fail_with (RdmaConn *conn, GError *e, GError **error)
{
  rdma_conn_fail (conn, e);
  g_propagate_error (error, e);
  return FALSE;
}

static const gchar *
op_kind_name (const RdmaOp *op)
{
  switch (op->kind) {
  case RDMA_OP_RECV:
    return "receive";
  case RDMA_OP_SEND:
    return "send";
  case RDMA_OP_WRITE:
    return "RDMA write";
  case RDMA_OP_READ:
    return "RDMA read";
  case RDMA_OP_PROBE:
    return "keepalive probe";
  case RDMA_OP_WINDOW:
    return "memory window bind or invalidation";
  default:
    return "unsignalled work request";
  }
}

/* A send queue op completed (successfully or flushed): give back what it holds. */
static void
retire (RdmaConn *conn, RdmaOp *op, gboolean signalled)
{
  if (signalled) {
    conn->sq_used -= MIN (op->sq_entries, conn->sq_used);
    if (op->tx != NULL && op->tx->busy > 0)
      op->tx->busy--;
  }
  if (op->kind == RDMA_OP_SEND && op->slot >= 0 && (guint64) op->slot < conn->send_pool.count) {
    rdma_pool_put (&conn->send_pool, (guint32) op->slot);
    op->slot = -1;
  }
}

/* A receive: a SEND (header in the slot) or a WRITE_WITH_IMM (the immediate). */
static gboolean
handle_recv (RdmaConn *conn, guint32 slot, const struct ibv_wc *wc, GError **error)
{
  GError *e = NULL;
  RdmaWireHeader hdr;
  const guint8 *buf = rdma_pool_slot (&conn->recv_pool, slot);
  const RdmaProtoOps *ops;

  if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
    guint32 imm = GUINT32_FROM_BE (wc->imm_data);

    ops = rdma_proto_by_id (RDMA_IMM_PROTO (imm));
    if (ops == NULL || ops->on_imm == NULL
        || !(conn->settings.rx_protocols & (1u << RDMA_IMM_PROTO (imm)))) {
      rdma_status_set_error (&e, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                             "garbage framing: a write with immediate 0x%08x for protocol %u, "
                             "which this side does not accept", imm, RDMA_IMM_PROTO (imm));
      return rdma_conn_fail_with (conn, e, error);
    }
    /* the slot carried no data: it is free again (and is a credit the peer used) */
    if (!rdma_conn_repost (conn, slot, TRUE, error))
      return FALSE;
    if (!ops->on_imm (conn, imm, wc->byte_len, &e))
      return rdma_conn_fail_with (conn, e, error);
    return TRUE;
  }

  if (!rdma_wire_header_parse (buf, wc->byte_len, conn->settings.max_message, &hdr, &e))
    return rdma_conn_fail_with (conn, e, error);
  if (!rdma_credit_grant (&conn->credits, hdr.credits)) {
    rdma_status_set_error (&e, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: the peer returns %u credits, only %u are "
                           "outstanding", hdr.credits, conn->credits.in_flight);
    return rdma_conn_fail_with (conn, e, error);
  }
  if (hdr.freed > 0 && !rdma_ring_tx_freed (conn, hdr.freed, &e))
    return rdma_conn_fail_with (conn, e, error);
  if (hdr.type == RDMA_WIRE_CREDIT)
    return rdma_conn_repost (conn, slot, FALSE, error);
  if (hdr.type == RDMA_WIRE_CONTROL) {
    guint8 payload[RDMA_WIRE_CONTROL_MAX];
    gboolean ok;

    /* copied out so the slot goes back before the handler (which may send) runs */
    memcpy (payload, buf + RDMA_WIRE_HEADER_SIZE, hdr.frag_len);
    if (!rdma_conn_repost (conn, slot, FALSE, error))
      return FALSE;
    if (hdr.proto == RDMA_WIRE_PROTO_ENGINE && hdr.flags == RDMA_BULK_DONE) {
      ok = rdma_bulk_control (conn, hdr.flags, payload, hdr.frag_len, &e);
    } else if (hdr.proto == RDMA_WIRE_PROTO_ENGINE) {
      ok = rdma_ring_control (conn, hdr.flags, payload, hdr.frag_len, &e);
    } else {
      ops = rdma_proto_by_id (hdr.proto);
      if (ops == NULL || ops->on_control == NULL) {
        rdma_status_set_error (&e, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                               "garbage framing: a control message for protocol %u",
                               hdr.proto);
        return rdma_conn_fail_with (conn, e, error);
      }
      ok = ops->on_control (conn, hdr.flags, payload, hdr.frag_len, &e);
    }
    return ok || rdma_conn_fail_with (conn, e, error);
  }
  ops = rdma_proto_by_id (hdr.proto);
  if (ops == NULL || ops->on_receive == NULL
      || !(conn->settings.rx_protocols & (1u << hdr.proto))) {
    rdma_status_set_error (&e, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: a message for protocol id %u, which this side "
                           "does not accept", hdr.proto);
    return rdma_conn_fail_with (conn, e, error);
  }
  if (!ops->on_receive (conn, slot, &hdr, buf + RDMA_WIRE_HEADER_SIZE, &e))
    return rdma_conn_fail_with (conn, e, error);
  return TRUE;
}

gboolean
rdma_conn_handle_wc (RdmaConn *conn, const struct ibv_wc *wc, GError **error)
{
  GError *e = NULL;
  RdmaOp *op = rdma_op_from_wr_id (wc->wr_id);
  gboolean ok = TRUE;

  conn->stats.completions++;
  if (op->kind == RDMA_OP_PROBE) {
    rdma_keepalive_probe_done (conn);
    conn->sq_used -= MIN (op->sq_entries, conn->sq_used);
    if (wc->status == IBV_WC_SUCCESS) {
      conn->alive_seen = TRUE;
      return TRUE;
    }
  } else if (wc->status == IBV_WC_SUCCESS) {
    conn->alive_seen = TRUE;
  }
  if (op->kind != RDMA_OP_RECV && op->kind != RDMA_OP_PROBE)
    retire (conn, op, op->kind != RDMA_OP_QUIET);

  if (wc->status != IBV_WC_SUCCESS) {
    if (op->pooled)
      op_put (conn, op);
    /* Flushed work requests after the peer left are expected, not a new failure. */
    if (wc->status == IBV_WC_WR_FLUSH_ERR
        && (conn->state == RDMA_CONN_DISCONNECTED || conn->state == RDMA_CONN_FAILED))
      return TRUE;
    rdma_status_set_error (&e, rdma_status_from_wc (wc->status), "ibv_poll_cq", 0, wc->status,
                           "%s completion failed (vendor error 0x%x)%s", op_kind_name (op),
                           wc->vendor_err,
                           wc->status == IBV_WC_RETRY_EXC_ERR
                             ? "; the peer stopped answering: its process died or its "
                               "host or link went down"
                           : wc->status == IBV_WC_REM_ACCESS_ERR
                             ? "; the peer refused the remote access (a stale or wrong key, "
                               "or a range outside its buffer)"
                           : wc->status == IBV_WC_WR_FLUSH_ERR
                             ? "; the queue pair went to the error state before any "
                               "disconnect arrived: the peer closed it, or the device failed "
                               "it (see the kernel log)"
                             : "");
    return rdma_conn_fail_with (conn, e, error);
  }

  if (op->kind == RDMA_OP_RECV)
    return handle_recv (conn, (guint32) op->slot, wc, error);
  if (op->done != NULL)
    ok = op->done (conn, op, wc, error);
  if (op->pooled)
    op_put (conn, op);
  return ok;
}

gint
rdma_conn_handle_cm_events (RdmaConn *conn, GError **error)
{
  struct rdma_cm_event *ev;
  gint n = 0;

  while (rdma_verbs->get_cm_event (conn->cm_channel, &ev) == 0) {
    enum rdma_cm_event_type type = ev->event;
    rdma_verbs->ack_cm_event (ev);
    n++;
    if (type == RDMA_CM_EVENT_DISCONNECTED && conn->state == RDMA_CONN_CONNECTED) {
      set_state (conn, RDMA_CONN_DISCONNECTED);
    } else if (type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
      GError *e = NULL;
      rdma_status_set_error (&e, RDMA_ERR_NO_DEVICE, "rdma_get_cm_event", 0, -1,
                             "the RDMA device was removed");
      rdma_conn_fail (conn, e);
      g_error_free (e);
    }
  }
  if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_SYSTEM, "rdma_get_cm_event", err, -1, NULL);
    return -1;
  }
  return n;
}

/* A reject that names its reason (RdmaWireRefusal, a server's admission): acks @ev and sets
 * @error saying why.  FALSE if the reject carries no reason. */
static gboolean
reject_refused (struct rdma_cm_event *ev, const gchar *what, GError **error)
{
  guint16 code = rdma_wire_refusal_parse (ev->param.conn.private_data,
                                          ev->param.conn.private_data_len);

  if (code == RDMA_WIRE_REFUSE_NONE)
    return FALSE;
  rdma_verbs->ack_cm_event (ev);
  /* not rdma_status_set_error: its text for REFUSED ("is a server listening?") would
   * mislead, the server did answer */
  g_set_error (error, RDMA_ENGINE_ERROR, RDMA_ERR_REFUSED,
               "rdma_connect: %s: the server refused the connection: %s (refusal code %u)",
               what, rdma_wire_refusal_describe (code), code);
  return TRUE;
}

/* Waits for one CM event on the connection's channel during set-up.  Returns it (the caller
 * acks it) if it is @expected; any other outcome is an error that names the cause. */
static struct rdma_cm_event *
wait_cm_event (RdmaConn *conn, enum rdma_cm_event_type expected, const gchar *what,
               gint64 deadline_us, GError **error)
{
  for (;;) {
    struct rdma_cm_event *ev = NULL;
    struct pollfd pfd = { .fd = conn->cm_channel->fd, .events = POLLIN };
    gint64 left = deadline_us - g_get_monotonic_time ();
    int r;

    if (rdma_verbs->get_cm_event (conn->cm_channel, &ev) == 0) {
      if (ev->event == expected)
        return ev;
      {
        enum rdma_cm_event_type type = ev->event;
        int status = ev->status;
        RdmaStatus st;
        const gchar *hint = "";
        RdmaWireHello peer;
        GError *ignored = NULL;

        switch (type) {
        case RDMA_CM_EVENT_ADDR_ERROR:
        case RDMA_CM_EVENT_ROUTE_ERROR:
          st = RDMA_ERR_RESOLVE;
          break;
        case RDMA_CM_EVENT_REJECTED:
          if (reject_refused (ev, what, error))
            return NULL;
          if (ev->param.conn.private_data != NULL
              && !rdma_wire_hello_parse (ev->param.conn.private_data,
                                         ev->param.conn.private_data_len, &peer, &ignored)
              && peer.magic == RDMA_WIRE_HELLO_MAGIC) {
            rdma_verbs->ack_cm_event (ev);
            rdma_status_set_error (error, RDMA_ERR_VERSION, "rdma_connect", 0, -1,
                                   "%s: the server refused the connection: %s", what,
                                   ignored->message);
            g_error_free (ignored);
            return NULL;
          }
          g_clear_error (&ignored);
          st = RDMA_ERR_REFUSED;
          hint = " (no listener on that port, or the server refused the connection)";
          break;
        case RDMA_CM_EVENT_UNREACHABLE:
        case RDMA_CM_EVENT_CONNECT_ERROR:
          st = RDMA_ERR_UNREACHABLE;
          break;
        case RDMA_CM_EVENT_DISCONNECTED:
          st = RDMA_ERR_PEER_GONE;
          break;
        default:
          st = RDMA_ERR_PROTOCOL;
          break;
        }
        rdma_verbs->ack_cm_event (ev);
        rdma_status_set_error (error, st, "rdma_get_cm_event", status < 0 ? -status : 0, -1,
                               "%s: got %s (status %d) instead of %s%s", what,
                               rdma_event_str (type), status, rdma_event_str (expected), hint);
        return NULL;
      }
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      int err = errno;
      rdma_status_set_error (error, RDMA_ERR_SYSTEM, "rdma_get_cm_event", err, -1, "%s", what);
      return NULL;
    }
    if (left <= 0) {
      rdma_status_set_error (error, RDMA_ERR_TIMED_OUT, NULL, 0, -1,
                             "%s: no %s within the connect timeout", what,
                             rdma_event_str (expected));
      return NULL;
    }
    r = poll (&pfd, 1, (int) ((left + 999) / 1000));
    if (r < 0 && errno != EINTR) {
      int err = errno;
      rdma_status_set_error (error, RDMA_ERR_SYSTEM, "poll", err, -1, "%s", what);
      return NULL;
    }
  }
}

/* The verbs resources of a connection whose id has a device: PD, CQ with its channel, QP,
 * the two slot pools, the posted receives and each protocol's own set-up.  Fills @hello. */
static gboolean
setup_resources (RdmaConn *conn, RdmaWireHello *hello, GError **error)
{
  guint32 n_recv = conn->settings.credits + RDMA_CREDIT_CONTROL_SLOTS;
  guint32 n_send = conn->settings.credits + RDMA_CREDIT_CONTROL_SLOTS;
  guint32 *slots;
  gboolean ok;

  conn->pd = rdma_res_pd_alloc (conn->id->verbs, error);
  if (conn->pd == NULL)
    return FALSE;
  conn->sq_depth = n_send + RDMA_SQ_EXTRA;
  if (!rdma_res_cq_create (conn->id->verbs, (gint) (n_recv + conn->sq_depth),
                           &conn->poller.comp_channel, &conn->poller.cq, error))
    return FALSE;
  if (!rdma_res_qp_create (conn->id, conn->pd, conn->poller.cq, conn->sq_depth, n_recv, error))
    return FALSE;
  conn->recv_ops = g_new0 (RdmaOp, n_recv);
  conn->send_ops = g_new0 (RdmaOp, n_send);
  if (!rdma_pool_init (&conn->recv_pool, conn->pd, n_recv, conn->settings.slot_size,
                       IBV_ACCESS_LOCAL_WRITE, conn->settings.numa_node, error))
    return FALSE;
  if (!rdma_pool_init (&conn->send_pool, conn->pd, n_send, conn->settings.slot_size, 0,
                       conn->settings.numa_node, error))
    return FALSE;
  conn->stats.pinned_bytes = (guint64) (n_recv + n_send) * conn->settings.slot_size;

  slots = g_new (guint32, n_recv);
  for (guint32 i = 0; i < n_recv; i++)
    slots[i] = i;
  conn->recv_pool.n_free = 0; /* all posted */
  ok = post_recv_list (conn, slots, n_recv, error);
  g_free (slots);
  if (!ok)
    return FALSE;

  rdma_wire_hello_init (hello, conn->settings.wire_version);
  hello->credits = GUINT32_TO_LE (conn->settings.credits);
  hello->slot_size = GUINT32_TO_LE (conn->settings.slot_size);
  hello->max_message = GUINT32_TO_LE (conn->settings.max_message);
  /* always Eager-SendRecv: every peer must be able to fall back to it */
  conn->settings.rx_protocols |= 1u << RDMA_PROTO_EAGER;
  conn->settings.rx_protocols &= rdma_proto_implemented ();
  hello->protocols = GUINT16_TO_LE (conn->settings.rx_protocols);
  return TRUE;
}

/* The client's connection request: @req's hello (setup_resources made it), then the pairing
 * token if the settings have one.  Returns the length of the private data to send. */
static guint8
request_finish (RdmaConn *conn, RdmaWireRequest *req)
{
  static const guint8 none[RDMA_WIRE_PAIR_TOKEN_LEN];

  memcpy (req->pair_token, conn->settings.pair_token, sizeof req->pair_token);
  /* without a token, the hello alone: what a peer from before pairing sends and expects */
  return memcmp (req->pair_token, none, sizeof none) == 0 ? sizeof req->hello : sizeof *req;
}

static gboolean take_peer_hello (RdmaConn *conn, const void *data, gsize len, GError **error);

/* The server's side of a connection request's private data: the hello and the token. */
static gboolean
take_request (RdmaConn *conn, const void *data, gsize len, GError **error)
{
  conn->has_peer_pair_token = rdma_wire_pair_token_parse (data, len, conn->peer_pair_token);
  return take_peer_hello (conn, data, len, error);
}

static gboolean
take_peer_hello (RdmaConn *conn, const void *data, gsize len, GError **error)
{
  if (!rdma_wire_hello_parse (data, len, &conn->peer, error))
    return FALSE;
  if (conn->peer.slot_size != conn->settings.slot_size) {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "handshake", 0, -1,
                           "the peer uses %u-byte slots, this side %u", conn->peer.slot_size,
                           conn->settings.slot_size);
    return FALSE;
  }
  if ((conn->peer.protocols & (1u << RDMA_PROTO_EAGER)) == 0) {
    rdma_status_set_error (error, RDMA_ERR_VERSION, "handshake", 0, -1,
                           "the peer does not receive Eager-SendRecv messages");
    return FALSE;
  }
  rdma_credit_init (&conn->credits, conn->settings.credits, conn->peer.credits);
  for (guint i = 0; i < RDMA_PROTO_COUNT; i++) {
    const RdmaProtoOps *ops = rdma_proto_registry[i];
    if (ops != NULL && ops->setup != NULL && !ops->setup (conn, error))
      return FALSE;
  }
  return TRUE;
}

/* Our QPs' ACK timeout: retries then fail within seconds when the peer vanished, which is
 * what the keepalive relies on (rdma_keepalive.h).  Older kernels lack the option: their
 * default timeout applies then. */
static void
set_ack_timeout (RdmaConn *conn)
{
  guint8 timeout = RDMA_KEEPALIVE_ACK_TIMEOUT;

  if (rdma_set_option (conn->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout,
                       sizeof timeout) != 0)
    g_debug ("RdmaConn: rdma_set_option (ACK_TIMEOUT): %s", g_strerror (errno));
}

static struct rdma_addrinfo *
resolve (const gchar *host, guint port, gboolean passive, GError **error)
{
  struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
  struct rdma_addrinfo *res = NULL;
  gchar service[16];
  int rc;

  if (passive)
    hints.ai_flags = RAI_PASSIVE;
  g_snprintf (service, sizeof service, "%u", port);
  rc = rdma_getaddrinfo (host, port ? service : NULL, &hints, &res);
  if (rc != 0 || res == NULL || (res->ai_dst_addr == NULL && !passive)) {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_RESOLVE, "rdma_getaddrinfo", rc == 0 ? 0 : err, -1,
                           "cannot resolve '%s' port %u", host ? host : "(any)", port);
    if (res != NULL)
      rdma_freeaddrinfo (res);
    return NULL;
  }
  return res;
}

/* READs one side may have outstanding at the other (pipelined rendezvous and bulk READs):
 * RDMA_RD_ATOMIC_DEPTH, or less if the device takes fewer.  Both sides ask the same of
 * their devices, so the numbers agree whenever the devices allow it. */
#define RDMA_RD_ATOMIC_DEPTH 4u
static guint
rd_atomic_depth (struct ibv_context *verbs)
{
  struct ibv_device_attr attr;

  if (verbs == NULL || ibv_query_device (verbs, &attr) != 0)
    return 1;
  return MAX (1u, MIN (RDMA_RD_ATOMIC_DEPTH,
                       (guint) MIN (attr.max_qp_rd_atom, attr.max_qp_init_rd_atom)));
}

RdmaConn *
rdma_conn_connect (const gchar *host, guint port, const gchar *source,
                   const RdmaConnSettings *settings, gint64 deadline_us, GError **error)
{
  RdmaConn *conn = conn_new (settings, TRUE);
  struct rdma_addrinfo *dst = NULL, *src = NULL;
  struct rdma_cm_event *ev;
  struct rdma_conn_param param = { 0 };
  RdmaWireRequest request;
  gchar *what = g_strdup_printf ("connecting to %s:%u", host, port);
  int rc, timeout_ms;

  conn->cm_channel = rdma_res_channel_create (error);
  if (conn->cm_channel == NULL)
    goto fail;
  conn->poller.cm_fd = conn->cm_channel->fd;
  conn->id = rdma_res_id_create (conn->cm_channel, conn, error);
  if (conn->id == NULL)
    goto fail;
  set_state (conn, RDMA_CONN_RESOLVING);

  dst = resolve (host, port, FALSE, error);
  if (dst == NULL)
    goto fail;
  if (source != NULL && (src = resolve (source, 0, TRUE, error)) == NULL)
    goto fail;
  timeout_ms = (int) CLAMP ((deadline_us - g_get_monotonic_time ()) / 1000, 1, 60000);
  if (rdma_resolve_addr (conn->id, src ? src->ai_src_addr : NULL, dst->ai_dst_addr,
                         timeout_ms) != 0) {
    int err = errno;
    rdma_status_set_error (error, err == ENODEV ? RDMA_ERR_NO_DEVICE : RDMA_ERR_RESOLVE,
                           "rdma_resolve_addr", err, -1, "%s", what);
    goto fail;
  }
  if ((ev = wait_cm_event (conn, RDMA_CM_EVENT_ADDR_RESOLVED, what, deadline_us, error)) == NULL)
    goto fail;
  rdma_verbs->ack_cm_event (ev);
  timeout_ms = (int) CLAMP ((deadline_us - g_get_monotonic_time ()) / 1000, 1, 60000);
  if (rdma_resolve_route (conn->id, timeout_ms) != 0) {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_RESOLVE, "rdma_resolve_route", err, -1, "%s", what);
    goto fail;
  }
  if ((ev = wait_cm_event (conn, RDMA_CM_EVENT_ROUTE_RESOLVED, what, deadline_us, error)) == NULL)
    goto fail;
  rdma_verbs->ack_cm_event (ev);

  if (!setup_resources (conn, &request.hello, error))
    goto fail;
  set_ack_timeout (conn);
  set_state (conn, RDMA_CONN_CONNECTING);
  param.private_data = &request;
  param.private_data_len = request_finish (conn, &request);
  conn->max_rd_atomic = rd_atomic_depth (conn->id->verbs);
  param.responder_resources = (guint8) conn->max_rd_atomic;
  param.initiator_depth = (guint8) conn->max_rd_atomic;
  param.retry_count = 7;
  param.rnr_retry_count = RDMA_RNR_RETRY_INFINITE;
  rc = rdma_connect (conn->id, &param);
  if (rc != 0) {
    int err = errno;
    rdma_status_set_error (error, rdma_status_from_errno (err), "rdma_connect", err, -1, "%s",
                           what);
    goto fail;
  }
  if ((ev = wait_cm_event (conn, RDMA_CM_EVENT_ESTABLISHED, what, deadline_us, error)) == NULL)
    goto fail;
  {
    gboolean ok = take_peer_hello (conn, ev->param.conn.private_data,
                                   ev->param.conn.private_data_len, error);
    rdma_verbs->ack_cm_event (ev);
    if (!ok)
      goto fail;
  }
  set_state (conn, RDMA_CONN_CONNECTED);
  rdma_keepalive_start (conn, g_get_monotonic_time ());
  if (src)
    rdma_freeaddrinfo (src);
  rdma_freeaddrinfo (dst);
  g_free (what);
  return conn;

fail:
  if (src)
    rdma_freeaddrinfo (src);
  if (dst)
    rdma_freeaddrinfo (dst);
  g_free (what);
  rdma_conn_free (conn);
  return NULL;
}

RdmaConn *
rdma_conn_accept_start (struct rdma_cm_id *id, const void *private_data, gsize len,
                        const RdmaConnSettings *settings, GError **error)
{
  RdmaConn *conn = conn_new (settings, FALSE);
  struct rdma_conn_param param = { 0 };
  RdmaWireHello hello;

  conn->id = id;
  rdma_res_id_adopt (id);
  id->context = conn;
  set_state (conn, RDMA_CONN_ACCEPTING);
  if (!setup_resources (conn, &hello, error))
    goto reject;
  if (!take_request (conn, private_data, len, error))
    goto reject;
  set_ack_timeout (conn);
  param.private_data = &hello;
  param.private_data_len = sizeof hello;
  conn->max_rd_atomic = rd_atomic_depth (conn->id->verbs);
  param.responder_resources = (guint8) conn->max_rd_atomic;
  param.initiator_depth = (guint8) conn->max_rd_atomic;
  param.rnr_retry_count = RDMA_RNR_RETRY_INFINITE;
  if (rdma_accept (id, &param) != 0) {
    int err = errno;
    rdma_status_set_error (error, rdma_status_from_errno (err), "rdma_accept", err, -1, NULL);
    goto fail;
  }
  return conn;

reject:
  /* Tell the client why: our hello carries our version. */
  rdma_wire_hello_init (&hello, conn->settings.wire_version);
  rdma_reject (id, &hello, sizeof hello);
fail:
  rdma_conn_free (conn);
  return NULL;
}

/* The connection's own CM event channel, which its id's events move to. */
static gboolean
own_cm_channel (RdmaConn *conn, GError **error)
{
  conn->cm_channel = rdma_res_channel_create (error);
  if (conn->cm_channel == NULL)
    return FALSE;
  conn->poller.cm_fd = conn->cm_channel->fd;
  if (rdma_verbs->migrate_id (conn->id, conn->cm_channel) != 0) {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_SYSTEM, "rdma_migrate_id", err, -1, NULL);
    return FALSE;
  }
  return TRUE;
}

gboolean
rdma_conn_accept_finish (RdmaConn *conn, GError **error)
{
  if (!own_cm_channel (conn, error))
    return FALSE;
  set_state (conn, RDMA_CONN_CONNECTED);
  rdma_keepalive_start (conn, g_get_monotonic_time ());
  return TRUE;
}

gboolean
rdma_conn_pair (struct rdma_cm_id *client_id, struct rdma_cm_id *server_id,
                const RdmaConnSettings *client_settings,
                const RdmaConnSettings *server_settings, RdmaConn **client,
                RdmaConn **server, GError **error)
{
  RdmaConn *c = conn_new (client_settings, TRUE), *s = conn_new (server_settings, FALSE);
  RdmaWireRequest c_req;
  RdmaWireHello s_hello;
  gboolean ok;

  *client = *server = NULL;
  c->id = client_id;
  s->id = server_id;
  rdma_res_id_adopt (client_id);
  rdma_res_id_adopt (server_id);
  client_id->context = c;
  server_id->context = s;
  /* as rdma_conn_connect once the route is resolved, and rdma_conn_accept_start on the
   * connection request; the server's hello comes back as the client's ESTABLISHED would */
  set_state (c, RDMA_CONN_RESOLVING);
  set_state (s, RDMA_CONN_ACCEPTING);
  ok = setup_resources (c, &c_req.hello, error);
  if (ok) {
    guint8 c_len = request_finish (c, &c_req);

    set_state (c, RDMA_CONN_CONNECTING);
    ok = setup_resources (s, &s_hello, error)
         && take_request (s, &c_req, c_len, error)
         && take_peer_hello (c, &s_hello, sizeof s_hello, error)
         && own_cm_channel (c, error) && own_cm_channel (s, error);
  }
  if (!ok) {
    rdma_conn_free (c);
    rdma_conn_free (s);
    return FALSE;
  }
  set_state (c, RDMA_CONN_CONNECTED);
  set_state (s, RDMA_CONN_CONNECTED);
  rdma_keepalive_start (c, g_get_monotonic_time ());
  rdma_keepalive_start (s, g_get_monotonic_time ());
  *client = c;
  *server = s;
  return TRUE;
}

void
rdma_conn_free (RdmaConn *conn)
{
  RdmaMessage *msg;

  if (conn == NULL)
    return;
  if (conn->state == RDMA_CONN_CONNECTED) {
    gint64 deadline = g_get_monotonic_time () + RDMA_CLOSE_FLUSH_US;
    for (guint i = 0; i < RDMA_PROTO_COUNT; i++) {
      const RdmaProtoOps *ops = rdma_proto_registry[i];
      if (ops != NULL && ops->flush != NULL)
        ops->flush (conn, TRUE, deadline, NULL);
    }
    /* What was sent goes out before the disconnect, as close (2) delivers a socket's queued
     * bytes: control messages still held (a bulk DONE among them) and the WRs in flight,
     * which rdma_disconnect would flush unsent (a peer waiting for that DONE then saw us
     * vanish: test_bulk_faults, once in 20 runs). */
    conn->closing = TRUE;
    if (rdma_conn_retire_unsignalled (conn, deadline, NULL))
      rdma_conn_wait_for (conn, sent_all, NULL, deadline, NULL);
  }
  if (conn->id != NULL && (conn->state == RDMA_CONN_CONNECTED
                           || conn->state == RDMA_CONN_DISCONNECTED
                           || conn->state == RDMA_CONN_FAILED))
    rdma_verbs->disconnect (conn->id);
  while ((msg = g_queue_pop_head (&conn->received)) != NULL) {
    if (msg->owner == RDMA_MSG_ON_HEAP)
      g_free (msg->data);
    g_free (msg);
  }
  /* the QP goes first: no WR can touch protocol memory once it is deregistered */
  rdma_res_qp_destroy (conn->id);
  for (guint i = 0; i < RDMA_PROTO_COUNT; i++) {
    const RdmaProtoOps *ops = rdma_proto_registry[i];
    if (ops != NULL && ops->teardown != NULL)
      ops->teardown (conn);
  }
  rdma_ring_free (conn);
  rdma_bulk_free (conn);
  rdma_tx_clear (&conn->tx[0], &conn->stats.pinned_bytes);
  rdma_tx_clear (&conn->tx[1], &conn->stats.pinned_bytes);
  g_queue_clear_full (&conn->control_out, g_free);
  g_clear_pointer (&conn->recv_ops, g_free);
  g_clear_pointer (&conn->send_ops, g_free);
  g_ptr_array_unref (conn->op_blocks);
  rdma_pool_clear (&conn->send_pool);
  rdma_pool_clear (&conn->recv_pool);
  rdma_res_cq_destroy (&conn->poller.cq, &conn->poller.comp_channel,
                       &conn->poller.unacked_events);
  rdma_res_pd_destroy (&conn->pd);
  rdma_res_id_destroy (&conn->id);
  rdma_res_channel_destroy (&conn->cm_channel);
  conn->state = RDMA_CONN_CLOSED;
  g_array_unref (conn->held_slots);
  g_clear_error (&conn->failure);
  g_free (conn);
}

/* ---- messages ---- */

static gboolean
tx_idle (RdmaConn *conn, gpointer tx)
{
  return ((RdmaTx *) tx)->busy == 0;
}

RdmaTx *
rdma_conn_tx_begin (RdmaConn *conn, gint64 deadline_us, GError **error)
{
  RdmaTx *tx = &conn->tx[conn->tx_cur];

  if (!rdma_conn_check_usable (conn, error))
    return NULL;
  if (tx->busy > 0 && !rdma_conn_wait_for (conn, tx_idle, tx, deadline_us, error))
    return NULL;
  tx->len = 0;
  return tx;
}

gboolean
rdma_conn_tx_frame (RdmaConn *conn, const void *buf, gsize len, GError **error)
{
  RdmaTx *tx = &conn->tx[conn->tx_cur];

  if (len == 0)
    return TRUE;   /* (a fresh buffer has no memory yet: no memcpy to NULL) */
  if (tx->len + len > tx->cap
      && !rdma_tx_reserve (tx, conn->pd, tx->len + len, conn->settings.numa_node,
                           &conn->stats.pinned_bytes, error))
    return FALSE;
  memcpy (tx->base + tx->len, buf, len);
  tx->len += len;
  return TRUE;
}

gboolean
rdma_conn_tx_append (RdmaConn *conn, const guint8 *buf, gsize len, GError **error)
{
  if (!rdma_conn_tx_frame (conn, buf, len, error))
    return FALSE;
  conn->stats.bytes_copied += len;
  return TRUE;
}

void
rdma_conn_set_bulk (RdmaConn *conn, const RdmaConnSettings *from)
{
  conn->settings.bulk_chunk = from->bulk_chunk;
  conn->settings.bulk_depth = from->bulk_depth;
  /* a cache made already keeps its bounds (rdma_rcache has no resize): said, not ignored */
  if (conn->bulk == NULL) {
    conn->settings.rcache_entries = from->rcache_entries;
    conn->settings.rcache_bytes = from->rcache_bytes;
  } else if (from->rcache_entries != conn->settings.rcache_entries
             || from->rcache_bytes != conn->settings.rcache_bytes) {
    g_warning ("ThriftRdma: rcache-entries / rcache-bytes changed after the connection's "
               "registration cache was made (its first bulk field): it keeps %u entries and "
               "%" G_GUINT64_FORMAT " bytes until the connection closes; set them before "
               "open", conn->settings.rcache_entries, conn->settings.rcache_bytes);
  }
}

guint8 *
rdma_conn_tx_data (RdmaConn *conn)
{
  return conn->tx[conn->tx_cur].base;
}

gboolean
rdma_conn_tx_send (RdmaConn *conn, gint64 deadline_us, GError **error)
{
  RdmaTx *tx = &conn->tx[conn->tx_cur];
  const RdmaProtoOps *ops = conn->tx_proto;

  if (!rdma_conn_check_usable (conn, error))
    return FALSE;
  if (tx->len > conn->peer.max_message) {
    rdma_status_set_error (error, RDMA_ERR_TOO_LARGE, "send", 0, -1,
                           "a %" G_GSIZE_FORMAT "-byte message; the peer accepts at most %u",
                           tx->len, conn->peer.max_message);
    return FALSE;
  }
  /* a protocol the peer does not accept: the one every peer accepts */
  if (ops == NULL || !(conn->peer.protocols & (1u << ops->id)))
    ops = &rdma_proto_eager_ops;
  if (ops->open != NULL) {
    switch (ops->open (conn, deadline_us, error)) {
    case RDMA_OPEN_READY:
      break;
    case RDMA_OPEN_REFUSED:
      ops = &rdma_proto_eager_ops;
      break;
    default:
      return FALSE;
    }
  }
  /* what the last protocol posted and the peer does not know of yet goes first */
  if (conn->last_tx_proto != NULL && conn->last_tx_proto != ops
      && conn->last_tx_proto->flush != NULL
      && !conn->last_tx_proto->flush (conn, FALSE, deadline_us, error))
    return FALSE;
  /* the protocols post from registered memory: an empty message still needs a buffer */
  if (tx->mr == NULL && !rdma_tx_reserve (tx, conn->pd, 1, conn->settings.numa_node,
                                             &conn->stats.pinned_bytes, error))
    return FALSE;
  /* a protocol may hold every message back (RFP: until the peer fetched its last one) */
  for (guint i = 0; i < RDMA_PROTO_COUNT; i++) {
    const RdmaProtoOps *p = rdma_proto_registry[i];
    if (p != NULL && p->before_send != NULL && !p->before_send (conn, ops, deadline_us, error))
      return FALSE;
  }
  if (!ops->send_message (conn, tx, deadline_us, error))
    return FALSE;
  conn->tx_cur ^= 1;
  conn->last_tx_proto = ops;
  conn->stats.messages_sent++;
  conn->msgs_sent++;
  if (!conn->is_client && !conn->last_was_send)
    conn->stats.round_trips++;
  conn->last_was_send = TRUE;
  return TRUE;
}

gboolean
rdma_conn_send (RdmaConn *conn, const guint8 *buf, gsize len, gint64 deadline_us,
                GError **error)
{
  if (rdma_conn_tx_begin (conn, deadline_us, error) == NULL)
    return FALSE;
  if (len > conn->peer.max_message) {
    rdma_status_set_error (error, RDMA_ERR_TOO_LARGE, "send", 0, -1,
                           "a %" G_GSIZE_FORMAT "-byte message; the peer accepts at most %u",
                           len, conn->peer.max_message);
    return FALSE;
  }
  return rdma_conn_tx_append (conn, buf, len, error)
         && rdma_conn_tx_send (conn, deadline_us, error);
}

RdmaMessage *
rdma_conn_ready_message (RdmaConn *conn)
{
  RdmaMessage *msg = g_queue_peek_head (&conn->received);
  return msg != NULL && !msg->pending ? msg : NULL;
}

RdmaMessage *
rdma_conn_wait_message (RdmaConn *conn, gint64 deadline_us, GError **error)
{
  for (;;) {
    RdmaMessage *msg = rdma_conn_ready_message (conn);

    if (msg != NULL)
      return msg;
    if (conn->state == RDMA_CONN_DISCONNECTED) {
      /* The peer may have sent before it left: look at the CQ until it is empty. */
      if (rdma_conn_progress (conn, -1, NULL))
        continue;
      rdma_status_set_error (error, RDMA_ERR_PEER_GONE, "receive", 0, -1,
                             "the peer closed the connection");
      return NULL;
    }
    if (!rdma_conn_check_usable (conn, error))
      return NULL;
    if (!rdma_conn_progress (conn, deadline_us, error))
      return NULL;
  }
}

gboolean
rdma_conn_release_message (RdmaConn *conn, GError **error)
{
  RdmaMessage *msg = rdma_conn_ready_message (conn);
  gboolean ok = TRUE;

  if (msg == NULL)
    return TRUE;
  g_queue_pop_head (&conn->received);
  conn->unread_bytes -= msg->len;
  switch (msg->owner) {
  case RDMA_MSG_ON_HEAP:
    g_free (msg->data);
    break;
  case RDMA_MSG_IN_SLOT:
    if (conn->state == RDMA_CONN_CONNECTED)
      ok = rdma_conn_repost (conn, (guint32) msg->slot, TRUE, error);
    break;
  case RDMA_MSG_IN_PROTO:
    if (conn->state == RDMA_CONN_CONNECTED)
      ok = msg->proto->release (conn, msg->data, msg->len, msg->token, error);
    break;
  }
  g_free (msg);
  if (ok && conn->state == RDMA_CONN_CONNECTED)
    ok = repost_held (conn, error);
  return ok && rdma_conn_return_credits (conn, error);
}

/* ---- what the shells read and set (rdma_conn.h) ---- */

const guint8 *
rdma_message_data (const RdmaMessage *msg)
{
  return msg->data;
}

gsize
rdma_message_len (const RdmaMessage *msg)
{
  return msg->len;
}

const RdmaProtoOps *
rdma_message_proto (const RdmaMessage *msg)
{
  return msg->proto;
}

RdmaConnState
rdma_conn_get_state (const RdmaConn *conn)
{
  return conn->state;
}

gboolean
rdma_conn_is_client (const RdmaConn *conn)
{
  return conn->is_client;
}

RdmaMessage *
rdma_conn_head_message (RdmaConn *conn)
{
  return g_queue_peek_head (&conn->received);
}

void
rdma_conn_set_polling (RdmaConn *conn, ThriftRdmaPolling polling)
{
  conn->poller.polling = polling;
}

void
rdma_conn_set_wake (RdmaConn *conn, int wake_fd, const gint *interrupted)
{
  conn->poller.wake_fd = wake_fd;
  conn->poller.interrupted = interrupted;
}

void
rdma_conn_get_fds (const RdmaConn *conn, int *cq_fd, int *cm_fd)
{
  *cq_fd = conn->poller.comp_channel != NULL ? conn->poller.comp_channel->fd : -1;
  *cm_fd = conn->poller.cm_fd;
}

ThriftRdmaStats *
rdma_conn_stats (RdmaConn *conn)
{
  return &conn->stats;
}

void
rdma_conn_set_tx_proto (RdmaConn *conn, const RdmaProtoOps *proto)
{
  conn->tx_proto = proto;
}

const RdmaProtoOps *
rdma_conn_last_tx_proto (const RdmaConn *conn)
{
  return conn->last_tx_proto;
}

guint32
rdma_conn_peer_max_message (const RdmaConn *conn)
{
  return conn->peer.max_message;
}

guint32
rdma_conn_peer_protocols (const RdmaConn *conn)
{
  return conn->peer.protocols;
}

const guint8 *
rdma_conn_peer_pair_token (const RdmaConn *conn)
{
  return conn->has_peer_pair_token ? conn->peer_pair_token : NULL;
}

struct rdma_cm_id *
rdma_conn_cm_id (const RdmaConn *conn)
{
  return conn->id;
}

gint
rdma_conn_numa_node (const RdmaConn *conn)
{
  return conn->settings.numa_node;
}
