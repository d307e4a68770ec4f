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

/* rdma_conn_window.c: memory windows, their operations in order (see rdma_conn_window.h). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "rdma_conn_private.h"
#include "rdma_conn_window.h"
#include "rdma_domain.h"
#include "rdma_status.h"
#include "rdma_verbs.h"

struct _RdmaWindow
{
  struct ibv_mw *mw; /* (owned) (nullable): NULL once revoked */
  guint32 rkey;      /* the key of the last bind: what the peer is given */
  gboolean bound;    /* that bind completed and no invalidation since */
  RdmaWindowOp *op;  /* its operation queued or in flight, or NULL */
  GList link;        /* in the connection's live windows */
};

struct _RdmaWindowOp
{
  RdmaWindow *window; /* NULL once the window was freed */
  struct ibv_send_wr wr;
  const gchar *what;
  RdmaWindowDone done;
  gpointer data;
};

/* A list of WRs kept while busy, with their scatter lists, in one allocation. */
typedef struct
{
  struct ibv_send_wr *wr;
  const gchar *what;
  guint32 entries;
} Deferred;

gboolean
rdma_window_supported (RdmaConn *conn)
{
  RdmaWindows *ws = &conn->windows;

  /* a device's domain is shared exactly when it has type-2 windows (rdma_domain.h) */
  if (ws->supported < 0)
    ws->supported = conn->pd != NULL && rdma_domain_shared (conn->pd);
  return ws->supported;
}

gboolean
rdma_window_busy (RdmaConn *conn)
{
  return conn->windows.posted != NULL || !g_queue_is_empty (&conn->windows.waiting);
}

gboolean
rdma_window_defer (RdmaConn *conn, const struct ibv_send_wr *wr, const gchar *what)
{
  RdmaWindows *ws = &conn->windows;
  guint n_wr = 0, n_sge = 0;
  struct ibv_send_wr *copy;
  struct ibv_sge *sge;
  Deferred *d;

  if (!rdma_window_busy (conn))
    return FALSE;
  for (const struct ibv_send_wr *w = wr; w != NULL; w = w->next)
  {
    g_return_val_if_fail (!(w->send_flags & IBV_SEND_INLINE), FALSE);
    n_wr++;
    n_sge += (guint) w->num_sge;
  }
  d = g_malloc (sizeof *d + n_wr * sizeof *copy + n_sge * sizeof *sge);
  copy = (struct ibv_send_wr *) (d + 1);
  sge = (struct ibv_sge *) (copy + n_wr);
  d->wr = copy;
  d->what = what;
  d->entries = n_wr;
  for (const struct ibv_send_wr *w = wr; w != NULL; w = w->next, copy++)
  {
    *copy = *w;
    copy->next = w->next != NULL ? copy + 1 : NULL;
    if (w->num_sge > 0)
    {
      memcpy (sge, w->sg_list, (gsize) w->num_sge * sizeof *sge);
      copy->sg_list = sge;
      sge += w->num_sge;
    }
  }
  g_queue_push_tail (&ws->deferred, d);
  ws->sq_deferred += n_wr;
  return TRUE;
}

/* Posts what was kept while busy, in order. */
static gboolean
flush_deferred (RdmaConn *conn, GError **error)
{
  RdmaWindows *ws = &conn->windows;
  Deferred *d;
  gboolean ok = TRUE;

  while (ok && (d = g_queue_pop_head (&ws->deferred)) != NULL)
  {
    ws->sq_deferred -= d->entries;
    ok = rdma_conn_post_wr_accounted (conn, d->wr, d->what, error);
    g_free (d);
  }
  return ok;
}

static gboolean
op_done (RdmaConn *conn, RdmaOp *op, const struct ibv_wc *wc, GError **error)
{
  RdmaWindows *ws = &conn->windows;
  RdmaWindowOp *wop = op->data;
  RdmaWindow *w = wop->window;
  RdmaWindowDone done = wop->done;
  gpointer data = wop->data;

  g_assert (ws->posted == wop);
  ws->posted = NULL;
  if (w != NULL)
  {
    w->op = NULL;
    w->bound = wop->wr.opcode == IBV_WR_BIND_MW;
  }
  g_free (wop);
  if (g_queue_is_empty (&ws->waiting) && !flush_deferred (conn, error))
    return FALSE;
  if (w != NULL && done != NULL && !done (conn, w, data, error))
    return FALSE;
  /* the next operation, or what the connection held back meanwhile */
  return rdma_window_kick (conn, error) && rdma_conn_return_credits (conn, error);
}

gboolean
rdma_window_kick (RdmaConn *conn, GError **error)
{
  RdmaWindows *ws = &conn->windows;
  RdmaWindowOp *wop;
  RdmaOp *op;

  if (ws->posted != NULL || g_queue_is_empty (&ws->waiting) || conn->state != RDMA_CONN_CONNECTED)
    return TRUE;
  if (ws->retire_entries > 0)
  {
    struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };
    guint32 entries = ws->retire_entries + 1;

    if (conn->sq_used - ws->sq_deferred >= conn->sq_depth)
      return TRUE;
    ws->retire_entries = 0;
    wr.wr_id = rdma_op_wr_id (rdma_conn_op_get (conn, RDMA_OP_WRITE, RDMA_WIRE_PROTO_ENGINE));
    return rdma_conn_post_wr_alone (conn, &wr, entries,
                                    "RDMA WRITE (zero bytes, retiring unsignalled WRs)", error);
  }
  /* every WR posted before has completed */
  if (conn->sq_used > ws->sq_deferred)
    return TRUE;
  wop = g_queue_pop_head (&ws->waiting);
  op = rdma_conn_op_get (conn, RDMA_OP_WINDOW, RDMA_WIRE_PROTO_ENGINE);
  op->done = op_done;
  op->data = wop;
  wop->wr.wr_id = rdma_op_wr_id (op);
  /* the fence keeps IBA's order for this side's earlier READs on any device */
  wop->wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
  ws->posted = wop;
  if (!rdma_conn_post_wr_alone (conn, &wop->wr, 1, wop->what, error))
    return FALSE;
  /* the device found the window by the key it held; from now on it has the new one */
  if (wop->wr.opcode == IBV_WR_BIND_MW)
    wop->wr.bind_mw.mw->rkey = wop->wr.bind_mw.rkey;
  return TRUE;
}

/* Queues @wop; the first of a quiet queue first retires the unsignalled WRs at the tail of
 * the send queue (only a signalled completion does), so that the queue can drain. */
static gboolean
enqueue (RdmaConn *conn, RdmaWindowOp *wop, GError **error)
{
  RdmaWindows *ws = &conn->windows;

  if (!rdma_conn_check_usable (conn, error))
  {
    g_free (wop);
    return FALSE;
  }
  if (!rdma_window_busy (conn) && conn->sq_unsignalled > 0)
  {
    if (conn->sq_used < conn->sq_depth)
    {
      if (!rdma_conn_retire_unsignalled (conn, 0, error))
      {
        g_free (wop);
        return FALSE;
      }
    }
    else
    {
      /* no room: rdma_window_kick posts it; what is deferred meanwhile counts anew */
      ws->retire_entries = conn->sq_unsignalled;
      conn->sq_unsignalled = 0;
    }
  }
  wop->window->op = wop;
  g_queue_push_tail (&ws->waiting, wop);
  return rdma_window_kick (conn, error);
}

static RdmaWindow *
window_get (RdmaConn *conn, RdmaWindow **wp, GError **error)
{
  RdmaWindow *w = *wp;

  if (w == NULL)
  {
    w = g_new0 (RdmaWindow, 1);
    w->link.data = w;
    g_queue_push_tail_link (&conn->windows.live, &w->link);
    *wp = w;
  }
  if (w->mw != NULL)
    return w;
  errno = 0;
  w->mw = rdma_verbs->alloc_mw (conn->pd, IBV_MW_TYPE_2);
  if (w->mw == NULL)
  {
    int err = errno ? errno : ENOSYS;
    rdma_status_set_error (error, rdma_status_from_errno (err), "ibv_alloc_mw", err, -1,
                           "a type-2 memory window");
    return NULL;
  }
  w->rkey = w->mw->rkey;
  return w;
}

gboolean
rdma_window_bind (RdmaConn *conn, RdmaWindow **wp, struct ibv_mr *mr, gconstpointer addr, gsize len,
                  gint access, RdmaWindowDone done, gpointer data, GError **error)
{
  RdmaWindowOp *wop;
  RdmaWindow *w;

  g_return_val_if_fail (!rdma_window_bound (*wp) && !rdma_window_pending (*wp) && len > 0, FALSE);
  w = window_get (conn, wp, error);
  if (w == NULL)
    return FALSE;
  /* a new key for every bind: one the peer kept from an earlier bind reaches nothing
   * (for type-2 windows the consumer picks it; rdma_window_kick sets w->mw->rkey) */
  w->rkey = ibv_inc_rkey (w->rkey);
  wop = g_new0 (RdmaWindowOp, 1);
  *wop = (RdmaWindowOp) {
    .window = w,
    .wr = {
      .opcode = IBV_WR_BIND_MW,
      .bind_mw = {
        .mw = w->mw,
        .rkey = w->rkey,
        .bind_info = {
          .mr = mr,
          .addr = (uintptr_t) addr,
          .length = len,
          .mw_access_flags = (unsigned int) access,
        },
      },
    },
    .what = "BIND_MW",
    .done = done,
    .data = data,
  };
  return enqueue (conn, wop, error);
}

static gboolean
settled (RdmaConn *conn, gpointer data)
{
  return ((RdmaWindow *) data)->op == NULL;
}

gboolean
rdma_window_bind_wait (RdmaConn *conn, RdmaWindow **w, struct ibv_mr *mr, gconstpointer addr,
                       gsize len, gint access, gint64 deadline_us, GError **error)
{
  return rdma_window_bind (conn, w, mr, addr, len, access, NULL, NULL, error)
         && rdma_conn_wait_for (conn, settled, *w, deadline_us, error);
}

gboolean
rdma_window_invalidate (RdmaConn *conn, RdmaWindow *w, RdmaWindowDone done, gpointer data,
                        GError **error)
{
  RdmaWindowOp *wop;

  g_return_val_if_fail (w->mw != NULL && w->op == NULL, FALSE);
  wop = g_new0 (RdmaWindowOp, 1);
  *wop = (RdmaWindowOp){
    .window = w,
    .wr = { .opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = w->rkey },
    .what = "LOCAL_INV",
    .done = done,
    .data = data,
  };
  return enqueue (conn, wop, error);
}

guint32
rdma_window_rkey (const RdmaWindow *w)
{
  return w->rkey;
}

gboolean
rdma_window_bound (const RdmaWindow *w)
{
  return w != NULL && w->bound;
}

gboolean
rdma_window_pending (const RdmaWindow *w)
{
  return w != NULL && w->op != NULL;
}

/* Deallocates @w's window: revoked at once; its operation is forgotten. */
static void
revoke (RdmaConn *conn, RdmaWindow *w)
{
  RdmaWindows *ws = &conn->windows;

  if (w->op != NULL)
  {
    if (w->op == ws->posted)
    {
      w->op->window = NULL;
    }
    else
    {
      g_queue_remove (&ws->waiting, w->op);
      g_free (w->op);
    }
    w->op = NULL;
    /* what was kept behind it goes now */
    if (!rdma_window_busy (conn) && conn->state == RDMA_CONN_CONNECTED)
      flush_deferred (conn, NULL);
  }
  if (w->mw != NULL && rdma_verbs->dealloc_mw (w->mw) != 0)
    g_warning ("ibv_dealloc_mw: %s", g_strerror (errno));
  w->mw = NULL;
  w->bound = FALSE;
}

void
rdma_window_free (RdmaConn *conn, RdmaWindow **wp)
{
  RdmaWindow *w = *wp;

  if (w == NULL)
    return;
  revoke (conn, w);
  g_queue_unlink (&conn->windows.live, &w->link);
  g_free (w);
  *wp = NULL;
}

void
rdma_window_revoke_all (RdmaConn *conn)
{
  /* the connection closes: what was kept behind an operation is not posted any more */
  g_queue_clear_full (&conn->windows.deferred, g_free);
  conn->windows.sq_deferred = 0;
  for (GList *l = conn->windows.live.head; l != NULL; l = l->next)
    revoke (conn, l->data);
}

void
rdma_window_clear (RdmaConn *conn)
{
  RdmaWindows *ws = &conn->windows;
  RdmaWindowOp *wop;

  while ((wop = g_queue_pop_head (&ws->waiting)) != NULL)
  {
    if (wop->window != NULL)
      wop->window->op = NULL;
    g_free (wop);
  }
  if (ws->posted != NULL)
  {
    if (ws->posted->window != NULL)
      ws->posted->window->op = NULL;
    g_free (ws->posted);
    ws->posted = NULL;
  }
  g_queue_clear_full (&ws->deferred, g_free);
  ws->sq_deferred = 0;
  ws->retire_entries = 0;
  /* (their owners freed them all before; a window left over is freed with its key) */
  while (ws->live.head != NULL)
  {
    RdmaWindow *w = ws->live.head->data;
    rdma_window_free (conn, &w);
  }
}
