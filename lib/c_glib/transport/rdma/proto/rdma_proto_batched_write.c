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
 * rdma_proto_batched_write.c: batched confirmation (HiPower, NPC '19).  The sender RDMA WRITEs
 * each message into free slots of the receiver and learns which slots the receiver has freed
 * by READing the receiver's state bitmap once per batch, instead of one RECV or ACK per
 * message.  Made for streams of small one-way messages.
 *
 * Memory.  The receiver owns BW_SLOTS slots of BW_SLOT_SIZE bytes (registered REMOTE_WRITE)
 * and a bitmap of one bit per slot (registered REMOTE_READ).  Both are made when the peer
 * first asks for them (BW_CTL_REQUEST) and advertised on the control channel (BW_CTL_ADVERT),
 * so a connection that never uses the protocol registers nothing; they are deregistered when
 * the connection closes.  The sender has a mirror of the slots (LOCAL_WRITE): a fragment that
 * fits one slot is copied there beside its header and trailer and written from there, so its
 * WRITE holds no transmit buffer and needs no completion; a larger one is written straight
 * from the transmit buffer (header, payload, trailer gathered: three SGEs) by a signalled
 * WRITE that holds the buffer.  Otherwise the sender signals one WRITE in BW_SIGNAL_EVERY
 * (at most a quarter of the send queue), so a stream takes few completions on its side too.
 *
 * A fragment in the slots (rdma_proto_batched_write.h):
 *
 *   slot s:  BwHeader (16 B) | payload (frag_len B) | trailer (4 B: seq ^ BW_TRAILER_XOR)
 *
 * It fills consecutive slots s .. s+span-1 (no wrap at the end of the region); a message
 * larger than BW_MAX_RUN slots, or than the free run found, is split into several fragments.
 * Every header names the slot of the next fragment (`next`), chosen from the known-free slots
 * when the fragment is written, so the receiver looks at exactly one header: the first
 * fragment goes to slot 0.  The trailer is written last (the NIC places a WRITE in order): a
 * header with the expected sequence number and its trailer means the fragment is complete.
 *
 * Slot states (HiPower's bitmaps).  Bit i of the receiver's bitmap flips each time the
 * receiver frees slot i; bit i of the sender's `sent` flips each time the sender writes it; a
 * slot is free when both agree.  The receiver frees a slot when the message in it was read (a
 * one-fragment message is read in place) or copied out (fragments of a longer message), after
 * clearing the header room of every slot of the fragment (a later header may start in any)
 * and the trailer.  The sender spends its known-free slots; when it has none left for the next
 * fragment (a batch ends) it READs the bitmap.  If that shows nothing freed, it says so
 * (BW_CTL_STARVED, with the bitmap it saw) and waits: the receiver answers BW_CTL_FREED with
 * its bitmap once it has freed a quarter of the slots, or all it held.  No slot is written
 * before the receiver freed it, so there is no other flow control; the engine's credits
 * cover only the immediates below.
 *
 * How the receiver learns that messages arrived, without a RECV per message: whenever it
 * waits (the progress slot, in every polling mode) it looks at the one header where the next
 * fragment lands.  A receiver blocked in event polling (or idle in a server's poll set) sees
 * nothing of plain WRITEs, so the sender makes a fragment a WRITE_WITH_IMM (which consumes a
 * receive slot and a credit, and wakes the receiver) when:
 *   - it uses the last known-free slot: once per batch at the latest;
 *   - it is the last of a message sent after a message was received (request/response: a
 *     reply or the next request is awaited right after it); in ping-pong every message goes
 *     so, as in Direct-WriteIMM;
 *   - it is the first of a message that follows one of another protocol: then it carries
 *     BW_HOLD and is delivered only at its immediate's completion, which comes after that
 *     other message's (the order of the QP), so the order of messages is kept across
 *     protocols;
 * and a zero-byte WRITE_WITH_IMM (a doorbell) follows plain WRITEs not yet announced as soon
 * as the sender waits (for a reply; not in send_message's own short waits for a send queue
 * entry, a credit or the bitmap, which end without the receiver's help), before another
 * protocol sends on the connection, and when the connection closes (then the sender also
 * waits, at most a second, until the NIC is done, lest the disconnect flush them).  When the
 * sender runs out of slots it says so with a SEND (BW_CTL_STARVED), which wakes the receiver
 * too.  So nothing waits forever: an event-polling receiver sees a stream of one-way
 * messages in bursts, at the end of each batch and whenever the sender waits, switches or
 * closes; a polling receiver sees each message as soon as it lands.  Messages are delivered
 * in sequence order.  The immediate returns credits and names the last fragment written
 * before it (rdma_proto_batched_write.h).
 *
 * A peer's garbage (a bad sequence number, a fragment beyond the slot region or a message
 * over the max message size, a slot that holds an unread message, an immediate announcing
 * fragments never written) is an RDMA_ERR_PROTOCOL error that fails the connection.  When the
 * peer has no slots for us (it does not accept the protocol, or cannot register them), the
 * messages go by Eager-SendRecv.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "../rdma_budget.h"
#include "../rdma_conn_private.h"
#include "../rdma_numa.h"
#include "../rdma_resources.h"
#include "../rdma_status.h"
#include "../rdma_window.h"
#include "rdma_proto_batched_write.h"

/* the largest fragment, in slots: a large message goes in pieces the receiver copies out
 * while the next ones are written */
#define BW_MAX_RUN 64u
#define BW_SIGNAL_EVERY 32u
/* payload of a fragment that fits one slot */
#define BW_SLOT_ROOM (BW_SLOT_SIZE - BW_HEADER_SIZE - BW_TRAILER_SIZE)

typedef enum
{
  TX_UNKNOWN,        /* not asked for yet */
  TX_REQUESTED,
  TX_READY,
  TX_REFUSED         /* the peer has no slots for us: Eager-SendRecv */
} TxState;

typedef enum
{
  REFRESH_NONE,
  REFRESH_READ,      /* the READ of the bitmap is posted */
  REFRESH_STARVED    /* it showed nothing free: BW_CTL_STARVED sent, waiting for FREED */
} RefreshState;

typedef struct
{
  /* receiver: the slots the peer writes into (made on its request) */
  guint8 *slots;                  /* BW_REGION bytes (owned) (nullable) */
  struct ibv_mr *slots_mr;        /* LOCAL_WRITE (owned) (nullable) */
  guint8 *map;                    /* the bitmap, one page (owned) (nullable) */
  struct ibv_mr *map_mr;          /* (owned) (nullable) */
  RdmaWindow *slots_win;          /* the peer's way in: REMOTE_WRITE (rdma_window.h) */
  RdmaWindow *map_win;            /* REMOTE_READ */
  guint32 rx_slot;                /* where the next fragment's header lands */
  guint32 rx_seq;                 /* its sequence number */
  guint32 rx_last;                /* sequence number of the last fragment taken (0: none) */
  guint32 rx_imm;                 /* low bits of the sequence number of the last immediate */
  guint8 rx_held[BW_SLOTS];       /* taken and not yet freed */
  guint32 n_held;
  gboolean peer_starved;          /* the peer waits for BW_CTL_FREED */
  guint8 starved_map[BW_MAP_BYTES]; /* the bitmap it saw */
  guint8 *partial;                /* a message of several fragments, being copied (owned) */
  gsize partial_len, partial_cap;
  guint32 partial_msg_len;

  /* sender: the peer's slots */
  TxState tx_state;
  guint64 r_slots, r_map;
  guint32 r_slots_rkey, r_map_rkey;
  guint8 *mirror;                 /* BW_REGION + a page for the READ (owned) (nullable) */
  struct ibv_mr *mirror_mr;       /* LOCAL_WRITE (owned) (nullable) */
  guint8 sent[BW_MAP_BYTES];      /* parity of our writes into each slot */
  guint8 avail[BW_SLOTS];         /* known free and not taken */
  guint32 n_avail;
  guint32 tx_slot;                /* where the next fragment goes (named by the last one) */
  guint32 tx_seq;                 /* its sequence number */
  RefreshState refresh;
  guint unannounced;              /* fragments written by plain WRITE since the last
                                     immediate */
  gboolean in_send;               /* waiting inside send_message (for a send queue entry,
                                     a credit, the bitmap): no doorbell needed for that */
  guint32 last_seq;               /* sequence number of the last fragment written */
  guint64 posted, fenced;         /* our posts, and the last one known to be complete */
} BwState;

#define BW_BIT (1u << RDMA_PROTO_BATCHED_WRITE)
#define MIRROR_SIZE (BW_REGION + 4096u)

static inline BwState *
state_of (RdmaConn *conn)
{
  return conn->proto_state[RDMA_PROTO_BATCHED_WRITE];
}

static gboolean
garbage (GError **error, const gchar *fmt, ...) G_GNUC_PRINTF (2, 3);

static gboolean
garbage (GError **error, const gchar *fmt, ...)
{
  va_list ap;
  gchar *msg;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "batched write", 0, -1,
                         "garbage framing: %s", msg);
  g_free (msg);
  return FALSE;
}

static inline guint32
seq_next (guint32 seq)
{
  return seq + 1 != 0 ? seq + 1 : 1;
}

/* @a is later than @b (low bits of sequence numbers, at most half the space apart). */
static inline gboolean
seq_ahead (guint32 a, guint32 b)
{
  guint32 d = (a - b) & BW_SEQ_BITS;
  return d != 0 && d <= BW_SEQ_BITS / 2;
}

static inline guint32
span_of (guint32 frag_len)
{
  return (BW_HEADER_SIZE + frag_len + BW_TRAILER_SIZE + BW_SLOT_SIZE - 1) / BW_SLOT_SIZE;
}

static inline gboolean
map_bit (const guint8 *map, guint32 i)
{
  return (map[i / 8] >> (i % 8)) & 1;
}

/* Progress runs while we own slots (to find fragments) or owe the peer a doorbell. */
static void
update_mask (RdmaConn *conn, BwState *st)
{
  if (st->slots != NULL || st->unannounced > 0)
    rdma_conn_want_progress (conn, RDMA_PROTO_BATCHED_WRITE, TRUE);
  else
    rdma_conn_want_progress (conn, RDMA_PROTO_BATCHED_WRITE, FALSE);
}

static gpointer
map_region (RdmaConn *conn, gsize len, const gchar *what, GError **error)
{
  void *mem = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  if (mem == MAP_FAILED) {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_NO_MEMORY, "mmap", err, -1, "%s", what);
    return NULL;
  }
  rdma_numa_place (mem, len, conn->settings.numa_node);
  return mem;
}

/* ---- receiver ---- */

static gboolean
rx_create (RdmaConn *conn, BwState *st, GError **error)
{
  gboolean windows;

  st->slots = map_region (conn, BW_REGION, "the batched-write slots", error);
  if (st->slots == NULL)
    return FALSE;
  st->map = map_region (conn, 4096, "the batched-write bitmap", error);
  if (st->map == NULL)
    return FALSE;
  /* with windows, the registrations themselves give no remote access */
  windows = rdma_window_supported (conn);
  st->slots_mr = rdma_res_mr_reg (conn->pd, st->slots, BW_REGION, IBV_ACCESS_LOCAL_WRITE
                                  | (windows ? IBV_ACCESS_MW_BIND : IBV_ACCESS_REMOTE_WRITE),
                                  error);
  if (st->slots_mr == NULL)
    return FALSE;
  st->map_mr = rdma_res_mr_reg (conn->pd, st->map, BW_MAP_BYTES,
                                windows ? IBV_ACCESS_MW_BIND : IBV_ACCESS_REMOTE_READ, error);
  if (st->map_mr == NULL)
    return FALSE;
  conn->stats.pinned_bytes += BW_REGION + BW_MAP_BYTES;
  st->rx_slot = 0;
  st->rx_seq = 1;
  update_mask (conn, st);
  return TRUE;
}

static void
rx_clear (RdmaConn *conn, BwState *st)
{
  /* the windows first: a registration with a bound window cannot be deregistered */
  rdma_window_free (conn, &st->slots_win);
  rdma_window_free (conn, &st->map_win);
  if (st->slots_mr != NULL) {
    rdma_res_mr_dereg (&st->slots_mr);
    conn->stats.pinned_bytes -= BW_REGION;
  }
  if (st->map_mr != NULL) {
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
  for (guint32 i = s; i < s + span; i++) {
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
    return garbage (error, "fragment %u in slot %u has magic 0x%02x and flags 0x%02x",
                    h->seq, s, h->magic, h->flags);
  if (h->msg_len > conn->settings.max_message)
    return garbage (error, "a %u-byte message; the max message size is %u", h->msg_len,
                    conn->settings.max_message);
  if (h->frag_len > h->msg_len || h->next >= BW_SLOTS || (h->next >= s && h->next < s + span)
      || st->rx_held[h->next])
    return garbage (error, "fragment %u in slot %u: %u bytes of a %u-byte message, next in "
                    "slot %u (busy or out of range)", h->seq, s, h->frag_len, h->msg_len,
                    h->next);
  for (guint32 i = s; i < s + span; i++)
    if (st->rx_held[i])
      return garbage (error, "fragment %u written into slot %u, which holds an unread "
                      "message", h->seq, i);
  if (first != (st->partial == NULL && st->partial_len == 0)
      || (!first && h->msg_len != st->partial_msg_len)
      || h->frag_len > h->msg_len - (first ? 0 : st->partial_len)
      || last != (h->frag_len == h->msg_len - (first ? 0 : st->partial_len))
      || (!last && h->frag_len == 0))
    return garbage (error, "fragment %u of %u bytes%s%s does not continue the message (%"
                    G_GSIZE_FORMAT " of %u bytes so far)", h->seq, h->frag_len,
                    first ? " (first)" : "", last ? " (last)" : "", st->partial_len,
                    st->partial_msg_len);
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
  if ((h->flags & (BW_FIRST | BW_LAST)) == (BW_FIRST | BW_LAST)) {
    /* read in place; freed by the release slot */
    rdma_conn_deliver (conn, &rdma_proto_batched_write_ops, data, h->frag_len,
                       RDMA_MSG_IN_PROTO, -1, (guint64) s | ((guint64) span << 16));
    return TRUE;
  }
  if (h->flags & BW_FIRST)
    st->partial_msg_len = h->msg_len;
  if (st->partial_len + h->frag_len > st->partial_cap) {
    /* grows with what arrives, not with what is announced */
    gsize cap = MIN ((gsize) st->partial_msg_len,
                     MAX (st->partial_cap * 2, st->partial_len + h->frag_len));
    guint8 *grown = g_try_realloc (st->partial, MAX (cap, 1));
    if (grown == NULL) {
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
  if (h->flags & BW_LAST) {
    rdma_conn_deliver (conn, &rdma_proto_batched_write_ops, st->partial, st->partial_len,
                       RDMA_MSG_ON_HEAP, -1, 0);
    st->partial = NULL;
    st->partial_len = st->partial_cap = 0;
  }
  return rx_free (conn, st, s, span, data + h->frag_len, error);
}

/* Takes every complete fragment in sequence from the slot the last one named.  Returns the
 * number taken, -1 with @error. */
static gint
rx_scan (RdmaConn *conn, BwState *st, GError **error)
{
  gint n = 0;

  if (st->slots == NULL)
    return 0;
  /* back-pressure: fragments wait in the slots (and the peer for slots) while the reader is
   * behind */
  while (conn->unread_bytes <= conn->settings.unread_limit) {
    guint32 s = st->rx_slot, seq, trailer;
    guint8 *p = st->slots + (gsize) s * BW_SLOT_SIZE;
    BwHeader raw, again, h;

    seq = GUINT32_FROM_LE (__atomic_load_n ((guint32 *) p, __ATOMIC_ACQUIRE));
    if (seq == 0)
      break;
    if (seq != st->rx_seq) {
      garbage (error, "fragment %u in slot %u, expected %u", seq, s, st->rx_seq);
      return -1;
    }
    memcpy (&raw, p, sizeof raw);
    h.frag_len = GUINT32_FROM_LE (raw.frag_len);
    if (h.frag_len > BW_REGION - (gsize) s * BW_SLOT_SIZE - BW_HEADER_SIZE - BW_TRAILER_SIZE) {
      garbage (error, "a %u-byte fragment in slot %u goes beyond the slot region", h.frag_len,
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

static gboolean
bw_on_imm (RdmaConn *conn, guint32 imm, guint32 byte_len, GError **error)
{
  BwState *st = state_of (conn);
  guint32 rest = RDMA_IMM_REST (imm);

  if (st == NULL || st->slots == NULL)
    return garbage (error, "a write with immediate into slots this side never advertised");
  if (!rdma_credit_grant (&conn->credits, BW_IMM_CREDITS (rest)))
    return garbage (error, "the peer returns %u credits, only %u are outstanding",
                    BW_IMM_CREDITS (rest), conn->credits.in_flight);
  st->rx_imm = BW_IMM_SEQ (rest);
  if (rx_scan (conn, st, error) < 0)
    return FALSE;
  /* everything written before the immediate has landed: it must have been taken */
  if (conn->unread_bytes <= conn->settings.unread_limit
      && seq_ahead (st->rx_imm, st->rx_last & BW_SEQ_BITS))
    return garbage (error, "an immediate announces fragment %u; the last that arrived is %u",
                    st->rx_imm, st->rx_last & BW_SEQ_BITS);
  return TRUE;
}

static gboolean
bw_release (RdmaConn *conn, guint8 *data, gsize len, guint64 token, GError **error)
{
  BwState *st = state_of (conn);
  guint32 s = (guint32) (token & 0xffff), span = (guint32) (token >> 16);
  GError *e = NULL;

  if (st == NULL || st->slots == NULL)
    return TRUE;
  if (!rx_free (conn, st, s, span, data + len, &e)) {
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

  if (st->slots != NULL) {
    gboolean windows = rdma_window_bound (st->slots_win);
    guint64 slots = GUINT64_TO_LE ((guint64) (guintptr) st->slots);
    guint64 map = GUINT64_TO_LE ((guint64) (guintptr) st->map);
    guint32 slots_rkey = GUINT32_TO_LE (windows ? rdma_window_rkey (st->slots_win)
                                                : st->slots_mr->rkey);
    guint32 map_rkey = GUINT32_TO_LE (windows ? rdma_window_rkey (st->map_win)
                                              : st->map_mr->rkey);
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

static gboolean
rx_advertise (RdmaConn *conn, BwState *st, GError **error)
{
  if (rdma_window_pending (st->slots_win) || rdma_window_pending (st->map_win))
    return garbage (error, "the peer asks for the batched-write slots again before they "
                    "were advertised");
  if (st->slots == NULL && (conn->settings.rx_protocols & BW_BIT)) {
    GError *e = NULL;
    /* over the budget: no slots, and the peer sends by eager (rdma_budget.h) */
    if (!rdma_budget_admit (BW_REGION + BW_MAP_BYTES, "batched-write slots"))
      conn->stats.budget_refusals++;
    else if (!rx_create (conn, st, &e)) {
      g_warning ("ThriftRdma: cannot register %u bytes of batched-write slots for the peer "
                 "(%s); its batched messages go by Eager-SendRecv", BW_REGION, e->message);
      g_clear_error (&e);
      rx_clear (conn, st);
    }
  }
  if (st->slots != NULL && rdma_window_supported (conn) && !rdma_window_bound (st->slots_win))
    return rdma_window_bind (conn, &st->slots_win, st->slots_mr, st->slots, BW_REGION,
                             IBV_ACCESS_REMOTE_WRITE, rx_window_bound, st, error)
           && rdma_window_bind (conn, &st->map_win, st->map_mr, st->map, BW_MAP_BYTES,
                                IBV_ACCESS_REMOTE_READ, rx_window_bound, st, error);
  return send_advert (conn, st, error);
}

static gboolean
rx_starved (RdmaConn *conn, BwState *st, const guint8 *seen, GError **error)
{
  /* what has landed first: taking it may free slots */
  if (rx_scan (conn, st, error) < 0)
    return FALSE;
  memcpy (st->starved_map, seen, BW_MAP_BYTES);
  st->peer_starved = TRUE;
  return rx_answer_starved (conn, st, error);
}

/* ---- sender ---- */

/* A snapshot of the peer's bitmap: every slot whose bit agrees with ours is free (a stale
 * snapshot only shows fewer: the peer frees a slot once per write). */
static void
tx_apply (BwState *st, const guint8 *map)
{
  st->n_avail = 0;
  for (guint32 i = 0; i < BW_SLOTS; i++) {
    st->avail[i] = map_bit (map, i) == map_bit (st->sent, i) && i != st->tx_slot;
    st->n_avail += st->avail[i];
  }
}

static gboolean
tx_create (RdmaConn *conn, BwState *st, GError **error)
{
  st->mirror = map_region (conn, MIRROR_SIZE, "the batched-write mirror", error);
  if (st->mirror == NULL)
    return FALSE;
  st->mirror_mr = rdma_res_mr_reg (conn->pd, st->mirror, MIRROR_SIZE, IBV_ACCESS_LOCAL_WRITE,
                                   error);
  if (st->mirror_mr == NULL)
    return FALSE;
  conn->stats.pinned_bytes += MIRROR_SIZE;
  return TRUE;
}

static void
tx_clear (RdmaConn *conn, BwState *st)
{
  if (st->mirror_mr != NULL) {
    rdma_res_mr_dereg (&st->mirror_mr);
    conn->stats.pinned_bytes -= MIRROR_SIZE;
  }
  if (st->mirror != NULL)
    munmap (st->mirror, MIRROR_SIZE);
  st->mirror = NULL;
}

static gboolean
tx_settled (RdmaConn *conn, gpointer data)
{
  TxState s = ((BwState *) data)->tx_state;
  return s == TX_READY || s == TX_REFUSED;
}

/* Makes sure the peer's slots are known: asks for them and waits the first time. */
/* The open slot: the peer's slots are known (asked for the first time), or it has none. */
static RdmaOpenStatus
bw_open (RdmaConn *conn, gint64 deadline_us, GError **error)
{
  BwState *st = state_of (conn);

  if (st->tx_state == TX_UNKNOWN) {
    GError *e = NULL;
    /* over the budget: this message by eager, the next asks again (rdma_budget.h) */
    if (!rdma_budget_admit (MIRROR_SIZE, "a batched-write mirror")) {
      conn->stats.budget_refusals++;
      return RDMA_OPEN_REFUSED;
    }
    if (!tx_create (conn, st, &e)) {
      g_warning ("ThriftRdma: cannot register a batched-write mirror (%s); batched messages "
                 "go by Eager-SendRecv", e->message);
      g_clear_error (&e);
      tx_clear (conn, st);
      st->tx_state = TX_REFUSED;
      return RDMA_OPEN_REFUSED;
    }
    if (!rdma_conn_send_control (conn, RDMA_PROTO_BATCHED_WRITE, BW_CTL_REQUEST, NULL, 0,
                                 error))
      return RDMA_OPEN_ERROR;
    st->tx_state = TX_REQUESTED;
  }
  if (!rdma_conn_wait_for (conn, tx_settled, st, deadline_us, error))
    return RDMA_OPEN_ERROR;
  return st->tx_state == TX_READY ? RDMA_OPEN_READY : RDMA_OPEN_REFUSED;
}

static gboolean
tx_advert (RdmaConn *conn, BwState *st, const guint8 *p, GError **error)
{
  guint64 slots, map;
  guint32 slots_rkey, map_rkey, size;
  guint16 count;

  memcpy (&slots, p, 8);
  memcpy (&slots_rkey, p + 8, 4);
  memcpy (&map, p + 12, 8);
  memcpy (&map_rkey, p + 20, 4);
  memcpy (&count, p + 24, 2);
  memcpy (&size, p + 26, 4);
  count = GUINT16_FROM_LE (count);
  size = GUINT32_FROM_LE (size);
  if (count == 0) {
    tx_clear (conn, st);
    st->tx_state = TX_REFUSED;
    return TRUE;
  }
  if (count != BW_SLOTS || size != BW_SLOT_SIZE)
    return garbage (error, "the peer advertises %u slots of %u bytes, this side uses %u of %u",
                    count, size, BW_SLOTS, BW_SLOT_SIZE);
  st->r_slots = GUINT64_FROM_LE (slots);
  st->r_slots_rkey = GUINT32_FROM_LE (slots_rkey);
  st->r_map = GUINT64_FROM_LE (map);
  st->r_map_rkey = GUINT32_FROM_LE (map_rkey);
  memset (st->sent, 0, sizeof st->sent);
  st->tx_slot = 0;
  st->tx_seq = 1;
  tx_apply (st, st->sent); /* all free */
  st->tx_state = TX_READY;
  return TRUE;
}

static gboolean
fence_done (RdmaConn *conn, RdmaOp *op, const struct ibv_wc *wc, GError **error)
{
  BwState *st = state_of (conn);

  if (st != NULL && op->arg > st->fenced)
    st->fenced = op->arg;
  return TRUE;
}

static gboolean
read_done (RdmaConn *conn, RdmaOp *op, const struct ibv_wc *wc, GError **error)
{
  BwState *st = state_of (conn);
  const guint8 *snapshot = st->mirror + BW_REGION;

  fence_done (conn, op, wc, error);
  tx_apply (st, snapshot);
  if (st->n_avail > 0) {
    st->refresh = REFRESH_NONE;
    return TRUE;
  }
  /* the receiver is behind: it answers once it has freed slots */
  st->refresh = REFRESH_STARVED;
  return rdma_conn_send_control (conn, RDMA_PROTO_BATCHED_WRITE, BW_CTL_STARVED, snapshot,
                                 BW_MAP_BYTES, error);
}

static gboolean
tx_freed (RdmaConn *conn, BwState *st, const guint8 *map, GError **error)
{
  tx_apply (st, map);
  if (st->n_avail == 0)
    return garbage (error, "the peer says it freed slots, and none is free");
  st->refresh = REFRESH_NONE;
  return TRUE;
}

/* Our WRs go unsignalled (the quiet op) unless they hold @tx, @signal is asked, or the send
 * queue holds enough unsignalled ones (well before the engine would force a signal): then a
 * pooled op whose completion says our posts so far are done. */
static void
tx_mark (RdmaConn *conn, BwState *st, struct ibv_send_wr *wr, RdmaTx *tx, gboolean signal)
{
  guint every = MAX (1u, MIN (BW_SIGNAL_EVERY, conn->sq_depth / 4));

  if (signal || tx != NULL || conn->sq_unsignalled + 1 >= every) {
    RdmaOp *op = rdma_conn_op_get (conn, RDMA_OP_WRITE, RDMA_PROTO_BATCHED_WRITE);
    op->tx = tx;
    op->done = fence_done;
    op->arg = st->posted + 1;
    wr->wr_id = rdma_op_wr_id (op);
    wr->send_flags = IBV_SEND_SIGNALED;
  } else {
    wr->wr_id = rdma_op_wr_id (&conn->quiet_op);
    wr->send_flags = 0;
  }
}

static guint32
tx_imm (RdmaConn *conn, BwState *st, guint32 seq)
{
  rdma_credit_take (&conn->credits);
  return htonl (RDMA_IMM_MAKE (RDMA_PROTO_BATCHED_WRITE,
                               BW_IMM_REST (rdma_credit_piggyback_max (&conn->credits, 15),
                                            seq)));
}

static gboolean
tx_post_read (RdmaConn *conn, BwState *st, GError **error)
{
  RdmaOp *op = rdma_conn_op_get (conn, RDMA_OP_READ, RDMA_PROTO_BATCHED_WRITE);
  struct ibv_sge sge = {
    .addr = (uintptr_t) (st->mirror + BW_REGION), .length = BW_MAP_BYTES,
    .lkey = st->mirror_mr->lkey,
  };
  struct ibv_send_wr wr = {
    .wr_id = rdma_op_wr_id (op),
    .sg_list = &sge,
    .num_sge = 1,
    .opcode = IBV_WR_RDMA_READ,
    .send_flags = IBV_SEND_SIGNALED,
    .wr.rdma = { .remote_addr = st->r_map, .rkey = st->r_map_rkey },
  };

  op->done = read_done;
  op->arg = ++st->posted;
  st->refresh = REFRESH_READ;
  return rdma_conn_post_wr (conn, &wr, "READ (batched-write bitmap)", error);
}

/* A zero-byte WRITE_WITH_IMM that announces what was written (or, without @imm, a zero-byte
 * WRITE whose completion says everything before it is done). */
static gboolean
tx_doorbell (RdmaConn *conn, BwState *st, gboolean imm, gboolean signal, GError **error)
{
  struct ibv_send_wr wr = {
    .num_sge = 0,
    .opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
    .wr.rdma = { .remote_addr = st->r_slots, .rkey = st->r_slots_rkey },
  };

  if (imm)
    wr.imm_data = tx_imm (conn, st, st->last_seq);
  tx_mark (conn, st, &wr, NULL, signal);
  st->posted++;
  if (!rdma_conn_post_wr (conn, &wr, imm ? "WRITE_WITH_IMM (doorbell)" : "WRITE (fence)",
                          error))
    return FALSE;
  if (imm) {
    st->unannounced = 0;
    update_mask (conn, st);
  }
  return TRUE;
}

/* Plans the next fragment of at most @left bytes: a run of @span known-free slots from
 * tx_slot and the slot of the fragment after it.  FALSE: no slot is known free for that one
 * (the batch is over). */
static gboolean
tx_plan (BwState *st, gsize left, guint32 *span, guint32 *next)
{
  guint32 s = st->tx_slot, want, k = 1;

  want = (guint32) MIN ((gsize) BW_MAX_RUN,
                        (BW_HEADER_SIZE + left + BW_TRAILER_SIZE + BW_SLOT_SIZE - 1)
                          / BW_SLOT_SIZE);
  while (k < want && s + k < BW_SLOTS && st->avail[s + k])
    k++;
  /* the next fragment goes where the run ends, or to the first free slot after it */
  for (guint32 i = 0; i < BW_SLOTS; i++) {
    guint32 c = (s + k + i) % BW_SLOTS;
    if (st->avail[c] && (c < s || c >= s + k)) {
      *span = k;
      *next = c;
      return TRUE;
    }
  }
  /* every free slot is in the run: leave the last one for the next fragment */
  if (k > 1) {
    *span = k - 1;
    *next = s + k - 1;
    return TRUE;
  }
  return FALSE;
}

/* Writes one fragment (@frag bytes of @tx at @off) into @span slots from tx_slot. */
static gboolean
tx_fragment (RdmaConn *conn, BwState *st, RdmaTx *tx, gsize off, guint32 frag, guint8 flags,
             guint32 span, guint32 next, gboolean imm, GError **error)
{
  guint32 s = st->tx_slot, seq = st->tx_seq;
  guint8 *m = st->mirror + (gsize) s * BW_SLOT_SIZE;
  guint32 trailer = GUINT32_TO_LE (seq ^ BW_TRAILER_XOR);
  BwHeader h = {
    .seq = GUINT32_TO_LE (seq),
    .frag_len = GUINT32_TO_LE (frag),
    .msg_len = GUINT32_TO_LE ((guint32) tx->len),
    .next = GUINT16_TO_LE ((guint16) next),
    .flags = flags,
    .magic = BW_MAGIC,
  };
  struct ibv_sge sge[3];
  struct ibv_send_wr wr = {
    .sg_list = sge,
    .opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
    .wr.rdma = { .remote_addr = st->r_slots + (gsize) s * BW_SLOT_SIZE, .rkey = st->r_slots_rkey },
  };

  memcpy (m, &h, sizeof h);
  memcpy (m + BW_HEADER_SIZE + frag, &trailer, sizeof trailer);
  if (frag <= BW_SLOT_ROOM) {
    /* small: copied beside header and trailer, so the WRITE holds no transmit buffer and
     * needs no completion */
    memcpy (m + BW_HEADER_SIZE, tx->base + off, frag);
    conn->stats.bytes_copied += frag;
    sge[0] = (struct ibv_sge) {
      .addr = (uintptr_t) m, .length = BW_HEADER_SIZE + frag + BW_TRAILER_SIZE,
      .lkey = st->mirror_mr->lkey,
    };
    wr.num_sge = 1;
    tx_mark (conn, st, &wr, NULL, FALSE);
  } else {
    /* large: the payload straight from the transmit buffer, held until the WRITE is done */
    sge[0] = (struct ibv_sge) {
      .addr = (uintptr_t) m, .length = BW_HEADER_SIZE, .lkey = st->mirror_mr->lkey,
    };
    sge[1] = (struct ibv_sge) {
      .addr = (uintptr_t) (tx->base + off), .length = frag, .lkey = tx->mr->lkey,
    };
    sge[2] = (struct ibv_sge) {
      .addr = (uintptr_t) (m + BW_HEADER_SIZE + frag), .length = BW_TRAILER_SIZE,
      .lkey = st->mirror_mr->lkey,
    };
    wr.num_sge = 3;
    tx_mark (conn, st, &wr, tx, FALSE);
  }
  if (imm)
    wr.imm_data = tx_imm (conn, st, seq);
  /* take the run and the next slot */
  for (guint32 i = s; i < s + span; i++) {
    st->sent[i / 8] ^= (guint8) (1u << (i % 8));
    if (st->avail[i]) {
      st->avail[i] = 0;
      st->n_avail--;
    }
  }
  st->avail[next] = 0;
  st->n_avail--;
  st->tx_slot = next;
  st->tx_seq = seq_next (seq);
  st->last_seq = seq;
  st->posted++;
  if (!rdma_conn_post_wr (conn, &wr, imm ? "WRITE_WITH_IMM" : "WRITE", error))
    return FALSE;
  st->unannounced = imm ? 0 : st->unannounced + 1;
  update_mask (conn, st);
  return TRUE;
}

static gboolean
bw_send_message (RdmaConn *conn, RdmaTx *tx, gint64 deadline_us, GError **error)
{
  BwState *st = state_of (conn);
  gsize len = tx->len, off = 0;
  /* after another protocol's message: hold this one until its immediate (order) */
  gboolean after_other = conn->last_tx_proto != &rdma_proto_batched_write_ops;
  /* after a received message: a wait follows, announce the message at once */
  gboolean answer = !conn->last_was_send;

  /* the engine called bw_open first: the peer's slots are known */
  if (st->tx_state != TX_READY) {
    rdma_status_set_error (error, RDMA_ERR_NOT_OPEN, "batched_write", 0, -1,
                           "sent before the peer's slots were known");
    return FALSE;
  }
  do {
    guint32 span = 0, next = 0, frag = 0;
    guint8 flags = 0;
    gboolean imm = FALSE, ok;

    for (;;) {
      if (!rdma_conn_check_usable (conn, error))
        return FALSE;
      if (tx_plan (st, len - off, &span, &next)) {
        frag = (guint32) MIN (len - off, (gsize) span * BW_SLOT_SIZE - BW_HEADER_SIZE
                                           - BW_TRAILER_SIZE);
        flags = (off == 0 ? BW_FIRST : 0) | (off + frag == len ? BW_LAST : 0);
        if (off == 0 && after_other)
          flags |= BW_HOLD;
        /* the batch ends with it (the next fragment needs a READ), or it must be announced */
        imm = (flags & BW_HOLD) || (answer && (flags & BW_LAST))
              || st->n_avail == span; /* the run's free slots and the next one are the last */
        if (conn->sq_used + 1 <= conn->sq_depth && (!imm || conn->credits.send > 0))
          break;
      } else if (st->refresh == REFRESH_NONE && conn->sq_used + 1 <= conn->sq_depth) {
        /* out of known-free slots: the one READ of the batch */
        if (!tx_post_read (conn, st, error))
          return FALSE;
        continue;
      }
      st->in_send = TRUE;
      ok = rdma_conn_progress (conn, deadline_us, error);
      st->in_send = FALSE;
      if (!ok)
        return FALSE;
    }
    if (!tx_fragment (conn, st, tx, off, frag, flags, span, next, imm, error))
      return FALSE;
    off += frag;
  } while (off < len);
  return TRUE;
}

gboolean
rdma_bw_next_fragment (RdmaConn *conn, guint64 *remote_addr, guint32 *rkey, guint32 *seq)
{
  BwState *st = state_of (conn);

  if (st == NULL || st->tx_state != TX_READY)
    return FALSE;
  *remote_addr = st->r_slots + (gsize) st->tx_slot * BW_SLOT_SIZE;
  *rkey = st->r_slots_rkey;
  *seq = st->tx_seq;
  return TRUE;
}

/* ---- both ---- */

static gint
bw_progress (RdmaConn *conn, GError **error)
{
  BwState *st = state_of (conn);
  GError *e = NULL;
  gint n;

  if (st == NULL)
    return 0;
  n = rx_scan (conn, st, &e);
  /* the sender waits (for a reply, say) and the receiver may be blocked: announce what it
   * has not been told.  Not for send_message's own waits: those end without the receiver */
  if (n >= 0 && st->unannounced > 0 && !st->in_send && conn->state == RDMA_CONN_CONNECTED
      && conn->credits.send > 0 && conn->sq_used + 1 <= conn->sq_depth
      && !tx_doorbell (conn, st, TRUE, FALSE, &e))
    n = -1;
  if (n < 0) {
    rdma_conn_fail (conn, e);
    g_propagate_error (error, e);
  }
  return n;
}

typedef struct
{
  BwState *st;
  gboolean closing;
} FlushWait;

static gboolean
can_ring (RdmaConn *conn, gpointer data)
{
  FlushWait *w = data;

  if (w->st->unannounced == 0 && !w->closing)
    return TRUE;
  return conn->sq_used + 1 <= conn->sq_depth
         && (w->st->unannounced == 0 || conn->credits.send > 0);
}

static gboolean
fenced (RdmaConn *conn, gpointer data)
{
  BwState *st = data;
  return st->fenced >= st->posted;
}

static gboolean
bw_flush (RdmaConn *conn, gboolean closing, gint64 deadline_us, GError **error)
{
  BwState *st = state_of (conn);
  FlushWait w = { st, closing };

  if (st == NULL || st->tx_state != TX_READY || conn->state != RDMA_CONN_CONNECTED)
    return TRUE;
  if (st->unannounced == 0 && (!closing || st->fenced >= st->posted))
    return TRUE;
  if (!rdma_conn_wait_for (conn, can_ring, &w, deadline_us, error))
    return FALSE;
  if (st->unannounced == 0 && !closing)
    return TRUE; /* the wait rang it */
  /* closing: signalled, and wait until it (and so all before it) is done, lest the
   * disconnect flush our WRITEs */
  if (!tx_doorbell (conn, st, st->unannounced > 0, closing, error))
    return FALSE;
  return !closing || rdma_conn_wait_for (conn, fenced, st, deadline_us, error);
}

static gboolean
bw_on_control (RdmaConn *conn, guint8 kind, const guint8 *payload, guint32 len,
               GError **error)
{
  BwState *st = state_of (conn);

  if (st != NULL) {
    switch (kind) {
    case BW_CTL_REQUEST:
      if (len == 0)
        return rx_advertise (conn, st, error);
      break;
    case BW_CTL_ADVERT:
      if (len == BW_ADVERT_SIZE && st->tx_state == TX_REQUESTED)
        return tx_advert (conn, st, payload, error);
      break;
    case BW_CTL_STARVED:
      if (len == BW_MAP_BYTES && st->slots != NULL)
        return rx_starved (conn, st, payload, error);
      break;
    case BW_CTL_FREED:
      if (len == BW_MAP_BYTES && st->tx_state == TX_READY && st->refresh == REFRESH_STARVED)
        return tx_freed (conn, st, payload, error);
      break;
    default:
      break;
    }
  }
  return garbage (error, "a batched-write control message of kind %u with %u bytes, "
                  "unexpected now", kind, len);
}

static gboolean
bw_setup (RdmaConn *conn, GError **error)
{
  conn->proto_state[RDMA_PROTO_BATCHED_WRITE] = g_new0 (BwState, 1);
  return TRUE;
}

static void
bw_teardown (RdmaConn *conn)
{
  BwState *st = state_of (conn);

  if (st == NULL)
    return;
  rx_clear (conn, st);
  tx_clear (conn, st);
  g_free (st);
  conn->proto_state[RDMA_PROTO_BATCHED_WRITE] = NULL;
  rdma_conn_want_progress (conn, RDMA_PROTO_BATCHED_WRITE, FALSE);
}

const RdmaProtoOps rdma_proto_batched_write_ops = {
  .name = "batched_write",
  .id = RDMA_PROTO_BATCHED_WRITE,
  .hint = THRIFT_HINT_PROTO_BATCHED_WRITE,
  .setup = bw_setup,
  .teardown = bw_teardown,
  .open = bw_open,
  .send_message = bw_send_message,
  .on_imm = bw_on_imm,
  .on_control = bw_on_control,
  .progress = bw_progress,
  .release = bw_release,
  .flush = bw_flush,
};
