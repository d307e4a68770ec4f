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

/* rdma_bw_rx.c: Batched-Write's receiver (rdma_proto_batched_write.c has the design). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "../rdma_budget.h"
#include "../rdma_conn_private.h"
#include "../rdma_conn_window.h"
#include "../rdma_numa.h"
#include "../rdma_resources.h"
#include "../rdma_status.h"
#include "rdma_bw_private.h"

/* ---- receiver ---- */

static gboolean
rx_create (RdmaConn *conn, BwState *st, GError **error)
{
  gboolean windows;

  st->slots = bw_map_region (conn, BW_REGION, "the batched-write slots", error);
  if (st->slots == NULL)
    return FALSE;
  st->map = bw_map_region (conn, 4096, "the batched-write bitmap", error);
  if (st->map == NULL)
    return FALSE;
  /* with windows, the registrations themselves give no remote access */
  windows = rdma_window_supported (conn);
  st->slots_mr = rdma_res_mr_reg (
      conn->pd, st->slots, BW_REGION,
      IBV_ACCESS_LOCAL_WRITE | (windows ? IBV_ACCESS_MW_BIND : IBV_ACCESS_REMOTE_WRITE), error);
  if (st->slots_mr == NULL)
    return FALSE;
  st->map_mr = rdma_res_mr_reg (conn->pd, st->map, BW_MAP_BYTES,
                                windows ? IBV_ACCESS_MW_BIND : IBV_ACCESS_REMOTE_READ, error);
  if (st->map_mr == NULL)
    return FALSE;
  conn->stats.pinned_bytes += BW_REGION + BW_MAP_BYTES;
  st->rx_slot = 0;
  st->rx_seq = 1;
  bw_update_mask (conn, st);
  return TRUE;
}

void
bw_rx_clear (RdmaConn *conn, BwState *st)
{
  /* the windows first: a registration with a bound window cannot be deregistered */
  rdma_window_free (conn, &st->slots_win);
  rdma_window_free (conn, &st->map_win);
  if (st->slots_mr != NULL)
  {
    rdma_res_mr_dereg (&st->slots_mr);
    conn->stats.pinned_bytes -= BW_REGION;
  }
  if (st->map_mr != NULL)
  {
    rdma_res_mr_dereg (&st->map_mr);
    conn->stats.pinned_bytes -= BW_MAP_BYTES;
  }
  if (st->slots != NULL)
    munmap (st->slots, BW_REGION);
  if (st->map != NULL)
    munmap (st->map, 4096);
  st->slots = st->map = NULL;
  g_clear_pointer (&st->partial, g_free);
}

/* Answers a starved peer once enough was freed since (a quarter of the slots, or all we
 * held), so its next batch is not a single slot. */
static gboolean
rx_answer_starved (RdmaConn *conn, BwState *st, GError **error)
{
  guint freed = 0;

  if (!st->peer_starved)
    return TRUE;
  /* a slot is freed at most once while the peer waits (it cannot write it meanwhile) */
  for (guint i = 0; i < BW_MAP_BYTES; i++)
    freed += (guint) __builtin_popcount (st->map[i] ^ st->starved_map[i]);
  if (freed == 0 || (freed < BW_SLOTS / 4 && st->n_held > 0))
    return TRUE;
  st->peer_starved = FALSE;
  return rdma_conn_send_control (conn, RDMA_PROTO_BATCHED_WRITE, BW_CTL_FREED, st->map,
                                 BW_MAP_BYTES, error);
}

/* Frees the @span slots from @s of a fragment whose trailer is at @trailer. */
static gboolean
rx_free (RdmaConn *conn, BwState *st, guint32 s, guint32 span, guint8 *trailer, GError **error)
{
  /* a later header may start in any of these slots (half landed, it must read as zeros,
   * not as old bytes), and an old trailer must not pass for a new one: clear them before
   * the peer can learn the slots are free */
  memset (trailer, 0, BW_TRAILER_SIZE);
  for (guint32 i = s; i < s + span; i++)
  {
    memset (st->slots + (gsize) i * BW_SLOT_SIZE, 0, BW_HEADER_SIZE);
    st->rx_held[i] = 0;
  }
  st->n_held -= span;
  __atomic_thread_fence (__ATOMIC_RELEASE);
  for (guint32 i = s; i < s + span; i++)
    __atomic_store_n (&st->map[i / 8], (guint8) (st->map[i / 8] ^ (1u << (i % 8))),
                      __ATOMIC_RELAXED);
  return rx_answer_starved (conn, st, error);
}

/* Checks a complete fragment's header against the stream; @h is in host order. */
static gboolean
rx_check (RdmaConn *conn, BwState *st, guint32 s, const BwHeader *h, GError **error)
{
  guint32 span = span_of (h->frag_len);
  gboolean first = (h->flags & BW_FIRST) != 0, last = (h->flags & BW_LAST) != 0;

  if (h->magic != BW_MAGIC || (h->flags & ~(BW_FIRST | BW_LAST | BW_HOLD)) != 0)
    return bw_garbage (error, "fragment %u in slot %u has magic 0x%02x and flags 0x%02x", h->seq, s,
                       h->magic, h->flags);
  if (h->msg_len > conn->settings.max_message)
    return bw_garbage (error, "a %u-byte message; the max message size is %u", h->msg_len,
                       conn->settings.max_message);
  if (h->frag_len > h->msg_len || h->next >= BW_SLOTS || (h->next >= s && h->next < s + span)
      || st->rx_held[h->next])
    return bw_garbage (error,
                       "fragment %u in slot %u: %u bytes of a %u-byte message, next in "
                       "slot %u (busy or out of range)",
                       h->seq, s, h->frag_len, h->msg_len, h->next);
  for (guint32 i = s; i < s + span; i++)
    if (st->rx_held[i])
      return bw_garbage (error,
                         "fragment %u written into slot %u, which holds an unread "
                         "message",
                         h->seq, i);
  if (first != (st->partial == NULL && st->partial_len == 0)
      || (!first && h->msg_len != st->partial_msg_len)
      || h->frag_len > h->msg_len - (first ? 0 : st->partial_len)
      || last != (h->frag_len == h->msg_len - (first ? 0 : st->partial_len))
      || (!last && h->frag_len == 0))
    return bw_garbage (error,
                       "fragment %u of %u bytes%s%s does not continue the message (%" G_GSIZE_FORMAT
                       " of %u bytes so far)",
                       h->seq, h->frag_len, first ? " (first)" : "", last ? " (last)" : "",
                       st->partial_len, st->partial_msg_len);
  return TRUE;
}

/* Takes a complete fragment: delivers a one-fragment message in place, copies the others. */
static gboolean
rx_take (RdmaConn *conn, BwState *st, guint32 s, const BwHeader *h, GError **error)
{
  guint32 span = span_of (h->frag_len);
  guint8 *data = st->slots + (gsize) s * BW_SLOT_SIZE + BW_HEADER_SIZE;

  for (guint32 i = s; i < s + span; i++)
    st->rx_held[i] = 1;
  st->n_held += span;
  st->rx_slot = h->next;
  st->rx_last = h->seq;
  st->rx_seq = seq_next (h->seq);
  if ((h->flags & (BW_FIRST | BW_LAST)) == (BW_FIRST | BW_LAST))
  {
    /* read in place; freed by the release slot */
    rdma_conn_deliver (conn, &rdma_proto_batched_write_ops, data, h->frag_len, RDMA_MSG_IN_PROTO,
                       -1, (guint64) s | ((guint64) span << 16));
    return TRUE;
  }
  if (h->flags & BW_FIRST)
    st->partial_msg_len = h->msg_len;
  if (st->partial_len + h->frag_len > st->partial_cap)
  {
    /* grows with what arrives, not with what is announced */
    gsize cap = MIN ((gsize) st->partial_msg_len,
                     MAX (st->partial_cap * 2, st->partial_len + h->frag_len));
    guint8 *grown = g_try_realloc (st->partial, MAX (cap, 1));
    if (grown == NULL)
    {
      rdma_status_set_error (error, RDMA_ERR_NO_MEMORY, "g_try_realloc", 0, -1,
                             "reassembling a %u-byte message", st->partial_msg_len);
      return FALSE;
    }
    st->partial = grown;
    st->partial_cap = cap;
  }
  memcpy (st->partial + st->partial_len, data, h->frag_len);
  conn->stats.bytes_copied += h->frag_len;
  st->partial_len += h->frag_len;
  if (h->flags & BW_LAST)
  {
    rdma_conn_deliver (conn, &rdma_proto_batched_write_ops, st->partial, st->partial_len,
                       RDMA_MSG_ON_HEAP, -1, 0);
    st->partial = NULL;
    st->partial_len = st->partial_cap = 0;
  }
  return rx_free (conn, st, s, span, data + h->frag_len, error);
}

/* Takes every complete fragment in sequence from the slot the last one named.  Returns the
 * number taken, -1 with @error. */
gint
bw_rx_scan (RdmaConn *conn, BwState *st, GError **error)
{
  gint n = 0;

  if (st->slots == NULL)
    return 0;
  /* back-pressure: fragments wait in the slots (and the peer for slots) while the reader is
   * behind */
  while (conn->unread_bytes <= conn->settings.unread_limit)
  {
    guint32 s = st->rx_slot, seq, trailer;
    guint8 *p = st->slots + (gsize) s * BW_SLOT_SIZE;
    BwHeader raw, again, h;

    seq = GUINT32_FROM_LE (__atomic_load_n ((guint32 *) p, __ATOMIC_ACQUIRE));
    if (seq == 0)
      break;
    if (seq != st->rx_seq)
    {
      bw_garbage (error, "fragment %u in slot %u, expected %u", seq, s, st->rx_seq);
      return -1;
    }
    memcpy (&raw, p, sizeof raw);
    h.frag_len = GUINT32_FROM_LE (raw.frag_len);
    if (h.frag_len > BW_REGION - (gsize) s * BW_SLOT_SIZE - BW_HEADER_SIZE - BW_TRAILER_SIZE)
    {
      bw_garbage (error, "a %u-byte fragment in slot %u goes beyond the slot region", h.frag_len,
                  s);
      return -1;
    }
    __atomic_thread_fence (__ATOMIC_ACQUIRE);
    memcpy (&trailer, p + BW_HEADER_SIZE + h.frag_len, sizeof trailer);
    if (GUINT32_FROM_LE (trailer) != (seq ^ BW_TRAILER_XOR))
      break; /* still arriving */
    __atomic_thread_fence (__ATOMIC_ACQUIRE);
    memcpy (&again, p, sizeof again);
    if (memcmp (&raw, &again, sizeof raw) != 0)
      continue; /* read while it landed (it has now): again */
    h.seq = seq;
    h.msg_len = GUINT32_FROM_LE (raw.msg_len);
    h.next = GUINT16_FROM_LE (raw.next);
    h.flags = raw.flags;
    h.magic = raw.magic;
    if (!rx_check (conn, st, s, &h, error))
      return -1;
    /* after another protocol's message: its immediate comes after that message's completion */
    if ((h.flags & BW_HOLD) && seq_ahead (seq & BW_SEQ_BITS, st->rx_imm))
      break;
    if (!rx_take (conn, st, s, &h, error))
      return -1;
    n++;
  }
  return n;
}

gboolean
bw_on_imm (RdmaConn *conn, guint32 imm, guint32 byte_len, GError **error)
{
  BwState *st = state_of (conn);
  guint32 rest = RDMA_IMM_REST (imm);

  if (st == NULL || st->slots == NULL)
    return bw_garbage (error, "a write with immediate into slots this side never advertised");
  if (!rdma_credit_grant (&conn->credits, BW_IMM_CREDITS (rest)))
    return bw_garbage (error, "the peer returns %u credits, only %u are outstanding",
                       BW_IMM_CREDITS (rest), conn->credits.in_flight);
  st->rx_imm = BW_IMM_SEQ (rest);
  if (bw_rx_scan (conn, st, error) < 0)
    return FALSE;
  /* everything written before the immediate has landed: it must have been taken */
  if (conn->unread_bytes <= conn->settings.unread_limit
      && seq_ahead (st->rx_imm, st->rx_last & BW_SEQ_BITS))
    return bw_garbage (error, "an immediate announces fragment %u; the last that arrived is %u",
                       st->rx_imm, st->rx_last & BW_SEQ_BITS);
  return TRUE;
}

gboolean
bw_release (RdmaConn *conn, guint8 *data, gsize len, guint64 token, GError **error)
{
  BwState *st = state_of (conn);
  guint32 s = (guint32) (token & 0xffff), span = (guint32) (token >> 16);
  GError *e = NULL;

  if (st == NULL || st->slots == NULL)
    return TRUE;
  if (!rx_free (conn, st, s, span, data + len, &e))
  {
    rdma_conn_fail (conn, e);
    g_propagate_error (error, e);
    return FALSE;
  }
  return TRUE;
}

static gboolean
send_advert (RdmaConn *conn, BwState *st, GError **error)
{
  guint8 advert[BW_ADVERT_SIZE] = { 0 };

  if (st->slots != NULL)
  {
    gboolean windows = rdma_window_bound (st->slots_win);
    guint64 slots = GUINT64_TO_LE ((guint64) (guintptr) st->slots);
    guint64 map = GUINT64_TO_LE ((guint64) (guintptr) st->map);
    guint32 slots_rkey = GUINT32_TO_LE (windows ? rdma_window_rkey (st->slots_win)
                                                : st->slots_mr->rkey);
    guint32 map_rkey = GUINT32_TO_LE (windows ? rdma_window_rkey (st->map_win) : st->map_mr->rkey);
    guint16 count = GUINT16_TO_LE (BW_SLOTS);
    guint32 size = GUINT32_TO_LE (BW_SLOT_SIZE);

    memcpy (advert, &slots, 8);
    memcpy (advert + 8, &slots_rkey, 4);
    memcpy (advert + 12, &map, 8);
    memcpy (advert + 20, &map_rkey, 4);
    memcpy (advert + 24, &count, 2);
    memcpy (advert + 26, &size, 4);
  }
  return rdma_conn_send_control (conn, RDMA_PROTO_BATCHED_WRITE, BW_CTL_ADVERT, advert,
                                 sizeof advert, error);
}

/* The advert goes once both windows are bound. */
static gboolean
rx_window_bound (RdmaConn *conn, RdmaWindow *w, gpointer data, GError **error)
{
  BwState *st = data;

  if (!rdma_window_bound (st->slots_win) || !rdma_window_bound (st->map_win))
    return TRUE;
  return send_advert (conn, st, error);
}

gboolean
bw_rx_advertise (RdmaConn *conn, BwState *st, GError **error)
{
  if (rdma_window_pending (st->slots_win) || rdma_window_pending (st->map_win))
    return bw_garbage (error, "the peer asks for the batched-write slots again before they "
                              "were advertised");
  if (st->slots == NULL && (conn->settings.rx_protocols & BW_BIT))
  {
    GError *e = NULL;
    /* over the budget: no slots, and the peer sends by eager (rdma_budget.h) */
    if (!rdma_budget_admit (BW_REGION + BW_MAP_BYTES, "batched-write slots"))
      conn->stats.budget_refusals++;
    else if (!rx_create (conn, st, &e))
    {
      g_warning ("ThriftRdma: cannot register %u bytes of batched-write slots for the peer "
                 "(%s); its batched messages go by Eager-SendRecv",
                 BW_REGION, e->message);
      g_clear_error (&e);
      bw_rx_clear (conn, st);
    }
  }
  if (st->slots != NULL && rdma_window_supported (conn) && !rdma_window_bound (st->slots_win))
    return rdma_window_bind (conn, &st->slots_win, st->slots_mr, st->slots, BW_REGION,
                             IBV_ACCESS_REMOTE_WRITE, rx_window_bound, st, error)
           && rdma_window_bind (conn, &st->map_win, st->map_mr, st->map, BW_MAP_BYTES,
                                IBV_ACCESS_REMOTE_READ, rx_window_bound, st, error);
  return send_advert (conn, st, error);
}

gboolean
bw_rx_starved (RdmaConn *conn, BwState *st, const guint8 *seen, GError **error)
{
  /* what has landed first: taking it may free slots */
  if (bw_rx_scan (conn, st, error) < 0)
    return FALSE;
  memcpy (st->starved_map, seen, BW_MAP_BYTES);
  st->peer_starved = TRUE;
  return rx_answer_starved (conn, st, error);
}
