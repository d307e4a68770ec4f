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
 * rdma_conn_wc.c: a connection's completions: each work completion handed to its op, its
 * protocol or its slot, and the messages that arrive queued for the reader.
 */
#include "config.h"

#include <string.h>

#include "rdma_conn_private.h"
#include "rdma_conn_window.h"
#include "rdma_helper.h"
#include "rdma_status.h"

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
  msg->opened = FALSE;
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
  /* A message read in place holds its slot, and with it a credit: a reader that lets many
   * wait would stop its peer at the credits (32 messages) rather than at the unread limit in
   * bytes, as the other carriers do, and a stream both ways, neither side reading yet,
   * would deadlock at both (test_protocols, /protocols/mixed_stream).  So past a few, a
   * message is copied out and its slot goes back. */
  if (owner == RDMA_MSG_IN_SLOT && conn->in_slot >= RDMA_IN_PLACE_MAX)
  {
    guint8 *copy = g_malloc (MAX (len, 1));
    GError *e = NULL;

    memcpy (copy, data, len);
    conn->stats.bytes_copied += len;
    queue_message (conn, proto, copy, len, RDMA_MSG_ON_HEAP, -1, token);
    /* (a failure fails the connection, which the reader hears of) */
    if (!rdma_conn_repost (conn, (guint32) slot, TRUE, &e))
      g_clear_error (&e);
    return;
  }
  if (owner == RDMA_MSG_IN_SLOT)
    conn->in_slot++;
  queue_message (conn, proto, data, len, owner, slot, token);
}

void
rdma_conn_message_to_heap (RdmaConn *conn, RdmaMessage *msg)
{
  msg->data = g_memdup2 (msg->data, MAX (msg->len, 1));
  msg->owner = RDMA_MSG_ON_HEAP;
  conn->stats.bytes_copied += msg->len;
}

RdmaMessage *
rdma_conn_deliver_pending (RdmaConn *conn, const RdmaProtoOps *proto, gsize len, guint64 token)
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

gboolean
rdma_conn_fail_with (RdmaConn *conn, GError *e, GError **error)
{
  rdma_conn_fail (conn, e);
  g_propagate_error (error, e);
  return FALSE;
}

/* Why a completion was flushed before any disconnect arrived: this side's device, if it said
 * so (rdma_domain.h), else either side. */
static const gchar *
flush_cause (RdmaConn *conn)
{
  switch (g_atomic_int_get (&conn->device_event) - 1)
  {
  case -1:
    /* soft-RoCE (rxe 6.1) fails a QP that refused a remote access with no event at all */
    return "; the queue pair went to the error state before any disconnect arrived: the peer "
           "closed it, or the device failed it (see the kernel log; soft-RoCE fails a queue "
           "pair that refused a remote access without an event or a log line)";
  case IBV_EVENT_QP_ACCESS_ERR:
    return "; the device put this side's queue pair in the error state: it refused a remote "
           "access by the peer (a key this side had taken back, as a READ that reaches it "
           "after the field's DONE uses, which a fabric that reorders a QP's packets allows)";
  case IBV_EVENT_QP_REQ_ERR:
    return "; the device put this side's queue pair in the error state: the peer sent a "
           "request it found invalid";
  case IBV_EVENT_QP_FATAL:
    return "; the device put this side's queue pair in the error state: a fatal error on "
           "this side (see the kernel log)";
  default:
    return "; the device reported this side's queue pair failed";
  }
}

static const gchar *
op_kind_name (const RdmaOp *op)
{
  switch (op->kind)
  {
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
  case RDMA_OP_FATAL:
    return "error notice (the device reported the queue pair failed)";
  default:
    return "unsignalled work request";
  }
}

/* A send queue op completed (successfully or flushed): give back what it holds. */
static void
retire (RdmaConn *conn, RdmaOp *op, gboolean signalled)
{
  if (signalled)
  {
    conn->sq_used -= MIN (op->sq_entries, conn->sq_used);
    if (op->tx != NULL && op->tx->busy > 0)
      op->tx->busy--;
  }
  if (op->kind == RDMA_OP_SEND && op->slot >= 0 && (guint64) op->slot < conn->send_pool.count)
  {
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
  const guint8 *buf = rdma_conn_recv_slot (conn, slot);
  const RdmaProtoOps *ops;

  if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM)
  {
    guint32 imm = GUINT32_FROM_BE (wc->imm_data);

    ops = rdma_proto_by_id (RDMA_IMM_PROTO (imm));
    if (ops == NULL || ops->on_imm == NULL
        || !(conn->settings.rx_protocols & (1u << RDMA_IMM_PROTO (imm))))
    {
      rdma_status_set_error (&e, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                             "garbage framing: a write with immediate 0x%08x for protocol %u, "
                             "which this side does not accept",
                             imm, RDMA_IMM_PROTO (imm));
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
  if (!rdma_credit_grant (&conn->credits, hdr.credits))
  {
    rdma_status_set_error (&e, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: the peer returns %u credits, only %u are "
                           "outstanding",
                           hdr.credits, conn->credits.in_flight);
    return rdma_conn_fail_with (conn, e, error);
  }
  if (hdr.freed > 0 && !rdma_helpers_peer_freed (conn, hdr.freed, &e))
    return rdma_conn_fail_with (conn, e, error);
  if (hdr.type == RDMA_WIRE_CREDIT)
    return rdma_conn_repost (conn, slot, FALSE, error);
  if (hdr.type == RDMA_WIRE_CONTROL)
  {
    guint8 payload[RDMA_WIRE_CONTROL_MAX];
    gboolean ok;

    /* copied out so the slot goes back before the handler (which may send) runs */
    memcpy (payload, buf + RDMA_WIRE_HEADER_SIZE, hdr.frag_len);
    if (!rdma_conn_repost (conn, slot, FALSE, error))
      return FALSE;
    if (hdr.proto == RDMA_WIRE_PROTO_ENGINE)
    {
      ok = rdma_helpers_control (conn, hdr.flags, payload, hdr.frag_len, &e);
    }
    else
    {
      ops = rdma_proto_by_id (hdr.proto);
      if (ops == NULL || ops->on_control == NULL)
      {
        rdma_status_set_error (&e, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                               "garbage framing: a control message for protocol %u", hdr.proto);
        return rdma_conn_fail_with (conn, e, error);
      }
      ok = ops->on_control (conn, hdr.flags, payload, hdr.frag_len, &e);
    }
    return ok || rdma_conn_fail_with (conn, e, error);
  }
  ops = rdma_proto_by_id (hdr.proto);
  if (ops == NULL || ops->on_receive == NULL || !(conn->settings.rx_protocols & (1u << hdr.proto)))
  {
    rdma_status_set_error (&e, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: a message for protocol id %u, which this side "
                           "does not accept",
                           hdr.proto);
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
  if (op->kind == RDMA_OP_FATAL)
  {
    /* posted by the device's event thread: counted here, by the owner */
    conn->stats.post_send_calls++;
    conn->stats.wr_posted++;
    conn->stats.writes++;
    if (wc->status == IBV_WC_SUCCESS)
      return TRUE; /* the QP was well after all */
  }
  if (op->kind == RDMA_OP_PROBE)
  {
    rdma_helpers_probe_done (conn);
    conn->sq_used -= MIN (op->sq_entries, conn->sq_used);
    if (wc->status == IBV_WC_SUCCESS)
    {
      conn->alive_seen = TRUE;
      return TRUE;
    }
  }
  else if (wc->status == IBV_WC_SUCCESS)
  {
    conn->alive_seen = TRUE;
  }
  if (op->kind != RDMA_OP_RECV && op->kind != RDMA_OP_PROBE)
    retire (conn, op, op->kind != RDMA_OP_QUIET);

  if (wc->status != IBV_WC_SUCCESS)
  {
    if (op->pooled)
      rdma_conn_op_put (conn, op);
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
                           : wc->status == IBV_WC_WR_FLUSH_ERR ? flush_cause (conn)
                                                               : "");
    return rdma_conn_fail_with (conn, e, error);
  }

  if (op->kind == RDMA_OP_RECV)
  {
    if (conn->srq != NULL)
      rdma_srq_taken (conn->srq);
    ok = handle_recv (conn, (guint32) op->slot, wc, error);
  }
  else
  {
    if (op->done != NULL)
      ok = op->done (conn, op, wc, error);
    if (op->pooled)
      rdma_conn_op_put (conn, op);
  }
  /* a window operation waits for the send queue to drain (rdma_conn_window.h) */
  return ok && rdma_window_kick (conn, error);
}
