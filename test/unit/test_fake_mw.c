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
 * test_fake_mw.c: type 2 memory windows in the in-memory provider (fake_verbs.h), driven
 * through the verbs table with no engine, as the bulk transfer uses them: a lender registers
 * a region with IBV_ACCESS_MW_BIND and no remote access, binds a window over part of it on
 * its QP, and the peer RDMA-READs through the window's key.  A READ through a bound window
 * reads the bytes; one byte outside the window, a wrong or stale key, the region's own rkey,
 * a WRITE through a read-only window, a window invalidated or deallocated, or a window bound
 * on another QP of the PD all fail with IBV_WC_REM_ACCESS_ERR and fail the responder too.  A
 * rebind with ibv_inc_rkey after LOCAL_INV makes the old key fail and the new one work.  A
 * bind is refused (IBV_WC_MW_BIND_ERR, the WRs after it flushed) for each rule of a device,
 * each case one change from a bind that works; an invalidation of what is not a bound window
 * of the PD fails.  A bind takes effect in its turn in the send queue.  A region with a window
 * bound is not deregistered (also when the LOCAL_INV was flushed, or the QP destroyed) until
 * the window is invalidated or deallocated; a PD with a window is busy; the leak check names a
 * window left.  Under FAKE_MANUAL an invalidation or a dealloc between two pieces of a READ
 * fails the rest of it, and under FAKE_DEFERRED over many seeds a LOCAL_INV racing a READ
 * either comes after it, before it, or between its pieces, never anything else.  A
 * retransmission as soft-RoCE makes one runs an executed bind not yet retired again and
 * fails it: one fenced behind an unacknowledged SEND waits and is not, one with a SEND posted
 * after it is.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>

#include "lib/c_glib/transport/rdma/rdma_verbs.h"
#include "fake_verbs.h"

#define MEM 4096
/* the window: [WIN_OFF, WIN_OFF + WIN_LEN) of the lender's region */
#define WIN_OFF 1024
#define WIN_LEN 2048
#define LENDER_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND)
#define MAX_POLLS 100000
#define DEFERRED_SEEDS 64

/* One link: side 0 borrows (it reads into its own region), side 1 lends (its region has no
 * remote access; windows open parts of it). */
typedef struct
{
  struct rdma_cm_id *id[2];
  struct ibv_pd *pd[2];
  gboolean own_pd[2];
  struct ibv_cq *cq[2];
  guint8 *mem[2];
  struct ibv_mr *mr[2];
} Link;

/* Bytes never 0, so a byte not yet written shows. */
static void
fill_pattern (guint8 *p, gsize len, guint seed)
{
  for (gsize i = 0; i < len; i++)
    p[i] = (guint8) ((i * 131 + seed * 7) % 255 + 1);
}

/* The lender's region registered with @lender_access, in @lender_pd (NULL: a PD of its
 * own). */
static void
link_open (Link *l, struct ibv_pd *lender_pd, int lender_access)
{
  memset (l, 0, sizeof *l);
  fake_verbs_link (&l->id[0], &l->id[1]);
  for (guint i = 0; i < 2; i++)
  {
    struct ibv_qp_init_attr attr = {
      .qp_type = IBV_QPT_RC,
      .cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
    };

    l->own_pd[i] = i == 0 || lender_pd == NULL;
    l->pd[i] = l->own_pd[i] ? rdma_verbs->alloc_pd (l->id[i]->verbs) : lender_pd;
    l->cq[i] = rdma_verbs->create_cq (l->id[i]->verbs, 16, NULL, NULL, 0);
    attr.send_cq = attr.recv_cq = l->cq[i];
    g_assert_cmpint (rdma_verbs->create_qp (l->id[i], l->pd[i], &attr), ==, 0);
    l->mem[i] = g_malloc0 (MEM);
    l->mr[i] = rdma_verbs->reg_mr (l->pd[i], l->mem[i], MEM,
                                   i == 0 ? IBV_ACCESS_LOCAL_WRITE : lender_access);
    g_assert_nonnull (l->mr[i]);
  }
  fill_pattern (l->mem[1], MEM, 1);
}

/* (A region a test deregistered itself is NULL.) */
static void
link_close (Link *l)
{
  for (guint i = 0; i < 2; i++)
  {
    struct ibv_wc wc;

    rdma_verbs->destroy_qp (l->id[i]);
    while (rdma_verbs->poll_cq (l->cq[i], 1, &wc) > 0)
      ;
    if (l->mr[i] != NULL)
      g_assert_cmpint (rdma_verbs->dereg_mr (l->mr[i]), ==, 0);
    g_free (l->mem[i]);
    g_assert_cmpint (rdma_verbs->destroy_cq (l->cq[i]), ==, 0);
    if (l->own_pd[i])
      g_assert_cmpint (rdma_verbs->dealloc_pd (l->pd[i]), ==, 0);
    g_assert_cmpint (rdma_verbs->destroy_id (l->id[i]), ==, 0);
  }
}

static struct ibv_wc
wc_of (Link *l, guint side)
{
  struct ibv_wc wc = { 0 };

  g_assert_cmpint (rdma_verbs->poll_cq (l->cq[side], 1, &wc), ==, 1);
  return wc;
}

static void
no_wc (Link *l, guint side)
{
  struct ibv_wc wc;

  g_assert_cmpint (rdma_verbs->poll_cq (l->cq[side], 1, &wc), ==, 0);
}

/* Polls @side until a completion comes (FAKE_DEFERRED: the polls take the steps). */
static struct ibv_wc
wait_wc (Link *l, guint side)
{
  struct ibv_wc wc = { 0 };

  for (guint n = 0; rdma_verbs->poll_cq (l->cq[side], 1, &wc) == 0; n++)
    g_assert_cmpuint (n, <, MAX_POLLS);
  return wc;
}

/* The lender posts a bind of @mw over [@addr, @addr + @len) of @mr through @rkey. */
static int
post_bind (Link *l, struct ibv_mw *mw, struct ibv_mr *mr, guint64 addr, guint64 len, guint32 rkey,
           unsigned int access, guint64 wr_id)
{
  struct ibv_send_wr wr = {
    .wr_id = wr_id,
    .opcode = IBV_WR_BIND_MW,
    .send_flags = IBV_SEND_SIGNALED,
    .bind_mw = {
      .mw = mw,
      .rkey = rkey,
      .bind_info = { .mr = mr, .addr = addr, .length = len, .mw_access_flags = access },
    },
  };
  struct ibv_send_wr *bad = NULL;

  return rdma_verbs->post_send (l->id[1]->qp, &wr, &bad);
}

/* The window over the lender's [WIN_OFF, WIN_OFF + WIN_LEN) posted, bound through the next
 * tag of its key.  Returns that key. */
static guint32
post_window (Link *l, struct ibv_mw *mw, unsigned int access)
{
  guint32 key = ibv_inc_rkey (mw->rkey);

  g_assert_cmpint (
      post_bind (l, mw, l->mr[1], (guintptr) l->mem[1] + WIN_OFF, WIN_LEN, key, access, 50), ==, 0);
  return key;
}

/* The window bound (FAKE_IMMEDIATE), and mw->rkey set to its key as an app does. */
static guint32
bind_window (Link *l, struct ibv_mw *mw, unsigned int access)
{
  guint32 before = mw->rkey, key = post_window (l, mw, access);
  struct ibv_wc wc = wc_of (l, 1);

  g_assert_cmpint (wc.status, ==, IBV_WC_SUCCESS);
  g_assert_cmpint (wc.opcode, ==, IBV_WC_BIND_MW);
  g_assert_cmpuint (wc.wr_id, ==, 50);
  /* the provider leaves mw->rkey to the app (rxe and mlx5 do) */
  g_assert_cmphex (mw->rkey, ==, before);
  mw->rkey = key;
  return key;
}

static int
post_inv (Link *l, guint side, guint32 rkey, guint64 wr_id)
{
  struct ibv_send_wr wr = {
    .wr_id = wr_id,
    .opcode = IBV_WR_LOCAL_INV,
    .send_flags = IBV_SEND_SIGNALED,
    .invalidate_rkey = rkey,
  };
  struct ibv_send_wr *bad = NULL;

  return rdma_verbs->post_send (l->id[side]->qp, &wr, &bad);
}

static void
invalidate (Link *l, guint32 rkey)
{
  struct ibv_wc wc;

  g_assert_cmpint (post_inv (l, 1, rkey, 60), ==, 0);
  wc = wc_of (l, 1);
  g_assert_cmpint (wc.status, ==, IBV_WC_SUCCESS);
  g_assert_cmpint (wc.opcode, ==, IBV_WC_LOCAL_INV);
  g_assert_cmpuint (wc.wr_id, ==, 60);
}

/* Side 0 posts a READ (or a WRITE) of @len bytes between its region at @off and the
 * lender's address @raddr through @rkey. */
static int
post_rdma (Link *l, enum ibv_wr_opcode opcode, guint32 off, guint64 raddr, guint32 len,
           guint32 rkey, guint64 wr_id)
{
  struct ibv_sge sge = { .addr = (guintptr) (l->mem[0] + off),
                         .length = len,
                         .lkey = l->mr[0]->lkey };
  struct ibv_send_wr wr = {
    .wr_id = wr_id,
    .sg_list = &sge,
    .num_sge = 1,
    .opcode = opcode,
    .send_flags = IBV_SEND_SIGNALED,
    .wr.rdma = { .remote_addr = raddr, .rkey = rkey },
  };
  struct ibv_send_wr *bad = NULL;

  return rdma_verbs->post_send (l->id[0]->qp, &wr, &bad);
}

/* Side 0 reads the whole window through @rkey: the bytes arrive. */
static void
read_window (Link *l, guint32 rkey)
{
  struct ibv_wc wc;

  memset (l->mem[0], 0, MEM);
  g_assert_cmpint (
      post_rdma (l, IBV_WR_RDMA_READ, 0, (guintptr) l->mem[1] + WIN_OFF, WIN_LEN, rkey, 70), ==, 0);
  wc = wc_of (l, 0);
  g_assert_cmpint (wc.status, ==, IBV_WC_SUCCESS);
  g_assert_cmpint (wc.opcode, ==, IBV_WC_RDMA_READ);
  g_assert_true (memcmp (l->mem[0], l->mem[1] + WIN_OFF, WIN_LEN) == 0);
}

static void
post_recv (Link *l, guint side, guint64 wr_id)
{
  struct ibv_sge sge = { .addr = (guintptr) (l->mem[side] + MEM - 64),
                         .length = 64,
                         .lkey = l->mr[side]->lkey };
  struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
  struct ibv_recv_wr *bad = NULL;

  g_assert_cmpint (rdma_verbs->post_recv (l->id[side]->qp, &wr, &bad), ==, 0);
}

static int
post_send (Link *l, guint side, guint64 wr_id)
{
  struct ibv_sge sge = { .addr = (guintptr) l->mem[side], .length = 16, .lkey = l->mr[side]->lkey };
  struct ibv_send_wr wr = {
    .wr_id = wr_id,
    .sg_list = &sge,
    .num_sge = 1,
    .opcode = IBV_WR_SEND,
    .send_flags = IBV_SEND_SIGNALED,
  };
  struct ibv_send_wr *bad = NULL;

  return rdma_verbs->post_send (l->id[side]->qp, &wr, &bad);
}

/* The responder failed: the receive it had posted (wr_id 99) is flushed. */
static void
assert_responder_failed (Link *l)
{
  struct ibv_wc wc = wc_of (l, 1);

  g_assert_cmpuint (wc.wr_id, ==, 99);
  g_assert_cmpint (wc.status, ==, IBV_WC_WR_FLUSH_ERR);
}

static void
take_one_misuse (const gchar *about)
{
  gchar *what = NULL;

  g_assert_cmpuint (fake_verbs_take_misuse (&what), ==, 1);
  g_assert_nonnull (strstr (what, about));
  g_free (what);
}

/* ---- windows as objects ---- */

/* Type 2 only; a window is a live object of its PD: the PD is busy while it lives, the leak
 * count has it; two windows have keys of their own. */
static void
test_alloc (void)
{
  struct rdma_cm_id *a, *b;
  struct ibv_pd *pd;
  struct ibv_mw *mw, *mw2;
  guint before;
  gchar *what = NULL;

  fake_verbs_link (&a, &b);
  pd = rdma_verbs->alloc_pd (a->verbs);
  errno = 0;
  g_assert_null (rdma_verbs->alloc_mw (pd, IBV_MW_TYPE_1));
  g_assert_cmpint (errno, ==, EOPNOTSUPP);

  before = fake_verbs_live (NULL);
  mw = rdma_verbs->alloc_mw (pd, IBV_MW_TYPE_2);
  g_assert_nonnull (mw);
  g_assert_true (mw->pd == pd);
  g_assert_cmpint (mw->type, ==, IBV_MW_TYPE_2);
  g_assert_cmpuint (fake_verbs_live (&what), ==, before + 1);
  g_assert_nonnull (strstr (what, " 1 MWs"));
  g_free (what);
  mw2 = rdma_verbs->alloc_mw (pd, IBV_MW_TYPE_2);
  g_assert_cmphex (mw2->rkey >> 8, !=, mw->rkey >> 8);

  g_assert_cmpint (rdma_verbs->dealloc_pd (pd), ==, EBUSY);
  take_one_misuse ("MWs");
  g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
  g_assert_cmpint (rdma_verbs->dealloc_pd (pd), ==, EBUSY);
  take_one_misuse ("MWs");
  g_assert_cmpint (rdma_verbs->dealloc_mw (mw2), ==, 0);
  g_assert_cmpuint (fake_verbs_live (NULL), ==, before);
  g_assert_cmpint (rdma_verbs->dealloc_pd (pd), ==, 0);
  g_assert_cmpint (rdma_verbs->destroy_id (a), ==, 0);
  g_assert_cmpint (rdma_verbs->destroy_id (b), ==, 0);
  fake_verbs_assert_clean ();
}

/* A window never deallocated: the leak check fails and names it (in a subprocess). */
static void
test_leak (void)
{
  if (g_test_subprocess ())
  {
    struct rdma_cm_id *a, *b;
    struct ibv_pd *pd;

    fake_verbs_link (&a, &b);
    pd = rdma_verbs->alloc_pd (a->verbs);
    g_assert_nonnull (rdma_verbs->alloc_mw (pd, IBV_MW_TYPE_2));
    rdma_verbs->destroy_id (a);
    rdma_verbs->destroy_id (b);
    fake_verbs_assert_clean ();
    return;
  }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*verbs objects left: 1 PDs, 0 MRs, 1 MWs,*");
}

/* ---- reading through a window ---- */

/* Bound, the window lets the peer read exactly its bytes; the completions and the provider's
 * counts say what happened; once invalidated, the same READ fails and fails the responder. */
static void
test_read (void)
{
  Link l;
  struct ibv_mw *mw;
  guint32 key;
  FakeStats s;
  struct ibv_wc wc;

  link_open (&l, NULL, LENDER_ACCESS);
  mw = rdma_verbs->alloc_mw (l.pd[1], IBV_MW_TYPE_2);
  key = bind_window (&l, mw, IBV_ACCESS_REMOTE_READ);
  read_window (&l, key);
  /* a part of the window, at its end */
  g_assert_cmpint (post_rdma (&l, IBV_WR_RDMA_READ, 3000,
                              (guintptr) l.mem[1] + WIN_OFF + WIN_LEN - 100, 100, key, 71),
                   ==, 0);
  g_assert_cmpint (wc_of (&l, 0).status, ==, IBV_WC_SUCCESS);
  g_assert_true (memcmp (l.mem[0] + 3000, l.mem[1] + WIN_OFF + WIN_LEN - 100, 100) == 0);
  invalidate (&l, key);
  fake_verbs_stats (l.id[1], &s);
  g_assert_cmpuint (s.binds, ==, 1);
  g_assert_cmpuint (s.local_invs, ==, 1);
  g_assert_cmpuint (s.errors, ==, 0);
  fake_verbs_stats (l.id[0], &s);
  g_assert_cmpuint (s.reads, ==, 2);

  post_recv (&l, 1, 99);
  g_assert_cmpint (
      post_rdma (&l, IBV_WR_RDMA_READ, 0, (guintptr) l.mem[1] + WIN_OFF, WIN_LEN, key, 72), ==, 0);
  wc = wc_of (&l, 0);
  g_assert_cmpint (wc.status, ==, IBV_WC_REM_ACCESS_ERR);
  g_assert_cmpuint (wc.wr_id, ==, 72);
  assert_responder_failed (&l);
  g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
  link_close (&l);
  fake_verbs_assert_clean ();
}

typedef enum
{
  R_WINDOW,       /* the window itself: works */
  R_PAST_END,     /* the window's length from one byte in: its last byte is past it */
  R_BEFORE_START, /* from one byte before it */
  R_NEXT_TAG,     /* the key ibv_inc_rkey makes of the window's */
  R_REGION_RKEY,  /* the region's rkey (registered with no remote access) */
  R_REGION_LKEY,
  R_WRITE, /* a WRITE through the read-only window */
  R_INVALIDATED,
  R_DEALLOCATED,
  R_INJECTED, /* fake_verbs_inject's out-of-range fault: past the window's end */
} ReadCase;

/* Each way a remote access through a window is refused, one change from one that works. */
static void
test_refused (void)
{
  static const struct
  {
    ReadCase c;
    const gchar *what;
  } cases[] = {
    { R_WINDOW, "the window" },
    { R_PAST_END, "one byte past the window (inside the region)" },
    { R_BEFORE_START, "one byte before the window (inside the region)" },
    { R_NEXT_TAG, "the next tag of the window's key" },
    { R_REGION_RKEY, "the region's rkey" },
    { R_REGION_LKEY, "the region's lkey" },
    { R_WRITE, "a WRITE through a read-only window" },
    { R_INVALIDATED, "the window invalidated" },
    { R_DEALLOCATED, "the window deallocated" },
    { R_INJECTED, "an injected out-of-range fault" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
  {
    ReadCase c = cases[i].c;
    enum ibv_wr_opcode op = c == R_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
    guint64 raddr;
    guint32 key;
    struct ibv_mw *mw;
    struct ibv_wc wc;
    Link l;

    g_test_message ("%s", cases[i].what);
    link_open (&l, NULL, LENDER_ACCESS);
    mw = rdma_verbs->alloc_mw (l.pd[1], IBV_MW_TYPE_2);
    key = bind_window (&l, mw, IBV_ACCESS_REMOTE_READ);
    raddr = (guintptr) l.mem[1] + WIN_OFF;
    if (c == R_PAST_END)
      raddr++;
    else if (c == R_BEFORE_START)
      raddr--;
    else if (c == R_NEXT_TAG)
      key = ibv_inc_rkey (key);
    else if (c == R_REGION_RKEY)
      key = l.mr[1]->rkey;
    else if (c == R_REGION_LKEY)
      key = l.mr[1]->lkey;
    else if (c == R_INVALIDATED)
      invalidate (&l, key);
    else if (c == R_DEALLOCATED)
      g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
    else if (c == R_INJECTED)
      fake_verbs_inject (l.id[0], IBV_WR_RDMA_READ, 0, FAKE_FAULT_OUT_OF_RANGE);
    post_recv (&l, 1, 99);
    g_assert_cmpint (post_rdma (&l, op, 0, raddr, WIN_LEN, key, 1), ==, 0);
    wc = wc_of (&l, 0);
    if (c == R_WINDOW)
    {
      g_assert_cmpint (wc.status, ==, IBV_WC_SUCCESS);
      g_assert_true (memcmp (l.mem[0], l.mem[1] + WIN_OFF, WIN_LEN) == 0);
      no_wc (&l, 1);
    }
    else
    {
      g_assert_cmpint (wc.status, ==, IBV_WC_REM_ACCESS_ERR);
      assert_responder_failed (&l);
    }
    if (c != R_DEALLOCATED)
      g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
    link_close (&l);
    fake_verbs_assert_clean ();
  }
}

/* LOCAL_INV, then a bind with ibv_inc_rkey, over and over (the tag wraps from 0xff to 0 on
 * the way): each new key reads, on the same index; the first key fails at the end. */
static void
test_rebind (void)
{
  guint32 keys[6];
  struct ibv_mw *mw;
  Link l;

  link_open (&l, NULL, LENDER_ACCESS);
  mw = rdma_verbs->alloc_mw (l.pd[1], IBV_MW_TYPE_2);
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
  {
    if (i > 0)
      invalidate (&l, keys[i - 1]);
    keys[i] = bind_window (&l, mw, IBV_ACCESS_REMOTE_READ);
    for (guint j = 0; j < i; j++)
      g_assert_cmphex (keys[j], !=, keys[i]);
    g_assert_cmphex (keys[i] >> 8, ==, keys[0] >> 8);
    read_window (&l, keys[i]);
  }
  post_recv (&l, 1, 99);
  g_assert_cmpint (
      post_rdma (&l, IBV_WR_RDMA_READ, 0, (guintptr) l.mem[1] + WIN_OFF, WIN_LEN, keys[0], 1), ==,
      0);
  g_assert_cmpint (wc_of (&l, 0).status, ==, IBV_WC_REM_ACCESS_ERR);
  assert_responder_failed (&l);
  g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
  link_close (&l);
  fake_verbs_assert_clean ();
}

/* A window bound on one QP serves that QP's peer only, not the peer of another QP of the
 * same PD. */
static void
test_other_qp (void)
{
  struct ibv_mw *mw;
  guint32 key;
  Link a, b;

  link_open (&a, NULL, LENDER_ACCESS);
  link_open (&b, a.pd[1], LENDER_ACCESS);
  mw = rdma_verbs->alloc_mw (a.pd[1], IBV_MW_TYPE_2);
  key = bind_window (&a, mw, IBV_ACCESS_REMOTE_READ);
  read_window (&a, key);
  post_recv (&b, 1, 99);
  g_assert_cmpint (
      post_rdma (&b, IBV_WR_RDMA_READ, 0, (guintptr) a.mem[1] + WIN_OFF, WIN_LEN, key, 1), ==, 0);
  g_assert_cmpint (wc_of (&b, 0).status, ==, IBV_WC_REM_ACCESS_ERR);
  assert_responder_failed (&b);
  read_window (&a, key);
  link_close (&b);
  g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
  link_close (&a);
  fake_verbs_assert_clean ();
}

/* ---- what a bind needs ---- */

typedef enum
{
  B_OK,         /* a read-only window inside a region with MW_BIND: bound */
  B_NO_MW_BIND, /* the region registered without IBV_ACCESS_MW_BIND */
  B_REGION_OTHER_PD,
  B_WINDOW_OTHER_PD,
  B_PAST_REGION,   /* the range ends one byte past the region */
  B_BEFORE_REGION, /* it starts one byte before */
  B_EMPTY,
  B_WRITABLE_OK,    /* a writable window over a region with LOCAL_WRITE: bound */
  B_WRITABLE_NO_LW, /* over a region without LOCAL_WRITE */
  B_OTHER_INDEX,    /* a new key that changes more than the tag */
  B_BOUND,          /* bound already (type 2: invalidate first) */
  B_STALE_MW_RKEY,  /* invalidated, but mw->rkey left at the key before the last bind */
} BindCase;

/* Each rule a device applies to a bind, one change from a bind that works: the refused bind
 * completes with IBV_WC_MW_BIND_ERR, the QP fails, and a SEND posted after it is flushed;
 * a bind that works completes first, and the SEND after it arrives. */
static void
test_bind_rules (void)
{
  static const struct
  {
    BindCase c;
    const gchar *what;
  } cases[] = {
    { B_OK, "a read-only window" },
    { B_NO_MW_BIND, "a region without IBV_ACCESS_MW_BIND" },
    { B_REGION_OTHER_PD, "a region of another PD" },
    { B_WINDOW_OTHER_PD, "a window of another PD" },
    { B_PAST_REGION, "a range one byte past the region" },
    { B_BEFORE_REGION, "a range from one byte before the region" },
    { B_EMPTY, "an empty range" },
    { B_WRITABLE_OK, "a writable window over a region with LOCAL_WRITE" },
    { B_WRITABLE_NO_LW, "a writable window over a region without LOCAL_WRITE" },
    { B_OTHER_INDEX, "a new key with another index" },
    { B_BOUND, "a window bound already" },
    { B_STALE_MW_RKEY, "mw->rkey not set after the last bind" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
  {
    BindCase c = cases[i].c;
    gboolean ok = c == B_OK || c == B_WRITABLE_OK;
    int region_access = LENDER_ACCESS;
    unsigned int access = IBV_ACCESS_REMOTE_READ;
    struct ibv_pd *other_pd = NULL;
    struct ibv_mr *mr, *other_mr = NULL;
    struct ibv_mw *mw;
    guint64 addr, len = WIN_LEN;
    guint32 key;
    struct ibv_wc wc;
    Link l;

    g_test_message ("%s", cases[i].what);
    if (c == B_NO_MW_BIND)
      region_access = IBV_ACCESS_LOCAL_WRITE;
    else if (c == B_WRITABLE_NO_LW)
      region_access = IBV_ACCESS_MW_BIND;
    if (c == B_WRITABLE_OK || c == B_WRITABLE_NO_LW)
      access |= IBV_ACCESS_REMOTE_WRITE;
    link_open (&l, NULL, region_access);
    mr = l.mr[1];
    addr = (guintptr) l.mem[1] + WIN_OFF;
    if (c == B_REGION_OTHER_PD || c == B_WINDOW_OTHER_PD)
      other_pd = rdma_verbs->alloc_pd (l.id[1]->verbs);
    if (c == B_REGION_OTHER_PD)
      mr = other_mr = rdma_verbs->reg_mr (other_pd, l.mem[1], MEM, LENDER_ACCESS);
    mw = rdma_verbs->alloc_mw (c == B_WINDOW_OTHER_PD ? other_pd : l.pd[1], IBV_MW_TYPE_2);
    if (c == B_PAST_REGION)
    {
      addr = (guintptr) l.mem[1] + MEM - WIN_LEN + 1;
    }
    else if (c == B_BEFORE_REGION)
    {
      addr = (guintptr) l.mem[1] - 1;
    }
    else if (c == B_EMPTY)
    {
      len = 0;
    }
    else if (c == B_BOUND)
    {
      bind_window (&l, mw, access);
    }
    else if (c == B_STALE_MW_RKEY)
    {
      guint32 before = mw->rkey;

      invalidate (&l, bind_window (&l, mw, access));
      mw->rkey = before;
    }
    key = ibv_inc_rkey (mw->rkey);
    if (c == B_OTHER_INDEX)
      key ^= 0x100;
    post_recv (&l, 0, 98);
    g_assert_cmpint (post_bind (&l, mw, mr, addr, len, key, access, 1), ==, 0);
    g_assert_cmpint (post_send (&l, 1, 2), ==, 0);
    wc = wc_of (&l, 1);
    g_assert_cmpuint (wc.wr_id, ==, 1);
    g_assert_cmpint (wc.status, ==, ok ? IBV_WC_SUCCESS : IBV_WC_MW_BIND_ERR);
    wc = wc_of (&l, 1);
    g_assert_cmpuint (wc.wr_id, ==, 2);
    g_assert_cmpint (wc.status, ==, ok ? IBV_WC_SUCCESS : IBV_WC_WR_FLUSH_ERR);
    if (ok)
    {
      g_assert_cmpint (wc_of (&l, 0).status, ==, IBV_WC_SUCCESS);
      mw->rkey = key;
      read_window (&l, key);
    }
    else
    {
      no_wc (&l, 0);
    }
    g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
    if (other_mr != NULL)
      g_assert_cmpint (rdma_verbs->dereg_mr (other_mr), ==, 0);
    link_close (&l);
    if (other_pd != NULL)
      g_assert_cmpint (rdma_verbs->dealloc_pd (other_pd), ==, 0);
    fake_verbs_assert_clean ();
  }
}

typedef enum
{
  I_OK,          /* a bound window of the QP's PD */
  I_FREE,        /* a window never bound */
  I_TWICE,       /* invalidated already */
  I_REGION_RKEY, /* a region's rkey (reg_mr regions are not invalidated) */
  I_UNKNOWN,     /* a key nothing has */
  I_OTHER_PD,    /* a bound window of another PD (posted on the borrower's QP) */
} InvCase;

/* LOCAL_INV frees a bound window of its QP's PD; anything else fails it
 * (IBV_WC_LOC_QP_OP_ERR, the QP failing). */
static void
test_invalidate_rules (void)
{
  static const struct
  {
    InvCase c;
    const gchar *what;
  } cases[] = {
    { I_OK, "a bound window" },
    { I_FREE, "a window never bound" },
    { I_TWICE, "a window invalidated already" },
    { I_REGION_RKEY, "a region's rkey" },
    { I_UNKNOWN, "a key nothing has" },
    { I_OTHER_PD, "a window of another PD" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
  {
    InvCase c = cases[i].c;
    guint side = c == I_OTHER_PD ? 0 : 1;
    struct ibv_mw *mw;
    guint32 key;
    struct ibv_wc wc;
    Link l;

    g_test_message ("%s", cases[i].what);
    link_open (&l, NULL, LENDER_ACCESS);
    mw = rdma_verbs->alloc_mw (l.pd[1], IBV_MW_TYPE_2);
    key = c == I_FREE ? mw->rkey : bind_window (&l, mw, IBV_ACCESS_REMOTE_READ);
    if (c == I_TWICE)
      invalidate (&l, key);
    else if (c == I_REGION_RKEY)
      key = l.mr[1]->rkey;
    else if (c == I_UNKNOWN)
      key = 0xfffffff0u;
    post_recv (&l, side, 99);
    g_assert_cmpint (post_inv (&l, side, key, 1), ==, 0);
    wc = wc_of (&l, side);
    g_assert_cmpuint (wc.wr_id, ==, 1);
    if (c == I_OK)
    {
      g_assert_cmpint (wc.status, ==, IBV_WC_SUCCESS);
      g_assert_cmpint (wc.opcode, ==, IBV_WC_LOCAL_INV);
      /* free again: it binds anew */
      bind_window (&l, mw, IBV_ACCESS_REMOTE_READ);
    }
    else
    {
      g_assert_cmpint (wc.status, ==, IBV_WC_LOC_QP_OP_ERR);
      wc = wc_of (&l, side);
      g_assert_cmpuint (wc.wr_id, ==, 99);
      g_assert_cmpint (wc.status, ==, IBV_WC_WR_FLUSH_ERR);
    }
    g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
    link_close (&l);
    fake_verbs_assert_clean ();
  }
}

/* A bind takes effect in its turn in the send queue, not at its post: a READ that runs
 * before it fails; one that runs after it (and before a SEND posted after the bind) reads;
 * the lender's completions come in post order. */
static void
test_order (void)
{
  struct ibv_mw *mw;
  guint32 key;
  struct ibv_wc wc;
  Link l;

  /* the READ runs before the bind */
  fake_verbs_set_timing (FAKE_MANUAL, 1);
  link_open (&l, NULL, LENDER_ACCESS);
  mw = rdma_verbs->alloc_mw (l.pd[1], IBV_MW_TYPE_2);
  key = post_window (&l, mw, IBV_ACCESS_REMOTE_READ);
  g_assert_cmpint (
      post_rdma (&l, IBV_WR_RDMA_READ, 0, (guintptr) l.mem[1] + WIN_OFF, WIN_LEN, key, 1), ==, 0);
  g_assert_true (fake_verbs_execute (l.id[0]));
  g_assert_cmpint (wc_of (&l, 0).status, ==, IBV_WC_REM_ACCESS_ERR);
  g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
  link_close (&l);
  fake_verbs_set_timing (FAKE_IMMEDIATE, 0);
  fake_verbs_assert_clean ();

  /* bind, SEND: the READ runs between them */
  fake_verbs_set_timing (FAKE_MANUAL, 1);
  link_open (&l, NULL, LENDER_ACCESS);
  mw = rdma_verbs->alloc_mw (l.pd[1], IBV_MW_TYPE_2);
  post_recv (&l, 0, 98);
  key = post_window (&l, mw, IBV_ACCESS_REMOTE_READ);
  g_assert_cmpint (post_send (&l, 1, 2), ==, 0);
  g_assert_true (fake_verbs_execute (l.id[1]));
  no_wc (&l, 0);
  g_assert_cmpint (
      post_rdma (&l, IBV_WR_RDMA_READ, 0, (guintptr) l.mem[1] + WIN_OFF, WIN_LEN, key, 1), ==, 0);
  g_assert_true (fake_verbs_execute (l.id[0]));
  g_assert_true (fake_verbs_complete (l.id[0]));
  g_assert_cmpint (wc_of (&l, 0).status, ==, IBV_WC_SUCCESS);
  g_assert_true (memcmp (l.mem[0], l.mem[1] + WIN_OFF, WIN_LEN) == 0);
  g_assert_true (fake_verbs_execute (l.id[1]));
  wc = wc_of (&l, 0);
  g_assert_cmpint (wc.opcode, ==, IBV_WC_RECV);
  g_assert_cmpuint (wc.wr_id, ==, 98);
  no_wc (&l, 1);
  g_assert_true (fake_verbs_complete (l.id[1]));
  g_assert_true (fake_verbs_complete (l.id[1]));
  wc = wc_of (&l, 1);
  g_assert_cmpint (wc.opcode, ==, IBV_WC_BIND_MW);
  g_assert_cmpuint (wc.wr_id, ==, 50);
  wc = wc_of (&l, 1);
  g_assert_cmpint (wc.opcode, ==, IBV_WC_SEND);
  g_assert_cmpuint (wc.wr_id, ==, 2);
  g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
  link_close (&l);
  fake_verbs_set_timing (FAKE_IMMEDIATE, 0);
  fake_verbs_assert_clean ();
}

/* ---- deregistration and teardown ---- */

typedef enum
{
  D_INVALIDATE,   /* LOCAL_INV: then the region goes */
  D_DEALLOC,      /* dealloc_mw of the bound window: then the region goes */
  D_FLUSHED,      /* the LOCAL_INV is flushed (the QP failed): the window stays bound */
  D_QP_DESTROYED, /* the QP destroyed with the window bound: it stays bound */
} DeregCase;

/* A region with a window bound is not deregistered (EINVAL, counted as misuse) until the
 * window is invalidated or deallocated; a flushed LOCAL_INV or a destroyed QP leaves it
 * bound. */
static void
test_dereg (void)
{
  static const struct
  {
    DeregCase c;
    const gchar *what;
  } cases[] = {
    { D_INVALIDATE, "invalidated" },
    { D_DEALLOC, "deallocated" },
    { D_FLUSHED, "its LOCAL_INV flushed" },
    { D_QP_DESTROYED, "its QP destroyed" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
  {
    DeregCase c = cases[i].c;
    struct ibv_mw *mw;
    guint32 key;
    Link l;

    g_test_message ("%s", cases[i].what);
    link_open (&l, NULL, LENDER_ACCESS);
    mw = rdma_verbs->alloc_mw (l.pd[1], IBV_MW_TYPE_2);
    key = bind_window (&l, mw, IBV_ACCESS_REMOTE_READ);
    g_assert_cmpint (rdma_verbs->dereg_mr (l.mr[1]), ==, EINVAL);
    take_one_misuse ("memory windows are bound");
    if (c == D_INVALIDATE)
    {
      invalidate (&l, key);
    }
    else if (c == D_DEALLOC)
    {
      g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
      mw = NULL;
    }
    else if (c == D_FLUSHED)
    {
      fake_verbs_vanish (l.id[1], FALSE);
      g_assert_cmpint (post_inv (&l, 1, key, 1), ==, 0);
      g_assert_cmpint (wc_of (&l, 1).status, ==, IBV_WC_WR_FLUSH_ERR);
    }
    else
    {
      /* (rxe would wait for the window's reference to the QP, and warn) */
      rdma_verbs->destroy_qp (l.id[1]);
      take_one_misuse ("QP destroyed while 1 type-2 memory windows are bound");
    }
    if (c == D_FLUSHED || c == D_QP_DESTROYED)
    {
      g_assert_cmpint (rdma_verbs->dereg_mr (l.mr[1]), ==, EINVAL);
      take_one_misuse ("memory windows are bound");
      g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
      mw = NULL;
    }
    g_assert_cmpint (rdma_verbs->dereg_mr (l.mr[1]), ==, 0);
    l.mr[1] = NULL;
    if (mw != NULL)
      g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
    link_close (&l);
    fake_verbs_assert_clean ();
  }
}

/* ---- pieces ---- */

#define PIECE 512

/* How many bytes of the window have landed at side 0: a prefix, and nothing after it. */
static guint64
landed (Link *l)
{
  guint64 n = 0;

  while (n < WIN_LEN && l->mem[0][n] == l->mem[1][WIN_OFF + n])
    n++;
  for (guint64 j = n; j < WIN_LEN; j++)
    if (l->mem[0][j] != 0)
      g_error ("byte %" G_GUINT64_FORMAT " of the READ landed before byte %" G_GUINT64_FORMAT, j,
               n);
  return n;
}

typedef enum
{
  P_NOTHING,    /* the READ goes piece by piece to its end */
  P_INVALIDATE, /* LOCAL_INV after its first piece */
  P_DEALLOC,    /* dealloc_mw after its first piece */
} PieceCase;

/* FAKE_MANUAL: the window is checked before each piece of a READ: invalidated or deallocated
 * after the first piece, the next one fails the READ with the first piece's bytes placed and
 * nothing more. */
static void
test_pieces (void)
{
  static const struct
  {
    PieceCase c;
    const gchar *what;
  } cases[] = {
    { P_NOTHING, "to its end" },
    { P_INVALIDATE, "invalidated after a piece" },
    { P_DEALLOC, "deallocated after a piece" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
  {
    PieceCase c = cases[i].c;
    struct ibv_mw *mw;
    guint32 key;
    struct ibv_wc wc;
    Link l;

    g_test_message ("%s", cases[i].what);
    fake_verbs_set_timing (FAKE_MANUAL, 1);
    link_open (&l, NULL, LENDER_ACCESS);
    mw = rdma_verbs->alloc_mw (l.pd[1], IBV_MW_TYPE_2);
    key = post_window (&l, mw, IBV_ACCESS_REMOTE_READ);
    g_assert_true (fake_verbs_execute (l.id[1]));
    g_assert_true (fake_verbs_complete (l.id[1]));
    g_assert_cmpint (wc_of (&l, 1).status, ==, IBV_WC_SUCCESS);
    mw->rkey = key;

    g_assert_cmpint (
        post_rdma (&l, IBV_WR_RDMA_READ, 0, (guintptr) l.mem[1] + WIN_OFF, WIN_LEN, key, 1), ==, 0);
    g_assert_true (fake_verbs_piece (l.id[0], PIECE));
    g_assert_cmpuint (landed (&l), ==, PIECE);
    if (c == P_INVALIDATE)
    {
      g_assert_cmpint (post_inv (&l, 1, key, 2), ==, 0);
      g_assert_true (fake_verbs_execute (l.id[1]));
    }
    else if (c == P_DEALLOC)
    {
      g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
      mw = NULL;
    }
    if (c == P_NOTHING)
    {
      for (guint64 want = 2 * PIECE; want <= WIN_LEN; want += PIECE)
      {
        g_assert_true (fake_verbs_piece (l.id[0], PIECE));
        g_assert_cmpuint (landed (&l), ==, want);
      }
      g_assert_false (fake_verbs_execute (l.id[0])); /* executed with its last piece */
      g_assert_true (fake_verbs_complete (l.id[0]));
      g_assert_cmpint (wc_of (&l, 0).status, ==, IBV_WC_SUCCESS);
    }
    else
    {
      g_assert_true (fake_verbs_piece (l.id[0], PIECE));
      wc = wc_of (&l, 0);
      g_assert_cmpuint (wc.wr_id, ==, 1);
      g_assert_cmpint (wc.status, ==, IBV_WC_REM_ACCESS_ERR);
      g_assert_cmpuint (landed (&l), ==, PIECE);
    }
    if (mw != NULL)
      g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
    link_close (&l);
    fake_verbs_set_timing (FAKE_IMMEDIATE, 0);
    fake_verbs_assert_clean ();
  }
}

/* A retransmission as soft-RoCE makes one (fake_verbs_retransmit): a bind that executed
 * behind a SEND still waiting for its ACK is run again and fails (IBV_WC_MW_BIND_ERR after
 * the SEND's completion, the QP failed), as in rxe, and IBV_SEND_FENCE does not prevent it:
 * rxe's fence waits for earlier READs and atomics only (rxe_wqe_is_fenced, Linux 6.1), so
 * the bind starts behind the SEND all the same.  Only waiting for the SEND's completion
 * before posting the bind does (rdma_bulk.c). */
static void
test_retransmit (void)
{
  for (guint fenced = 0; fenced < 2; fenced++)
  {
    struct ibv_mw *mw;
    guint32 key;
    struct ibv_wc wc;
    FakeStats f;
    Link l;
    struct ibv_send_wr *bad = NULL, wr = {
      .wr_id = 50,
      .opcode = IBV_WR_BIND_MW,
      .send_flags = IBV_SEND_SIGNALED | (fenced ? IBV_SEND_FENCE : 0),
    };

    g_test_message ("%s", fenced ? "fenced" : "not fenced");
    fake_verbs_set_timing (FAKE_MANUAL, 1);
    link_open (&l, NULL, LENDER_ACCESS);
    mw = rdma_verbs->alloc_mw (l.pd[1], IBV_MW_TYPE_2);
    key = ibv_inc_rkey (mw->rkey);
    wr.bind_mw.mw = mw;
    wr.bind_mw.rkey = key;
    wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
      .mr = l.mr[1],
      .addr = (guintptr) l.mem[1] + WIN_OFF,
      .length = WIN_LEN,
      .mw_access_flags = IBV_ACCESS_REMOTE_READ,
    };
    post_recv (&l, 0, 98);
    g_assert_false (fake_verbs_retransmit (l.id[1])); /* nothing sent yet */
    g_assert_cmpint (post_send (&l, 1, 2), ==, 0);
    g_assert_cmpint (rdma_verbs->post_send (l.id[1]->qp, &wr, &bad), ==, 0);
    g_assert_true (fake_verbs_execute (l.id[1])); /* the SEND, its ACK still out */
    wc = wc_of (&l, 0);
    g_assert_cmpuint (wc.wr_id, ==, 98);
    g_assert_cmpint (wc.status, ==, IBV_WC_SUCCESS);
    g_assert_true (fake_verbs_execute (l.id[1])); /* the bind, fenced or not */
    g_assert_true (fake_verbs_retransmit (l.id[1]));
    fake_verbs_stats (l.id[1], &f);
    g_assert_cmpuint (f.retransmissions, ==, 1);
    g_assert_cmpuint (f.replays, ==, 1);
    wc = wc_of (&l, 1);
    g_assert_cmpuint (wc.wr_id, ==, 2);
    g_assert_cmpint (wc.status, ==, IBV_WC_SUCCESS);
    wc = wc_of (&l, 1);
    g_assert_cmpuint (wc.wr_id, ==, 50);
    g_assert_cmpint (wc.status, ==, IBV_WC_MW_BIND_ERR);
    /* the QP failed: what comes after is flushed */
    g_assert_cmpint (post_send (&l, 1, 3), ==, 0);
    wc = wc_of (&l, 1);
    g_assert_cmpuint (wc.wr_id, ==, 3);
    g_assert_cmpint (wc.status, ==, IBV_WC_WR_FLUSH_ERR);
    g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
    link_close (&l);
    fake_verbs_set_timing (FAKE_IMMEDIATE, 0);
    fake_verbs_assert_clean ();
  }
}

/* The fence does not cover what comes after: a bind executed at the head and not yet
 * retired is run again by a retransmission for a SEND posted after it, and fails. */
static void
test_retransmit_after (void)
{
  struct ibv_mw *mw;
  struct ibv_wc wc;
  FakeStats f;
  Link l;

  fake_verbs_set_timing (FAKE_MANUAL, 1);
  link_open (&l, NULL, LENDER_ACCESS);
  mw = rdma_verbs->alloc_mw (l.pd[1], IBV_MW_TYPE_2);
  post_recv (&l, 0, 98);
  post_window (&l, mw, IBV_ACCESS_REMOTE_READ);
  g_assert_cmpint (post_send (&l, 1, 2), ==, 0);
  g_assert_true (fake_verbs_execute (l.id[1])); /* the bind */
  g_assert_true (fake_verbs_execute (l.id[1])); /* the SEND, its ACK still out */
  g_assert_cmpuint (fake_verbs_executed (l.id[1]), ==, 2);
  g_assert_true (fake_verbs_retransmit (l.id[1]));
  fake_verbs_stats (l.id[1], &f);
  g_assert_cmpuint (f.replays, ==, 1);
  wc = wc_of (&l, 1);
  g_assert_cmpuint (wc.wr_id, ==, 50);
  g_assert_cmpint (wc.status, ==, IBV_WC_MW_BIND_ERR);
  g_assert_cmpint (wc_of (&l, 1).status, ==, IBV_WC_SUCCESS); /* the SEND had executed */
  g_assert_cmpint (wc_of (&l, 0).status, ==, IBV_WC_SUCCESS);
  g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
  link_close (&l);
  fake_verbs_set_timing (FAKE_IMMEDIATE, 0);
  fake_verbs_assert_clean ();
}

/* FAKE_DEFERRED, over DEFERRED_SEEDS seeds: the borrower's READ of the window and the
 * lender's LOCAL_INV, posted at once, run in steps the polls take.  Either the READ ran
 * whole first (all its bytes), or it failed with what its pieces before the invalidation
 * placed (a prefix, nothing after it); the LOCAL_INV always works.  Over the seeds the
 * invalidation comes between two pieces at least once. */
static void
test_deferred (void)
{
  guint whole = 0, before = 0, between = 0;

  for (guint32 seed = 1; seed <= DEFERRED_SEEDS; seed++)
  {
    struct ibv_wc rd, inv;
    struct ibv_mw *mw;
    guint64 n;
    guint32 key;
    Link l;

    fake_verbs_set_timing (FAKE_DEFERRED, seed);
    link_open (&l, NULL, LENDER_ACCESS);
    mw = rdma_verbs->alloc_mw (l.pd[1], IBV_MW_TYPE_2);
    key = post_window (&l, mw, IBV_ACCESS_REMOTE_READ);
    g_assert_cmpint (wait_wc (&l, 1).status, ==, IBV_WC_SUCCESS);
    mw->rkey = key;

    g_assert_cmpint (
        post_rdma (&l, IBV_WR_RDMA_READ, 0, (guintptr) l.mem[1] + WIN_OFF, WIN_LEN, key, 1), ==, 0);
    g_assert_cmpint (post_inv (&l, 1, key, 2), ==, 0);
    rd = wait_wc (&l, 0);
    inv = wait_wc (&l, 1);
    g_assert_cmpuint (rd.wr_id, ==, 1);
    g_assert_cmpuint (inv.wr_id, ==, 2);
    g_assert_cmpint (inv.status, ==, IBV_WC_SUCCESS);
    n = landed (&l);
    if (rd.status == IBV_WC_SUCCESS)
    {
      g_assert_cmpuint (n, ==, WIN_LEN);
      whole++;
    }
    else
    {
      g_assert_cmpint (rd.status, ==, IBV_WC_REM_ACCESS_ERR);
      g_assert_cmpuint (n, <, WIN_LEN);
      if (n > 0)
        between++;
      else
        before++;
    }
    g_assert_cmpint (rdma_verbs->dealloc_mw (mw), ==, 0);
    link_close (&l);
    fake_verbs_set_timing (FAKE_IMMEDIATE, 0);
    fake_verbs_assert_clean ();
  }
  g_test_message ("READ whole %u, refused at its start %u, cut between pieces %u", whole, before,
                  between);
  g_assert_cmpuint (between, >, 0);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  fake_verbs_install ();
  g_test_add_func ("/fake_mw/alloc", test_alloc);
  g_test_add_func ("/fake_mw/leak", test_leak);
  g_test_add_func ("/fake_mw/read", test_read);
  g_test_add_func ("/fake_mw/refused", test_refused);
  g_test_add_func ("/fake_mw/rebind", test_rebind);
  g_test_add_func ("/fake_mw/other_qp", test_other_qp);
  g_test_add_func ("/fake_mw/bind_rules", test_bind_rules);
  g_test_add_func ("/fake_mw/invalidate_rules", test_invalidate_rules);
  g_test_add_func ("/fake_mw/order", test_order);
  g_test_add_func ("/fake_mw/dereg", test_dereg);
  g_test_add_func ("/fake_mw/pieces", test_pieces);
  g_test_add_func ("/fake_mw/deferred", test_deferred);
  g_test_add_func ("/fake_mw/retransmit", test_retransmit);
  g_test_add_func ("/fake_mw/retransmit-after", test_retransmit_after);
  rc = g_test_run ();
  fake_verbs_uninstall ();
  return rc;
}
