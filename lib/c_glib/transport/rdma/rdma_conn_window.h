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
 * rdma_conn_window.h: memory windows, the one way in from the wire to this side's memory.
 * A part of the connection (rdma_conn*): it posts through the connection's send queue and
 * holds the connection's WRs back around its operations, as described below.
 *
 * A buffer a peer may READ or WRITE (a direct ring, a field lent for bulk transfer) is
 * registered for local access and IBV_ACCESS_MW_BIND only; the peer gets the key of a type-2
 * window bound over exactly its bytes on this connection's QP.  Such a window answers on that
 * QP alone, so once connections share a protection domain, the peer of another connection
 * that learns or guesses the key reaches nothing; deallocating it revokes it at once.
 *
 * Binds and invalidations go through the send queue one at a time, posted only when every WR
 * posted before has completed, and nothing is posted after one until its completion is seen:
 * soft-RoCE (rxe, Linux 6.1) runs a local operation again when a retransmission takes its
 * send queue back over it, executed but not yet retired (a type-2 window's second bind fails,
 * and so does the QP), and its fence holds a bind back only for earlier READs.  While an
 * operation waits or runs, the connection's own messages (control, credits, keepalive probes,
 * the protocols' progress) are held back (rdma_window_busy) and what the protocols post is
 * kept in order and posted after it (rdma_window_defer): the queue drains, the operation goes,
 * and no caller blocks.  So a completion handler may ask for a bind (the ring's owner
 * answering a request) and hear of it by callback.
 *
 * A device without type-2 windows (rdma_window_supported is FALSE) exposes the registration's
 * own key; its connections keep a protection domain each (rdma_domain.h).
 */
#ifndef _RDMA_CONN_WINDOW_H
#define _RDMA_CONN_WINDOW_H

#include <glib.h>
#include <infiniband/verbs.h>

#include "rdma_op.h"

G_BEGIN_DECLS

typedef struct _RdmaWindow RdmaWindow;
typedef struct _RdmaWindowOp RdmaWindowOp;

/* A bind or invalidation of @w completed (rdma_window_bound says which); runs in the
 * completion handler.  FALSE with @error fails the connection. */
typedef gboolean (*RdmaWindowDone) (RdmaConn *conn, RdmaWindow *w, gpointer data, GError **error);

/* The connection's windows and the queue of their operations, with the WRs posted behind. */
typedef struct
{
  GQueue live;            /* RdmaWindow * (unowned: their owners, the ring and bulk, free
                                them), every window the connection holds */
  GQueue waiting;         /* RdmaWindowOp * (owned), in order */
  RdmaWindowOp *posted;   /* (owned) (nullable): the one in flight, or NULL */
  GQueue deferred;        /* WR lists posted while busy, in order (rdma_conn_window.c) */
  guint32 sq_deferred;    /* their send queue entries (counted in conn->sq_used) */
  guint32 retire_entries; /* unsignalled WRs at the tail of the posted ones, still to
                                be retired by an empty WRITE (a full queue had no room) */
  gint supported;         /* -1: not asked yet */
} RdmaWindows;

/* Whether the connection can expose memory through windows: its device has type-2 windows,
 * and so its protection domain is shared (rdma_domain.h). */
gboolean rdma_window_supported (RdmaConn *conn);

/* Binds *@w (made if NULL) over the @len bytes at @addr of @mr with @access
 * (IBV_ACCESS_REMOTE_READ, _WRITE), under a new key; @done (@data) runs at its completion.
 * An unbound window only: invalidate a bound one first.  Never blocks. */
gboolean rdma_window_bind (RdmaConn *conn, RdmaWindow **w, struct ibv_mr *mr, gconstpointer addr,
                           gsize len, gint access, RdmaWindowDone done, gpointer data,
                           GError **error);
/* rdma_window_bind, then waits (a caller that may: not a completion handler) until the bind
 * completed. */
gboolean rdma_window_bind_wait (RdmaConn *conn, RdmaWindow **w, struct ibv_mr *mr,
                                gconstpointer addr, gsize len, gint access, gint64 deadline_us,
                                GError **error);
/* Invalidates @w's key (a bound window); @done (@data) runs at its completion. */
gboolean rdma_window_invalidate (RdmaConn *conn, RdmaWindow *w, RdmaWindowDone done, gpointer data,
                                 GError **error);
/* Deallocates *@w and sets it to NULL: its key reaches nothing from now on, whatever is
 * queued or in flight (the operation is forgotten; its completion changes nothing).
 * Idempotent. */
void rdma_window_free (RdmaConn *conn, RdmaWindow **w);

/* The key of @w's last bind: what the peer is given. */
guint32 rdma_window_rkey (const RdmaWindow *w);
/* @w (NULL: none) is bound: its bind completed and no invalidation since. */
gboolean rdma_window_bound (const RdmaWindow *w);
/* @w (NULL: none) has an operation queued or in flight. */
gboolean rdma_window_pending (const RdmaWindow *w);

/* TRUE while a window operation waits or is in flight: the connection holds back its own
 * control and credit messages, keepalive probes and the protocols' progress. */
gboolean rdma_window_busy (RdmaConn *conn);
/* For rdma_conn_post_wr: @wr (accounted already) is kept, in order, to be posted after the
 * window operations, if any waits or runs.  FALSE: post it now. */
gboolean rdma_window_defer (RdmaConn *conn, const struct ibv_send_wr *wr, const gchar *what);
/* The engine, after each completion: posts the next operation once the send queue has
 * drained.  FALSE with @error if a post failed (the connection has failed). */
gboolean rdma_window_kick (RdmaConn *conn, GError **error);
/* Deallocates every window of the connection (their owners still free them): before its QP
 * goes, which a type-2 window bound to it would otherwise hold (rxe waits for the QP's
 * references to drop, and warns). */
void rdma_window_revoke_all (RdmaConn *conn);
/* Frees what is queued (the connection is being freed, its QP is gone). */
void rdma_window_clear (RdmaConn *conn);

G_END_DECLS

#endif
