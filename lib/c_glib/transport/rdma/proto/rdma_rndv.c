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

/* rdma_rndv.c: what the two rendezvous protocols share (see rdma_rndv.h). */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "../rdma_numa.h"
#include "../rdma_resources.h"
#include "../rdma_status.h"
#include "rdma_rndv.h"

void
rdma_rndv_encode (void *dst, const RdmaRndvMsg *m)
{
  RdmaRndvWire w = {
    .kind = m->kind,
    .seq = GUINT32_TO_LE (m->seq),
    .len = GUINT32_TO_LE (m->len),
    .rkey = GUINT32_TO_LE (m->rkey),
    .addr = GUINT64_TO_LE (m->addr),
  };
  memcpy (dst, &w, sizeof w);
}

gboolean
rdma_rndv_decode (const RdmaProtoOps *ops, const guint8 *payload, guint32 len, RdmaRndvMsg *out,
                  GError **error)
{
  RdmaRndvWire w;

  if (len != sizeof w)
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: a %s message of %u bytes (%u expected)", ops->name,
                           len, (guint) sizeof w);
    return FALSE;
  }
  memcpy (&w, payload, sizeof w);
  out->kind = w.kind;
  out->seq = GUINT32_FROM_LE (w.seq);
  out->len = GUINT32_FROM_LE (w.len);
  out->rkey = GUINT32_FROM_LE (w.rkey);
  out->addr = GUINT64_FROM_LE (w.addr);
  return TRUE;
}

gboolean
rdma_rndv_decode_send (const RdmaProtoOps *ops, const RdmaWireHeader *hdr, const guint8 *payload,
                       RdmaRndvMsg *out, GError **error)
{
  if (hdr->type != RDMA_WIRE_DATA || hdr->flags != (RDMA_WIRE_FIRST | RDMA_WIRE_LAST))
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: message type %u, flags 0x%x for %s", hdr->type,
                           hdr->flags, ops->name);
    return FALSE;
  }
  return rdma_rndv_decode (ops, payload, hdr->frag_len, out, error);
}

gboolean
rdma_rndv_send_control (RdmaConn *conn, const RdmaProtoOps *ops, const RdmaRndvMsg *m,
                        GError **error)
{
  guint8 buf[sizeof (RdmaRndvWire)];

  rdma_rndv_encode (buf, m);
  return rdma_conn_send_control (conn, ops->id, m->kind, buf, sizeof buf, error);
}

static gboolean
has_room (RdmaConn *conn, gpointer data)
{
  return conn->credits.send > 0 && conn->send_pool.n_free > 0
         && conn->sq_used + GPOINTER_TO_UINT (data) <= conn->sq_depth;
}

gboolean
rdma_rndv_wait_room (RdmaConn *conn, guint entries, gint64 deadline_us, GError **error)
{
  return rdma_conn_wait_for (conn, has_room, GUINT_TO_POINTER (entries), deadline_us, error)
         && rdma_conn_check_usable (conn, error);
}

RdmaOp *
rdma_rndv_prepare_send (RdmaConn *conn, const RdmaProtoOps *ops, const RdmaRndvMsg *m,
                        struct ibv_sge *sge, struct ibv_send_wr *wr)
{
  guint32 slot;
  guint8 *dst;
  RdmaOp *op;

  rdma_credit_take (&conn->credits);
  rdma_pool_get (&conn->send_pool, &slot);
  dst = rdma_pool_slot (&conn->send_pool, slot);
  rdma_conn_header (conn, dst, ops->id, RDMA_WIRE_DATA, RDMA_WIRE_FIRST | RDMA_WIRE_LAST,
                    sizeof (RdmaRndvWire), sizeof (RdmaRndvWire));
  rdma_rndv_encode (dst + RDMA_WIRE_HEADER_SIZE, m);
  op = &conn->send_ops[slot];
  *op = (RdmaOp){ .kind = RDMA_OP_SEND, .proto = ops->id, .slot = slot };
  *sge = (struct ibv_sge){
    .addr = (uintptr_t) dst,
    .length = RDMA_WIRE_HEADER_SIZE + sizeof (RdmaRndvWire),
    .lkey = conn->send_pool.mr->lkey,
  };
  *wr = (struct ibv_send_wr){
    .wr_id = rdma_op_wr_id (op),
    .sg_list = sge,
    .num_sge = 1,
    .opcode = IBV_WR_SEND,
    .send_flags = IBV_SEND_SIGNALED,
  };
  return op;
}

/* ---- receiving ---- */

gboolean
rdma_rndv_rx_rts (RdmaConn *conn, const RdmaProtoOps *ops, RdmaRndvRx *rx, guint32 slot,
                  const RdmaRndvMsg *m, RdmaRndvBuf **buf, GError **error)
{
  *buf = NULL;
  if (m->seq != rx->next_seq)
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: %s request-to-send number %u, %u expected", ops->name,
                           m->seq, rx->next_seq);
    return FALSE;
  }
  if (m->len > conn->settings.max_message)
  {
    rdma_status_set_error (error, RDMA_ERR_TOO_LARGE, "receive", 0, -1,
                           "the peer announces a %u-byte message (%s), the max message size "
                           "is %u",
                           m->len, ops->name, conn->settings.max_message);
    return FALSE;
  }
  rx->next_seq++;
  if (m->len == 0)
  {
    /* nothing to move: the RTS is the message, read from its slot */
    rdma_conn_deliver (conn, ops, rdma_conn_recv_slot (conn, slot), 0, RDMA_MSG_IN_SLOT, slot, 0);
    return TRUE;
  }
  *buf = g_new0 (RdmaRndvBuf, 1);
  (*buf)->seq = m->seq;
  (*buf)->len = m->len;
  (*buf)->slot = slot;
  return TRUE;
}

gboolean
rdma_rndv_rx_may_map (RdmaConn *conn, const RdmaRndvRx *rx, guint32 len)
{
  return rx->mapped == 0 || rx->mapped + len <= conn->settings.unread_limit;
}

/* Memory for a message of @len bytes: the spare if it is large enough, else a new mapping
 * (of a power of two, so that it fits the next messages of about the size too). */
static guint8 *
mem_get (RdmaRndvRx *rx, guint32 len, gint numa_node, gsize *cap, GError **error)
{
  guint8 *mem;
  gsize want = RDMA_RNDV_MIN_CAP;

  if (rx->spare != NULL && rx->spare_cap >= len)
  {
    mem = rx->spare;
    *cap = rx->spare_cap;
    rx->spare = NULL;
    return mem;
  }
  while (want < len)
    want *= 2;
  mem = mmap (NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED)
  {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_NO_MEMORY, "mmap", err, -1,
                           "a %u-byte rendezvous buffer", len);
    return NULL;
  }
  rdma_numa_place (mem, want, numa_node);
  *cap = want;
  return mem;
}

/* Keeps @mem as the spare if it is the largest yet and not too large; else unmaps it. */
static void
mem_put (RdmaRndvRx *rx, guint8 *mem, gsize cap)
{
  if (cap <= RDMA_RNDV_SPARE_MAX && (rx->spare == NULL || cap > rx->spare_cap))
  {
    if (rx->spare != NULL)
      munmap (rx->spare, rx->spare_cap);
    rx->spare = mem;
    rx->spare_cap = cap;
    return;
  }
  munmap (mem, cap);
}

gboolean
rdma_rndv_rx_map (RdmaConn *conn, RdmaRndvRx *rx, RdmaRndvBuf *buf, gint access, GError **error)
{
  gsize cap;
  guint8 *mem = mem_get (rx, buf->len, conn->settings.numa_node, &cap, error);
  gint64 slot = buf->slot;

  if (mem == NULL)
    return FALSE;
  buf->mr = rdma_res_mr_reg (conn->pd, mem, buf->len, access, error);
  if (buf->mr == NULL)
  {
    mem_put (rx, mem, cap);
    return FALSE;
  }
  buf->base = mem;
  buf->cap = cap;
  rx->mapped += buf->len;
  conn->stats.pinned_bytes += buf->len;
  buf->slot = -1;
  return slot < 0 || rdma_conn_repost (conn, (guint32) slot, TRUE, error);
}

void
rdma_rndv_rx_unpin (RdmaConn *conn, RdmaRndvBuf *buf)
{
  rdma_window_free (conn, &buf->window);
  if (buf->mr == NULL)
    return;
  rdma_res_mr_dereg (&buf->mr);
  conn->stats.pinned_bytes -= buf->len;
}

static void
buf_free (RdmaConn *conn, RdmaRndvRx *rx, RdmaRndvBuf *buf)
{
  /* an RTS whose buffer was never set up still holds its receive slot */
  if (buf->slot >= 0)
    rdma_conn_drop_slot (conn, (guint32) buf->slot);
  rdma_rndv_rx_unpin (conn, buf);
  if (buf->base != NULL)
  {
    mem_put (rx, buf->base, buf->cap);
    rx->mapped -= buf->len;
  }
  g_free (buf);
}

void
rdma_rndv_rx_release (RdmaConn *conn, RdmaRndvRx *rx, guint64 token)
{
  RdmaRndvBuf *buf = (RdmaRndvBuf *) (guintptr) token;

  /* the reader releases in delivery order: the oldest is almost always the one */
  if (g_queue_remove (&rx->delivered, buf))
    buf_free (conn, rx, buf);
}

void
rdma_rndv_rx_clear (RdmaConn *conn, RdmaRndvRx *rx)
{
  RdmaRndvBuf *buf;
  GQueue *queues[] = { &rx->waiting, &rx->active, &rx->delivered };

  /* the engine frees the messages themselves (buf->msg is not touched) */
  for (guint i = 0; i < G_N_ELEMENTS (queues); i++)
    while ((buf = g_queue_pop_head (queues[i])) != NULL)
      buf_free (conn, rx, buf);
  if (rx->spare != NULL)
    munmap (rx->spare, rx->spare_cap);
  rx->spare = NULL;
  rx->spare_cap = 0;
}
