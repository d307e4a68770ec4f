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

/* fake_verbs.c: an RDMA provider in memory (see fake_verbs.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lib/c_glib/transport/rdma/rdma_spin.h"
#include "lib/c_glib/transport/rdma/rdma_verbs.h"
#include "fake_verbs.h"

/* each RDMA READ takes this long to start (fake_verbs_set_read_delay) */
static gint read_delay_us;
/* each SEND or WRITE of at least write_delay_from bytes takes write_delay_us to start
 * (fake_verbs_set_write_delay) */
static gint write_delay_us, write_delay_from;

#define FAKE_MAX_SGE 8
/* keys start here and only grow: a small number is a key no region has */
#define FAKE_FIRST_KEY 0x1000u
#define FAKE_BAD_KEY 0x7u
/* A memory window's rkey is its index (the upper 24 bits, fixed for its life) and a tag (the
 * low 8 bits, which ibv_inc_rkey changes), as on rxe and mlx5.  Window indexes start here,
 * above every region's key, and only grow. */
#define FAKE_MW_INDEX_BASE 0x800000u
#define FAKE_MW_TAG 0xffu

typedef struct _FakeId FakeId;
typedef struct _FakeQp FakeQp;

/* A queue whose eventfd is readable while it is not empty (semaphore mode: one read per
 * element): a completion channel's CQ events, a CM event channel's events. */
typedef struct
{
  int fd;
  GQueue queue;
} FdQueue;

typedef struct
{
  struct ibv_pd pd;
  guint users; /* MRs, MWs and QPs */
} FakePd;

typedef struct
{
  struct ibv_mr mr;
  FakePd *pd;
  int access;
  guint windows; /* memory windows bound to it */
} FakeMr;

/* A type 2 memory window: free, or bound by an IBV_WR_BIND_MW on a QP; then it lends
 * [addr, addr + length) of its region, with its access, to the peer of that QP through its
 * key, until an IBV_WR_LOCAL_INV of the key or ibv_dealloc_mw. */
typedef struct
{
  struct ibv_mw mw;
  FakePd *pd;
  guint32 key; /* its rkey as the device knows it (mw.rkey is the app's copy,
                               which the device never writes: see fake_verbs.h) */
  FakeMr *mr;  /* NULL: free */
  FakeQp *qp;  /* the QP it was bound on (NULL once that QP is destroyed) */
  guint64 addr, length;
  int access;
} FakeMw;

typedef struct
{
  struct ibv_comp_channel ch;
  FdQueue events; /* FakeCq * */
  guint cqs;
} FakeChannel;

/* How a CQ is armed: as rxe does, an arming never lowers what the CQ is armed for, and
 * solicited events come from a receive's completion whose SEND or WRITE with immediate asked
 * for one, or that was flushed; never from the send queue's. */
enum
{
  FAKE_ARM_NONE,
  FAKE_ARM_SOLICITED,
  FAKE_ARM_ALL
};

typedef struct
{
  struct ibv_cq cq;
  FakeChannel *channel;
  GQueue wcs;          /* FakeWc * */
  guint armed;         /* FAKE_ARM_*: which completion raises the next event */
  guint events, acked; /* events taken and acknowledged */
  guint qps;
  FakeId *owner; /* the side of the QP that uses it (its events count there) */
} FakeCq;

typedef struct
{
  struct ibv_wc wc;
  FakeQp *qp;      /* whose queue it completes */
  gboolean rq;     /* a receive (else a send queue WR) */
  guint sq_retire; /* send queue entries it gives back when polled */
} FakeWc;

typedef struct
{
  guint64 wr_id;
  struct ibv_sge sge[FAKE_MAX_SGE];
  int num_sge;
} FakeRecv;

/* A receive queue shared by QPs of one PD.  Its limit, once armed (ibv_modify_srq with
 * IBV_SRQ_LIMIT), raises one IBV_EVENT_SRQ_LIMIT_REACHED when a receive taken leaves fewer
 * than it, and disarms.  A SEND to a QP on an SRQ without receives waits (an RNR NAK retried
 * without end, as rnr_retry 7 does) until one is posted; without an SRQ it fails the QP, as
 * before (the engine's credits keep a receive there for every SEND). */
typedef struct
{
  struct ibv_srq srq;
  FakePd *pd;
  GQueue recvs; /* FakeRecv *, oldest first */
  guint max_wr, max_sge;
  guint limit; /* armed limit (0: disarmed) */
  guint qps;   /* QPs that take their receives from it */
} FakeSrq;

/* A send queue WR from its post until its completion is in the CQ (or, unsignalled, until
 * it would be).  Executed: its bytes are placed and the responder's side of it is done; its
 * completion (the requester's ACK) may come later. */
typedef struct
{
  struct ibv_send_wr wr; /* a copy: sg_list is sge, next is NULL */
  struct ibv_sge sge[FAKE_MAX_SGE];
  guint8 *inline_copy; /* IBV_SEND_INLINE: its bytes, taken at the post */
  guint64 len;
  gboolean started;         /* its checks passed: its bytes are moving */
  guint64 moved;            /* bytes of a WRITE or READ placed so far */
  guint32 mw_rkey, mr_lkey; /* IBV_WR_BIND_MW: the keys of its window and region, read
                                       at the post as a provider does (the device never reads
                                       the app's ibv_mw or ibv_mr again) */
  FakeQp *peer;             /* the responder, once started */
} FakeSwr;

struct _FakeQp
{
  struct ibv_qp qp;
  FakeId *id;
  FakePd *pd;
  FakeCq *scq, *rcq;
  FakeSrq *srq; /* its receives come from there (NULL: its own rq) */
  struct ibv_qp_cap cap;
  gboolean sig_all;
  GQueue rq;     /* FakeRecv *, oldest first */
  guint sq_used; /* posted and not yet given back by a polled completion */
  guint rq_used;
  guint unsignalled;    /* unsignalled WRs since the last completion */
  gboolean failed;      /* the error state */
  gboolean mute;        /* failed without a word: it completes nothing any more */
  GQueue sq;            /* FakeSwr *, oldest first: those executed (waiting for their
                               completion) come first */
  guint executed;       /* how many at the head of sq have executed */
  guint64 watched;      /* the calls of its link when the watchdog last looked */
  FakeRead last_read;   /* its last READ that completed (len 0: none) */
  guint8 min_rnr_timer; /* as the CM leaves it (0: 655 ms), or as modified */
};

typedef struct
{
  struct rdma_event_channel ch;
  FdQueue events; /* FakeEvent * */
  guint ids;
} FakeEvChannel;

typedef struct
{
  struct rdma_cm_event ev;
  FakeId *id;
} FakeEvent;

typedef struct
{
  enum ibv_wr_opcode opcode;
  guint skip;
  FakeFault fault;
} Injected;

struct _FakeId
{
  struct rdma_cm_id id;
  FakeId *peer; /* NULL once it destroyed its id */
  FakeEvChannel *channel;
  FakeStats stats;
  GQueue faults;         /* Injected * */
  guint unacked;         /* its CM events taken and not acknowledged */
  gboolean vanished;     /* its host is gone */
  gboolean disconnected; /* it called rdma_disconnect */
  gboolean told;         /* it got DISCONNECTED from the peer */
  GRand *rand;           /* the steps its calls take (FAKE_DEFERRED, fake_verbs_step) */
  guint64 calls;         /* posts, polls and arms of its side (the watchdog looks) */
};

static GMutex lock;
static struct ibv_context context;
static GHashTable *keys;    /* lkey and rkey -> FakeMr */
static GHashTable *windows; /* a window's index (rkey >> 8) -> FakeMw */
static guint32 next_key = FAKE_FIRST_KEY;
static guint32 next_mw_index = FAKE_MW_INDEX_BASE;
static guint32 next_mw_tag = 0xfe; /* near the wrap: ibv_inc_rkey's 0xff -> 0 comes early */
static guint32 next_qpn = 0x100;
static guint live_pds, live_mrs, live_mws, live_channels, live_cqs, live_qps, live_ids,
    live_ev_channels, live_events, live_srqs, live_async_events;
static FdQueue async_events; /* struct ibv_async_event *: the context's async_fd */
static guint misuse;
static gint blocked_reads; /* threads blocked in a completion channel's read (atomic) */
static gchar *first_misuse;
static FakeTiming timing = FAKE_IMMEDIATE;
static guint32 timing_seed;
static gboolean retransmissions; /* FAKE_DEFERRED: steps may retransmit (rxe's replays) */
static guint links_made;         /* since the timing was set: numbers each link's generators */
static GList *all_qps;           /* FakeQp *: what fake_verbs_settle runs */
static GThread *watchdog;        /* FAKE_DEFERRED's */
static gboolean watchdog_stop;
static GCond watchdog_cond;

/* FAKE_DEFERRED: a link whose sides made no call for this long gets what is on the way */
#define FAKE_QUIET_US 2000

static void misused (const gchar *fmt, ...) G_GNUC_PRINTF (1, 2);

static void
misused (const gchar *fmt, ...)
{
  va_list ap;
  gchar *what;

  va_start (ap, fmt);
  what = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_printerr ("fake_verbs: misuse: %s\n", what);
  misuse++;
  if (first_misuse == NULL)
    first_misuse = what;
  else
    g_free (what);
}

/* ---- fd queues ---- */

static void
fdq_init (FdQueue *q)
{
  q->fd = eventfd (0, EFD_NONBLOCK | EFD_SEMAPHORE | EFD_CLOEXEC);
  g_assert_cmpint (q->fd, >=, 0);
  g_queue_init (&q->queue);
}

static void
fdq_push (FdQueue *q, gpointer item)
{
  guint64 one = 1;

  g_queue_push_tail (&q->queue, item);
  g_assert_cmpint (write (q->fd, &one, sizeof one), ==, sizeof one);
}

static gpointer
fdq_pop (FdQueue *q)
{
  gpointer item = g_queue_pop_head (&q->queue);
  guint64 n;

  if (item != NULL)
    g_assert_cmpint (read (q->fd, &n, sizeof n), ==, sizeof n);
  return item;
}

static void
fdq_remove_all (FdQueue *q, gpointer item)
{
  guint64 n;

  while (g_queue_remove (&q->queue, item))
    g_assert_cmpint (read (q->fd, &n, sizeof n), ==, sizeof n);
}

static void
fdq_clear (FdQueue *q)
{
  close (q->fd);
  g_queue_clear (&q->queue);
}

/* ---- memory ---- */

static FakeMr *
mr_by_key (guint32 key, gboolean remote)
{
  FakeMr *m = g_hash_table_lookup (keys, GUINT_TO_POINTER (key));

  if (m == NULL || (remote ? m->mr.rkey : m->mr.lkey) != key)
    return NULL;
  return m;
}

/* [@addr, @addr + @len) lies inside [@base, @base + @length). */
static gboolean
span_covers (guint64 base, guint64 length, guint64 addr, guint64 len)
{
  return addr >= base && len <= length && addr - base <= length - len;
}

static gboolean
covers (const FakeMr *m, guint64 addr, guint64 len)
{
  return span_covers ((guintptr) m->mr.addr, m->mr.length, addr, len);
}

static gboolean
is_window_key (guint32 key)
{
  return key >> 8 >= FAKE_MW_INDEX_BASE;
}

/* The window whose key is @key now (NULL: none has it: deallocated, or a stale tag). */
static FakeMw *
mw_by_key (guint32 key)
{
  FakeMw *w;

  if (!is_window_key (key))
    return NULL;
  w = g_hash_table_lookup (windows, GUINT_TO_POINTER (key >> 8));
  return w != NULL && w->key == key ? w : NULL;
}

/* The window lets its range go: free again (its key stays, and fails remote accesses). */
static void
mw_unbind (FakeMw *w)
{
  w->mr->windows--;
  w->mr = NULL;
  w->qp = NULL;
  w->addr = w->length = 0;
  w->access = 0;
}

static guint64
sge_len (const struct ibv_sge *sge, int n)
{
  guint64 len = 0;

  for (int i = 0; i < n; i++)
    len += sge[i].length;
  return len;
}

/* Local SGEs: keys of @pd over their ranges, LOCAL_WRITE where data lands (@written). */
static gboolean
local_ok (FakePd *pd, const struct ibv_sge *sge, int n, gboolean written)
{
  for (int i = 0; i < n; i++)
  {
    FakeMr *m;

    if (sge[i].length == 0)
      continue;
    m = mr_by_key (sge[i].lkey, FALSE);
    if (m == NULL || m->pd != pd || !covers (m, sge[i].addr, sge[i].length)
        || (written && !(m->access & IBV_ACCESS_LOCAL_WRITE)))
      return FALSE;
  }
  return TRUE;
}

/* Copies from the SGE list @src to the SGE list @dst until either ends. */
static void
sg_copy (const struct ibv_sge *dst, int nd, const struct ibv_sge *src, int ns)
{
  int i = 0, j = 0;
  guint64 di = 0, si = 0;

  while (i < nd && j < ns)
  {
    guint64 n = MIN (dst[i].length - di, src[j].length - si);

    if (n > 0)
      memcpy ((guint8 *) (guintptr) (dst[i].addr + di), (guint8 *) (guintptr) (src[j].addr + si),
              n);
    di += n;
    si += n;
    if (di == dst[i].length)
    {
      i++;
      di = 0;
    }
    if (si == src[j].length)
    {
      j++;
      si = 0;
    }
  }
}

/* Copies @n bytes between offset @off of the SGE list @sge (@ns entries) and @buf: out of
 * the list into @buf (@gather), or out of @buf into the list. */
static void
sg_io (const struct ibv_sge *sge, int ns, guint64 off, guint8 *buf, guint64 n, gboolean gather)
{
  for (int i = 0; i < ns && n > 0; i++)
  {
    guint8 *p;
    guint64 take;

    if (off >= sge[i].length)
    {
      off -= sge[i].length;
      continue;
    }
    take = MIN (n, sge[i].length - off);
    p = (guint8 *) (guintptr) (sge[i].addr + off);
    if (gather)
      memcpy (buf, p, take);
    else
      memcpy (p, buf, take);
    buf += take;
    n -= take;
    off = 0;
  }
}

/* Where the last 8-byte word (aligned) of @len bytes at @dst begins, as an offset. */
static guint64
last_word_at (const guint8 *dst, guint64 len)
{
  guintptr last_word = ((guintptr) dst + len - 1) & ~(guintptr) 7;

  return last_word > (guintptr) dst ? last_word - (guintptr) dst : 0;
}

/* Bytes [@from, @to) of a WRITE of @len bytes from @src (@ns SGEs) to @dst, in address
 * order; @to is at most last_word_at, or @len: then the last 8-byte word (aligned) of the
 * destination goes after everything else, whole if it is a whole word. */
static void
place (guint8 *dst, const struct ibv_sge *src, int ns, guint64 len, guint64 from, guint64 to)
{
  guint64 cut = last_word_at (dst, len);
  guint8 tail[8];

  if (from < MIN (to, cut))
    sg_io (src, ns, from, dst + from, MIN (to, cut) - from, TRUE);
  if (to < len)
    return;
  sg_io (src, ns, cut, tail, len - cut, TRUE);
  __atomic_thread_fence (__ATOMIC_RELEASE);
  if (len - cut == 8 && ((guintptr) dst + cut) % 8 == 0)
  {
    guint64 word;
    memcpy (&word, tail, 8);
    __atomic_store_n ((guint64 *) (dst + cut), word, __ATOMIC_RELAXED);
  }
  else
  {
    for (guint64 i = 0; i < len - cut; i++)
      __atomic_store_n (dst + cut + i, tail[i], __ATOMIC_RELAXED);
  }
}

/* ---- completions ---- */

static void
cq_push (FakeCq *cq, FakeQp *qp, const struct ibv_wc *wc, gboolean rq, guint sq_retire,
         gboolean solicited)
{
  FakeWc *w;

  if (qp != NULL && qp->mute)
    return; /* fake_verbs_fail_silently */
  if (g_queue_get_length (&cq->wcs) >= (guint) cq->cq.cqe)
  {
    misused ("a CQ of %d entries overruns (a completion is lost)", cq->cq.cqe);
    return;
  }
  w = g_new (FakeWc, 1);
  w->wc = *wc;
  w->qp = qp;
  w->rq = rq;
  w->sq_retire = sq_retire;
  g_queue_push_tail (&cq->wcs, w);
  if (cq->channel != NULL
      && (cq->armed == FAKE_ARM_ALL || (cq->armed == FAKE_ARM_SOLICITED && solicited)))
  {
    cq->armed = FAKE_ARM_NONE;
    fdq_push (&cq->channel->events, cq);
  }
}

static enum ibv_wc_opcode
wc_opcode (enum ibv_wr_opcode op)
{
  switch (op)
  {
  case IBV_WR_RDMA_WRITE:
  case IBV_WR_RDMA_WRITE_WITH_IMM:
    return IBV_WC_RDMA_WRITE;
  case IBV_WR_RDMA_READ:
    return IBV_WC_RDMA_READ;
  case IBV_WR_BIND_MW:
    return IBV_WC_BIND_MW;
  case IBV_WR_LOCAL_INV:
    return IBV_WC_LOCAL_INV;
  default:
    return IBV_WC_SEND;
  }
}

/* A send queue WR is done: a completion if it is signalled or failed. */
static void
sq_complete (FakeQp *qp, const struct ibv_send_wr *wr, enum ibv_wc_status status, guint32 len)
{
  struct ibv_wc wc = {
    .wr_id = wr->wr_id,
    .status = status,
    .opcode = wc_opcode (wr->opcode),
    .byte_len = len,
    .qp_num = qp->qp.qp_num,
  };

  if (status == IBV_WC_SUCCESS && !(wr->send_flags & IBV_SEND_SIGNALED) && !qp->sig_all)
  {
    qp->unsignalled++;
    return;
  }
  cq_push (qp->scq, qp, &wc, FALSE, qp->unsignalled + 1, FALSE);
  qp->unsignalled = 0;
}

static void
rq_complete (FakeQp *qp, guint64 wr_id, enum ibv_wc_status status, enum ibv_wc_opcode opcode,
             guint32 len, gboolean with_imm, __be32 imm, gboolean solicited)
{
  struct ibv_wc wc = {
    .wr_id = wr_id,
    .status = status,
    .opcode = opcode,
    .byte_len = len,
    .qp_num = qp->qp.qp_num,
    .wc_flags = with_imm ? IBV_WC_WITH_IMM : 0,
    .imm_data = with_imm ? imm : 0,
  };

  cq_push (qp->rcq, qp, &wc, qp->srq == NULL, 0, solicited);
}

static void
swr_free (FakeSwr *w)
{
  g_free (w->inline_copy);
  g_free (w);
}

/* The oldest WR of @qp, executed, completes (its ACK came). */
static void
swr_complete (FakeQp *qp)
{
  FakeSwr *w = g_queue_pop_head (&qp->sq);

  qp->executed--;
  if (w->wr.opcode == IBV_WR_RDMA_READ)
    qp->last_read =
        (FakeRead){ .addr = w->wr.wr.rdma.remote_addr, .len = w->len, .rkey = w->wr.wr.rdma.rkey };
  sq_complete (qp, &w->wr, IBV_WC_SUCCESS, (guint32) w->len);
  swr_free (w);
}

/* The send queue of a QP gone to the error state: the WRs that executed complete, the others
 * are flushed. */
static void
sq_flush (FakeQp *qp)
{
  FakeSwr *w;

  while (qp->executed > 0)
    swr_complete (qp);
  while ((w = g_queue_pop_head (&qp->sq)) != NULL)
  {
    sq_complete (qp, &w->wr, IBV_WC_WR_FLUSH_ERR, 0);
    swr_free (w);
  }
}

/* The error state: every receive posted is flushed, so is every WR queued (FAKE_DEFERRED)
 * and every WR posted later. */
static void
qp_fail (FakeQp *qp)
{
  FakeRecv *r;

  if (qp->failed)
    return;
  qp->failed = TRUE;
  while ((r = g_queue_pop_head (&qp->rq)) != NULL)
  {
    rq_complete (qp, r->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, FALSE, 0, TRUE);
    g_free (r);
  }
  sq_flush (qp);
  /* receives from an SRQ are not the QP's to flush: the device says it by an async event
   * (IBA 11.6.3: the last WQE of an SRQ-attached QP in the error state) */
  if (qp->srq != NULL)
  {
    struct ibv_async_event *ev = g_new0 (struct ibv_async_event, 1);

    ev->event_type = IBV_EVENT_QP_LAST_WQE_REACHED;
    ev->element.qp = &qp->qp;
    live_async_events++;
    fdq_push (&async_events, ev);
  }
}

/* @w, the oldest WR of @qp not yet executed, fails with @status: those before it complete,
 * it completes with @status, and the QP fails (the rest are flushed).  @w is gone. */
static void
swr_fails (FakeQp *qp, FakeSwr *w, enum ibv_wc_status status)
{
  /* (its peer destroyed its QP: it closed) */
  if (status == IBV_WC_RETRY_EXC_ERR && (qp->id->peer == NULL || qp->id->peer->id.qp == NULL))
    qp->id->stats.peer_gone++;
  else
    qp->id->stats.errors++;
  while (qp->executed > 0)
    swr_complete (qp);
  g_assert (g_queue_peek_head (&qp->sq) == w);
  g_queue_pop_head (&qp->sq);
  sq_complete (qp, &w->wr, status, 0);
  swr_free (w);
  qp_fail (qp);
}

/* ---- the CM's side ---- */

static void
cm_event (FakeId *to, enum rdma_cm_event_type type)
{
  FakeEvent *e;

  if (to->channel == NULL)
    return;
  e = g_new0 (FakeEvent, 1);
  e->ev.id = &to->id;
  e->ev.event = type;
  e->id = to;
  live_events++;
  fdq_push (&to->channel->events, e);
}

/* The peer learns that @id's side is gone, once. */
static void
tell_peer (FakeId *id)
{
  FakeId *peer = id->peer;

  if (peer != NULL && !peer->vanished && !peer->told)
  {
    peer->told = TRUE;
    cm_event (peer, RDMA_CM_EVENT_DISCONNECTED);
  }
}

static void
vanish (FakeId *id, gboolean tell)
{
  if (tell && !id->vanished)
    tell_peer (id);
  id->vanished = TRUE;
  if (id->id.qp != NULL)
    qp_fail ((FakeQp *) id->id.qp);
}

/* ---- posting ---- */

/* The SRQ's limit event, if it is armed and fewer receives than it are left. */
static void
srq_check_limit (FakeSrq *srq)
{
  struct ibv_async_event *ev;

  if (srq->limit == 0 || g_queue_get_length (&srq->recvs) >= srq->limit)
    return;
  srq->limit = 0;
  ev = g_new0 (struct ibv_async_event, 1);
  ev->event_type = IBV_EVENT_SRQ_LIMIT_REACHED;
  ev->element.srq = &srq->srq;
  live_async_events++;
  fdq_push (&async_events, ev);
}

/* The receive a SEND or a WRITE_WITH_IMM to @qp takes: the oldest of its own queue or of its
 * SRQ (NULL: none). */
static FakeRecv *
recv_take (FakeQp *qp)
{
  FakeRecv *r;

  if (qp->srq == NULL)
    return g_queue_pop_head (&qp->rq);
  r = g_queue_pop_head (&qp->srq->recvs);
  srq_check_limit (qp->srq);
  return r;
}

static gboolean
recv_available (FakeQp *qp)
{
  return !g_queue_is_empty (qp->srq != NULL ? &qp->srq->recvs : &qp->rq);
}

static FakeQp *peer_qp (FakeQp *qp);
static gboolean takes_receive (enum ibv_wr_opcode op);

/* TRUE if @w, not started, needs a receive of a peer on an SRQ that has none: it waits
 * (RNR, retried) and the WRs after it with it. */
static gboolean
rnr_waits (FakeQp *qp, const FakeSwr *w)
{
  FakeQp *peer;

  if (w == NULL || w->started || !takes_receive (w->wr.opcode))
    return FALSE;
  peer = peer_qp (qp);
  return peer != NULL && peer->srq != NULL && !recv_available (peer);
}

static FakeQp *
peer_qp (FakeQp *qp)
{
  FakeId *p = qp->id->peer;
  FakeQp *q;

  if (p == NULL || p->vanished || p->id.qp == NULL)
    return NULL;
  q = (FakeQp *) p->id.qp;
  /* a QP in the error state drops what comes in: the requester's retries run out */
  return q->failed ? NULL : q;
}

static void
apply_fault (FakeQp *qp, struct ibv_send_wr *wr, guint64 len)
{
  FakeId *self = qp->id;

  for (GList *l = self->faults.head; l != NULL; l = l->next)
  {
    Injected *f = l->data;
    FakeMr *m;
    FakeMw *mw;

    if (f->opcode != wr->opcode
        || ((f->fault == FAKE_FAULT_BAD_RKEY || f->fault == FAKE_FAULT_OUT_OF_RANGE) && len == 0))
      continue;
    if (f->skip > 0)
    {
      f->skip--;
      return;
    }
    switch (f->fault)
    {
    case FAKE_FAULT_BAD_RKEY:
      wr->wr.rdma.rkey = FAKE_BAD_KEY;
      break;
    case FAKE_FAULT_OUT_OF_RANGE:
      /* past the end of the window the key names, or of its region */
      mw = mw_by_key (wr->wr.rdma.rkey);
      m = g_hash_table_lookup (keys, GUINT_TO_POINTER (wr->wr.rdma.rkey));
      if (mw != NULL && mw->mr != NULL)
        wr->wr.rdma.remote_addr = mw->addr + mw->length - len + 1;
      else if (m != NULL)
        wr->wr.rdma.remote_addr = (guintptr) m->mr.addr + m->mr.length - len + 1;
      break;
    case FAKE_FAULT_PEER_VANISHES:
      if (self->peer != NULL)
        vanish (self->peer, FALSE);
      break;
    case FAKE_FAULT_SELF_VANISHES:
      vanish (self, FALSE);
      break;
    }
    g_free (f);
    g_queue_delete_link (&self->faults, l);
    return;
  }
}

/* ---- executing: a WR starts (the checks), its bytes move, it is done at the responder,
 * and its completion comes; FAKE_IMMEDIATE does all of it at the post ---- */

static gboolean
moves_bytes (enum ibv_wr_opcode op)
{
  return op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM || op == IBV_WR_RDMA_READ;
}

/* A local operation: it reaches no peer, and takes effect in its turn in the send queue. */
static gboolean
is_local_op (enum ibv_wr_opcode op)
{
  return op == IBV_WR_BIND_MW || op == IBV_WR_LOCAL_INV;
}

static gboolean
takes_receive (enum ibv_wr_opcode op)
{
  return op != IBV_WR_RDMA_WRITE && op != IBV_WR_RDMA_READ && !is_local_op (op);
}

/* The responder lets @w's remote range be accessed: a key of @peer's PD over all of it, with
 * the access flag.  A window's key (checked again before each piece, so an invalidation or a
 * dealloc between pieces fails the rest, as rxe's read replies recheck it per packet) must be
 * the window's key now (not a tag of an earlier bind), the window bound, of @peer's PD and
 * bound on @peer itself (a type 2 window serves the QP it was bound on, no other), with the
 * access, over the whole range: the window's range, not its region's. */
static gboolean
remote_ok (FakeQp *peer, const FakeSwr *w)
{
  const struct ibv_send_wr *wr = &w->wr;
  int need = wr->opcode == IBV_WR_RDMA_READ ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_WRITE;
  FakeMr *m;
  FakeMw *mw;

  if (!moves_bytes (wr->opcode) || w->len == 0)
    return TRUE;
  if (is_window_key (wr->wr.rdma.rkey))
  {
    mw = mw_by_key (wr->wr.rdma.rkey);
    return mw != NULL && mw->mr != NULL && mw->pd == peer->pd && mw->qp == peer
           && (mw->access & need)
           && span_covers (mw->addr, mw->length, wr->wr.rdma.remote_addr, w->len);
  }
  m = mr_by_key (wr->wr.rdma.rkey, TRUE);
  return m != NULL && m->pd == peer->pd && covers (m, wr->wr.rdma.remote_addr, w->len)
         && (m->access & need);
}

/* IBV_WR_BIND_MW in its turn on @qp: a type 2 window, free, is bound to a range of a region
 * through a new key.  The checks are a device's (the IBA rules rxe_mw.c names); the first one
 * that fails is returned (NULL: bound). */
static const gchar *
bind_mw (FakeQp *qp, const FakeSwr *w)
{
  const struct ibv_mw_bind_info *b = &w->wr.bind_mw.bind_info;
  FakeMw *mw = mw_by_key (w->mw_rkey);
  FakeMr *m = mr_by_key (w->mr_lkey, FALSE);
  int access = (int) b->mw_access_flags;

  /* the device finds the window by the key mw->rkey held at the post: the app keeps mw->rkey
   * at the key of the window's last bind (rxe: the WR's mw_rkey must match) */
  if (mw == NULL)
    return "no window has the key mw->rkey held (deallocated, or mw->rkey not set to the key "
           "of its last bind)";
  /* o10-37.2.30: a type 2 window is bound from the free state only (invalidate it first) */
  if (mw->mr != NULL)
    return "the window is bound already";
  /* C10-72: the window and the QP are of one PD; so is the region */
  if (mw->pd != qp->pd)
    return "the window is not of the QP's PD";
  if (m == NULL)
    return "no region has the lkey bind_info.mr held (deregistered)";
  if (m->pd != qp->pd)
    return "the region is not of the QP's PD";
  /* C10-73 */
  if (!(m->access & IBV_ACCESS_MW_BIND))
    return "the region was registered without IBV_ACCESS_MW_BIND";
  if (access & ~(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC))
    return "access flags a window cannot have here (zero-based windows are not modelled)";
  /* C10-74 */
  if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC))
      && !(m->access & IBV_ACCESS_LOCAL_WRITE))
    return "a writable window over a region without IBV_ACCESS_LOCAL_WRITE";
  /* o10-37.2.40 (no empty type 2 bind), C10-75 (inside the region) */
  if (b->length == 0 || !covers (m, b->addr, b->length))
    return "the range is empty or not inside the region";
  /* only the tag is the app's to choose (rxe keeps its own index bits; the fake refuses
   * another index, which would be a key the peer could not use) */
  if ((w->wr.bind_mw.rkey ^ mw->key) & ~FAKE_MW_TAG)
    return "the new rkey differs from the window's in more than its low 8 bits";
  mw->key = w->wr.bind_mw.rkey;
  mw->mr = m;
  m->windows++;
  mw->qp = qp;
  mw->addr = b->addr;
  mw->length = b->length;
  mw->access = access;
  return NULL;
}

/* IBV_WR_LOCAL_INV in its turn on @qp: the window with the key is free again.  Only a bound
 * window of the QP's PD (regions from reg_mr cannot be invalidated; rxe checks no PD, a
 * device of the spec does). */
static const gchar *
local_inv (FakeQp *qp, guint32 rkey)
{
  FakeMw *mw = mw_by_key (rkey);

  if (mw == NULL)
    return "no window has the key";
  if (mw->pd != qp->pd)
    return "the window is not of the QP's PD";
  if (mw->mr == NULL)
    return "the window is not bound";
  mw_unbind (mw);
  return NULL;
}

/* The requester's and the responder's checks of @w, the oldest WR of @qp not yet executed:
 * before its bytes move, and again before each piece (a region deregistered or a peer gone
 * meanwhile fails it, as on a real NIC).  FALSE: @w failed and is gone. */
static gboolean
swr_check (FakeQp *qp, FakeSwr *w)
{
  const struct ibv_send_wr *wr = &w->wr;
  FakeQp *peer;

  if (!(wr->send_flags & IBV_SEND_INLINE)
      && !local_ok (qp->pd, wr->sg_list, wr->num_sge, wr->opcode == IBV_WR_RDMA_READ))
  {
    misused ("a local SGE of a WR (opcode %d) is not in a region of its key and PD%s", wr->opcode,
             w->started ? " (deregistered while the WR was in flight)" : "");
    swr_fails (qp, w, IBV_WC_LOC_PROT_ERR);
    return FALSE;
  }
  peer = peer_qp (qp);
  if (peer == NULL || (w->started && peer != w->peer))
  {
    swr_fails (qp, w, IBV_WC_RETRY_EXC_ERR);
    return FALSE;
  }
  if (!remote_ok (peer, w))
  {
    /* the responder fails as well (a NAK for an access violation) */
    qp_fail (peer);
    swr_fails (qp, w, IBV_WC_REM_ACCESS_ERR);
    return FALSE;
  }
  if (takes_receive (wr->opcode) && !recv_available (peer) && peer->srq != NULL)
    return FALSE; /* it waits (rnr_waits): a test's step moved it anyway */
  if (takes_receive (wr->opcode) && !recv_available (peer))
  {
    qp->id->stats.rnr++;
    swr_fails (qp, w, IBV_WC_RNR_RETRY_EXC_ERR);
    return FALSE;
  }
  w->peer = peer;
  return TRUE;
}

/* Moves @w, the oldest WR of @qp not yet executed, on: all of it (@whole, or @r NULL and @cap
 * 0) or, for a WRITE or a READ, a piece of its bytes: of at most @cap bytes, or (@cap 0) of a
 * length chosen by @r.  Once its bytes are all placed it is executed: a SEND or
 * WRITE_WITH_IMM takes the peer's oldest receive, which completes then (after the data); its
 * own completion comes with swr_complete.  A local operation (bind, invalidate) executes
 * whole, or fails its QP. */
static void
swr_advance (FakeQp *qp, FakeSwr *w, gboolean whole, GRand *r, guint64 cap)
{
  const struct ibv_send_wr *wr = &w->wr;
  gboolean with_imm = wr->opcode == IBV_WR_SEND_WITH_IMM
                      || wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  gboolean solicited = (wr->send_flags & IBV_SEND_SOLICITED) != 0;
  FakeRecv *recv;
  FakeQp *peer;

  if (!w->started)
  {
    apply_fault (qp, &w->wr, w->len);
    if (qp->failed)
      return; /* its host went down before it: flushed with the rest */
  }
  if (is_local_op (wr->opcode))
  {
    const gchar *refused = wr->opcode == IBV_WR_BIND_MW ? bind_mw (qp, w)
                                                        : local_inv (qp, wr->invalidate_rkey);

    if (refused != NULL)
    {
      /* as rxe completes them: a bind with IBV_WC_MW_BIND_ERR, an invalidation with
       * IBV_WC_LOC_QP_OP_ERR; the QP fails */
      g_debug ("fake_verbs: %s refused: %s",
               wr->opcode == IBV_WR_BIND_MW ? "IBV_WR_BIND_MW" : "IBV_WR_LOCAL_INV", refused);
      swr_fails (qp, w, wr->opcode == IBV_WR_BIND_MW ? IBV_WC_MW_BIND_ERR : IBV_WC_LOC_QP_OP_ERR);
      return;
    }
    w->started = TRUE;
    qp->executed++;
    return;
  }
  if (!swr_check (qp, w))
    return;
  w->started = TRUE;
  peer = w->peer;
  if (moves_bytes (wr->opcode) && w->moved < w->len)
  {
    guint8 *remote = (guint8 *) (guintptr) wr->wr.rdma.remote_addr;
    guint64 to = w->len;

    if (!whole && (r != NULL || cap > 0))
    {
      /* a piece ends on an 8-byte boundary of the remote memory (DMA does not tear an
       * aligned word; a piece that would reach none is the rest), and a WRITE's last word
       * lands with its last piece */
      guint64 rest = w->len - w->moved, end, aligned;

      if (cap > 0)
        end = w->moved + MIN (cap, rest);
      else
        end = w->moved + 1 + (guint64) g_rand_int_range (r, 0, (gint32) MIN (rest, G_MAXINT32));
      aligned = (((guintptr) remote + end) & ~(guintptr) 7) - (guintptr) remote;
      to = aligned > w->moved ? aligned : w->len;
      if (wr->opcode != IBV_WR_RDMA_READ && to > last_word_at (remote, w->len))
        to = w->len;
    }
    /* a slow fabric's READ (fake_verbs_set_read_delay), or large SEND or WRITE
     * (fake_verbs_set_write_delay) */
    if (wr->opcode == IBV_WR_RDMA_READ && w->moved == 0 && g_atomic_int_get (&read_delay_us) > 0)
      g_usleep ((gulong) g_atomic_int_get (&read_delay_us));
    if (wr->opcode != IBV_WR_RDMA_READ && w->moved == 0 && g_atomic_int_get (&write_delay_us) > 0
        && w->len >= (guint64) g_atomic_int_get (&write_delay_from))
      g_usleep ((gulong) g_atomic_int_get (&write_delay_us));
    if (wr->opcode == IBV_WR_RDMA_READ)
      sg_io (wr->sg_list, wr->num_sge, w->moved, remote + w->moved, to - w->moved, FALSE);
    else
      place (remote, wr->sg_list, wr->num_sge, w->len, w->moved, to);
    w->moved = to;
    if (to < w->len)
      return;
  }

  switch (wr->opcode)
  {
  case IBV_WR_SEND:
  case IBV_WR_SEND_WITH_IMM:
    recv = recv_take (peer);
    if (w->len > sge_len (recv->sge, recv->num_sge))
    {
      rq_complete (peer, recv->wr_id, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, FALSE, 0, solicited);
      g_free (recv);
      qp_fail (peer);
      swr_fails (qp, w, IBV_WC_REM_INV_REQ_ERR);
      return;
    }
    if (!local_ok (peer->pd, recv->sge, recv->num_sge, TRUE))
    {
      misused ("a receive's SGE is not in a writable region of its key and PD");
      rq_complete (peer, recv->wr_id, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, FALSE, 0, solicited);
      g_free (recv);
      qp_fail (peer);
      swr_fails (qp, w, IBV_WC_REM_OP_ERR);
      return;
    }
    sg_copy (recv->sge, recv->num_sge, wr->sg_list, wr->num_sge);
    rq_complete (peer, recv->wr_id, IBV_WC_SUCCESS, IBV_WC_RECV, (guint32) w->len, with_imm,
                 wr->imm_data, solicited);
    g_free (recv);
    break;
  case IBV_WR_RDMA_WRITE_WITH_IMM:
    recv = recv_take (peer);
    rq_complete (peer, recv->wr_id, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, (guint32) w->len,
                 TRUE, wr->imm_data, solicited);
    g_free (recv);
    break;
  default:
    break;
  }
  qp->executed++;
}

/* TRUE if an executed WR of @qp not yet completed is a READ or an atomic. */
static gboolean
reads_pending (FakeQp *qp)
{
  for (guint i = 0; i < qp->executed; i++)
  {
    enum ibv_wr_opcode op = ((FakeSwr *) g_queue_peek_nth (&qp->sq, i))->wr.opcode;

    if (op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_CMP_AND_SWP
        || op == IBV_WR_ATOMIC_FETCH_AND_ADD)
      return TRUE;
  }
  return FALSE;
}

/* The oldest WR of @qp not yet executed that may start (NULL: none).  As rxe has it (Linux
 * 6.1, rxe_wqe_is_fenced): an invalidation starts once every WR before it has completed
 * (IBA's local invalidate fence), a WR with IBV_SEND_FENCE once the READs and atomics before
 * it have (IBA 10.8.3.3), so a fenced bind may run while a SEND or a WRITE before it waits
 * for its ACK. */
static FakeSwr *
swr_next (FakeQp *qp)
{
  FakeSwr *w = g_queue_peek_nth (&qp->sq, qp->executed);

  if (rnr_waits (qp, w))
    return NULL;
  if (w != NULL && !w->started && qp->executed > 0
      && (w->wr.opcode == IBV_WR_LOCAL_INV
          || ((w->wr.send_flags & IBV_SEND_FENCE) && reads_pending (qp))))
    return NULL;
  return w;
}

/* @w, an executed local operation of @qp that a retransmission ran again, failed with
 * @status: those before it complete (their retransmission was answered), it completes with
 * @status, and the QP fails. */
static void
replay_fails (FakeQp *qp, FakeSwr *w, enum ibv_wc_status status)
{
  while (g_queue_peek_head (&qp->sq) != w)
    swr_complete (qp);
  qp->id->stats.errors++;
  g_queue_pop_head (&qp->sq);
  qp->executed--;
  sq_complete (qp, &w->wr, status, 0);
  swr_free (w);
  qp_fail (qp);
}

/* A retransmission of @qp as soft-RoCE makes one when its ACK timer fires (rxe's req_retry,
 * Linux 6.1), for a QP with a WR executed and waiting for its ACK: the requester goes back to
 * the oldest WR not retired and runs every executed WR from there again, local operations
 * included (rxe does not skip those; a local operation at the head that its completer had not
 * retired yet is caught too, as traced in the guest).  A second bind of a window (its key is
 * no longer the one the WR names) or an invalidation of a key bound since fails as in rxe,
 * and so does the QP; an invalidation of a window already free with that key passes.  FALSE:
 * no WR was waiting for an ACK. */
static gboolean
qp_retransmit (FakeQp *qp)
{
  FakeSwr *w;
  gboolean waiting = FALSE;

  if (qp->failed)
    return FALSE;
  for (guint i = 0; i < qp->executed && !waiting; i++)
    waiting = !is_local_op (((FakeSwr *) g_queue_peek_nth (&qp->sq, i))->wr.opcode);
  if (!waiting)
    return FALSE;
  qp->id->stats.retransmissions++;
  for (guint i = 0; i < qp->executed; i++)
  {
    w = g_queue_peek_nth (&qp->sq, i);
    if (!is_local_op (w->wr.opcode))
      continue;
    qp->id->stats.replays++;
    if (w->wr.opcode == IBV_WR_BIND_MW)
    {
      const gchar *refused = bind_mw (qp, w);

      if (refused != NULL)
      {
        g_debug ("fake_verbs: IBV_WR_BIND_MW run again by a retransmission: %s", refused);
        replay_fails (qp, w, IBV_WC_MW_BIND_ERR);
        return TRUE;
      }
    }
    else
    {
      FakeMw *mw = mw_by_key (w->wr.invalidate_rkey);

      if (mw == NULL)
      {
        g_debug ("fake_verbs: IBV_WR_LOCAL_INV run again by a retransmission: the key is "
                 "no window's now");
        replay_fails (qp, w, IBV_WC_LOC_QP_OP_ERR);
        return TRUE;
      }
      if (mw->mr != NULL)
        mw_unbind (mw);
    }
  }
  return TRUE;
}

/* Runs @qp's queue to its end: each WR executes whole and completes, in order. */
static void
qp_settle (FakeQp *qp)
{
  while (!g_queue_is_empty (&qp->sq))
  {
    if (qp->executed > 0)
      swr_complete (qp);
    else if (rnr_waits (qp, g_queue_peek_head (&qp->sq)))
      break; /* until a receive is posted to the peer's SRQ */
    else
      swr_advance (qp, g_queue_peek_head (&qp->sq), TRUE, NULL, 0);
  }
}

/* The QPs of @side's link: its own and its peer's, where they exist. */
static guint
link_qps (FakeId *side, FakeQp *out[2])
{
  guint n = 0;

  if (side->id.qp != NULL)
    out[n++] = (FakeQp *) side->id.qp;
  if (side->peer != NULL && side->peer->id.qp != NULL)
    out[n++] = (FakeQp *) side->peer->id.qp;
  return n;
}

static void
link_settle (FakeId *side)
{
  FakeQp *q[2];
  guint n = link_qps (side, q);

  for (guint i = 0; i < n; i++)
    qp_settle (q[i]);
}

/* One step of @side's link, chosen by @r among what may happen next: the oldest WR of a QP
 * not yet executed moves on (whole, or a piece of its bytes), or the oldest executed one
 * completes.  FALSE: nothing is on the way. */
typedef enum
{
  STEP_MOVE,      /* its next WR moves on */
  STEP_COMPLETE,  /* its oldest executed WR completes */
  STEP_RETRANSMIT /* it retransmits (fake_verbs_set_retransmissions) */
} StepKind;

typedef struct
{
  FakeQp *qp;
  StepKind kind;
} Step;

static gboolean
link_step (FakeId *side, GRand *r)
{
  Step c[6];
  FakeQp *q[2];
  guint n = link_qps (side, q), choices = 0, pick;

  for (guint i = 0; i < n; i++)
  {
    if (q[i]->executed > 0)
      c[choices++] = (Step){ q[i], STEP_COMPLETE };
    if (q[i]->executed > 0 && retransmissions && !q[i]->failed)
      c[choices++] = (Step){ q[i], STEP_RETRANSMIT };
    if (swr_next (q[i]) != NULL)
      c[choices++] = (Step){ q[i], STEP_MOVE };
  }
  if (choices == 0)
    return FALSE;
  pick = (guint) g_rand_int_range (r, 0, (gint32) choices);
  switch (c[pick].kind)
  {
  case STEP_COMPLETE:
    swr_complete (c[pick].qp);
    break;
  case STEP_RETRANSMIT:
    qp_retransmit (c[pick].qp);
    break;
  default:
    swr_advance (c[pick].qp, swr_next (c[pick].qp), g_rand_boolean (r), r, 0);
    break;
  }
  return TRUE;
}

/* FAKE_DEFERRED: the steps of @side's link that a call of its side takes: a poll often none,
 * a few at most; a post mostly none. */
static void
link_steps (FakeId *side, gboolean post)
{
  gint n = post ? (g_rand_int_range (side->rand, 0, 4) == 0) : g_rand_int_range (side->rand, -2, 5);

  while (n-- > 0 && link_step (side, side->rand))
    ;
}

static int
fake_post_send (struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
  FakeQp *qp = (FakeQp *) ibqp;
  FakeStats *s = &qp->id->stats;
  int rc = 0;

  g_mutex_lock (&lock);
  s->post_send_calls++;
  qp->id->calls++;
  for (; wr != NULL; wr = wr->next)
  {
    FakeSwr *w;

    switch (wr->opcode)
    {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
      s->sends++;
      break;
    case IBV_WR_RDMA_WRITE:
      s->writes++;
      break;
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      s->write_imms++;
      break;
    case IBV_WR_RDMA_READ:
      s->reads++;
      break;
    case IBV_WR_BIND_MW:
      s->binds++;
      /* no SGE (rxe refuses one); the window and the region are read now */
      if (wr->num_sge != 0 || wr->bind_mw.mw == NULL || wr->bind_mw.bind_info.mr == NULL)
        rc = EINVAL;
      break;
    case IBV_WR_LOCAL_INV:
      s->local_invs++;
      break;
    default:
      rc = EINVAL;
      break;
    }
    if (rc == 0 && (wr->num_sge < 0 || (guint) wr->num_sge > qp->cap.max_send_sge))
      rc = EINVAL;
    if (rc == 0 && qp->sq_used >= qp->cap.max_send_wr)
    {
      misused ("a WR posted to a full send queue (%u entries)", qp->cap.max_send_wr);
      rc = ENOMEM;
    }
    if (rc != 0)
      break;
    qp->sq_used++;
    if (qp->failed)
    {
      struct ibv_send_wr copy = *wr;

      apply_fault (qp, &copy, sge_len (wr->sg_list, wr->num_sge));
      sq_complete (qp, &copy, IBV_WC_WR_FLUSH_ERR, 0);
      continue;
    }
    /* the WR as posted; its bytes are read when it runs, as a NIC's DMA does (inline ones
     * at the post) */
    w = g_new0 (FakeSwr, 1);
    w->wr = *wr;
    w->wr.next = NULL;
    if (wr->num_sge > 0)
      memcpy (w->sge, wr->sg_list, sizeof (struct ibv_sge) * (gsize) wr->num_sge);
    w->wr.sg_list = w->sge;
    w->len = is_local_op (wr->opcode) ? 0 : sge_len (w->sge, w->wr.num_sge);
    if (wr->opcode == IBV_WR_BIND_MW)
    {
      /* the keys of the window and the region as they are now (a provider reads them at the
       * post: rxe's mw_rkey and mr_lkey, mlx5's too); mw->rkey is not written back */
      w->mw_rkey = wr->bind_mw.mw->rkey;
      w->mr_lkey = wr->bind_mw.bind_info.mr->lkey;
      w->wr.bind_mw.mw = NULL;
      w->wr.bind_mw.bind_info.mr = NULL;
    }
    if ((wr->send_flags & IBV_SEND_INLINE) && w->len > 0)
    {
      w->inline_copy = g_malloc (w->len);
      sg_io (w->sge, w->wr.num_sge, 0, w->inline_copy, w->len, TRUE);
      w->sge[0] = (struct ibv_sge){ .addr = (guintptr) w->inline_copy, .length = (guint32) w->len };
      w->wr.num_sge = 1;
    }
    g_queue_push_tail (&qp->sq, w);
    if (timing == FAKE_IMMEDIATE)
      qp_settle (qp);
    else if (timing == FAKE_DEFERRED)
      link_steps (qp->id, TRUE);
  }
  if (rc != 0)
    *bad_wr = wr;
  g_mutex_unlock (&lock);
  return rc;
}

/* A posted receive as the queue keeps it. */
static FakeRecv *
recv_copy (const struct ibv_recv_wr *wr)
{
  FakeRecv *r = g_new0 (FakeRecv, 1);

  r->wr_id = wr->wr_id;
  r->num_sge = wr->num_sge;
  memcpy (r->sge, wr->sg_list, sizeof (struct ibv_sge) * (gsize) wr->num_sge);
  return r;
}

static int
fake_post_recv (struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
  FakeQp *qp = (FakeQp *) ibqp;
  int rc = 0;

  g_mutex_lock (&lock);
  qp->id->stats.post_recv_calls++;
  qp->id->calls++;
  if (qp->srq != NULL)
  {
    misused ("a receive posted to a QP whose receives come from an SRQ");
    *bad_wr = wr;
    g_mutex_unlock (&lock);
    return EINVAL;
  }
  for (; wr != NULL; wr = wr->next)
  {
    if (wr->num_sge < 0 || (guint) wr->num_sge > qp->cap.max_recv_sge)
    {
      rc = EINVAL;
      break;
    }
    if (qp->rq_used >= qp->cap.max_recv_wr)
    {
      misused ("a receive posted to a full receive queue (%u entries)", qp->cap.max_recv_wr);
      rc = ENOMEM;
      break;
    }
    qp->rq_used++;
    qp->id->stats.recvs++;
    if (qp->failed)
    {
      rq_complete (qp, wr->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, FALSE, 0, TRUE);
      continue;
    }
    g_queue_push_tail (&qp->rq, recv_copy (wr));
  }
  if (rc != 0)
    *bad_wr = wr;
  g_mutex_unlock (&lock);
  return rc;
}

/* ---- shared receive queues ---- */

static struct ibv_srq *
fake_create_srq (struct ibv_pd *ibpd, struct ibv_srq_init_attr *attr)
{
  FakeSrq *srq;

  if (attr->attr.max_wr == 0 || attr->attr.max_sge == 0 || attr->attr.max_sge > FAKE_MAX_SGE)
  {
    errno = EINVAL;
    return NULL;
  }
  srq = g_new0 (FakeSrq, 1);
  g_mutex_lock (&lock);
  srq->srq.context = ibpd->context;
  srq->srq.pd = ibpd;
  srq->srq.srq_context = attr->srq_context;
  srq->pd = (FakePd *) ibpd;
  srq->max_wr = attr->attr.max_wr;
  srq->max_sge = attr->attr.max_sge;
  g_queue_init (&srq->recvs); /* attr->attr.srq_limit: ignored at creation, as verbs say */
  srq->pd->users++;
  live_srqs++;
  g_mutex_unlock (&lock);
  return &srq->srq;
}

static int
fake_modify_srq (struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int attr_mask)
{
  FakeSrq *srq = (FakeSrq *) ibsrq;
  int rc = 0;

  g_mutex_lock (&lock);
  if ((attr_mask & ~IBV_SRQ_LIMIT) != 0 || attr->srq_limit > srq->max_wr)
    rc = EINVAL; /* (resizing, IBV_SRQ_MAX_WR, is not modelled) */
  else if (attr_mask & IBV_SRQ_LIMIT)
    srq->limit = attr->srq_limit;
  g_mutex_unlock (&lock);
  return rc;
}

static int
fake_destroy_srq (struct ibv_srq *ibsrq)
{
  FakeSrq *srq = (FakeSrq *) ibsrq;

  g_mutex_lock (&lock);
  if (srq->qps > 0)
  {
    g_mutex_unlock (&lock);
    return EBUSY;
  }
  for (GList *l = async_events.queue.head; l != NULL; l = l->next)
    if (((struct ibv_async_event *) l->data)->element.srq == ibsrq)
      misused ("an SRQ destroyed with its limit event not taken (ibv_destroy_srq would "
               "wait for its acknowledgement)");
  g_queue_clear_full (&srq->recvs, g_free);
  srq->pd->users--;
  live_srqs--;
  g_mutex_unlock (&lock);
  g_free (srq);
  return 0;
}

static int
fake_post_srq_recv (struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
  FakeSrq *srq = (FakeSrq *) ibsrq;
  int rc = 0;

  g_mutex_lock (&lock);
  for (; wr != NULL; wr = wr->next)
  {
    if (wr->num_sge < 0 || (guint) wr->num_sge > srq->max_sge)
    {
      rc = EINVAL;
      break;
    }
    if (g_queue_get_length (&srq->recvs) >= srq->max_wr)
    {
      misused ("a receive posted to a full SRQ (%u entries)", srq->max_wr);
      rc = ENOMEM;
      break;
    }
    g_queue_push_tail (&srq->recvs, recv_copy (wr));
  }
  if (rc != 0)
    *bad_wr = wr;
  /* the SENDs that waited for a receive go on (FAKE_DEFERRED: by the steps, as before) */
  if (timing == FAKE_IMMEDIATE)
    for (GList *l = all_qps; l != NULL; l = l->next)
    {
      FakeQp *peer = peer_qp (l->data);

      if (peer != NULL && peer->srq == srq)
        qp_settle (l->data);
    }
  g_mutex_unlock (&lock);
  return rc;
}

static int
fake_get_async_event (struct ibv_context *ctx, struct ibv_async_event *event)
{
  struct ibv_async_event *ev;

  g_mutex_lock (&lock);
  ev = fdq_pop (&async_events);
  g_mutex_unlock (&lock);
  if (ev == NULL)
  {
    errno = EAGAIN;
    return -1;
  }
  *event = *ev;
  g_free (ev);
  return 0;
}

static void
fake_ack_async_event (struct ibv_async_event *event)
{
  g_mutex_lock (&lock);
  live_async_events--;
  g_mutex_unlock (&lock);
}

/* ---- completion queues ---- */

static int
fake_poll_cq (struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
  FakeCq *cq = (FakeCq *) ibcq;
  int n = 0;

  g_mutex_lock (&lock);
  if (cq->owner != NULL)
    cq->owner->calls++;
  if (timing == FAKE_DEFERRED && cq->owner != NULL)
    link_steps (cq->owner, FALSE);
  while (n < num_entries)
  {
    FakeWc *w = g_queue_pop_head (&cq->wcs);

    if (w == NULL)
      break;
    wc[n++] = w->wc;
    if (w->rq)
      w->qp->rq_used--;
    else
      w->qp->sq_used -= MIN (w->sq_retire, w->qp->sq_used);
    w->qp->id->stats.completions++;
    g_free (w);
  }
  /* An armed CQ found empty: its owner is about to block until the CQ's event.  The link
   * goes on (a NIC does while nobody polls) until that event is raised, or nothing is left
   * on the way: a side that waits for its peer never waits for the provider.  (Completions
   * that raise none, under a solicited arming, stay in the CQ as on a NIC: an owner that
   * needed one of them waits in vain, and its test sees the hang.) */
  if (n == 0 && timing == FAKE_DEFERRED && cq->armed != FAKE_ARM_NONE && cq->owner != NULL)
    while (cq->armed != FAKE_ARM_NONE && link_step (cq->owner, cq->owner->rand))
      ;
  g_mutex_unlock (&lock);
  return n;
}

static int
fake_req_notify_cq (struct ibv_cq *ibcq, int solicited_only)
{
  g_mutex_lock (&lock);
  if (((FakeCq *) ibcq)->armed != FAKE_ARM_ALL)
    ((FakeCq *) ibcq)->armed = solicited_only ? FAKE_ARM_SOLICITED : FAKE_ARM_ALL;
  if (((FakeCq *) ibcq)->owner != NULL)
    ((FakeCq *) ibcq)->owner->calls++;
  g_mutex_unlock (&lock);
  return 0;
}

/* A channel made blocking (O_NONBLOCK cleared on its fd) blocks its read until an event
 * comes, as the kernel's does; a signal ends it with EINTR (poll (2) here never restarts, as
 * a read does not after a handler without SA_RESTART).  Returns 0, or the errno that ends
 * the read (EAGAIN: a non-blocking channel). */
static int
channel_block (FakeChannel *ch)
{
  struct pollfd pfd = { .fd = ch->events.fd, .events = POLLIN };
  int flags = fcntl (ch->events.fd, F_GETFL), err = 0;

  if (flags < 0 || (flags & O_NONBLOCK))
    return EAGAIN;
  g_atomic_int_inc (&blocked_reads);
  if (poll (&pfd, 1, -1) < 0)
    err = errno;
  g_atomic_int_add (&blocked_reads, -1);
  return err;
}

static int
fake_get_cq_event (struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
  FakeCq *c;

  g_mutex_lock (&lock);
  while ((c = fdq_pop (&((FakeChannel *) channel)->events)) == NULL)
  {
    int err;

    g_mutex_unlock (&lock);
    err = channel_block ((FakeChannel *) channel);
    if (err != 0)
    {
      errno = err;
      return -1;
    }
    g_mutex_lock (&lock);
  }
  c->events++;
  *cq = &c->cq;
  *cq_context = c->cq.cq_context;
  if (c->owner != NULL)
    c->owner->stats.cq_events++;
  g_mutex_unlock (&lock);
  return 0;
}

guint
fake_verbs_blocked_reads (void)
{
  return (guint) g_atomic_int_get (&blocked_reads);
}

static void
fake_ack_cq_events (struct ibv_cq *ibcq, unsigned int nevents)
{
  FakeCq *cq = (FakeCq *) ibcq;

  g_mutex_lock (&lock);
  cq->acked += nevents;
  if (cq->acked > cq->events)
    misused ("%u CQ events acknowledged, %u were taken", cq->acked, cq->events);
  g_mutex_unlock (&lock);
}

/* ---- resources ---- */

static struct ibv_pd *
fake_alloc_pd (struct ibv_context *ctx)
{
  FakePd *pd = g_new0 (FakePd, 1);

  g_mutex_lock (&lock);
  pd->pd.context = ctx;
  live_pds++;
  g_mutex_unlock (&lock);
  return &pd->pd;
}

static int
fake_dealloc_pd (struct ibv_pd *ibpd)
{
  FakePd *pd = (FakePd *) ibpd;

  g_mutex_lock (&lock);
  if (pd->users > 0)
  {
    misused ("a PD deallocated while %u MRs, MWs or QPs use it", pd->users);
    g_mutex_unlock (&lock);
    return EBUSY;
  }
  live_pds--;
  g_mutex_unlock (&lock);
  g_free (pd);
  return 0;
}

/* A registration pins its pages, faulting in what was never touched (for a region that may
 * be written, as a write: ib_umem_get's FOLL_WRITE), so they are present from then on, as the
 * registration cache's check of its memory expects (rdma_unmap_watch_still). */
static void
fault_in (guint8 *addr, size_t length, int access)
{
  gboolean write = (access
                    & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC
                       | IBV_ACCESS_MW_BIND))
                   != 0;
  gsize ps = (gsize) sysconf (_SC_PAGESIZE);
  guint8 *end = addr + length;

  for (guint8 *p = addr; p < end; p = (guint8 *) (((guintptr) p + ps) & ~(guintptr) (ps - 1)))
  {
    if (write)
      (void) __atomic_fetch_add (p, 0, __ATOMIC_RELAXED); /* changes no byte */
    else
      (void) *(volatile guint8 *) p;
  }
}

static struct ibv_mr *
fake_reg_mr (struct ibv_pd *ibpd, void *addr, size_t length, int access)
{
  FakeMr *m;

  if ((access & IBV_ACCESS_REMOTE_WRITE) && !(access & IBV_ACCESS_LOCAL_WRITE))
  {
    errno = EINVAL;
    return NULL;
  }
  if (length > 0)
    fault_in (addr, length, access);
  m = g_new0 (FakeMr, 1);
  g_mutex_lock (&lock);
  m->pd = (FakePd *) ibpd;
  m->access = access;
  m->mr.context = ibpd->context;
  m->mr.pd = ibpd;
  m->mr.addr = addr;
  m->mr.length = length;
  m->mr.lkey = next_key++;
  m->mr.rkey = next_key++;
  g_assert (!is_window_key (next_key));
  m->pd->users++;
  g_hash_table_insert (keys, GUINT_TO_POINTER (m->mr.lkey), m);
  g_hash_table_insert (keys, GUINT_TO_POINTER (m->mr.rkey), m);
  live_mrs++;
  g_mutex_unlock (&lock);
  return &m->mr;
}

static int
fake_dereg_mr (struct ibv_mr *mr)
{
  FakeMr *m = (FakeMr *) mr;

  g_mutex_lock (&lock);
  if (m->windows > 0)
  {
    /* IBA 10.6.7.2.6: a region with windows bound stays (rxe: EINVAL); invalidate or
     * deallocate them first */
    misused ("an MR deregistered while %u memory windows are bound to it", m->windows);
    g_mutex_unlock (&lock);
    return EINVAL;
  }
  g_hash_table_remove (keys, GUINT_TO_POINTER (mr->lkey));
  g_hash_table_remove (keys, GUINT_TO_POINTER (mr->rkey));
  m->pd->users--;
  live_mrs--;
  g_mutex_unlock (&lock);
  g_free (m);
  return 0;
}

/* fake_verbs_set_windows: whether the device has type 2 windows. */
static gint type2_windows = TRUE;

void
fake_verbs_set_read_delay (guint us)
{
  g_atomic_int_set (&read_delay_us, (gint) us);
}

void
fake_verbs_set_write_delay (guint us, guint from)
{
  g_atomic_int_set (&write_delay_from, (gint) from);
  g_atomic_int_set (&write_delay_us, (gint) us);
}

void
fake_verbs_set_windows (gboolean type2)
{
  g_atomic_int_set (&type2_windows, type2);
}

static struct ibv_mw *
fake_alloc_mw (struct ibv_pd *ibpd, enum ibv_mw_type type)
{
  FakeMw *mw;

  /* type 2 windows only, the engine's (rxe and mlx5 have type 1 as well: a device without
   * them refuses so) */
  if (type != IBV_MW_TYPE_2 || !g_atomic_int_get (&type2_windows))
  {
    errno = type == IBV_MW_TYPE_1 || type == IBV_MW_TYPE_2 ? EOPNOTSUPP : EINVAL;
    return NULL;
  }
  mw = g_new0 (FakeMw, 1);
  g_mutex_lock (&lock);
  mw->pd = (FakePd *) ibpd;
  mw->mw.context = ibpd->context;
  mw->mw.pd = ibpd;
  mw->mw.type = type;
  mw->key = (next_mw_index++ << 8) | (next_mw_tag++ & FAKE_MW_TAG);
  mw->mw.rkey = mw->key;
  mw->pd->users++;
  g_hash_table_insert (windows, GUINT_TO_POINTER (mw->key >> 8), mw);
  live_mws++;
  g_mutex_unlock (&lock);
  return &mw->mw;
}

static int
fake_dealloc_mw (struct ibv_mw *ibmw)
{
  FakeMw *mw = (FakeMw *) ibmw;

  g_mutex_lock (&lock);
  /* a bound window is unbound first (ibv_dealloc_mw(3)): its region may go then */
  if (mw->mr != NULL)
    mw_unbind (mw);
  g_hash_table_remove (windows, GUINT_TO_POINTER (mw->key >> 8));
  mw->pd->users--;
  live_mws--;
  g_mutex_unlock (&lock);
  g_free (mw);
  return 0;
}

static struct ibv_comp_channel *
fake_create_comp_channel (struct ibv_context *ctx)
{
  FakeChannel *ch = g_new0 (FakeChannel, 1);

  fdq_init (&ch->events);
  ch->ch.context = ctx;
  ch->ch.fd = ch->events.fd;
  g_mutex_lock (&lock);
  live_channels++;
  g_mutex_unlock (&lock);
  return &ch->ch;
}

static int
fake_destroy_comp_channel (struct ibv_comp_channel *channel)
{
  FakeChannel *ch = (FakeChannel *) channel;

  g_mutex_lock (&lock);
  if (ch->cqs > 0)
  {
    misused ("a completion channel destroyed while %u CQs use it", ch->cqs);
    g_mutex_unlock (&lock);
    return EBUSY;
  }
  live_channels--;
  g_mutex_unlock (&lock);
  fdq_clear (&ch->events);
  g_free (ch);
  return 0;
}

static struct ibv_cq *
fake_create_cq (struct ibv_context *ctx, int cqe, void *cq_context,
                struct ibv_comp_channel *channel, int comp_vector)
{
  FakeCq *cq;

  if (cqe < 1)
  {
    errno = EINVAL;
    return NULL;
  }
  cq = g_new0 (FakeCq, 1);
  g_mutex_lock (&lock);
  cq->cq.context = ctx;
  cq->cq.channel = channel;
  cq->cq.cq_context = cq_context;
  cq->cq.cqe = cqe;
  cq->channel = (FakeChannel *) channel;
  if (cq->channel != NULL)
    cq->channel->cqs++;
  g_queue_init (&cq->wcs);
  live_cqs++;
  g_mutex_unlock (&lock);
  return &cq->cq;
}

static int
fake_destroy_cq (struct ibv_cq *ibcq)
{
  FakeCq *cq = (FakeCq *) ibcq;

  g_mutex_lock (&lock);
  if (cq->qps > 0)
  {
    misused ("a CQ destroyed while %u QPs use it", cq->qps);
    g_mutex_unlock (&lock);
    return EBUSY;
  }
  if (cq->acked != cq->events)
    misused ("a CQ destroyed with %u of its %u events not acknowledged (ibv_destroy_cq would "
             "wait for them forever)",
             cq->events - cq->acked, cq->events);
  if (cq->channel != NULL)
  {
    fdq_remove_all (&cq->channel->events, cq);
    cq->channel->cqs--;
  }
  g_queue_clear_full (&cq->wcs, g_free);
  live_cqs--;
  g_mutex_unlock (&lock);
  g_free (cq);
  return 0;
}

static int
fake_create_qp (struct rdma_cm_id *cm_id, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
  FakeId *id = (FakeId *) cm_id;
  FakeQp *qp;

  if (attr->qp_type != IBV_QPT_RC || cm_id->qp != NULL || attr->send_cq == NULL
      || attr->recv_cq == NULL || attr->cap.max_send_sge > FAKE_MAX_SGE
      || attr->cap.max_recv_sge > FAKE_MAX_SGE || (attr->srq != NULL && attr->srq->pd != pd))
  {
    errno = EINVAL;
    return -1;
  }
  qp = g_new0 (FakeQp, 1);
  g_mutex_lock (&lock);
  qp->qp.context = pd->context;
  qp->qp.pd = pd;
  qp->qp.send_cq = attr->send_cq;
  qp->qp.recv_cq = attr->recv_cq;
  qp->qp.qp_num = next_qpn++;
  qp->qp.state = IBV_QPS_RTS;
  qp->qp.qp_type = IBV_QPT_RC;
  qp->qp.qp_context = cm_id->context;
  qp->id = id;
  qp->pd = (FakePd *) pd;
  qp->scq = (FakeCq *) attr->send_cq;
  qp->rcq = (FakeCq *) attr->recv_cq;
  qp->srq = (FakeSrq *) attr->srq;
  if (qp->srq != NULL)
    qp->srq->qps++;
  qp->cap = attr->cap;
  qp->sig_all = attr->sq_sig_all != 0;
  g_queue_init (&qp->rq);
  g_queue_init (&qp->sq);
  all_qps = g_list_prepend (all_qps, qp);
  qp->pd->users++;
  qp->scq->qps++;
  qp->rcq->qps++;
  qp->scq->owner = qp->rcq->owner = id;
  cm_id->qp = &qp->qp;
  cm_id->pd = pd;
  live_qps++;
  g_mutex_unlock (&lock);
  return 0;
}

static void
drop_wcs_of (FakeCq *cq, FakeQp *qp)
{
  GList *l = cq->wcs.head;

  while (l != NULL)
  {
    GList *next = l->next;
    if (((FakeWc *) l->data)->qp == qp)
    {
      g_free (l->data);
      g_queue_delete_link (&cq->wcs, l);
    }
    l = next;
  }
}

/* Windows bound on @qp stay bound to their regions (deregistering those is refused until they
 * are deallocated) but no QP serves them any more.  A type-2 window holds a reference to the
 * QP it is bound to, and rxe's destroy waits for those to drop (200 ms, then a kernel
 * warning): a consumer invalidates or deallocates its windows first. */
static void
forget_windows_of (FakeQp *qp)
{
  GHashTableIter it;
  gpointer mw;
  guint bound = 0;

  g_hash_table_iter_init (&it, windows);
  while (g_hash_table_iter_next (&it, NULL, &mw))
    if (((FakeMw *) mw)->qp == qp)
    {
      ((FakeMw *) mw)->qp = NULL;
      bound++;
    }
  if (bound > 0)
    misused ("a QP destroyed while %u type-2 memory windows are bound to it", bound);
}

static int
fake_query_qp (struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
               struct ibv_qp_init_attr *init_attr)
{
  FakeQp *qp = (FakeQp *) ibqp;

  memset (attr, 0, sizeof *attr);
  memset (init_attr, 0, sizeof *init_attr);
  g_mutex_lock (&lock);
  attr->qp_state = qp->failed ? IBV_QPS_ERR : IBV_QPS_RTS;
  attr->cap = qp->cap;
  init_attr->cap = qp->cap;
  g_mutex_unlock (&lock);
  return 0;
}

/* Only what the engine changes in RTS: the responder's RNR NAK timer. */
static int
fake_modify_qp (struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
  FakeQp *qp = (FakeQp *) ibqp;

  /* the error state, as a waker puts a QP in it (rdma_block.h): everything flushes */
  if (attr_mask == IBV_QP_STATE && attr->qp_state == IBV_QPS_ERR)
  {
    g_mutex_lock (&lock);
    qp->id->calls++;
    qp_fail (qp);
    g_mutex_unlock (&lock);
    return 0;
  }
  if (attr_mask != IBV_QP_MIN_RNR_TIMER || attr->min_rnr_timer > 31)
  {
    misused ("ibv_modify_qp with mask 0x%x: not an RTS -> RTS change the engine makes", attr_mask);
    return EINVAL;
  }
  g_mutex_lock (&lock);
  qp->min_rnr_timer = attr->min_rnr_timer;
  g_mutex_unlock (&lock);
  return 0;
}

static void
fake_destroy_qp (struct rdma_cm_id *cm_id)
{
  FakeQp *qp = (FakeQp *) cm_id->qp;

  if (qp == NULL)
    return;
  g_mutex_lock (&lock);
  /* what it posted went out before (and what the peer posted to it arrived): so a deferred
   * WR never touches memory freed after the QP */
  link_settle (qp->id);
  all_qps = g_list_remove (all_qps, qp);
  forget_windows_of (qp);
  /* a destroyed QP's completions leave its CQs (as a provider cleans them) */
  drop_wcs_of (qp->scq, qp);
  drop_wcs_of (qp->rcq, qp);
  g_queue_clear_full (&qp->rq, g_free);
  qp->scq->qps--;
  qp->rcq->qps--;
  if (qp->srq != NULL)
    qp->srq->qps--;
  qp->scq->owner = qp->rcq->owner = NULL;
  qp->pd->users--;
  cm_id->qp = NULL;
  live_qps--;
  g_mutex_unlock (&lock);
  g_free (qp);
}

/* ---- CM ---- */

static struct rdma_event_channel *
fake_create_event_channel (void)
{
  FakeEvChannel *ch = g_new0 (FakeEvChannel, 1);

  fdq_init (&ch->events);
  ch->ch.fd = ch->events.fd;
  g_mutex_lock (&lock);
  live_ev_channels++;
  g_mutex_unlock (&lock);
  return &ch->ch;
}

static void
fake_destroy_event_channel (struct rdma_event_channel *channel)
{
  FakeEvChannel *ch = (FakeEvChannel *) channel;
  FakeEvent *e;

  g_mutex_lock (&lock);
  if (ch->ids > 0)
    misused ("a CM event channel destroyed while %u ids use it", ch->ids);
  while ((e = fdq_pop (&ch->events)) != NULL)
  {
    live_events--;
    g_free (e);
  }
  live_ev_channels--;
  g_mutex_unlock (&lock);
  fdq_clear (&ch->events);
  g_free (ch);
}

static int
fake_migrate_id (struct rdma_cm_id *cm_id, struct rdma_event_channel *channel)
{
  FakeId *id = (FakeId *) cm_id;
  FakeEvChannel *to = (FakeEvChannel *) channel;

  g_mutex_lock (&lock);
  if (id->channel != NULL)
  {
    /* its events not yet taken go along */
    for (GList *l = id->channel->events.queue.head; l != NULL;)
    {
      GList *next = l->next;
      FakeEvent *e = l->data;
      if (e->id == id)
      {
        fdq_remove_all (&id->channel->events, e);
        fdq_push (&to->events, e);
      }
      l = next;
    }
    id->channel->ids--;
  }
  id->channel = to;
  cm_id->channel = channel;
  to->ids++;
  g_mutex_unlock (&lock);
  return 0;
}

static guint cm_looks; /* atomic: rdma_get_cm_event calls, EAGAIN ones too */

guint
fake_verbs_cm_looks (void)
{
  return g_atomic_int_get (&cm_looks);
}

static int
fake_get_cm_event (struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
  FakeEvent *e;

  g_atomic_int_inc (&cm_looks);
  g_mutex_lock (&lock);
  e = fdq_pop (&((FakeEvChannel *) channel)->events);
  if (e != NULL)
  {
    e->id->unacked++;
    *event = &e->ev;
  }
  g_mutex_unlock (&lock);
  if (e == NULL)
  {
    errno = EAGAIN;
    return -1;
  }
  return 0;
}

static int
fake_ack_cm_event (struct rdma_cm_event *event)
{
  FakeEvent *e = (FakeEvent *) event;

  g_mutex_lock (&lock);
  e->id->unacked--;
  live_events--;
  g_mutex_unlock (&lock);
  g_free (e);
  return 0;
}

static int
fake_disconnect (struct rdma_cm_id *cm_id)
{
  FakeId *id = (FakeId *) cm_id;

  g_mutex_lock (&lock);
  if (!id->disconnected)
  {
    id->disconnected = TRUE;
    /* what both sides posted before reaches the other first, as it would have at once */
    link_settle (id);
    /* the local QP fails at once (its receives are flushed); a vanished host says nothing */
    if (cm_id->qp != NULL)
      qp_fail ((FakeQp *) cm_id->qp);
    if (!id->vanished)
    {
      tell_peer (id);
      cm_event (id, RDMA_CM_EVENT_DISCONNECTED);
    }
  }
  g_mutex_unlock (&lock);
  return 0;
}

static int
fake_destroy_id (struct rdma_cm_id *cm_id)
{
  FakeId *id = (FakeId *) cm_id;
  FakeEvent *e;

  g_mutex_lock (&lock);
  if (cm_id->qp != NULL)
    misused ("a CM id destroyed with its QP");
  if (id->unacked > 0)
    misused ("a CM id destroyed with %u events not acknowledged (rdma_destroy_id would wait "
             "for them forever)",
             id->unacked);
  /* the kernel disconnects an id destroyed while connected */
  if (!id->disconnected && !id->vanished)
    tell_peer (id);
  if (id->peer != NULL)
    id->peer->peer = NULL;
  if (id->channel != NULL)
  {
    for (GList *l = id->channel->events.queue.head; l != NULL;)
    {
      GList *next = l->next;
      e = l->data;
      if (e->id == id)
      {
        fdq_remove_all (&id->channel->events, e);
        live_events--;
        g_free (e);
      }
      l = next;
    }
    id->channel->ids--;
  }
  g_queue_clear_full (&id->faults, g_free);
  g_rand_free (id->rand);
  live_ids--;
  g_mutex_unlock (&lock);
  g_free (id);
  return 0;
}

static const RdmaVerbs fake_table = {
  .post_send = fake_post_send,
  .post_recv = fake_post_recv,
  .post_srq_recv = fake_post_srq_recv,
  .poll_cq = fake_poll_cq,
  .req_notify_cq = fake_req_notify_cq,
  .get_cq_event = fake_get_cq_event,
  .ack_cq_events = fake_ack_cq_events,
  .reg_mr = fake_reg_mr,
  .dereg_mr = fake_dereg_mr,
  .alloc_mw = fake_alloc_mw,
  .dealloc_mw = fake_dealloc_mw,
  .alloc_pd = fake_alloc_pd,
  .dealloc_pd = fake_dealloc_pd,
  .create_comp_channel = fake_create_comp_channel,
  .destroy_comp_channel = fake_destroy_comp_channel,
  .create_cq = fake_create_cq,
  .destroy_cq = fake_destroy_cq,
  .create_qp = fake_create_qp,
  .destroy_qp = fake_destroy_qp,
  .query_qp = fake_query_qp,
  .modify_qp = fake_modify_qp,
  .create_srq = fake_create_srq,
  .modify_srq = fake_modify_srq,
  .destroy_srq = fake_destroy_srq,
  .get_async_event = fake_get_async_event,
  .ack_async_event = fake_ack_async_event,
  .create_event_channel = fake_create_event_channel,
  .destroy_event_channel = fake_destroy_event_channel,
  .migrate_id = fake_migrate_id,
  .get_cm_event = fake_get_cm_event,
  .ack_cm_event = fake_ack_cm_event,
  .disconnect = fake_disconnect,
  .destroy_id = fake_destroy_id,
};

/* ---- the tests' side ---- */

/* The fabric is in this process, so its tests see an idle machine: whether waits spin must
 * not follow the load of the host running them (a busy CI host stopped every spin, and a test
 * of what measured spinning learns saw no spin at all). */
static gboolean
idle_machine (guint *runnable, guint *online)
{
  *runnable = 1;
  *online = 2;
  return TRUE;
}

void
fake_verbs_install (void)
{
  g_mutex_lock (&lock);
  if (keys == NULL)
    keys = g_hash_table_new (NULL, NULL);
  if (windows == NULL)
    windows = g_hash_table_new (NULL, NULL);
  if (context.async_fd <= 0)
  {
    fdq_init (&async_events);
    context.async_fd = async_events.fd;
  }
  g_mutex_unlock (&lock);
  rdma_spin_set_load_reader (idle_machine);
  rdma_verbs_set (&fake_table);
}

void
fake_verbs_uninstall (void)
{
  fake_verbs_set_timing (FAKE_IMMEDIATE, 0);
  rdma_spin_set_load_reader (NULL);
  rdma_verbs_set (NULL);
}

static FakeId *
id_new (guint32 seed)
{
  FakeId *id = g_new0 (FakeId, 1);

  id->rand = g_rand_new_with_seed (seed);
  id->id.verbs = &context;
  id->id.ps = RDMA_PS_TCP;
  id->id.qp_type = IBV_QPT_RC;
  g_queue_init (&id->faults);
  return id;
}

void
fake_verbs_link (struct rdma_cm_id **a, struct rdma_cm_id **b)
{
  FakeId *x, *y;
  guint32 seed;

  /* each side's steps from the seed and the link's number since the timing was set */
  g_mutex_lock (&lock);
  seed = timing_seed * 2654435761u + 2 * links_made++;
  live_ids += 2;
  g_mutex_unlock (&lock);
  x = id_new (seed);
  y = id_new (seed + 1);
  x->peer = y;
  y->peer = x;
  *a = &x->id;
  *b = &y->id;
}

void
fake_verbs_stats (struct rdma_cm_id *id, FakeStats *out)
{
  g_mutex_lock (&lock);
  *out = ((FakeId *) id)->stats;
  g_mutex_unlock (&lock);
}

void
fake_verbs_inject (struct rdma_cm_id *id, enum ibv_wr_opcode opcode, guint skip, FakeFault fault)
{
  Injected *f = g_new (Injected, 1);

  f->opcode = opcode;
  f->skip = skip;
  f->fault = fault;
  g_mutex_lock (&lock);
  g_queue_push_tail (&((FakeId *) id)->faults, f);
  g_mutex_unlock (&lock);
}

void
fake_verbs_vanish (struct rdma_cm_id *id, gboolean tell_peer)
{
  g_mutex_lock (&lock);
  vanish ((FakeId *) id, tell_peer);
  g_mutex_unlock (&lock);
}

void
fake_verbs_fail_silently (struct rdma_cm_id *id)
{
  g_mutex_lock (&lock);
  if (id->qp != NULL)
  {
    FakeQp *qp = (FakeQp *) id->qp;
    qp->failed = TRUE;
    qp->mute = TRUE;
  }
  g_mutex_unlock (&lock);
}

guint
fake_verbs_pending (struct rdma_cm_id *id)
{
  guint n = 0;

  g_mutex_lock (&lock);
  if (id->qp != NULL)
    n = g_queue_get_length (&((FakeQp *) id->qp)->scq->wcs);
  g_mutex_unlock (&lock);
  return n;
}

/* A CQ of @side's link is armed: a side waits for its event (or is about to). */
static gboolean
link_armed (FakeId *side)
{
  FakeQp *q[2];
  guint n = link_qps (side, q);

  for (guint i = 0; i < n; i++)
    if (q[i]->scq->armed || q[i]->rcq->armed)
      return TRUE;
  return FALSE;
}

/* FAKE_DEFERRED: a link whose sides made no call for FAKE_QUIET_US to 2 * FAKE_QUIET_US
 * while one of them waits for a CQ event (the other posted and went away or slept after the
 * first had blocked) runs what is on the way to its end, as a NIC goes on alone.  (A side
 * that waits without an armed CQ polls, and its polls take steps.) */
static gpointer
watchdog_main (gpointer data)
{
  g_mutex_lock (&lock);
  while (!watchdog_stop)
  {
    gint64 until = g_get_monotonic_time () + FAKE_QUIET_US;

    while (!watchdog_stop && g_cond_wait_until (&watchdog_cond, &lock, until))
      ;
    for (GList *l = all_qps; l != NULL && !watchdog_stop; l = l->next)
    {
      FakeQp *qp = l->data;
      FakeId *peer = qp->id->peer;
      guint64 calls = qp->id->calls + (peer != NULL ? peer->calls : 0);

      if (!g_queue_is_empty (&qp->sq) && calls == qp->watched && link_armed (qp->id))
        link_settle (qp->id);
      qp->watched = calls;
    }
  }
  g_mutex_unlock (&lock);
  return NULL;
}

void
fake_verbs_set_timing (FakeTiming t, guint32 seed)
{
  GThread *stopped = NULL;

  g_mutex_lock (&lock);
  for (GList *l = all_qps; l != NULL; l = l->next)
    qp_settle (l->data);
  timing = t;
  timing_seed = seed;
  links_made = 0;
  if (t != FAKE_DEFERRED && watchdog != NULL)
  {
    watchdog_stop = TRUE;
    g_cond_signal (&watchdog_cond);
    stopped = watchdog;
    watchdog = NULL;
  }
  else if (t == FAKE_DEFERRED && watchdog == NULL)
  {
    watchdog_stop = FALSE;
    watchdog = g_thread_new ("fake_verbs watchdog", watchdog_main, NULL);
  }
  g_mutex_unlock (&lock);
  if (stopped != NULL)
    g_thread_join (stopped);
}

FakeTiming
fake_verbs_get_timing (guint32 *seed)
{
  FakeTiming t;

  g_mutex_lock (&lock);
  t = timing;
  if (seed != NULL)
    *seed = timing_seed;
  g_mutex_unlock (&lock);
  return t;
}

void
fake_verbs_settle (void)
{
  g_mutex_lock (&lock);
  for (GList *l = all_qps; l != NULL; l = l->next)
    qp_settle (l->data);
  g_mutex_unlock (&lock);
}

guint
fake_verbs_step (struct rdma_cm_id *id, guint n)
{
  guint done = 0;

  g_mutex_lock (&lock);
  while (done < n && link_step ((FakeId *) id, ((FakeId *) id)->rand))
    done++;
  g_mutex_unlock (&lock);
  return done;
}

gboolean
fake_verbs_execute (struct rdma_cm_id *id)
{
  FakeSwr *w = NULL;

  g_mutex_lock (&lock);
  if (id->qp != NULL && (w = swr_next ((FakeQp *) id->qp)) != NULL)
    swr_advance ((FakeQp *) id->qp, w, TRUE, NULL, 0);
  g_mutex_unlock (&lock);
  return w != NULL;
}

gboolean
fake_verbs_piece (struct rdma_cm_id *id, guint64 bytes)
{
  FakeSwr *w = NULL;

  g_return_val_if_fail (bytes > 0, FALSE);
  g_mutex_lock (&lock);
  if (id->qp != NULL && (w = swr_next ((FakeQp *) id->qp)) != NULL)
    swr_advance ((FakeQp *) id->qp, w, FALSE, NULL, bytes);
  g_mutex_unlock (&lock);
  return w != NULL;
}

gboolean
fake_verbs_retransmit (struct rdma_cm_id *id)
{
  gboolean done = FALSE;

  g_mutex_lock (&lock);
  if (id->qp != NULL)
    done = qp_retransmit ((FakeQp *) id->qp);
  g_mutex_unlock (&lock);
  return done;
}

gboolean
fake_verbs_last_read (struct rdma_cm_id *id, FakeRead *out)
{
  g_mutex_lock (&lock);
  *out = id->qp != NULL ? ((FakeQp *) id->qp)->last_read : (FakeRead){ 0 };
  g_mutex_unlock (&lock);
  return out->len > 0;
}

/* fake_verbs_read_again, and with @fail what soft-RoCE does when the key is dead. */
static gboolean
read_again (struct rdma_cm_id *id, const FakeRead *r, gboolean fail)
{
  FakeSwr w = { .wr = { .opcode = IBV_WR_RDMA_READ,
                        .wr.rdma = { .remote_addr = r->addr, .rkey = r->rkey } },
                .len = r->len };
  FakeQp *peer;
  gboolean ok;

  g_mutex_lock (&lock);
  peer = id->qp != NULL ? peer_qp ((FakeQp *) id->qp) : NULL;
  ok = peer != NULL && remote_ok (peer, &w);
  if (fail && peer != NULL && !ok)
  {
    struct ibv_async_event *ev = g_new0 (struct ibv_async_event, 1);

    ev->event_type = IBV_EVENT_QP_ACCESS_ERR;
    ev->element.qp = &peer->qp;
    live_async_events++;
    fdq_push (&async_events, ev);
    qp_fail (peer);
  }
  g_mutex_unlock (&lock);
  return ok;
}

gboolean
fake_verbs_read_again (struct rdma_cm_id *id, const FakeRead *r)
{
  return read_again (id, r, FALSE);
}

gboolean
fake_verbs_read_again_failing (struct rdma_cm_id *id, const FakeRead *r)
{
  return read_again (id, r, TRUE);
}

guint8
fake_verbs_min_rnr_timer (struct rdma_cm_id *id)
{
  guint8 t;

  g_mutex_lock (&lock);
  t = id->qp != NULL ? ((FakeQp *) id->qp)->min_rnr_timer : 0;
  g_mutex_unlock (&lock);
  return t;
}

gboolean
fake_verbs_mr_at (gconstpointer addr, guint32 *rkey, int *access)
{
  GHashTableIter it;
  gpointer v;
  gboolean found = FALSE;

  g_mutex_lock (&lock);
  g_hash_table_iter_init (&it, keys);
  while (!found && g_hash_table_iter_next (&it, NULL, &v))
  {
    const FakeMr *m = v;
    const guint8 *base = m->mr.addr;

    if ((const guint8 *) addr >= base && (const guint8 *) addr < base + m->mr.length)
    {
      *rkey = m->mr.rkey;
      *access = m->access;
      found = TRUE;
    }
  }
  g_mutex_unlock (&lock);
  return found;
}

guint
fake_verbs_remote_mrs (void)
{
  GHashTableIter it;
  gpointer v;
  GHashTable *seen = g_hash_table_new (NULL, NULL);
  guint n;

  g_mutex_lock (&lock);
  g_hash_table_iter_init (&it, keys);
  while (g_hash_table_iter_next (&it, NULL, &v))
  {
    const FakeMr *m = v;

    if (m->access & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC))
      g_hash_table_add (seen, v);
  }
  g_mutex_unlock (&lock);
  n = g_hash_table_size (seen);
  g_hash_table_unref (seen);
  return n;
}

void
fake_verbs_set_retransmissions (gboolean on)
{
  g_mutex_lock (&lock);
  retransmissions = on;
  g_mutex_unlock (&lock);
}

gboolean
fake_verbs_complete (struct rdma_cm_id *id)
{
  gboolean done = FALSE;

  g_mutex_lock (&lock);
  if (id->qp != NULL && ((FakeQp *) id->qp)->executed > 0)
  {
    swr_complete ((FakeQp *) id->qp);
    done = TRUE;
  }
  g_mutex_unlock (&lock);
  return done;
}

guint
fake_verbs_executed (struct rdma_cm_id *id)
{
  guint n = 0;

  g_mutex_lock (&lock);
  if (id->qp != NULL)
    n = ((FakeQp *) id->qp)->executed;
  g_mutex_unlock (&lock);
  return n;
}

guint
fake_verbs_queued (struct rdma_cm_id *id)
{
  guint n = 0;

  g_mutex_lock (&lock);
  if (id->qp != NULL)
    n = g_queue_get_length (&((FakeQp *) id->qp)->sq);
  g_mutex_unlock (&lock);
  return n;
}

guint
fake_verbs_live (gchar **what)
{
  guint n;

  g_mutex_lock (&lock);
  n = live_pds + live_mrs + live_mws + live_channels + live_cqs + live_qps + live_ids
      + live_ev_channels + live_events + live_srqs + live_async_events;
  if (what != NULL)
    *what = g_strdup_printf ("%u PDs, %u MRs, %u MWs, %u completion channels, %u CQs, "
                             "%u QPs, %u CM ids, %u CM event channels, %u CM events, %u SRQs, "
                             "%u async events not acknowledged",
                             live_pds, live_mrs, live_mws, live_channels, live_cqs, live_qps,
                             live_ids, live_ev_channels, live_events, live_srqs, live_async_events);
  g_mutex_unlock (&lock);
  return n;
}

guint
fake_verbs_take_misuse (gchar **what)
{
  guint n;

  g_mutex_lock (&lock);
  n = misuse;
  if (what != NULL)
    *what = g_strdup (first_misuse != NULL ? first_misuse : "none");
  misuse = 0;
  g_clear_pointer (&first_misuse, g_free);
  g_mutex_unlock (&lock);
  return n;
}

void
fake_verbs_assert_clean (void)
{
  gchar *what = NULL;

  if (fake_verbs_live (&what) != 0)
    g_error ("verbs objects left: %s", what);
  g_free (what);
  if (fake_verbs_take_misuse (&what) != 0)
    g_error ("the verbs were misused: %s", what);
  g_free (what);
}
