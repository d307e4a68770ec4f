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
 * rdma_conn_msg.c: messages as the shells see them: framing and sending a message, waiting
 * for one and giving it back, and what the shells read and set (rdma_conn.h).
 */
#include "config.h"

#include <string.h>

#include "rdma_conn_private.h"
#include "rdma_status.h"

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

void
rdma_conn_tx_may_copy (RdmaConn *conn, gsize bytes)
{
  conn->tx_may_copy = bytes;
}

gboolean
rdma_conn_tx_frame (RdmaConn *conn, const void *buf, gsize len, GError **error)
{
  RdmaTx *tx = &conn->tx[conn->tx_cur];

  if (len == 0)
    return TRUE; /* (a fresh buffer has no memory yet: no memcpy to NULL) */
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
  if (conn->bulk == NULL)
  {
    conn->settings.rcache_entries = from->rcache_entries;
    conn->settings.rcache_bytes = from->rcache_bytes;
  }
  else if (from->rcache_entries != conn->settings.rcache_entries
           || from->rcache_bytes != conn->settings.rcache_bytes)
  {
    g_warning ("ThriftRdma: rcache-entries / rcache-bytes changed after the connection's "
               "registration cache was made (its first bulk field): it keeps %u entries and "
               "%" G_GUINT64_FORMAT " bytes until the connection closes; set them before "
               "open",
               conn->settings.rcache_entries, conn->settings.rcache_bytes);
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
  if (tx->len > conn->peer.max_message)
  {
    rdma_status_set_error (error, RDMA_ERR_TOO_LARGE, "send", 0, -1,
                           "a %" G_GSIZE_FORMAT "-byte message; the peer accepts at most %u",
                           tx->len, conn->peer.max_message);
    return FALSE;
  }
  /* a protocol the peer does not accept: the one every peer accepts */
  if (ops == NULL || !(conn->peer.protocols & (1u << ops->id)))
    ops = &rdma_proto_eager_ops;
  if (ops->open != NULL)
  {
    switch (ops->open (conn, deadline_us, error))
    {
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
  if (tx->mr == NULL
      && !rdma_tx_reserve (tx, conn->pd, 1, conn->settings.numa_node, &conn->stats.pinned_bytes,
                           error))
    return FALSE;
  /* a protocol may hold every message back (RFP: until the peer fetched its last one) */
  for (guint i = 0; i < RDMA_PROTO_COUNT; i++)
  {
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
rdma_conn_send (RdmaConn *conn, const guint8 *buf, gsize len, gint64 deadline_us, GError **error)
{
  if (rdma_conn_tx_begin (conn, deadline_us, error) == NULL)
    return FALSE;
  if (len > conn->peer.max_message)
  {
    rdma_status_set_error (error, RDMA_ERR_TOO_LARGE, "send", 0, -1,
                           "a %" G_GSIZE_FORMAT "-byte message; the peer accepts at most %u", len,
                           conn->peer.max_message);
    return FALSE;
  }
  return rdma_conn_tx_append (conn, buf, len, error)
         && rdma_conn_tx_send (conn, deadline_us, error);
}

RdmaMessage *
rdma_conn_ready_message (RdmaConn *conn)
{
  RdmaMessage *msg = g_queue_peek_head (&conn->received);

  if (msg == NULL || msg->pending)
    return NULL;
  msg->opened = TRUE;
  return msg;
}

static RdmaMessage *
wait_message (RdmaConn *conn, gint64 deadline_us, GError **error)
{
  for (;;)
  {
    RdmaMessage *msg = rdma_conn_ready_message (conn);

    if (msg != NULL)
      return msg;
    if (conn->state == RDMA_CONN_DISCONNECTED)
    {
      /* The peer may have sent before it left: look at the CQ until it is empty. */
      if (rdma_conn_progress (conn, -1, NULL))
        continue;
      rdma_status_set_error (error, RDMA_ERR_PEER_GONE, "receive", 0, -1,
                             "the peer closed the connection");
      return NULL;
    }
    if (!rdma_conn_check_usable (conn, error))
      return NULL;
    if (!rdma_conn_progress_message (conn, deadline_us, error))
      return NULL;
  }
}

RdmaMessage *
rdma_conn_wait_message (RdmaConn *conn, gint64 deadline_us, GError **error)
{
  GError *e = NULL;
  RdmaMessage *msg;

  /* a measured polling takes one way for all the waits of a message and times the rounds
   * (rdma_poll_cost.h) */
  rdma_poller_call_begin (&conn->poller, conn->stats.messages_received);
  msg = wait_message (conn, deadline_us, &e);
  rdma_poller_call_end (&conn->poller, msg != NULL ? RDMA_CALL_MESSAGE
                                       : g_error_matches (e, RDMA_ENGINE_ERROR, RDMA_ERR_TIMED_OUT)
                                           ? RDMA_CALL_TIMED_OUT
                                           : RDMA_CALL_FAILED);
  if (e != NULL)
    g_propagate_error (error, e);
  return msg;
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
  switch (msg->owner)
  {
  case RDMA_MSG_ON_HEAP:
    g_free (msg->data);
    break;
  case RDMA_MSG_IN_SLOT:
    conn->in_slot--;
    if (conn->state == RDMA_CONN_CONNECTED)
      ok = rdma_conn_repost (conn, (guint32) msg->slot, TRUE, error);
    else
      rdma_conn_drop_slot (conn, (guint32) msg->slot);
    break;
  case RDMA_MSG_IN_PROTO:
    if (conn->state == RDMA_CONN_CONNECTED)
      ok = msg->proto->release (conn, msg->data, msg->len, msg->token, error);
    break;
  }
  g_free (msg);
  if (ok && conn->state == RDMA_CONN_CONNECTED)
    ok = rdma_conn_repost_held (conn, error);
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
rdma_conn_set_polling (RdmaConn *conn, ThriftRdmaPolling polling, RdmaMeasure measure)
{
  conn->poller.polling = polling;
  conn->poller.measure = polling == THRIFT_RDMA_POLLING_EVENT ? measure : RDMA_MEASURE_NONE;
}

const RdmaPollCost *
rdma_conn_poll_cost (const RdmaConn *conn)
{
  return &conn->poller.cost;
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
