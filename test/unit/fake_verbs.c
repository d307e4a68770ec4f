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
#include <stdarg.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lib/c_glib/transport/rdma/rdma_verbs.h"
#include "fake_verbs.h"

#define FAKE_MAX_SGE 8
/* keys start here and only grow: a small number is a key no region has */
#define FAKE_FIRST_KEY 0x1000u
#define FAKE_BAD_KEY 0x7u

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
  guint users;              /* MRs and QPs */
} FakePd;

typedef struct
{
  struct ibv_mr mr;
  FakePd *pd;
  int access;
} FakeMr;

typedef struct
{
  struct ibv_comp_channel ch;
  FdQueue events;           /* FakeCq * */
  guint cqs;
} FakeChannel;

typedef struct
{
  struct ibv_cq cq;
  FakeChannel *channel;
  GQueue wcs;               /* FakeWc * */
  gboolean armed;
  guint events, acked;      /* events taken and acknowledged */
  guint qps;
  FakeId *owner;            /* the side of the QP that uses it (its events count there) */
} FakeCq;

typedef struct
{
  struct ibv_wc wc;
  FakeQp *qp;               /* whose queue it completes */
  gboolean rq;              /* a receive (else a send queue WR) */
  guint sq_retire;          /* send queue entries it gives back when polled */
} FakeWc;

typedef struct
{
  guint64 wr_id;
  struct ibv_sge sge[FAKE_MAX_SGE];
  int num_sge;
} FakeRecv;

struct _FakeQp
{
  struct ibv_qp qp;
  FakeId *id;
  FakePd *pd;
  FakeCq *scq, *rcq;
  struct ibv_qp_cap cap;
  gboolean sig_all;
  GQueue rq;                /* FakeRecv *, oldest first */
  guint sq_used;            /* posted and not yet given back by a polled completion */
  guint rq_used;
  guint unsignalled;        /* unsignalled WRs since the last completion */
  gboolean failed;          /* the error state */
};

typedef struct
{
  struct rdma_event_channel ch;
  FdQueue events;           /* FakeEvent * */
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
  FakeId *peer;             /* NULL once it destroyed its id */
  FakeEvChannel *channel;
  FakeStats stats;
  GQueue faults;            /* Injected * */
  guint unacked;            /* its CM events taken and not acknowledged */
  gboolean vanished;        /* its host is gone */
  gboolean disconnected;    /* it called rdma_disconnect */
  gboolean told;            /* it got DISCONNECTED from the peer */
};

static GMutex lock;
static struct ibv_context context;
static GHashTable *keys;    /* lkey and rkey -> FakeMr */
static guint32 next_key = FAKE_FIRST_KEY;
static guint32 next_qpn = 0x100;
static guint live_pds, live_mrs, live_channels, live_cqs, live_qps, live_ids, live_ev_channels,
  live_events;
static guint misuse;
static gchar *first_misuse;

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

static gboolean
covers (const FakeMr *m, guint64 addr, guint64 len)
{
  guint64 base = (guintptr) m->mr.addr;

  return addr >= base && len <= m->mr.length && addr - base <= m->mr.length - len;
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
  for (int i = 0; i < n; i++) {
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

  while (i < nd && j < ns) {
    guint64 n = MIN (dst[i].length - di, src[j].length - si);

    if (n > 0)
      memcpy ((guint8 *) (guintptr) (dst[i].addr + di), (guint8 *) (guintptr) (src[j].addr + si),
              n);
    di += n;
    si += n;
    if (di == dst[i].length) {
      i++;
      di = 0;
    }
    if (si == src[j].length) {
      j++;
      si = 0;
    }
  }
}

/* A WRITE's @len bytes from @src (@ns SGEs) to @dst, in address order, the last 8-byte word
 * (aligned) of the destination after everything else, whole if it is a whole word. */
static void
place (guint8 *dst, const struct ibv_sge *src, int ns, guint64 len)
{
  guintptr last_word = ((guintptr) dst + len - 1) & ~(guintptr) 7;
  guint64 cut = last_word > (guintptr) dst ? last_word - (guintptr) dst : 0;
  struct ibv_sge bulk = { .addr = (guintptr) dst, .length = (guint32) cut };
  guint8 tail[8];
  struct ibv_sge tail_sge = { .addr = (guintptr) tail, .length = (guint32) (len - cut) };
  struct ibv_sge rest[FAKE_MAX_SGE];
  guint64 skip = cut;
  int nr = 0;

  sg_copy (&bulk, 1, src, ns);
  /* the source from @cut on */
  for (int i = 0; i < ns; i++) {
    if (skip >= src[i].length) {
      skip -= src[i].length;
      continue;
    }
    rest[nr] = src[i];
    rest[nr].addr += skip;
    rest[nr].length -= (guint32) skip;
    skip = 0;
    nr++;
  }
  sg_copy (&tail_sge, 1, rest, nr);
  __atomic_thread_fence (__ATOMIC_RELEASE);
  if (len - cut == 8 && ((guintptr) dst + cut) % 8 == 0) {
    guint64 word;
    memcpy (&word, tail, 8);
    __atomic_store_n ((guint64 *) (dst + cut), word, __ATOMIC_RELAXED);
  } else {
    for (guint64 i = 0; i < len - cut; i++)
      __atomic_store_n (dst + cut + i, tail[i], __ATOMIC_RELAXED);
  }
}

/* ---- completions ---- */

static void
cq_push (FakeCq *cq, FakeQp *qp, const struct ibv_wc *wc, gboolean rq, guint sq_retire)
{
  FakeWc *w;

  if (g_queue_get_length (&cq->wcs) >= (guint) cq->cq.cqe) {
    misused ("a CQ of %d entries overruns (a completion is lost)", cq->cq.cqe);
    return;
  }
  w = g_new (FakeWc, 1);
  w->wc = *wc;
  w->qp = qp;
  w->rq = rq;
  w->sq_retire = sq_retire;
  g_queue_push_tail (&cq->wcs, w);
  if (cq->armed && cq->channel != NULL) {
    cq->armed = FALSE;
    fdq_push (&cq->channel->events, cq);
  }
}

static enum ibv_wc_opcode
wc_opcode (enum ibv_wr_opcode op)
{
  switch (op) {
  case IBV_WR_RDMA_WRITE:
  case IBV_WR_RDMA_WRITE_WITH_IMM:
    return IBV_WC_RDMA_WRITE;
  case IBV_WR_RDMA_READ:
    return IBV_WC_RDMA_READ;
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

  if (status == IBV_WC_SUCCESS && !(wr->send_flags & IBV_SEND_SIGNALED) && !qp->sig_all) {
    qp->unsignalled++;
    return;
  }
  cq_push (qp->scq, qp, &wc, FALSE, qp->unsignalled + 1);
  qp->unsignalled = 0;
}

static void
rq_complete (FakeQp *qp, guint64 wr_id, enum ibv_wc_status status, enum ibv_wc_opcode opcode,
             guint32 len, gboolean with_imm, __be32 imm)
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

  cq_push (qp->rcq, qp, &wc, TRUE, 0);
}

/* The error state: every receive posted is flushed, and so is every WR posted later. */
static void
qp_fail (FakeQp *qp)
{
  FakeRecv *r;

  if (qp->failed)
    return;
  qp->failed = TRUE;
  while ((r = g_queue_pop_head (&qp->rq)) != NULL) {
    rq_complete (qp, r->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, FALSE, 0);
    g_free (r);
  }
}

static void
wr_fails (FakeQp *qp, const struct ibv_send_wr *wr, enum ibv_wc_status status)
{
  qp->id->stats.errors++;
  sq_complete (qp, wr, status, 0);
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

  if (peer != NULL && !peer->vanished && !peer->told) {
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

  for (GList *l = self->faults.head; l != NULL; l = l->next) {
    Injected *f = l->data;
    FakeMr *m;

    if (f->opcode != wr->opcode
        || ((f->fault == FAKE_FAULT_BAD_RKEY || f->fault == FAKE_FAULT_OUT_OF_RANGE) && len == 0))
      continue;
    if (f->skip > 0) {
      f->skip--;
      return;
    }
    switch (f->fault) {
    case FAKE_FAULT_BAD_RKEY:
      wr->wr.rdma.rkey = FAKE_BAD_KEY;
      break;
    case FAKE_FAULT_OUT_OF_RANGE:
      m = g_hash_table_lookup (keys, GUINT_TO_POINTER (wr->wr.rdma.rkey));
      if (m != NULL)
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

static void
execute (FakeQp *qp, const struct ibv_send_wr *posted)
{
  struct ibv_send_wr wr = *posted;
  guint64 len = sge_len (wr.sg_list, wr.num_sge);
  gboolean rdma = wr.opcode == IBV_WR_RDMA_WRITE || wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM
                  || wr.opcode == IBV_WR_RDMA_READ;
  gboolean with_imm = wr.opcode == IBV_WR_SEND_WITH_IMM
                      || wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  FakeMr *remote = NULL;
  FakeRecv *recv = NULL;
  FakeQp *peer;

  apply_fault (qp, &wr, len);
  if (qp->failed) {
    sq_complete (qp, &wr, IBV_WC_WR_FLUSH_ERR, 0);
    return;
  }
  if (!(wr.send_flags & IBV_SEND_INLINE)
      && !local_ok (qp->pd, wr.sg_list, wr.num_sge, wr.opcode == IBV_WR_RDMA_READ)) {
    misused ("a local SGE of a WR (opcode %d) is not in a region of its key and PD",
             wr.opcode);
    wr_fails (qp, &wr, IBV_WC_LOC_PROT_ERR);
    return;
  }
  peer = peer_qp (qp);
  if (peer == NULL) {
    wr_fails (qp, &wr, IBV_WC_RETRY_EXC_ERR);
    return;
  }
  if (rdma && len > 0) {
    remote = mr_by_key (wr.wr.rdma.rkey, TRUE);
    if (remote == NULL || remote->pd != peer->pd
        || !covers (remote, wr.wr.rdma.remote_addr, len)
        || !(remote->access & (wr.opcode == IBV_WR_RDMA_READ ? IBV_ACCESS_REMOTE_READ
                                                              : IBV_ACCESS_REMOTE_WRITE))) {
      /* the responder fails as well (a NAK for an access violation) */
      qp_fail (peer);
      wr_fails (qp, &wr, IBV_WC_REM_ACCESS_ERR);
      return;
    }
  }
  if (wr.opcode != IBV_WR_RDMA_WRITE && wr.opcode != IBV_WR_RDMA_READ) {
    recv = g_queue_pop_head (&peer->rq);
    if (recv == NULL) {
      qp->id->stats.rnr++;
      wr_fails (qp, &wr, IBV_WC_RNR_RETRY_EXC_ERR);
      return;
    }
  }

  switch (wr.opcode) {
  case IBV_WR_SEND:
  case IBV_WR_SEND_WITH_IMM:
    if (len > sge_len (recv->sge, recv->num_sge)) {
      rq_complete (peer, recv->wr_id, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, FALSE, 0);
      qp_fail (peer);
      wr_fails (qp, &wr, IBV_WC_REM_INV_REQ_ERR);
      break;
    }
    if (!local_ok (peer->pd, recv->sge, recv->num_sge, TRUE)) {
      misused ("a receive's SGE is not in a writable region of its key and PD");
      rq_complete (peer, recv->wr_id, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, FALSE, 0);
      qp_fail (peer);
      wr_fails (qp, &wr, IBV_WC_REM_OP_ERR);
      break;
    }
    sg_copy (recv->sge, recv->num_sge, wr.sg_list, wr.num_sge);
    rq_complete (peer, recv->wr_id, IBV_WC_SUCCESS, IBV_WC_RECV, (guint32) len, with_imm,
                 wr.imm_data);
    sq_complete (qp, &wr, IBV_WC_SUCCESS, (guint32) len);
    break;
  case IBV_WR_RDMA_WRITE:
  case IBV_WR_RDMA_WRITE_WITH_IMM:
    if (len > 0)
      place ((guint8 *) (guintptr) wr.wr.rdma.remote_addr, wr.sg_list, wr.num_sge, len);
    if (recv != NULL)
      rq_complete (peer, recv->wr_id, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, (guint32) len,
                   TRUE, wr.imm_data);
    sq_complete (qp, &wr, IBV_WC_SUCCESS, (guint32) len);
    break;
  case IBV_WR_RDMA_READ: {
    struct ibv_sge src = { .addr = wr.wr.rdma.remote_addr, .length = (guint32) len };

    if (len > 0)
      sg_copy (wr.sg_list, wr.num_sge, &src, 1);
    sq_complete (qp, &wr, IBV_WC_SUCCESS, (guint32) len);
    break;
  }
  default:
    g_assert_not_reached ();
  }
  g_free (recv);
}

static int
fake_post_send (struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
  FakeQp *qp = (FakeQp *) ibqp;
  FakeStats *s = &qp->id->stats;
  int rc = 0;

  g_mutex_lock (&lock);
  s->post_send_calls++;
  for (; wr != NULL; wr = wr->next) {
    switch (wr->opcode) {
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
    default:
      rc = EINVAL;
      break;
    }
    if (rc == 0 && (wr->num_sge < 0 || (guint) wr->num_sge > qp->cap.max_send_sge))
      rc = EINVAL;
    if (rc == 0 && qp->sq_used >= qp->cap.max_send_wr) {
      misused ("a WR posted to a full send queue (%u entries)", qp->cap.max_send_wr);
      rc = ENOMEM;
    }
    if (rc != 0)
      break;
    qp->sq_used++;
    execute (qp, wr);
  }
  if (rc != 0)
    *bad_wr = wr;
  g_mutex_unlock (&lock);
  return rc;
}

static int
fake_post_recv (struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
  FakeQp *qp = (FakeQp *) ibqp;
  int rc = 0;

  g_mutex_lock (&lock);
  qp->id->stats.post_recv_calls++;
  for (; wr != NULL; wr = wr->next) {
    FakeRecv *r;

    if (wr->num_sge < 0 || (guint) wr->num_sge > qp->cap.max_recv_sge) {
      rc = EINVAL;
      break;
    }
    if (qp->rq_used >= qp->cap.max_recv_wr) {
      misused ("a receive posted to a full receive queue (%u entries)", qp->cap.max_recv_wr);
      rc = ENOMEM;
      break;
    }
    qp->rq_used++;
    qp->id->stats.recvs++;
    if (qp->failed) {
      rq_complete (qp, wr->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, FALSE, 0);
      continue;
    }
    r = g_new0 (FakeRecv, 1);
    r->wr_id = wr->wr_id;
    r->num_sge = wr->num_sge;
    memcpy (r->sge, wr->sg_list, sizeof (struct ibv_sge) * (gsize) wr->num_sge);
    g_queue_push_tail (&qp->rq, r);
  }
  if (rc != 0)
    *bad_wr = wr;
  g_mutex_unlock (&lock);
  return rc;
}

/* ---- completion queues ---- */

static int
fake_poll_cq (struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
  FakeCq *cq = (FakeCq *) ibcq;
  int n = 0;

  g_mutex_lock (&lock);
  while (n < num_entries) {
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
  g_mutex_unlock (&lock);
  return n;
}

static int
fake_req_notify_cq (struct ibv_cq *ibcq, int solicited_only)
{
  g_mutex_lock (&lock);
  ((FakeCq *) ibcq)->armed = TRUE;
  g_mutex_unlock (&lock);
  return 0;
}

static int
fake_get_cq_event (struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
  FakeCq *c;

  g_mutex_lock (&lock);
  c = fdq_pop (&((FakeChannel *) channel)->events);
  if (c != NULL) {
    c->events++;
    *cq = &c->cq;
    *cq_context = c->cq.cq_context;
    if (c->owner != NULL)
      c->owner->stats.cq_events++;
  }
  g_mutex_unlock (&lock);
  if (c == NULL) {
    errno = EAGAIN;
    return -1;
  }
  return 0;
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
  if (pd->users > 0) {
    misused ("a PD deallocated while %u MRs or QPs use it", pd->users);
    g_mutex_unlock (&lock);
    return EBUSY;
  }
  live_pds--;
  g_mutex_unlock (&lock);
  g_free (pd);
  return 0;
}

static struct ibv_mr *
fake_reg_mr (struct ibv_pd *ibpd, void *addr, size_t length, int access)
{
  FakeMr *m;

  if ((access & IBV_ACCESS_REMOTE_WRITE) && !(access & IBV_ACCESS_LOCAL_WRITE)) {
    errno = EINVAL;
    return NULL;
  }
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
  g_hash_table_remove (keys, GUINT_TO_POINTER (mr->lkey));
  g_hash_table_remove (keys, GUINT_TO_POINTER (mr->rkey));
  m->pd->users--;
  live_mrs--;
  g_mutex_unlock (&lock);
  g_free (m);
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
  if (ch->cqs > 0) {
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

  if (cqe < 1) {
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
  if (cq->qps > 0) {
    misused ("a CQ destroyed while %u QPs use it", cq->qps);
    g_mutex_unlock (&lock);
    return EBUSY;
  }
  if (cq->acked != cq->events)
    misused ("a CQ destroyed with %u of its %u events not acknowledged (ibv_destroy_cq would "
             "wait for them forever)", cq->events - cq->acked, cq->events);
  if (cq->channel != NULL) {
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
      || attr->cap.max_recv_sge > FAKE_MAX_SGE) {
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
  qp->cap = attr->cap;
  qp->sig_all = attr->sq_sig_all != 0;
  g_queue_init (&qp->rq);
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

  while (l != NULL) {
    GList *next = l->next;
    if (((FakeWc *) l->data)->qp == qp) {
      g_free (l->data);
      g_queue_delete_link (&cq->wcs, l);
    }
    l = next;
  }
}

static void
fake_destroy_qp (struct rdma_cm_id *cm_id)
{
  FakeQp *qp = (FakeQp *) cm_id->qp;

  if (qp == NULL)
    return;
  g_mutex_lock (&lock);
  /* a destroyed QP's completions leave its CQs (as a provider cleans them) */
  drop_wcs_of (qp->scq, qp);
  drop_wcs_of (qp->rcq, qp);
  g_queue_clear_full (&qp->rq, g_free);
  qp->scq->qps--;
  qp->rcq->qps--;
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
  while ((e = fdq_pop (&ch->events)) != NULL) {
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
  if (id->channel != NULL) {
    /* its events not yet taken go along */
    for (GList *l = id->channel->events.queue.head; l != NULL;) {
      GList *next = l->next;
      FakeEvent *e = l->data;
      if (e->id == id) {
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

static int
fake_get_cm_event (struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
  FakeEvent *e;

  g_mutex_lock (&lock);
  e = fdq_pop (&((FakeEvChannel *) channel)->events);
  if (e != NULL) {
    e->id->unacked++;
    *event = &e->ev;
  }
  g_mutex_unlock (&lock);
  if (e == NULL) {
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
  if (!id->disconnected) {
    id->disconnected = TRUE;
    /* the local QP fails at once (its receives are flushed); a vanished host says nothing */
    if (cm_id->qp != NULL)
      qp_fail ((FakeQp *) cm_id->qp);
    if (!id->vanished) {
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
             "for them forever)", id->unacked);
  /* the kernel disconnects an id destroyed while connected */
  if (!id->disconnected && !id->vanished)
    tell_peer (id);
  if (id->peer != NULL)
    id->peer->peer = NULL;
  if (id->channel != NULL) {
    for (GList *l = id->channel->events.queue.head; l != NULL;) {
      GList *next = l->next;
      e = l->data;
      if (e->id == id) {
        fdq_remove_all (&id->channel->events, e);
        live_events--;
        g_free (e);
      }
      l = next;
    }
    id->channel->ids--;
  }
  g_queue_clear_full (&id->faults, g_free);
  live_ids--;
  g_mutex_unlock (&lock);
  g_free (id);
  return 0;
}

static const RdmaVerbs fake_table = {
  .post_send = fake_post_send,
  .post_recv = fake_post_recv,
  .poll_cq = fake_poll_cq,
  .req_notify_cq = fake_req_notify_cq,
  .get_cq_event = fake_get_cq_event,
  .ack_cq_events = fake_ack_cq_events,
  .reg_mr = fake_reg_mr,
  .dereg_mr = fake_dereg_mr,
  .alloc_pd = fake_alloc_pd,
  .dealloc_pd = fake_dealloc_pd,
  .create_comp_channel = fake_create_comp_channel,
  .destroy_comp_channel = fake_destroy_comp_channel,
  .create_cq = fake_create_cq,
  .destroy_cq = fake_destroy_cq,
  .create_qp = fake_create_qp,
  .destroy_qp = fake_destroy_qp,
  .create_event_channel = fake_create_event_channel,
  .destroy_event_channel = fake_destroy_event_channel,
  .migrate_id = fake_migrate_id,
  .get_cm_event = fake_get_cm_event,
  .ack_cm_event = fake_ack_cm_event,
  .disconnect = fake_disconnect,
  .destroy_id = fake_destroy_id,
};

/* ---- the tests' side ---- */

void
fake_verbs_install (void)
{
  g_mutex_lock (&lock);
  if (keys == NULL)
    keys = g_hash_table_new (NULL, NULL);
  g_mutex_unlock (&lock);
  rdma_verbs_set (&fake_table);
}

void
fake_verbs_uninstall (void)
{
  rdma_verbs_set (NULL);
}

static FakeId *
id_new (void)
{
  FakeId *id = g_new0 (FakeId, 1);

  id->id.verbs = &context;
  id->id.ps = RDMA_PS_TCP;
  id->id.qp_type = IBV_QPT_RC;
  g_queue_init (&id->faults);
  return id;
}

void
fake_verbs_link (struct rdma_cm_id **a, struct rdma_cm_id **b)
{
  FakeId *x = id_new (), *y = id_new ();

  x->peer = y;
  y->peer = x;
  g_mutex_lock (&lock);
  live_ids += 2;
  g_mutex_unlock (&lock);
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
fake_verbs_inject (struct rdma_cm_id *id, enum ibv_wr_opcode opcode, guint skip,
                   FakeFault fault)
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

guint
fake_verbs_live (gchar **what)
{
  guint n;

  g_mutex_lock (&lock);
  n = live_pds + live_mrs + live_channels + live_cqs + live_qps + live_ids + live_ev_channels
      + live_events;
  if (what != NULL)
    *what = g_strdup_printf ("%u PDs, %u MRs, %u completion channels, %u CQs, %u QPs, "
                             "%u CM ids, %u CM event channels, %u CM events", live_pds,
                             live_mrs, live_channels, live_cqs, live_qps, live_ids,
                             live_ev_channels, live_events);
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
