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
 * rdma_proto_rfp.c: RFP, the remote fetching paradigm (HatRPC Sec. 3.1, after Su et al.,
 * EuroSys '17).  The sender leaves a message in its own registered memory and the receiver
 * fetches it with RDMA READ: a server's CPU posts nothing for a response.
 *
 * The sender's response region is made on its first RFP message (registered for local
 * access; the receiver READs it and WRITEs its ack word through a memory window,
 * rdma_conn_window.h) and advertised once by a control message (RFP_ADVERT: addr, the window's
 * rkey, size).  It holds one message at a time:
 *
 *   [0, 8)        ack word: the receiver may WRITE there the last message it fetched
 *   [64, 96)      RfpHeader: seq, ack, len, check; seq is stored last
 *   [96, 96+len)  the message
 *
 * seq is the sender's message number on the connection (1 = its first message, whatever
 * protocol carried each), so the receiver, which counts what it received, knows which one it
 * waits for without being told per call; check covers seq, ack, len and the first 4 KiB of
 * the message, so a half-written message is never taken, even from a NIC that reads out of
 * order.  A region too small for a message grows (a new one registered and advertised; the
 * old one stays registered until the receiver fetched from the new one, as a READ of it may
 * still be in flight), so any size up to the max message size passes; it keeps its size
 * until the connection closes, when it is deregistered and its key stops working.
 *
 * Receiving.  A poll is one READ of the header and the first `window` bytes (the size of
 * the last message, 64 B to 4 KiB); a longer message takes READs of the rest (at most
 * conn->max_rd_atomic in flight, 256 KiB each), which start after the header was seen, so they
 * see the whole message.  It lands in the receiver's fetch buffer and is read there in
 * place; the next poll waits until it is released.  A receiver polls:
 *   - when the sender announced the message: a notice (a SEND of 16 bytes, taking a credit)
 *     goes with every RFP message unless the sender knows the receiver polls by itself; the
 *     READ is posted from the completion handler, so a server waiting in a poll set fetches
 *     too;
 *   - without a notice, only a client that busy-polls, and only in a wait (the progress
 *     slot) while it has sent more messages than it received and the server has advertised
 *     a region.  A server's message goes without a notice only when the server has received
 *     more messages than it sent, so the client, having sent at least that many, is then
 *     waiting, and only while the client has not asked for notices: replies go silent, a
 *     second message in a row is announced.
 * So a connection that never used RFP issues no READ; once the server has advertised its
 * region, a busy-polling client waiting for any reply polls once per READ round trip until
 * the reply came, whatever protocol brought it: READs per RFP reply = 1 + the server's time
 * to answer divided by the READ round trip (+ 1 per 256 KiB beyond the first window).  It
 * starts polling only after half the shortest recent time its replies took (it spins on its
 * CQ until then), which halves that count when the server's time is steady.  A client whose
 * wait may block in the kernel (event polling, or hybrid with the process's cores taken by
 * waits) would pay a wake-up for each of those READs (43 READs and CQ events per call at 64
 * clients in the guest): before a request, with no reply outstanding, it tells the server by
 * RFP_NOTIFY (peers whose hello has RDMA_WIRE_HELLO_RFP_NOTIFY) to announce its replies, and
 * then fetches on the notice only: one SEND and one READ per reply.  Spinning again, it tells
 * the server to stop.
 *
 * Flow control.  The region is rewritten only after the receiver fetched the message in it;
 * and no message of any protocol follows an RFP message before that (the before_send slot),
 * so messages arrive in order.  The receiver reports what it fetched in the `ack` of its own
 * RFP headers and notices, in an RDMA WRITE of the ack word before it sends by another
 * protocol, or, when the sender asks (RFP_ASK, sent when it wants to send again), in an
 * RFP_ACK control message, which also wakes a sender blocked in the kernel.  A request and
 * its reply carry each other's acknowledgements: RFP both ways costs the client one SEND
 * (the notice) and its READs per call, and the server only the READs of the requests.
 *
 * A client can force RFP for its requests: they are always announced (a server waits in a
 * poll set where nothing polls) and the server fetches them by READ.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "../rdma_budget.h"
#include "../rdma_conn_private.h"
#include "../rdma_conn_window.h"
#include "../rdma_numa.h"
#include "../rdma_resources.h"
#include "../rdma_spin.h"
#include "../rdma_status.h"
#include "rdma_proto_rfp.h"

#define RFP_ACK_OFF 0u
#define RFP_HDR_OFF 64u
#define RFP_BODY_OFF 96u
#define RFP_HDR_SIZE 32u
#define RFP_CHECKED 4096u /* message bytes the check covers; the largest window */
#define RFP_FIRST_WINDOW 256u
#define RFP_MIN_WINDOW 64u
#define RFP_GRAIN (64u << 10) /* regions and fetch buffers are multiples of it */
/* The largest READ.  Soft-RoCE in the TCG guest fetched a 16 MiB message at 1.7 MB/s by
 * 4 MiB READs; test_protocols' rfp sizes (16 MiB each way) took 25 s with 1 MiB or 4 MiB
 * READs and 7.5 to 8.8 s with 64 KiB or 256 KiB ones.  On hardware it costs a round trip
 * per 256 KiB while conn->max_rd_atomic is 1. */
#define RFP_READ_MAX (256u << 10)
#define RFP_ACK_PAGE 4096u

/* The header in the sender's region; little-endian. */
typedef struct __attribute__ ((packed))
{
  guint64 seq; /* the sender's message number; stored last */
  guint64 ack; /* the last of the receiver's messages the sender had fetched */
  guint32 len; /* message bytes */
  guint32 zero;
  guint64 check; /* rfp_check of all the above and the first bytes of the message */
} RfpHeader;
G_STATIC_ASSERT (sizeof (RfpHeader) == RFP_HDR_SIZE);

/* The notice: the payload of a SEND (RDMA_WIRE_DATA, proto RFP); little-endian. */
typedef struct __attribute__ ((packed))
{
  guint64 seq; /* this message of the sender's is in its region */
  guint64 ack; /* as in RfpHeader */
} RfpNotice;

/* Control kinds (RdmaWireHeader.proto = RDMA_PROTO_RFP), little-endian payloads. */
enum
{
  RFP_ADVERT = 1, /* le64 addr, le32 rkey, le32 size: the sender's region, new or grown */
  RFP_ASK = 2,    /* le64 seq: the sender wants to send again: fetch seq and say so */
  RFP_ACK = 3,    /* le64 seq: the last of the peer's messages fetched */
  RFP_NOTIFY = 4  /* le32 1: announce every message to us, we do not poll for them; 0: we
                      poll (RDMA_WIRE_HELLO_RFP_NOTIFY) */
};

typedef struct
{
  guint8 *base; /* mmap'ed */
  gsize size;
  struct ibv_mr *mr;
  RdmaWindow *window; /* the peer's way in (the response region only) */
} RfpMem;

typedef enum
{
  FETCH_IDLE,
  FETCH_POLL, /* the READ of the header and the window is in flight */
  FETCH_BODY  /* READs of the rest of the message */
} FetchPhase;

typedef struct
{
  /* sender: the region the peer fetches our messages from */
  RfpMem region;        /* (owned) */
  RfpMem retired;       /* (owned) the region before it grew, until the peer fetched
                                from the new one */
  guint64 region_first; /* the first message written into region */
  guint64 last_seq;     /* our last RFP message (0: none) */
  guint64 peer_acked;   /* the last of them the peer reported fetched */
  guint64 asked;        /* the last one we sent an RFP_ASK for */
  gboolean fence_waiting;
  gboolean peer_notified; /* the peer asked for every message announced (RFP_NOTIFY) */

  /* receiver: the peer's region */
  gboolean peer_known;
  guint64 peer_addr;
  guint32 peer_rkey;
  guint32 peer_size;
  guint peer_gen;  /* adverts taken */
  RfpMem fetch;    /* (owned) where READs land: header, then message */
  RfpMem ack_page; /* (owned) the source of the ack WRITE */
  gboolean held;   /* a delivered message is still in fetch */
  FetchPhase phase;
  guint reads_out;           /* our READs in flight */
  guint fetch_gen;           /* peer_gen when the poll was posted */
  gboolean fetch_strict;     /* the poll was posted after the peer announced the message */
  guint32 poll_window;       /* message bytes the poll in flight takes along */
  guint32 window;            /* ... the next one */
  RfpHeader hdr;             /* of the message being fetched, host order */
  gsize body_next, body_end; /* the rest of it: next byte to READ, end */
  guint64 fetched;           /* the last of the peer's messages fetched */
  guint64 ack_told;          /* the last one reported to the peer */
  guint64 ack_addr;          /* the ack word of the region it came from */
  guint32 ack_rkey;
  guint64 notified;     /* the last message the peer announced (notice, RFP_ASK) */
  gboolean notify_told; /* client: we asked the peer to announce every message */
  guint64 ask_pending;  /* the peer asked for an RFP_ACK once this one is fetched */
  gint64 sent_us;       /* when this side last sent a message (monotonic) */
  gint64 reply_us;      /* time from it to an unannounced reply found: a minimum
                                that decays upwards */
} RfpState;

static gboolean read_done (RdmaConn *conn, RdmaOp *op, const struct ibv_wc *wc, GError **error);

static RfpState *
state_of (RdmaConn *conn)
{
  return conn->proto_state[RDMA_PROTO_RFP];
}

/* ---- the check: not cryptographic; catches a message read while it was being written ---- */

static inline guint64
mix (guint64 h)
{
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

static guint64
rfp_check (guint64 seq, guint64 ack, guint32 len, const guint8 *data, gsize n)
{
  guint64 h = mix (0x9e3779b97f4a7c15ull ^ seq);
  gsize i;

  h = mix (h ^ ack);
  h = mix (h ^ len);
  for (i = 0; i + 8 <= n; i += 8)
  {
    guint64 w;
    memcpy (&w, data + i, 8);
    h = mix (h ^ GUINT64_FROM_LE (w));
  }
  if (i < n)
  {
    guint64 w = 0;
    memcpy (&w, data + i, n - i);
    h = mix (h ^ GUINT64_FROM_LE (w) ^ ((guint64) (n - i) << 56));
  }
  return h;
}

/* ---- registered memory ---- */

static gsize
round_grain (gsize n)
{
  return MAX ((gsize) RFP_GRAIN, (n + RFP_GRAIN - 1) / RFP_GRAIN * RFP_GRAIN);
}

static gboolean
mem_alloc (RdmaConn *conn, RfpMem *m, gsize size, gint access, const gchar *what, GError **error)
{
  void *base = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  if (base == MAP_FAILED)
  {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_NO_MEMORY, "mmap", err, -1,
                           "a %" G_GSIZE_FORMAT "-byte RFP %s", size, what);
    return FALSE;
  }
  rdma_numa_place (base, size, conn->settings.numa_node);
  m->mr = rdma_res_mr_reg (conn->pd, base, size, access, error);
  if (m->mr == NULL)
  {
    munmap (base, size);
    return FALSE;
  }
  m->base = base;
  m->size = size;
  conn->stats.pinned_bytes += size;
  return TRUE;
}

/* Idempotent. */
static void
mem_free (RdmaConn *conn, RfpMem *m)
{
  /* the window first: a registration with a bound window cannot be deregistered */
  rdma_window_free (conn, &m->window);
  if (m->mr != NULL)
  {
    rdma_res_mr_dereg (&m->mr);
    conn->stats.pinned_bytes -= m->size;
  }
  if (m->base != NULL)
    munmap (m->base, m->size);
  memset (m, 0, sizeof *m);
}

static gboolean
protocol_error (GError **error, const gchar *what)
{
  rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "RFP", 0, -1, "garbage framing: %s", what);
  return FALSE;
}

/* ---- sender ---- */

static guint64
ack_word (const RfpMem *m)
{
  return GUINT64_FROM_LE (
      __atomic_load_n ((const guint64 *) (m->base + RFP_ACK_OFF), __ATOMIC_ACQUIRE));
}

/* The peer fetched our messages up to @seq. */
static gboolean
take_ack (RdmaConn *conn, RfpState *st, guint64 seq, GError **error)
{
  if (seq > st->last_seq)
  {
    gchar *what = g_strdup_printf (
        "the peer acknowledges message %" G_GUINT64_FORMAT
        " of this side's; the last one sent by RFP is %" G_GUINT64_FORMAT,
        seq, st->last_seq);
    protocol_error (error, what);
    g_free (what);
    return FALSE;
  }
  if (seq > st->peer_acked)
    st->peer_acked = seq;
  /* it fetched from the new region: no READ of the old one is in flight any more */
  if (st->retired.mr != NULL && st->peer_acked >= st->region_first)
    mem_free (conn, &st->retired);
  return TRUE;
}

/* Looks at the ack word the peer WRITEs (no completion says it changed). */
static gboolean
sender_check (RdmaConn *conn, RfpState *st, GError **error)
{
  if (st->region.base == NULL || st->peer_acked >= st->last_seq)
    return TRUE;
  return take_ack (conn, st, ack_word (&st->region), error);
}

static gboolean
fence_open (RdmaConn *conn, gpointer data)
{
  RfpState *st = data;

  return st->peer_acked >= st->last_seq
         || (st->region.base != NULL && ack_word (&st->region) >= st->last_seq);
}

/* Receiver: reports what it fetched by an RDMA WRITE of the sender's ack word, before a
 * message that does not carry the report (the QP keeps the order). */
static gboolean
post_ack (RdmaConn *conn, RfpState *st, gint64 deadline_us, GError **error)
{
  guint64 *src = (guint64 *) st->ack_page.base;
  struct ibv_sge sge;
  struct ibv_send_wr wr;
  gboolean quiet;
  RdmaOp *op;

  if (!rdma_conn_sq_reserve (conn, 1, deadline_us, error))
    return FALSE;
  /* an ack WRITE still in flight may carry this newer value: harmless */
  *src = GUINT64_TO_LE (st->fetched);
  /* unsignalled, unless the engine would signal it (which needs an op of its own) */
  quiet = conn->sq_unsignalled + 2 < conn->sq_depth / 2;
  op = quiet ? &conn->quiet_op : rdma_conn_op_get (conn, RDMA_OP_WRITE, RDMA_PROTO_RFP);
  sge = (struct ibv_sge){
    .addr = (uintptr_t) src,
    .length = sizeof *src,
    .lkey = st->ack_page.mr->lkey,
  };
  wr = (struct ibv_send_wr){
    .wr_id = rdma_op_wr_id (op),
    .sg_list = &sge,
    .num_sge = 1,
    .opcode = IBV_WR_RDMA_WRITE,
    .send_flags = quiet ? 0 : IBV_SEND_SIGNALED,
    .wr.rdma = { .remote_addr = st->ack_addr, .rkey = st->ack_rkey },
  };
  if (!rdma_conn_post_wr (conn, &wr, "RDMA WRITE (RFP acknowledgement)", error))
    return FALSE;
  st->ack_told = st->fetched;
  return TRUE;
}

static gboolean
send_ack (RdmaConn *conn, RfpState *st, GError **error)
{
  guint64 seq = GUINT64_TO_LE (st->fetched);

  st->ack_told = st->fetched;
  return rdma_conn_send_control (conn, RDMA_PROTO_RFP, RFP_ACK, &seq, sizeof seq, error);
}

static gboolean
controls_posted (RdmaConn *conn, gpointer data)
{
  return g_queue_is_empty (&conn->control_out);
}

/* Whether this client's next wait may block in the kernel: an event-polled one does, a
 * hybrid one when the process's waits already take its cores or the machine's are contended
 * (it would not be let spin, rdma_spin.h), a busy-polled one never. */
static gboolean
wait_may_block (RdmaConn *conn)
{
  switch (rdma_conn_polling (conn))
  {
  case THRIFT_RDMA_POLLING_BUSY:
    return FALSE;
  case THRIFT_RDMA_POLLING_HYBRID:
    return rdma_spin_waiters () >= rdma_spin_cores () || rdma_spin_contended ();
  default:
    return TRUE;
  }
}

/* A client whose replies may come by RFP says, before a request and with no reply
 * outstanding (so no reply is on its way under the old word), whether it polls for them: only
 * a wait that spins does.  The control message is posted before the request, so the server
 * knows before it answers (the QP keeps order). */
static gboolean
tell_notify (RdmaConn *conn, RfpState *st, gint64 deadline_us, GError **error)
{
  gboolean want = wait_may_block (conn);
  guint32 word = GUINT32_TO_LE (want ? 1u : 0u);

  /* a client that may block asks before its first request, region known or not: unasked, the
   * server leaves the first reply unannounced, and the client, knowing the region by the time
   * it waits, polled it by READ until the reply was there, a READ and a wake-up per round trip
   * (4,528 READs for one reply on a loaded host) */
  if (!conn->is_client || (!st->peer_known && !want) || want == st->notify_told
      || !(conn->peer.flags & RDMA_WIRE_HELLO_RFP_NOTIFY) || conn->msgs_sent != conn->msgs_received)
    return TRUE;
  if (!rdma_conn_send_control (conn, RDMA_PROTO_RFP, RFP_NOTIFY, &word, sizeof word, error))
    return FALSE;
  st->notify_told = want;
  /* a control message waiting for a send slot would go after the request */
  return rdma_conn_wait_for (conn, controls_posted, NULL, deadline_us, error);
}

static gboolean
rfp_before_send (RdmaConn *conn, const RdmaProtoOps *ops, gint64 deadline_us, GError **error)
{
  RfpState *st = state_of (conn);
  GError *e = NULL;

  if (st == NULL)
    return TRUE;
  if (st->peer_known)
    st->sent_us = g_get_monotonic_time ();
  if (!tell_notify (conn, st, deadline_us, error))
    return FALSE;
  if (st->last_seq > st->peer_acked)
  {
    gboolean ok;

    if (!sender_check (conn, st, &e))
      return rdma_conn_fail_with (conn, e, error);
    if (st->last_seq > st->peer_acked)
    {
      /* the peer reports on its own only with its next message: ask */
      if (st->asked < st->last_seq)
      {
        guint64 seq = GUINT64_TO_LE (st->last_seq);
        if (!rdma_conn_send_control (conn, RDMA_PROTO_RFP, RFP_ASK, &seq, sizeof seq, error))
          return FALSE;
        st->asked = st->last_seq;
      }
      st->fence_waiting = TRUE;
      ok = rdma_conn_wait_for (conn, fence_open, st, deadline_us, error);
      st->fence_waiting = FALSE;
      if (!ok)
        return FALSE;
      if (!sender_check (conn, st, &e))
        return rdma_conn_fail_with (conn, e, error);
    }
  }
  /* an RFP message carries the report itself */
  if (ops != &rdma_proto_rfp_ops && st->fetched > st->ack_told)
    return post_ack (conn, st, deadline_us, error);
  return TRUE;
}

/* A new region of at least @need bytes, advertised; the message @seq goes there first. */
static gboolean
grow (RdmaConn *conn, RfpState *st, gsize need, guint64 seq, gint64 deadline_us, GError **error)
{
  const gint remote = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
  gboolean windows = rdma_window_supported (conn);
  RfpMem fresh = { NULL };
  guint8 advert[16];
  guint64 addr;
  guint32 rkey, size;

  if (!mem_alloc (conn, &fresh, round_grain (need),
                  IBV_ACCESS_LOCAL_WRITE | (windows ? IBV_ACCESS_MW_BIND : remote),
                  "response region", error))
    return FALSE;
  /* (an older retired region was freed when the fence saw our last message fetched; a
   * region whose bind never completed was never advertised) */
  mem_free (conn, &st->retired);
  if (rdma_window_pending (st->region.window))
    mem_free (conn, &st->region);
  st->retired = st->region;
  st->region = fresh;
  st->region_first = seq;
  if (windows
      && !rdma_window_bind_wait (conn, &st->region.window, st->region.mr, st->region.base,
                                 st->region.size, remote, deadline_us, error))
    return FALSE;
  addr = GUINT64_TO_LE ((guint64) (guintptr) st->region.base);
  rkey = GUINT32_TO_LE (windows ? rdma_window_rkey (st->region.window) : st->region.mr->rkey);
  size = GUINT32_TO_LE ((guint32) st->region.size);
  memcpy (advert, &addr, 8);
  memcpy (advert + 8, &rkey, 4);
  memcpy (advert + 12, &size, 4);
  return rdma_conn_send_control (conn, RDMA_PROTO_RFP, RFP_ADVERT, advert, sizeof advert, error);
}

static gboolean
notice_ready (RdmaConn *conn)
{
  return g_queue_is_empty (&conn->control_out) && conn->credits.send > 0
         && conn->send_pool.n_free > 0 && conn->sq_used + 1 <= conn->sq_depth;
}

static gboolean
send_notice (RdmaConn *conn, RfpState *st, guint64 seq, gint64 deadline_us, GError **error)
{
  RfpNotice n = { GUINT64_TO_LE (seq), GUINT64_TO_LE (st->fetched) };
  guint32 slot;
  guint8 *dst;

  /* not before the advert, which may wait in the control queue for a free slot */
  for (;;)
  {
    if (!rdma_conn_check_usable (conn, error) || !rdma_conn_return_credits (conn, error))
      return FALSE;
    if (notice_ready (conn))
      break;
    if (!rdma_conn_progress (conn, deadline_us, error))
      return FALSE;
  }
  rdma_credit_take (&conn->credits);
  rdma_pool_get (&conn->send_pool, &slot);
  dst = rdma_pool_slot (&conn->send_pool, slot);
  rdma_conn_header (conn, dst, RDMA_PROTO_RFP, RDMA_WIRE_DATA, RDMA_WIRE_FIRST | RDMA_WIRE_LAST,
                    sizeof n, sizeof n);
  memcpy (dst + RDMA_WIRE_HEADER_SIZE, &n, sizeof n);
  return rdma_conn_post_send (conn, RDMA_PROTO_RFP, slot, RDMA_WIRE_HEADER_SIZE + sizeof n, NULL, 0,
                              0, error);
}

/* A message that needs a larger region than the one it has asks the budget first
 * (rdma_budget.h); refused, it goes by eager. */
static RdmaOpenStatus
rfp_open (RdmaConn *conn, gint64 deadline_us, GError **error)
{
  RfpState *st = state_of (conn);
  gsize len = conn->tx[conn->tx_cur].len;

  if (len > G_MAXUINT32 - RFP_GRAIN - RFP_BODY_OFF || st->region.size >= RFP_BODY_OFF + len
      || rdma_budget_admit (round_grain (RFP_BODY_OFF + len), "an RFP response region"))
    return RDMA_OPEN_READY;
  conn->stats.budget_refusals++;
  return RDMA_OPEN_REFUSED;
}

static gboolean
rfp_send_message (RdmaConn *conn, RdmaTx *tx, gint64 deadline_us, GError **error)
{
  RfpState *st = state_of (conn);
  guint64 seq = conn->msgs_sent + 1;
  gsize len = tx->len;
  guint8 *body;
  RfpHeader *h;

  if (len > G_MAXUINT32 - RFP_GRAIN - RFP_BODY_OFF)
  {
    rdma_status_set_error (error, RDMA_ERR_TOO_LARGE, "send", 0, -1,
                           "a %" G_GSIZE_FORMAT "-byte message does not fit an RFP region", len);
    return FALSE;
  }
  /* before_send saw the last message fetched: the region is ours to rewrite */
  if (st->region.size < RFP_BODY_OFF + len
      && !grow (conn, st, RFP_BODY_OFF + len, seq, deadline_us, error))
    return FALSE;
  body = st->region.base + RFP_BODY_OFF;
  memcpy (body, tx->base, len);
  conn->stats.bytes_copied += len;
  h = (RfpHeader *) (st->region.base + RFP_HDR_OFF);
  h->ack = GUINT64_TO_LE (st->fetched);
  h->len = GUINT32_TO_LE ((guint32) len);
  h->zero = 0;
  h->check = GUINT64_TO_LE (
      rfp_check (seq, st->fetched, (guint32) len, body, MIN (len, (gsize) RFP_CHECKED)));
  /* the sequence number last: a reader that sees it finds the rest written */
  __atomic_store_n ((guint64 *) (st->region.base + RFP_HDR_OFF), GUINT64_TO_LE (seq),
                    __ATOMIC_RELEASE);
  st->last_seq = seq;
  st->ack_told = st->fetched;
  rdma_conn_want_progress (conn, RDMA_PROTO_RFP, TRUE);
  /* A server that received more messages than it sent answers a client that waits, and
   * so polls: no notice.  Anything else is announced. */
  if (!conn->is_client && conn->msgs_received > conn->msgs_sent && !st->peer_notified)
    return TRUE;
  return send_notice (conn, st, seq, deadline_us, error);
}

/* ---- receiver ---- */

/* The fetch buffer holds @need bytes (keeping its first @keep); the ack page exists. */
static gboolean
ensure_fetch (RdmaConn *conn, RfpState *st, gsize need, gsize keep, GError **error)
{
  RfpMem fresh = { NULL };

  if (st->ack_page.base == NULL
      && !mem_alloc (conn, &st->ack_page, RFP_ACK_PAGE, 0, "acknowledgement word", error))
    return FALSE;
  if (st->fetch.size >= need)
    return TRUE;
  if (!mem_alloc (conn, &fresh, round_grain (need), IBV_ACCESS_LOCAL_WRITE, "fetch buffer", error))
    return FALSE;
  if (keep > 0)
  {
    memcpy (fresh.base, st->fetch.base, keep);
    conn->stats.bytes_copied += keep;
  }
  mem_free (conn, &st->fetch);
  st->fetch = fresh;
  return TRUE;
}

static gboolean
fetch_wanted (RdmaConn *conn, RfpState *st)
{
  if (conn->state != RDMA_CONN_CONNECTED || !st->peer_known || st->held || st->phase != FETCH_IDLE
      || st->reads_out >= conn->max_rd_atomic || conn->sq_used + 1 > conn->sq_depth)
    return FALSE;
  return st->notified > conn->msgs_received
         || (conn->is_client && !st->notify_told && conn->msgs_sent > conn->msgs_received);
}

static gboolean
post_read (RdmaConn *conn, RfpState *st, gsize local_off, guint64 remote_off, guint32 len,
           GError **error)
{
  RdmaOp *op = rdma_conn_op_get (conn, RDMA_OP_READ, RDMA_PROTO_RFP);
  struct ibv_sge sge = {
    .addr = (uintptr_t) (st->fetch.base + local_off),
    .length = len,
    .lkey = st->fetch.mr->lkey,
  };
  struct ibv_send_wr wr = {
    .wr_id = rdma_op_wr_id (op),
    .sg_list = &sge,
    .num_sge = 1,
    .opcode = IBV_WR_RDMA_READ,
    .send_flags = IBV_SEND_SIGNALED,
    .wr.rdma = { .remote_addr = st->peer_addr + remote_off, .rkey = st->peer_rkey },
  };

  op->done = read_done;
  op->data = st;
  if (!rdma_conn_post_wr (conn, &wr, "RDMA READ (RFP)", error))
    return FALSE;
  st->reads_out++;
  return TRUE;
}

/* Polls (the header and the window) if a message may be there and nothing holds it back
 * (else a later turn of a wait, a completion or the release does it). */
/* The peer has another message for us while the reader has not read the one in the fetch
 * buffer: move that one to the heap (one copy) rather than stop fetching.  Otherwise a
 * stream stalls whenever the reader waits for this side to send first (a pipelining client,
 * a server blocked on its reply), where TCP's socket buffer would absorb it.  Bounded by
 * the unread limit, like every protocol's buffering; in a ping-pong the reader always
 * released the message before the next one comes, and nothing is copied. */
static void
unhold (RdmaConn *conn, RfpState *st)
{
  if (!st->held || conn->unread_bytes >= conn->settings.unread_limit
      || !(st->notified > conn->msgs_received
           || (conn->is_client && conn->msgs_sent > conn->msgs_received)))
    return;
  for (GList *l = conn->received.head; l != NULL; l = l->next)
  {
    RdmaMessage *m = l->data;

    if (m->proto == &rdma_proto_rfp_ops && m->owner == RDMA_MSG_IN_PROTO)
    {
      rdma_conn_message_to_heap (conn, m);
      st->held = FALSE;
      return;
    }
  }
}

static gboolean
try_fetch (RdmaConn *conn, RfpState *st, GError **error)
{
  guint32 w;

  unhold (conn, st);
  if (!fetch_wanted (conn, st))
    return TRUE;
  if (!ensure_fetch (conn, st, RFP_HDR_SIZE + RFP_CHECKED, 0, error))
    return FALSE;
  w = MIN (st->window, st->peer_size - RFP_BODY_OFF);
  st->phase = FETCH_POLL;
  st->fetch_gen = st->peer_gen;
  st->fetch_strict = st->notified == conn->msgs_received + 1;
  st->poll_window = w;
  return post_read (conn, st, 0, RFP_HDR_OFF, RFP_HDR_SIZE + w, error);
}

static gboolean
post_body (RdmaConn *conn, RfpState *st, GError **error)
{
  while (st->body_next < st->body_end && st->reads_out < conn->max_rd_atomic
         && conn->sq_used + 1 <= conn->sq_depth)
  {
    guint32 n = (guint32) MIN (st->body_end - st->body_next, (gsize) RFP_READ_MAX);
    if (!post_read (conn, st, RFP_HDR_SIZE + st->body_next, RFP_BODY_OFF + st->body_next, n, error))
      return FALSE;
    st->body_next += n;
  }
  return TRUE;
}

/* The poll found no new message, or one being written. */
static gboolean
not_ready (RdmaConn *conn, RfpState *st, gboolean check_failed, GError **error)
{
  st->phase = FETCH_IDLE;
  if (st->fetch_strict && st->fetch_gen == st->peer_gen)
  {
    /* announced before the READ: it must be there, whole */
    gchar *what = g_strdup_printf ("the peer announced message %" G_GUINT64_FORMAT " in its "
                                   "region, which holds message %" G_GUINT64_FORMAT " of %u "
                                   "bytes%s",
                                   conn->msgs_received + 1, st->hdr.seq, st->hdr.len,
                                   check_failed ? " that fails its check" : "");
    protocol_error (error, what);
    g_free (what);
    return FALSE;
  }
  /* announced after it: look again now, a completion drives it (a server waiting in a
   * poll set runs no progress); otherwise the next turn of a wait does */
  return st->notified > conn->msgs_received ? try_fetch (conn, st, error) : TRUE;
}

static gboolean
complete (RdmaConn *conn, RfpState *st, GError **error)
{
  const RfpHeader *h = &st->hdr;
  guint8 *body = st->fetch.base + RFP_HDR_SIZE;

  if (rfp_check (h->seq, h->ack, h->len, body, MIN ((gsize) h->len, (gsize) RFP_CHECKED))
      != h->check)
    return not_ready (conn, st, TRUE, error);
  if (!take_ack (conn, st, h->ack, error))
    return FALSE;
  st->phase = FETCH_IDLE;
  st->fetched = h->seq;
  st->ack_addr = st->peer_addr + RFP_ACK_OFF;
  st->ack_rkey = st->peer_rkey;
  st->held = TRUE;
  st->window = CLAMP ((h->len + 63u) / 64u * 64u, RFP_MIN_WINDOW, RFP_CHECKED);
  if (h->seq > st->notified && st->sent_us > 0)
  {
    gint64 took = g_get_monotonic_time () - st->sent_us;
    if (st->reply_us == 0 || took < st->reply_us)
      st->reply_us = took;
    else
      st->reply_us += (took - st->reply_us) / 16;
  }
  if (st->ask_pending != 0 && st->ask_pending <= h->seq)
  {
    st->ask_pending = 0;
    if (!send_ack (conn, st, error))
      return FALSE;
  }
  rdma_conn_deliver (conn, &rdma_proto_rfp_ops, body, h->len, RDMA_MSG_IN_PROTO, -1, h->seq);
  return TRUE;
}

static gboolean
poll_done (RdmaConn *conn, RfpState *st, GError **error)
{
  RfpHeader raw;
  guint32 got = st->poll_window;

  memcpy (&raw, st->fetch.base, sizeof raw);
  st->hdr = (RfpHeader){
    .seq = GUINT64_FROM_LE (raw.seq),
    .ack = GUINT64_FROM_LE (raw.ack),
    .len = GUINT32_FROM_LE (raw.len),
    .check = GUINT64_FROM_LE (raw.check),
  };
  if (st->fetch_gen != st->peer_gen)
  {
    /* the region moved while the READ was out */
    st->phase = FETCH_IDLE;
    return st->notified > conn->msgs_received ? try_fetch (conn, st, error) : TRUE;
  }
  if (st->hdr.seq != conn->msgs_received + 1)
    return not_ready (conn, st, FALSE, error);
  /* (the header is within one cache line and its sequence number is stored last: with the
   * number comes the message's length) */
  if (st->hdr.len > conn->settings.max_message)
  {
    rdma_status_set_error (error, RDMA_ERR_TOO_LARGE, "receive", 0, -1,
                           "the peer's RFP message has %u bytes, the max message size is %u",
                           st->hdr.len, conn->settings.max_message);
    return FALSE;
  }
  if (RFP_BODY_OFF + (gsize) st->hdr.len > st->peer_size)
    return protocol_error (error, "an RFP message longer than the region it is in");
  if (st->hdr.len <= got)
    return complete (conn, st, error);
  if (conn->state != RDMA_CONN_CONNECTED)
  {
    st->phase = FETCH_IDLE;
    return TRUE;
  }
  if (!ensure_fetch (conn, st, RFP_HDR_SIZE + (gsize) st->hdr.len, RFP_HDR_SIZE + got, error))
    return FALSE;
  st->phase = FETCH_BODY;
  st->body_next = got;
  st->body_end = st->hdr.len;
  return post_body (conn, st, error);
}

static gboolean
read_done (RdmaConn *conn, RdmaOp *op, const struct ibv_wc *wc, GError **error)
{
  RfpState *st = op->data;
  GError *e = NULL;
  gboolean ok = TRUE;

  st->reads_out--;
  if (st->phase == FETCH_POLL)
  {
    ok = poll_done (conn, st, &e);
  }
  else if (st->phase == FETCH_BODY)
  {
    if (st->body_next < st->body_end)
      ok = conn->state != RDMA_CONN_CONNECTED || post_body (conn, st, &e);
    else if (st->reads_out == 0)
      ok = complete (conn, st, &e);
  }
  return ok || rdma_conn_fail_with (conn, e, error);
}

/* The reader is done with the message in the fetch buffer. */
static gboolean
rfp_release (RdmaConn *conn, guint8 *data, gsize len, guint64 token, GError **error)
{
  RfpState *st = state_of (conn);
  GError *e = NULL;

  st->held = FALSE;
  return try_fetch (conn, st, &e) || rdma_conn_fail_with (conn, e, error);
}

/* A notice. */
static gboolean
rfp_on_receive (RdmaConn *conn, guint32 slot, const RdmaWireHeader *hdr, const guint8 *payload,
                GError **error)
{
  RfpState *st = state_of (conn);
  RfpNotice n;

  if (hdr->type != RDMA_WIRE_DATA || hdr->frag_len != sizeof n || hdr->msg_len != sizeof n)
    return protocol_error (error, "an RFP notice of the wrong type or length");
  memcpy (&n, payload, sizeof n);
  if (!rdma_conn_repost (conn, slot, TRUE, error))
    return FALSE;
  if (!take_ack (conn, st, GUINT64_FROM_LE (n.ack), error))
    return FALSE;
  st->notified = MAX (st->notified, GUINT64_FROM_LE (n.seq));
  return try_fetch (conn, st, error);
}

static gboolean
rfp_on_control (RdmaConn *conn, guint8 kind, const guint8 *payload, guint32 len, GError **error)
{
  RfpState *st = state_of (conn);
  guint64 seq;

  switch (kind)
  {
  case RFP_ADVERT: {
    guint64 addr;
    guint32 rkey, size;

    if (len != 16)
      break;
    memcpy (&addr, payload, 8);
    memcpy (&rkey, payload + 8, 4);
    memcpy (&size, payload + 12, 4);
    if (GUINT32_FROM_LE (size) < RFP_BODY_OFF + RFP_CHECKED)
      return protocol_error (error, "an RFP region too small for a message header");
    st->peer_addr = GUINT64_FROM_LE (addr);
    st->peer_rkey = GUINT32_FROM_LE (rkey);
    st->peer_size = GUINT32_FROM_LE (size);
    st->peer_gen++;
    st->peer_known = TRUE;
    rdma_conn_want_progress (conn, RDMA_PROTO_RFP, TRUE);
    return try_fetch (conn, st, error);
  }
  case RFP_ASK:
    if (len != 8)
      break;
    memcpy (&seq, payload, 8);
    seq = GUINT64_FROM_LE (seq);
    st->notified = MAX (st->notified, seq);
    if (st->fetched >= seq)
      return send_ack (conn, st, error);
    st->ask_pending = MAX (st->ask_pending, seq);
    return try_fetch (conn, st, error);
  case RFP_ACK:
    if (len != 8)
      break;
    memcpy (&seq, payload, 8);
    return take_ack (conn, st, GUINT64_FROM_LE (seq), error);
  case RFP_NOTIFY: {
    guint32 word;

    if (len != 4 || conn->is_client)
      break;
    memcpy (&word, payload, 4);
    word = GUINT32_FROM_LE (word);
    if (word > 1)
      break;
    st->peer_notified = word == 1;
    return TRUE;
  }
  default:
    break;
  }
  return protocol_error (error, "an RFP control message of unknown kind or length");
}

static gint
rfp_progress (RdmaConn *conn, GError **error)
{
  RfpState *st = state_of (conn);
  GError *e = NULL;
  gint n = 0;

  if (st == NULL)
    return 0;
  if (st->last_seq > st->peer_acked)
  {
    if (!sender_check (conn, st, &e))
      goto fail;
    if (st->fence_waiting && st->peer_acked >= st->last_seq)
      n++;
  }
  if (conn->state == RDMA_CONN_CONNECTED && st->phase == FETCH_BODY && !post_body (conn, st, &e))
    goto fail;
  /* A spinning client waits half the shortest recent time to a reply before its first
   * poll (a slow call does not delay the next fast one much); a wait that may block in the
   * kernel polls at once, so a READ's completion wakes it (a client that asked for notices
   * polls only on one: fetch_wanted). */
  if (rdma_conn_polling (conn) == THRIFT_RDMA_POLLING_BUSY && st->notified <= conn->msgs_received
      && fetch_wanted (conn, st) && g_get_monotonic_time () < st->sent_us + st->reply_us / 2)
    return n;
  if (!try_fetch (conn, st, &e))
    goto fail;
  return n;

fail:
  rdma_conn_fail_with (conn, e, error);
  return -1;
}

static gboolean
rfp_setup (RdmaConn *conn, GError **error)
{
  RfpState *st = g_new0 (RfpState, 1);

  st->window = RFP_FIRST_WINDOW;
  conn->proto_state[RDMA_PROTO_RFP] = st;
  return TRUE;
}

/* After the QP is gone (rdma_conn_free): no READ of ours or the peer's is in flight. */
static void
rfp_teardown (RdmaConn *conn)
{
  RfpState *st = state_of (conn);

  if (st == NULL)
    return;
  mem_free (conn, &st->region);
  mem_free (conn, &st->retired);
  mem_free (conn, &st->fetch);
  mem_free (conn, &st->ack_page);
  g_free (st);
  conn->proto_state[RDMA_PROTO_RFP] = NULL;
}

void
rdma_proto_rfp_info (RdmaConn *conn, RdmaRfpInfo *out)
{
  RfpState *st = state_of (conn);

  memset (out, 0, sizeof *out);
  if (st == NULL)
    return;
  out->peer_known = st->peer_known;
  out->peer_addr = st->peer_addr;
  out->peer_rkey = st->peer_rkey;
  out->peer_size = st->peer_size;
  out->fetching_body = st->phase == FETCH_BODY && st->reads_out > 0;
  out->region_size = st->region.size;
  out->retired = st->retired.mr != NULL;
}

gboolean
rdma_proto_rfp_peer_announced (RdmaConn *conn)
{
  RfpState *st = state_of (conn);

  return st != NULL && st->peer_notified;
}

const RdmaProtoOps rdma_proto_rfp_ops = {
  .name = "rfp",
  .id = RDMA_PROTO_RFP,
  .hint = THRIFT_HINT_PROTO_RFP,
  .setup = rfp_setup,
  .teardown = rfp_teardown,
  .send_message = rfp_send_message,
  .on_receive = rfp_on_receive,
  .on_control = rfp_on_control,
  .progress = rfp_progress,
  .release = rfp_release,
  .open = rfp_open,
  .before_send = rfp_before_send,
};
