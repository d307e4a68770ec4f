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
 * rdma_proto_eager.c: Eager-SendRecv.  A message is SENT into the peer's pre-posted receive
 * slots, one slot per fragment (slot size minus the header), each SEND taking one credit
 * (rdma_credit.h); the SEND gathers the header from a send slot and the payload from the
 * transmit buffer, so nothing is copied on the way out.  A one-slot message is read in place from its
 * receive slot and the slot is reposted when the reader is done with it; a longer one is
 * reassembled into memory of its announced length (at most the max message size) and each
 * slot is reposted as soon as its fragment is copied, so credits flow back while the sender
 * is still sending.
 */
#include "config.h"

#include <string.h>

#include "../rdma_conn_private.h"
#include "../rdma_status.h"

typedef struct
{
  guint8 *buf;    /* message being reassembled, or NULL */
  guint32 cap;    /* bytes allocated: grows with what arrives, not with what is announced */
  guint32 len;    /* its announced length */
  guint32 filled; /* bytes received so far */
} EagerState;

static gboolean
eager_setup (RdmaConn *conn, GError **error)
{
  conn->proto_state[RDMA_PROTO_EAGER] = g_new0 (EagerState, 1);
  return TRUE;
}

static void
eager_teardown (RdmaConn *conn)
{
  EagerState *st = conn->proto_state[RDMA_PROTO_EAGER];

  if (st == NULL)
    return;
  g_free (st->buf);
  g_free (st);
  conn->proto_state[RDMA_PROTO_EAGER] = NULL;
}

static gboolean
eager_send_message (RdmaConn *conn, RdmaTx *tx, gint64 deadline_us, GError **error)
{
  guint32 room = conn->settings.slot_size - RDMA_WIRE_HEADER_SIZE;
  gsize len = tx->len, off = 0;

  do
  {
    guint32 frag = (guint32) MIN (len - off, room);
    guint8 flags = (off == 0 ? RDMA_WIRE_FIRST : 0) | (off + frag == len ? RDMA_WIRE_LAST : 0);
    guint32 slot;

    while (conn->credits.send == 0 || conn->send_pool.n_free == 0
           || conn->sq_used + 1 > conn->sq_depth)
    {
      if (!rdma_conn_check_usable (conn, error) || !rdma_conn_progress (conn, deadline_us, error))
        return FALSE;
    }
    if (!rdma_conn_check_usable (conn, error))
      return FALSE;
    rdma_credit_take (&conn->credits);
    rdma_pool_get (&conn->send_pool, &slot);
    rdma_conn_header (conn, rdma_pool_slot (&conn->send_pool, slot), RDMA_PROTO_EAGER,
                      RDMA_WIRE_DATA, flags, frag, (guint32) len);
    if (!rdma_conn_post_send (conn, RDMA_PROTO_EAGER, slot, RDMA_WIRE_HEADER_SIZE, tx, off, frag,
                              error))
      return FALSE;
    off += frag;
  } while (off < len);
  return TRUE;
}

static gboolean
eager_on_receive (RdmaConn *conn, guint32 slot, const RdmaWireHeader *hdr, const guint8 *payload,
                  GError **error)
{
  EagerState *st = conn->proto_state[RDMA_PROTO_EAGER];
  gboolean first = (hdr->flags & RDMA_WIRE_FIRST) != 0;
  gboolean last = (hdr->flags & RDMA_WIRE_LAST) != 0;

  if (hdr->type != RDMA_WIRE_DATA)
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: message type %u for Eager-SendRecv", hdr->type);
    return FALSE;
  }
  if (first && last && st->buf == NULL)
  {
    rdma_conn_deliver (conn, &rdma_proto_eager_ops, (guint8 *) payload, hdr->frag_len,
                       RDMA_MSG_IN_SLOT, slot, 0);
    return TRUE;
  }
  if (first)
  {
    if (st->buf != NULL)
    {
      rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                             "garbage framing: a new message began after %u of %u bytes of "
                             "the previous one",
                             st->filled, st->len);
      return FALSE;
    }
    st->len = hdr->msg_len;
    st->filled = 0;
    st->cap = 0;
  }
  else if (st->buf == NULL)
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: a continuation fragment without a first one");
    return FALSE;
  }
  if (hdr->msg_len != st->len || hdr->frag_len > st->len - st->filled
      || (last && st->filled + hdr->frag_len != st->len)
      || (!last && (hdr->frag_len == 0 || st->filled + hdr->frag_len == st->len)))
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "truncated or garbled message: fragment of %u bytes%s at %u of a "
                           "%u-byte message (now announced as %u)",
                           hdr->frag_len, last ? " (last)" : "", st->filled, st->len, hdr->msg_len);
    return FALSE;
  }
  if (st->filled + hdr->frag_len > st->cap)
  {
    guint32 cap = (guint32) MIN ((guint64) st->len,
                                 MAX ((guint64) st->cap * 2, (guint64) st->filled + hdr->frag_len));
    guint8 *grown = g_try_realloc (st->buf, MAX (cap, 1));
    if (grown == NULL)
    {
      rdma_status_set_error (error, RDMA_ERR_NO_MEMORY, "g_try_realloc", 0, -1,
                             "reassembling a %u-byte message", st->len);
      return FALSE;
    }
    st->buf = grown;
    st->cap = cap;
  }
  memcpy (st->buf + st->filled, payload, hdr->frag_len);
  conn->stats.bytes_copied += hdr->frag_len;
  st->filled += hdr->frag_len;
  if (!rdma_conn_repost (conn, slot, TRUE, error))
    return FALSE;
  if (last)
  {
    rdma_conn_deliver (conn, &rdma_proto_eager_ops, st->buf, st->len, RDMA_MSG_ON_HEAP, -1, 0);
    st->buf = NULL;
    st->len = st->filled = 0;
  }
  return TRUE;
}

const RdmaProtoOps rdma_proto_eager_ops = {
  .name = "eager",
  .id = RDMA_PROTO_EAGER,
  .hint = THRIFT_HINT_PROTO_EAGER,
  .setup = eager_setup,
  .teardown = eager_teardown,
  .send_message = eager_send_message,
  .on_receive = eager_on_receive,
};
