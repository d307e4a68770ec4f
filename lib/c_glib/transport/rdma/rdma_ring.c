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

/* rdma_ring.c: the direct ring (see rdma_ring.h). */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "rdma_budget.h"
#include "rdma_conn_private.h"
#include "rdma_numa.h"
#include "rdma_resources.h"
#include "rdma_ring.h"
#include "rdma_helper.h"
#include "rdma_status.h"
#include "rdma_conn_window.h"

typedef enum
{
  TX_UNKNOWN, /* not asked for yet */
  TX_REQUESTED,
  TX_READY,
  TX_REFUSED
} TxState;

struct _RdmaRing
{
  /* owner: the ring the peer writes into */
  guint8 *base; /* (owned) (nullable): mmap'd, NULL while no ring */
  guint32 size;
  struct ibv_mr *mr;                    /* (owned) (nullable) */
  RdmaWindow *window;                   /* (owned) (nullable): the peer's way in
                                              (rdma_conn_window.h) */
  guint32 rx_off;                       /* where the next chunk lands */
  guint32 rx_used;                      /* bytes of chunks not yet freed */
  guint64 rx_next;                      /* sequence number of the next chunk */
  guint64 rx_oldest;                    /* oldest chunk not yet freed */
  guint32 rx_len[RDMA_RING_MAX_CHUNKS]; /* by sequence number modulo the size */
  gboolean rx_free[RDMA_RING_MAX_CHUNKS];
  guint rx_unreported; /* freed in order, not yet reported */
  guint32 rx_unreported_bytes;
  guint8 *partial; /* (owned) (nullable): a message of several chunks,
                                              being copied; handed to the connection once
                                              complete (RDMA_MSG_ON_HEAP) */
  gsize partial_len, partial_cap;
  guint rx_in_place;   /* messages read in place, not yet released */
  gboolean rx_written; /* a chunk came since the last idle check */
  gint64 rx_due_us;    /* next idle check (0: none) */
  gboolean revoking;   /* REVOKE sent, no answer yet */

  /* writer: the peer's ring */
  TxState tx_state;
  guint64 tx_addr;
  guint32 tx_rkey;
  guint32 tx_size;
  guint32 tx_off;                       /* where the next chunk goes */
  guint32 tx_used;                      /* bytes written, not yet reported freed */
  guint32 tx_len[RDMA_RING_MAX_CHUNKS]; /* FIFO of chunk lengths */
  guint tx_head, tx_count;
  gint64 tx_last_us; /* when the last chunk was placed */
  /* growth (rdma_ring.h) */
  guint32 tx_asked;         /* the message size of the last request */
  guint32 tx_fallback;      /* while a request for a larger ring is out: the
                                              size of the ring given up for it (0: none) */
  guint32 tx_tried, tx_got; /* the largest ring asked for that the owner did
                                              not give (rdma_ring_size_for the message, no
                                              cap; 0: none), and what it gave instead */
};

static RdmaRing *
ring_of (RdmaConn *conn)
{
  if (conn->ring == NULL)
    conn->ring = g_new0 (RdmaRing, 1);
  return conn->ring;
}

static gboolean
protocol_error (GError **error, const gchar *fmt, const gchar *detail, guint64 a, guint64 b)
{
  rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "direct ring", 0, -1, fmt, detail, a, b);
  return FALSE;
}

/* ---- writer ---- */

/* The owner answered; or it took the ring back before we wrote into it (its idle period ran
 * out while the advert was on its way, as under load: then ADVERT and REVOKE are taken in one
 * look), and the writer asks again. */
static gboolean
tx_settled (RdmaConn *conn, gpointer data)
{
  return conn->ring->tx_state != TX_REQUESTED;
}

/* After a quiet spell, a look at the completions first: the owner may be asking for its
 * ring back, and the answer is RELEASED only while nothing of ours is in it. */
static gboolean
tx_look_before_writing (RdmaConn *conn, RdmaRing *r, GError **error)
{
  GError *e = NULL;

  if (conn->settings.ring_idle_ms == 0
      || g_get_monotonic_time () - r->tx_last_us < (gint64) conn->settings.ring_idle_ms * 500)
    return TRUE;
  if (!rdma_conn_progress (conn, -1, &e) && e != NULL)
  {
    g_propagate_error (error, e);
    return FALSE;
  }
  return TRUE;
}

static gboolean
tx_request (RdmaConn *conn, RdmaRing *r, gsize len, GError **error)
{
  guint32 want = (guint32) MIN (len, G_MAXUINT32), le = GUINT32_TO_LE (want);

  if (!rdma_conn_send_control (conn, RDMA_WIRE_PROTO_ENGINE, RDMA_RING_REQUEST,
                               (const guint8 *) &le, sizeof le, error))
    return FALSE;
  r->tx_asked = want;
  r->tx_state = TX_REQUESTED;
  return TRUE;
}

/* Gives the ring up (the writer's side of RELEASED): nothing of ours is in it. */
static gboolean
tx_release (RdmaConn *conn, RdmaRing *r, GError **error)
{
  r->tx_state = TX_UNKNOWN;
  r->tx_addr = 0;
  r->tx_rkey = 0;
  r->tx_size = r->tx_off = r->tx_used = 0;
  r->tx_head = 0;
  return rdma_conn_send_control (conn, RDMA_WIRE_PROTO_ENGINE, RDMA_RING_RELEASED, NULL, 0, error);
}

/* Whether a message of @len bytes should have a larger ring: it would not go whole (it is
 * more than half the ring), a larger one is possible (rdma_ring_size_for without the
 * owner's cap, which the writer does not know), the owner has not already answered a request
 * for as much with less (its ring_size, or its budget: then the writer asks again only for a
 * larger message, or when it holds less than it was given then, as after the ring went back
 * idle and came again for a small message), the owner takes an unprompted RELEASED, and
 * nothing of ours is in the ring (else the ring as it is, this time). */
static gboolean
tx_should_grow (RdmaConn *conn, const RdmaRing *r, gsize len)
{
  guint32 want = rdma_ring_size_for ((guint32) MIN (len, G_MAXUINT32), G_MAXUINT32);

  return len > r->tx_size / RDMA_RING_WHOLE && want > r->tx_size
         && (want > r->tx_tried || r->tx_size < r->tx_got) && r->tx_count == 0
         && (conn->peer.flags & RDMA_WIRE_HELLO_RING_GROW);
}

RdmaOpenStatus
rdma_ring_tx_open (RdmaConn *conn, gint64 deadline_us, GError **error)
{
  RdmaRing *r = ring_of (conn);
  /* sized for the message as it would be with its lent fields copied, when the next may be:
   * a ring made for the rest alone would cut every copied one into chunks (a 128 KB field
   * through a 16 KiB ring: 10 WRs per call against 2) */
  gsize len = conn->tx[conn->tx_cur].len + conn->tx_may_copy;

  if (r->tx_state == TX_READY && !tx_look_before_writing (conn, r, error))
    return RDMA_OPEN_ERROR;
  if (r->tx_state == TX_READY && tx_should_grow (conn, r, len))
  {
    /* given up as the idle path does, and asked for again with this message's size */
    guint32 old = r->tx_size;

    if (!tx_release (conn, r, error))
      return RDMA_OPEN_ERROR;
    r->tx_fallback = old;
  }
  if (r->tx_state == TX_READY)
    return RDMA_OPEN_READY;
  /* a refusal (the owner's budget, rdma_budget.h) is asked again after the idle period */
  if (r->tx_state == TX_REFUSED && conn->settings.ring_idle_ms > 0
      && g_get_monotonic_time () - r->tx_last_us >= (gint64) conn->settings.ring_idle_ms * 1000)
    r->tx_state = TX_UNKNOWN;
  if (r->tx_state == TX_REFUSED)
    return RDMA_OPEN_REFUSED;
  do
  {
    if (r->tx_state == TX_UNKNOWN && !tx_request (conn, r, len, error))
      return RDMA_OPEN_ERROR;
    if (!rdma_conn_wait_for (conn, tx_settled, NULL, deadline_us, error))
      return RDMA_OPEN_ERROR;
  } while (r->tx_state == TX_UNKNOWN);
  return r->tx_state == TX_READY ? RDMA_OPEN_READY : RDMA_OPEN_REFUSED;
}

/* Contiguous free bytes at the writer's offset. */
static guint32
tx_room (const RdmaRing *r)
{
  guint32 head;

  if (r->tx_count >= RDMA_RING_MAX_CHUNKS || r->tx_used >= r->tx_size)
    return 0;
  if (r->tx_used == 0)
    return r->tx_size - r->tx_off;
  head = (r->tx_off + r->tx_size - r->tx_used) % r->tx_size;
  return head < r->tx_off || head == r->tx_off ? r->tx_size - r->tx_off : head - r->tx_off;
}

/* The next chunk of a message with @want bytes still to go: its length (0: no room yet) and
 * the bytes left unused before it at the end of the ring (*@skip; the chunk then starts at
 * 0).  A chunk goes at the offset, cut where the room ends; but a message of at most half
 * the ring (RDMA_RING_WHOLE) that would be cut at the end of the ring goes whole at 0 when
 * the start has room for it.  Cut there, a 557-byte message in a 16 KiB ring went as two
 * chunks every 29 calls: a second WRITE_WITH_IMM and a copy to put the message together.
 * (It does not wait for room to go whole: a chunk that goes in what room there is lets the
 * owner move the messages its reader has not opened off the ring, which two sides that both
 * write before they read need.) */
static guint32
tx_fit (const RdmaRing *r, gsize want, guint32 *skip)
{
  guint32 room = tx_room (r), tail = r->tx_size - r->tx_off;

  *skip = 0;
  /* the end of the ring free (room == tail), and the used bytes, if any, before the offset */
  if (want > room && room == tail && want <= MIN (r->tx_size / RDMA_RING_WHOLE, RDMA_RING_MAX_CHUNK)
      && r->tx_off - r->tx_used >= want)
  {
    *skip = tail;
    return (guint32) want;
  }
  return (guint32) MIN (want, (gsize) MIN (room, RDMA_RING_MAX_CHUNK));
}

typedef struct
{
  gsize want;
} PlaceWait;

static gboolean
tx_has_room (RdmaConn *conn, gpointer data)
{
  const RdmaRing *r = conn->ring;
  PlaceWait *w = data;

  if (r->tx_count >= RDMA_RING_MAX_CHUNKS)
    return FALSE;
  /* (tx_fit finds a chunk exactly when there is room: it goes to 0 only with the end free) */
  return w->want == 0 || tx_room (r) > 0;
}

gboolean
rdma_ring_tx_place (RdmaConn *conn, gsize want, gint64 deadline_us, guint64 *remote_addr,
                    guint32 *rkey, guint32 *len, GError **error)
{
  RdmaRing *r = conn->ring;
  PlaceWait w = { want };
  guint32 n, skip;

  g_return_val_if_fail (r != NULL && r->tx_state == TX_READY, FALSE);
  if (!rdma_conn_wait_for (conn, tx_has_room, &w, deadline_us, error))
    return FALSE;
  n = tx_fit (r, want, &skip);
  if (skip > 0)
    r->tx_off = 0;
  *remote_addr = r->tx_addr + r->tx_off;
  *rkey = r->tx_rkey;
  *len = n;
  /* the skipped end is freed with the chunk, as the owner counts it (rdma_ring_rx_chunk) */
  r->tx_len[(r->tx_head + r->tx_count) % RDMA_RING_MAX_CHUNKS] = skip + n;
  r->tx_count++;
  r->tx_used += skip + n;
  r->tx_off += n;
  if (r->tx_off == r->tx_size)
    r->tx_off = 0;
  if (conn->settings.ring_idle_ms > 0)
    r->tx_last_us = g_get_monotonic_time ();
  return TRUE;
}

gboolean
rdma_ring_tx_freed (RdmaConn *conn, guint n, GError **error)
{
  RdmaRing *r = conn->ring;

  if (r == NULL || n > r->tx_count)
    return protocol_error (error,
                           "%s: the peer frees %" G_GUINT64_FORMAT " chunks of its ring, "
                           "%" G_GUINT64_FORMAT " are in flight",
                           "garbage framing", n, r == NULL ? 0 : r->tx_count);
  while (n-- > 0)
  {
    r->tx_used -= r->tx_len[r->tx_head];
    r->tx_head = (r->tx_head + 1) % RDMA_RING_MAX_CHUNKS;
    r->tx_count--;
  }
  return TRUE;
}

/* ---- owner ---- */

guint32
rdma_ring_size_for (guint32 message, guint32 max)
{
  guint64 size = RDMA_RING_MIN_SIZE;

  if (message == 0)
    return max;
  while (size < (guint64) message * RDMA_RING_MESSAGES && size < max)
    size <<= 1;
  return (guint32) MIN (size, (guint64) max);
}

static gboolean
rx_create (RdmaConn *conn, RdmaRing *r, guint32 size, GError **error)
{
  void *mem = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  if (mem == MAP_FAILED)
  {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_NO_MEMORY, "mmap", err, -1, "a %u-byte direct ring",
                           size);
    return FALSE;
  }
  rdma_numa_place (mem, size, conn->settings.numa_node);
  /* with windows, the registration itself gives no remote access */
  r->mr = rdma_res_mr_reg (
      conn->pd, mem, size,
      IBV_ACCESS_LOCAL_WRITE
          | (rdma_window_supported (conn) ? IBV_ACCESS_MW_BIND : IBV_ACCESS_REMOTE_WRITE),
      error);
  if (r->mr == NULL)
  {
    munmap (mem, size);
    return FALSE;
  }
  r->base = mem;
  r->size = size;
  r->rx_off = 0;
  r->rx_written = FALSE;
  conn->stats.pinned_bytes += size;
  if (conn->settings.ring_idle_ms > 0)
    r->rx_due_us = g_get_monotonic_time () + (gint64) conn->settings.ring_idle_ms * 1000;
  return TRUE;
}

/* The memory of the ring goes (the window first: a registration with a bound window cannot
 * be deregistered); the rest of the owner's state stays for the next one. */
static void
rx_destroy (RdmaConn *conn, RdmaRing *r)
{
  rdma_window_free (conn, &r->window);
  if (r->mr != NULL)
  {
    rdma_res_mr_dereg (&r->mr);
    conn->stats.pinned_bytes -= r->size;
  }
  if (r->base != NULL)
    munmap (r->base, r->size);
  r->base = NULL;
  r->size = 0;
  r->rx_due_us = 0;
  r->revoking = FALSE;
}

static void
rx_free_chunk (RdmaConn *conn, RdmaRing *r, guint64 seq)
{
  r->rx_free[seq % RDMA_RING_MAX_CHUNKS] = TRUE;
  while (r->rx_oldest < r->rx_next && r->rx_free[r->rx_oldest % RDMA_RING_MAX_CHUNKS])
  {
    guint i = r->rx_oldest % RDMA_RING_MAX_CHUNKS;
    r->rx_used -= r->rx_len[i];
    r->rx_unreported_bytes += r->rx_len[i];
    r->rx_unreported++;
    r->rx_oldest++;
  }
}

/* More is written while messages wait in place for the reader: move those the reader has not
 * opened to the heap (a copy each) and free their chunks.  Chunks are freed in order, so one
 * waiting message would otherwise hold the whole ring once the writer comes round to it, and
 * a stream that the reader lets wait (a pipelining client, a server blocked on its reply)
 * would stall where TCP's socket buffer absorbs it; bounded by the unread limit in bytes.
 * In a ping-pong the reader released the message before the next came: nothing is copied. */
static guint
unhold (RdmaConn *conn, RdmaRing *r)
{
  guint moved = 0;

  if (conn->unread_bytes >= conn->settings.unread_limit)
    return 0;
  for (GList *l = conn->received.head; l != NULL && r->rx_in_place > 0; l = l->next)
  {
    RdmaMessage *m = l->data;

    if (m->owner != RDMA_MSG_IN_PROTO || m->opened || m->proto->release != rdma_ring_release)
      continue;
    rdma_conn_message_to_heap (conn, m);
    r->rx_in_place--;
    rx_free_chunk (conn, r, m->token);
    moved++;
  }
  return moved;
}

gboolean
rdma_ring_rx_chunk (RdmaConn *conn, const RdmaProtoOps *proto, guint32 len, gboolean last,
                    GError **error)
{
  RdmaRing *r = conn->ring;
  guint64 seq;
  guint8 *data;
  guint32 skip;
  guint moved;

  if (r == NULL || r->base == NULL)
    return protocol_error (error,
                           "%s: %" G_GUINT64_FORMAT " bytes written into a ring this "
                           "side never advertised%" G_GUINT64_FORMAT "",
                           "garbage framing", len, 0);
  /* a chunk longer than the end of the ring was written at 0, the end left unused
   * (rdma_ring_tx_place) */
  skip = len > r->size - r->rx_off ? r->size - r->rx_off : 0;
  if ((guint64) skip + len > r->size - r->rx_used
      || r->rx_next - r->rx_oldest >= RDMA_RING_MAX_CHUNKS)
    return protocol_error (error,
                           "%s: a %" G_GUINT64_FORMAT "-byte chunk at offset %" G_GUINT64_FORMAT
                           " overruns the ring",
                           "garbage framing", len, r->rx_off);
  if (skip > 0)
    r->rx_off = 0;
  seq = r->rx_next++;
  r->rx_written = TRUE;
  r->rx_len[seq % RDMA_RING_MAX_CHUNKS] = skip + len;
  r->rx_free[seq % RDMA_RING_MAX_CHUNKS] = FALSE;
  data = r->base + r->rx_off;
  r->rx_used += skip + len;
  r->rx_off += len;
  if (r->rx_off == r->size)
    r->rx_off = 0;

  moved = r->rx_in_place > 0 ? unhold (conn, r) : 0;
  if (last && r->partial == NULL)
  {
    /* read in place; the chunk is freed when the reader is done */
    r->rx_in_place++;
    rdma_conn_deliver (conn, proto, data, len, RDMA_MSG_IN_PROTO, -1, seq);
    return moved == 0 || rdma_conn_return_credits (conn, error);
  }
  if (r->partial_len + len > conn->settings.max_message)
  {
    rdma_status_set_error (error, RDMA_ERR_TOO_LARGE, "receive", 0, -1,
                           "the peer sends a message of more than %" G_GSIZE_FORMAT
                           " bytes, the max message size is %u",
                           r->partial_len + len, conn->settings.max_message);
    return FALSE;
  }
  if (r->partial_len + len > r->partial_cap || r->partial == NULL)
  {
    gsize cap = MAX (MAX (r->partial_cap * 2, r->partial_len + len), 1);
    guint8 *grown = g_try_realloc (r->partial, cap);
    if (grown == NULL)
    {
      rdma_status_set_error (error, RDMA_ERR_NO_MEMORY, "g_try_realloc", 0, -1,
                             "reassembling a message of %" G_GSIZE_FORMAT " bytes",
                             r->partial_len + len);
      return FALSE;
    }
    r->partial = grown;
    r->partial_cap = cap;
  }
  memcpy (r->partial + r->partial_len, data, len);
  conn->stats.bytes_copied += len;
  r->partial_len += len;
  rx_free_chunk (conn, r, seq);
  if (last)
  {
    rdma_conn_deliver (conn, proto, r->partial, r->partial_len, RDMA_MSG_ON_HEAP, -1, 0);
    r->partial = NULL;
    r->partial_len = r->partial_cap = 0;
  }
  return rdma_conn_return_credits (conn, error);
}

gboolean
rdma_ring_release (RdmaConn *conn, guint8 *data, gsize len, guint64 token, GError **error)
{
  if (conn->ring == NULL)
    return TRUE;
  conn->ring->rx_in_place--;
  rx_free_chunk (conn, conn->ring, token);
  return TRUE;
}

guint
rdma_ring_take_freed (RdmaConn *conn, guint max)
{
  RdmaRing *r = conn->ring;
  guint n;

  if (r == NULL || r->rx_unreported == 0)
    return 0;
  n = MIN (r->rx_unreported, max);
  r->rx_unreported -= n;
  if (r->rx_unreported == 0)
    r->rx_unreported_bytes = 0;
  return n;
}

/* A credit message of its own only once half the ring waits to be reported: below that the
 * writer still has half the ring to write into, and in a call-and-reply the report rides on
 * the next message of ours (the request after a reply, the reply after a request).  With a
 * quarter, a 128 KB echo through a 512 KB ring cost a message of its own per call. */
gboolean
rdma_ring_need_report (RdmaConn *conn)
{
  RdmaRing *r = conn->ring;

  return r != NULL
         && (r->rx_unreported >= RDMA_RING_MAX_CHUNKS / 2
             || (r->size > 0 && r->rx_unreported_bytes >= r->size / 2));
}

/* ---- giving an idle ring back ---- */

guint32
rdma_ring_rx_size (RdmaConn *conn)
{
  return conn->ring != NULL ? conn->ring->size : 0;
}

gint64
rdma_ring_due (RdmaConn *conn)
{
  return conn->ring != NULL ? conn->ring->rx_due_us : 0;
}

gboolean
rdma_ring_tick (RdmaConn *conn, gint64 now, GError **error)
{
  RdmaRing *r = conn->ring;
  guint32 freed;

  if (r == NULL || r->rx_due_us == 0 || now < r->rx_due_us)
    return TRUE;
  r->rx_due_us = now + (gint64) conn->settings.ring_idle_ms * 1000;
  /* only a ring the writer knows, with nothing of its chunks unread or unreported but what
   * the REVOKE reports */
  if (r->rx_written || r->base == NULL || r->revoking || r->rx_used != 0 || r->partial != NULL
      || rdma_window_pending (r->window))
  {
    r->rx_written = FALSE;
    return TRUE;
  }
  freed = GUINT32_TO_LE (rdma_ring_take_freed (conn, RDMA_RING_MAX_CHUNKS));
  if (!rdma_conn_send_control (conn, RDMA_WIRE_PROTO_ENGINE, RDMA_RING_REVOKE,
                               (const guint8 *) &freed, sizeof freed, error))
    return FALSE;
  r->revoking = TRUE;
  r->rx_due_us = 0;
  return TRUE;
}

/* Writer: the owner asks for its ring back.  In any state but TX_READY, it is the ring this
 * side gave up unprompted to ask for a larger one, the REVOKE crossing the RELEASED (which
 * the owner takes as the answer): nothing to answer, and nothing of ours was left in it to
 * be freed. */
static gboolean
tx_revoke (RdmaConn *conn, RdmaRing *r, guint32 freed, GError **error)
{
  if (!rdma_ring_tx_freed (conn, freed, error))
    return FALSE;
  if (r->tx_state != TX_READY)
    return TRUE;
  if (r->tx_count > 0)
    return rdma_conn_send_control (conn, RDMA_WIRE_PROTO_ENGINE, RDMA_RING_KEEP, NULL, 0, error);
  return tx_release (conn, r, error);
}

/* Writer: the owner's answer to a request.  Less than the message asked for (the owner's
 * ring_size or budget) is remembered, so the writer does not ask again for as much.  A
 * request for a larger ring that is refused (size 0, the owner's budget) asks once for the
 * size given up: the writer cannot know what the budget admits, and the ring it had worked;
 * only if that is refused too do its messages go by eager, asked again after the idle period
 * as for any refusal. */
static gboolean
tx_advert (RdmaConn *conn, RdmaRing *r, guint64 addr, guint32 rkey, guint32 size, GError **error)
{
  guint32 fallback = r->tx_fallback, want = rdma_ring_size_for (r->tx_asked, G_MAXUINT32);

  r->tx_fallback = 0;
  r->tx_addr = addr;
  r->tx_rkey = rkey;
  r->tx_size = size;
  r->tx_last_us = g_get_monotonic_time ();
  if (size < want && (size > 0 || fallback > 0) && want >= r->tx_tried)
  {
    r->tx_tried = want;
    r->tx_got = size > 0 ? size : fallback;
  }
  if (size == 0 && fallback > 0)
    return tx_request (conn, r, fallback / RDMA_RING_MESSAGES, error);
  r->tx_state = size > 0 ? TX_READY : TX_REFUSED;
  return TRUE;
}

/* ---- control ---- */

/* The answer to the peer's request: the ring's address, key and size, or size 0. */
static gboolean
send_advert (RdmaConn *conn, RdmaRing *r, guint32 rkey, GError **error)
{
  guint8 advert[16] = { 0 };

  if (r->base != NULL)
  {
    guint64 addr = GUINT64_TO_LE ((guint64) (guintptr) r->base);
    guint32 key = GUINT32_TO_LE (rkey), size = GUINT32_TO_LE (r->size);
    memcpy (advert, &addr, 8);
    memcpy (advert + 8, &key, 4);
    memcpy (advert + 12, &size, 4);
  }
  return rdma_conn_send_control (conn, RDMA_WIRE_PROTO_ENGINE, RDMA_RING_ADVERT, advert,
                                 sizeof advert, error);
}

static gboolean
window_bound (RdmaConn *conn, RdmaWindow *w, gpointer data, GError **error)
{
  return send_advert (conn, conn->ring, rdma_window_rkey (w), error);
}

gboolean
rdma_ring_control (RdmaConn *conn, guint8 kind, const guint8 *payload, guint32 len, GError **error)
{
  RdmaRing *r = ring_of (conn);

  switch (kind)
  {
  case RDMA_RING_REQUEST: {
    GError *e = NULL;
    guint32 want = 0, size;

    if ((len != 0 && len != 4) || rdma_window_pending (r->window) || r->revoking)
      break;
    if (len == 4)
    {
      memcpy (&want, payload, 4);
      want = GUINT32_FROM_LE (want);
    }
    if (rdma_window_bound (r->window))
      return send_advert (conn, r, rdma_window_rkey (r->window), error);
    size = rdma_ring_size_for (want, conn->settings.ring_size);
    if (r->base == NULL
        && (conn->settings.rx_protocols
            & ((1u << RDMA_PROTO_DIRECT_WRITE_IMM) | (1u << RDMA_PROTO_DIRECT_WRITE_SEND)
               | (1u << RDMA_PROTO_CHAINED_WRITE_SEND))))
    {
      /* over the budget: no ring, and the writer sends by eager (rdma_budget.h) */
      if (!rdma_budget_admit (size, "a direct ring"))
        conn->stats.budget_refusals++;
      else if (!rx_create (conn, r, size, &e))
      {
        g_warning ("ThriftRdma: cannot register a %u-byte direct ring for the peer (%s); its "
                   "direct messages go by Eager-SendRecv",
                   size, e->message);
        g_clear_error (&e);
      }
    }
    /* the advert goes once the window is bound (window_bound) */
    if (r->base != NULL && rdma_window_supported (conn))
      return rdma_window_bind (conn, &r->window, r->mr, r->base, r->size, IBV_ACCESS_REMOTE_WRITE,
                               window_bound, NULL, error);
    return send_advert (conn, r, r->mr != NULL ? r->mr->rkey : 0, error);
  }
  case RDMA_RING_ADVERT: {
    guint64 addr;
    guint32 rkey, size;

    if (len != 16 || r->tx_state != TX_REQUESTED)
      break;
    memcpy (&addr, payload, 8);
    memcpy (&rkey, payload + 8, 4);
    memcpy (&size, payload + 12, 4);
    return tx_advert (conn, r, GUINT64_FROM_LE (addr), GUINT32_FROM_LE (rkey),
                      GUINT32_FROM_LE (size), error);
  }
  case RDMA_RING_REVOKE: {
    guint32 freed;

    if (len != 4)
      break;
    memcpy (&freed, payload, 4);
    return tx_revoke (conn, r, GUINT32_FROM_LE (freed), error);
  }
  case RDMA_RING_RELEASED:
    /* the writer's chunks were all freed before it answered, or before it gave the ring up
     * unprompted to ask for a larger one (rdma_ring.h); the window goes at once
     * (rdma_window_free), so the REQUEST that follows finds no ring */
    if (len != 0 || r->base == NULL || r->rx_used != 0 || r->partial != NULL)
      break;
    rx_destroy (conn, r);
    return TRUE;
  case RDMA_RING_KEEP:
    if (len != 0 || !r->revoking)
      break;
    r->revoking = FALSE;
    r->rx_due_us = g_get_monotonic_time () + (gint64) conn->settings.ring_idle_ms * 1000;
    return TRUE;
  default:
    break;
  }
  return protocol_error (error,
                         "%s: ring control message of kind %" G_GUINT64_FORMAT
                         " with %" G_GUINT64_FORMAT " bytes, unexpected now",
                         "garbage framing", kind, len);
}

void
rdma_ring_free (RdmaConn *conn)
{
  RdmaRing *r = conn->ring;

  if (r == NULL)
    return;
  rx_destroy (conn, r);
  g_free (r->partial);
  g_free (r);
  conn->ring = NULL;
}

/* ---- as a helper of the connection (rdma_helper.h) ---- */

static gboolean
ring_owns_control (guint8 kind)
{
  return kind == RDMA_RING_REQUEST || kind == RDMA_RING_ADVERT || kind == RDMA_RING_REVOKE
         || kind == RDMA_RING_RELEASED || kind == RDMA_RING_KEEP;
}

/* (only a connected ring is given back: a closing one goes with the connection) */
static gint64
ring_due (RdmaConn *conn)
{
  return conn->state == RDMA_CONN_CONNECTED ? rdma_ring_due (conn) : 0;
}

const RdmaHelperOps rdma_ring_helper = {
  .name = "direct ring",
  .owns_control = ring_owns_control,
  .control = rdma_ring_control,
  .due = ring_due,
  .tick = rdma_ring_tick,
  .take_freed = rdma_ring_take_freed,
  .need_report = rdma_ring_need_report,
  .peer_freed = rdma_ring_tx_freed,
  .free = rdma_ring_free,
};
