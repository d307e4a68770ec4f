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
 * rdma_conn_post.c: what a connection posts: work requests on the send queue (with the slots
 * and ops that track them), control messages, receives, and the credits that go back.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "rdma_conn_private.h"
#include "rdma_conn_window.h"
#include "rdma_helper.h"
#include "rdma_status.h"
#include "rdma_verbs.h"

/* ops are allocated this many at a time, and never freed before the connection */
#define RDMA_OP_BLOCK 32

RdmaOp *
rdma_conn_op_get (RdmaConn *conn, RdmaOpKind kind, guint8 proto)
{
  RdmaOp *op;

  if (conn->free_ops == NULL)
  {
    RdmaOp *block = g_new0 (RdmaOp, RDMA_OP_BLOCK);
    g_ptr_array_add (conn->op_blocks, block);
    for (guint i = 0; i < RDMA_OP_BLOCK; i++)
    {
      block[i].next_free = conn->free_ops;
      conn->free_ops = &block[i];
    }
  }
  op = conn->free_ops;
  conn->free_ops = op->next_free;
  *op = (RdmaOp){ .kind = kind, .proto = proto, .slot = -1, .pooled = TRUE };
  return op;
}

void
rdma_conn_op_put (RdmaConn *conn, RdmaOp *op)
{
  op->next_free = conn->free_ops;
  conn->free_ops = op;
}

gboolean
rdma_conn_sq_reserve (RdmaConn *conn, guint n, gint64 deadline_us, GError **error)
{
  while (conn->sq_used + n > conn->sq_depth)
  {
    if (!rdma_conn_check_usable (conn, error) || !rdma_conn_progress (conn, deadline_us, error))
      return FALSE;
  }
  return rdma_conn_check_usable (conn, error);
}

static void
count_wr (RdmaConn *conn, const struct ibv_send_wr *wr)
{
  switch (wr->opcode)
  {
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

/* The send queue's accounting of @wr (a list): an unsignalled WR is retired by the next
 * signalled one, whose completion means the send queue has moved past both.  A signal is
 * forced before the queue could fill up with WRs nobody retires. */
static void
account_wr (RdmaConn *conn, struct ibv_send_wr *wr)
{
  for (struct ibv_send_wr *w = wr; w != NULL; w = w->next)
  {
    RdmaOp *op = rdma_op_from_wr_id (w->wr_id);
    if (!(w->send_flags & IBV_SEND_SIGNALED) && conn->sq_unsignalled + 1 >= conn->sq_depth / 2)
      w->send_flags |= IBV_SEND_SIGNALED;
    if (w->send_flags & IBV_SEND_SIGNALED)
    {
      g_assert (op != &conn->quiet_op);
      op->sq_entries = conn->sq_unsignalled + 1;
      conn->sq_unsignalled = 0;
      if (op->tx != NULL)
        op->tx->busy++;
    }
    else
    {
      conn->sq_unsignalled++;
    }
    conn->sq_used++;
  }
}

gboolean
rdma_conn_post_wr_accounted (RdmaConn *conn, struct ibv_send_wr *wr, const gchar *what,
                             GError **error)
{
  struct ibv_send_wr *bad = NULL;
  int rc;

  /* what completes a receive of the peer wakes it where it waits for solicited events only
   * (RDMA_WIRE_HELLO_SOLICITED: every message's WRs, each fragment's included) */
  for (struct ibv_send_wr *w = wr; w != NULL; w = w->next)
    if (w->opcode == IBV_WR_SEND || w->opcode == IBV_WR_SEND_WITH_IMM
        || w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
      w->send_flags |= IBV_SEND_SOLICITED;
  rc = rdma_verbs->post_send (conn->id->qp, wr, &bad);
  conn->stats.post_send_calls++;
  if (rc != 0)
  {
    GError *e = NULL;
    rdma_status_set_error (&e, rdma_status_from_errno (rc), "ibv_post_send", rc, -1, "%s", what);
    /* what was not posted never completes: give back what it holds */
    for (struct ibv_send_wr *w = bad; w != NULL; w = w->next)
    {
      RdmaOp *op = rdma_op_from_wr_id (w->wr_id);
      conn->sq_used--;
      if ((w->send_flags & IBV_SEND_SIGNALED) && op->tx != NULL)
        op->tx->busy--;
      if (op->kind == RDMA_OP_SEND && op->slot >= 0)
        rdma_pool_put (&conn->send_pool, (guint32) op->slot);
      if (op->pooled)
        rdma_conn_op_put (conn, op);
    }
    rdma_conn_fail (conn, e);
    g_propagate_error (error, e);
    return FALSE;
  }
  for (; wr != NULL; wr = wr->next)
  {
    conn->stats.wr_posted++;
    count_wr (conn, wr);
  }
  return TRUE;
}

gboolean
rdma_conn_post_wr (RdmaConn *conn, struct ibv_send_wr *wr, const gchar *what, GError **error)
{
  account_wr (conn, wr);
  /* behind a memory window's bind or invalidation, in order (rdma_conn_window.h) */
  if (rdma_window_defer (conn, wr, what))
    return TRUE;
  return rdma_conn_post_wr_accounted (conn, wr, what, error);
}

gboolean
rdma_conn_post_wr_alone (RdmaConn *conn, struct ibv_send_wr *wr, guint32 entries, const gchar *what,
                         GError **error)
{
  g_assert (wr->next == NULL && (wr->send_flags & IBV_SEND_SIGNALED));
  rdma_op_from_wr_id (wr->wr_id)->sq_entries = entries;
  conn->sq_used++;
  return rdma_conn_post_wr_accounted (conn, wr, what, error);
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

  g_return_val_if_fail (len <= conn->send_pool.slot_size, FALSE);
  *op = (RdmaOp){ .kind = RDMA_OP_SEND, .proto = proto, .slot = slot };
  if (tx != NULL && tx_len > 0)
  {
    /* gather the payload from the transmit buffer: no copy into the slot */
    sge[1] = (struct ibv_sge){
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
  rdma_wire_header_set_freed (slot, (guint8) rdma_helpers_take_freed (conn, G_MAXUINT8));
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

  while ((m = g_queue_peek_head (&conn->control_out)) != NULL)
  {
    guint8 *dst, proto;
    guint32 len;

    if (conn->state != RDMA_CONN_CONNECTED || conn->sq_used + 1 > conn->sq_depth
        || rdma_window_busy (conn) || !rdma_pool_get (&conn->send_pool, &slot))
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
rdma_conn_send_control (RdmaConn *conn, guint8 proto, guint8 kind, const void *payload, guint32 len,
                        GError **error)
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
                                     rdma_conn_op_get (conn, RDMA_OP_WRITE, RDMA_WIRE_PROTO_ENGINE),
                                     "RDMA WRITE (zero bytes, retiring unsignalled WRs)", error);
}

gboolean
rdma_conn_wait_for (RdmaConn *conn, gboolean (*done) (RdmaConn *, gpointer), gpointer data,
                    gint64 deadline_us, GError **error)
{
  while (!done (conn, data))
  {
    /* The peer may have answered before it left (a bulk DONE, then close): its disconnect
     * can be seen first, with the answer still in the CQ (test_bulk_faults, once in 90
     * runs).  Look until the CQ is empty, as rdma_conn_wait_message does. */
    if (conn->state == RDMA_CONN_DISCONNECTED && rdma_conn_progress (conn, -1, NULL))
      continue;
    if (!rdma_conn_check_usable (conn, error) || !rdma_conn_progress (conn, deadline_us, error))
      return FALSE;
  }
  return TRUE;
}

guint8 *
rdma_conn_recv_slot (RdmaConn *conn, guint32 slot)
{
  return conn->srq != NULL ? rdma_srq_slot (conn->srq, slot)
                           : rdma_pool_slot (&conn->recv_pool, slot);
}

void
rdma_conn_drop_slot (RdmaConn *conn, guint32 slot)
{
  GError *e = NULL;

  if (conn->srq != NULL && !rdma_srq_repost (conn->srq, slot, &e))
  {
    g_warning ("ThriftRdma: a receive slot cannot go back to the shared queue: %s", e->message);
    g_error_free (e);
  }
}

gboolean
rdma_conn_post_recv_list (RdmaConn *conn, const guint32 *slots, guint n, GError **error)
{
  struct ibv_sge sge[n];
  struct ibv_recv_wr wr[n];
  struct ibv_recv_wr *bad = NULL;
  int rc;

  if (conn->srq != NULL)
  {
    for (guint i = 0; i < n; i++)
    {
      GError *e = NULL;
      if (!rdma_srq_repost (conn->srq, slots[i], &e))
        return rdma_conn_fail_with (conn, e, error);
    }
    conn->stats.post_recv_calls += n;
    conn->stats.wr_posted += n;
    conn->stats.recvs += n;
    return TRUE;
  }
  for (guint i = 0; i < n; i++)
  {
    sge[i] = (struct ibv_sge){
      .addr = (uintptr_t) rdma_pool_slot (&conn->recv_pool, slots[i]),
      .length = conn->recv_pool.slot_size,
      .lkey = conn->recv_pool.mr->lkey,
    };
    conn->recv_ops[slots[i]] = (RdmaOp){ .kind = RDMA_OP_RECV, .slot = slots[i] };
    wr[i] = (struct ibv_recv_wr){
      .wr_id = rdma_op_wr_id (&conn->recv_ops[slots[i]]),
      .sg_list = &sge[i],
      .num_sge = 1,
      .next = i + 1 < n ? &wr[i + 1] : NULL,
    };
  }
  rc = rdma_verbs->post_recv (conn->id->qp, wr, &bad);
  conn->stats.post_recv_calls++;
  if (rc != 0)
  {
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
   * instead of reposted, so no credit goes back and the peer's sends stop; a shared slot
   * goes back at once and only its credit is held. */
  if (data_slot && conn->unread_bytes > conn->settings.unread_limit)
  {
    conn->stats.slots_held++;
    if (conn->srq == NULL)
    {
      g_array_append_val (conn->held_slots, slot);
      return TRUE;
    }
    conn->held_credits++;
    return rdma_conn_post_recv_list (conn, &slot, 1, error);
  }
  if (!rdma_conn_post_recv_list (conn, &slot, 1, error))
    return FALSE;
  if (data_slot)
    rdma_credit_slot_freed (&conn->credits);
  return TRUE;
}

/* Reposts the held slots once the reader caught up. */
gboolean
rdma_conn_repost_held (RdmaConn *conn, GError **error)
{
  guint n = conn->held_slots->len;

  if (conn->unread_bytes > conn->settings.unread_limit)
    return TRUE;
  for (; conn->held_credits > 0; conn->held_credits--)
    rdma_credit_slot_freed (&conn->credits);
  if (n == 0)
    return TRUE;
  g_array_set_size (conn->held_slots, 0);
  if (!rdma_conn_post_recv_list (conn, (const guint32 *) conn->held_slots->data, n, error))
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
  if (!rdma_credit_need_explicit (&conn->credits) && !rdma_helpers_need_report (conn))
    return TRUE;
  if (conn->sq_used + 1 > conn->sq_depth || rdma_window_busy (conn)
      || !rdma_pool_get (&conn->send_pool, &slot))
    return TRUE; /* deferred: tried again after the next completion */
  rdma_conn_header (conn, rdma_pool_slot (&conn->send_pool, slot), RDMA_PROTO_EAGER,
                    RDMA_WIRE_CREDIT, 0, 0, 0);
  conn->stats.credit_messages++;
  return rdma_conn_post_send (conn, RDMA_PROTO_EAGER, slot, RDMA_WIRE_HEADER_SIZE, NULL, 0, 0,
                              error);
}

static gboolean
sent_all (RdmaConn *conn, gpointer data)
{
  return conn->sq_used == 0 && g_queue_is_empty (&conn->control_out);
}

gboolean
rdma_conn_flush_sent (RdmaConn *conn, gint64 deadline_us)
{
  return rdma_conn_retire_unsignalled (conn, deadline_us, NULL)
         && rdma_conn_wait_for (conn, sent_all, NULL, deadline_us, NULL);
}
