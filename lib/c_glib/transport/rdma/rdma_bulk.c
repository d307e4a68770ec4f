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

/* rdma_bulk.c: lending and pulling large fields (see rdma_bulk.h). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "rdma_bulk.h"
#include "rdma_bulk_stage.h"
#include "rdma_conn_private.h"
#include "rdma_rcache.h"
#include "rdma_domain.h"
#include "rdma_helper.h"
#include "rdma_status.h"
#include "rdma_verbs.h"
#include "rdma_conn_window.h"

#define RDMA_BULK_PAGE 4096u

struct _RdmaBulk
{
  RdmaRcache *cache; /* (owned) if @own_cache, else (unowned): the
                                                  device's (rdma_domain_rcache), or its own
                                                  when the domain is not shared */
  gboolean own_cache;
  RdmaLendCost *lend_cost;  /* (unowned) (nullable): the device's
                                                  (rdma_domain_lend_cost) */
  RdmaLendCost *stage_cost; /* (unowned) (nullable): the same, for staging */
  RdmaRcacheStats tally;    /* this connection's hits and misses */
  RdmaRcacheStats seen;     /* counters already in conn->stats */

  /* lending: the message being written or waiting for its DONE */
  RdmaWindow *win[RDMA_BULK_MAX_FIELDS];       /* (owned) (nullable): made on first use,
                                                  rebound per loan */
  RdmaRcacheEntry *lent[RDMA_BULK_MAX_FIELDS]; /* (owned) (nullable): a hold on @cache's
                                                  entry while lent (may cover more) */
  gsize lent_len[RDMA_BULK_MAX_FIELDS];        /* the fields' own lengths */
  guint n_lent;
  guint32 tx_seq;
  gboolean returned; /* its DONE arrived */

  /* staging: a server's reply fields, lent from a copy (rdma_bulk_stage.h) */
  RdmaBulkStage stage;

  /* pulling */
  guint reads;        /* READs in flight */
  GPtrArray *reading; /* (owned): the entries they hold, a hold on
                                                  each (rdma_rcache_release) */
};

static RdmaBulk *
bulk_get (RdmaConn *conn)
{
  if (conn->bulk == NULL)
  {
    RdmaBulk *b = g_new0 (RdmaBulk, 1);
    b->reading = g_ptr_array_new ();
    /* one cache per device for the process: its bounds hold for all the connections */
    b->cache = rdma_domain_rcache (conn->pd, conn->settings.rcache_entries,
                                   conn->settings.rcache_bytes);
    b->own_cache = b->cache == NULL;
    b->lend_cost = rdma_domain_lend_cost (conn->pd, FALSE);
    b->stage_cost = rdma_domain_lend_cost (conn->pd, TRUE);
    if (b->own_cache)
      b->cache = rdma_rcache_new (conn->pd, conn->settings.rcache_entries,
                                  conn->settings.rcache_bytes);
    conn->bulk = b;
  }
  return conn->bulk;
}

gboolean
rdma_bulk_can_lend (RdmaConn *conn)
{
  bulk_get (conn);
  return rdma_window_supported (conn);
}

RdmaLendCost *
rdma_bulk_lend_cost (RdmaConn *conn, gboolean staged)
{
  RdmaBulk *b = bulk_get (conn);

  return staged ? b->stage_cost : b->lend_cost;
}

RdmaBulkStage *
rdma_bulk_stage_of (RdmaConn *conn)
{
  return &bulk_get (conn)->stage;
}

void
rdma_bulk_stage_sent (RdmaConn *conn, gboolean sent)
{
  RdmaBulk *b = bulk_get (conn);

  rdma_bulk_stage_finish (conn, &b->stage, sent, b->tx_seq);
  if (sent)
    b->tx_seq++;
}

/* What a registration of ours allows: a region read into may be lent later (an echo lends
 * what it was sent), so with windows at hand both uses share one entry.  MW_BIND gives no
 * remote access by itself. */
static int
bulk_access (RdmaConn *conn, int need)
{
  return need | (rdma_window_supported (conn) ? IBV_ACCESS_MW_BIND | IBV_ACCESS_LOCAL_WRITE : 0);
}

guint32
rdma_bulk_seq (RdmaConn *conn)
{
  return bulk_get (conn)->tx_seq;
}

/* The windows of the fields lent are all invalidated. */
static gboolean
windows_invalidated (RdmaConn *conn, gpointer data)
{
  RdmaBulk *b = conn->bulk;

  for (guint i = 0; i < b->n_lent; i++)
    if (rdma_window_pending (b->win[i]) || rdma_window_bound (b->win[i]))
      return FALSE;
  return TRUE;
}

gboolean
rdma_bulk_lend (RdmaConn *conn, gconstpointer ptr, gsize len, RdmaBulkDesc *desc,
                gint64 deadline_us, GError **error)
{
  RdmaBulk *b = bulk_get (conn);
  guint i = b->n_lent;
  RdmaRcacheEntry *entry;

  g_return_val_if_fail (i < RDMA_BULK_MAX_FIELDS && len > 0 && len <= G_MAXUINT32, FALSE);
  if (!rdma_window_supported (conn))
  {
    rdma_status_set_error (error, RDMA_ERR_SYSTEM, "ibv_alloc_mw", 0, -1,
                           "the device has no type-2 memory windows to lend fields with");
    return FALSE;
  }
  /* local access only: the window below is the one way in from the wire */
  entry = rdma_rcache_acquire_for (b->cache, ptr, len, bulk_access (conn, IBV_ACCESS_MW_BIND),
                                   &b->tally, error);
  if (entry == NULL)
    return FALSE;
  b->lent[i] = entry;
  b->lent_len[i] = len;
  b->n_lent++;
  /* bound before the message goes (rdma_conn_window.h) */
  if (!rdma_window_bind_wait (conn, &b->win[i], entry->mr, ptr, len, IBV_ACCESS_REMOTE_READ,
                              deadline_us, error))
    return FALSE;
  *desc = (RdmaBulkDesc){ .len = (guint32) len,
                          .addr = (guint64) (uintptr_t) ptr,
                          .rkey = rdma_window_rkey (b->win[i]) };
  return TRUE;
}

static gboolean
returned (RdmaConn *conn, gpointer data)
{
  return conn->bulk->returned;
}

static void
release_lent (RdmaConn *conn)
{
  RdmaBulk *b = conn->bulk;

  for (guint i = 0; i < b->n_lent; i++)
  {
    conn->stats.bulk_sent += b->lent_len[i];
    rdma_rcache_release (b->cache, b->lent[i]);
    b->lent[i] = NULL;
  }
  b->n_lent = 0;
  b->returned = FALSE;
  b->tx_seq++;
}

gboolean
rdma_bulk_settle (RdmaConn *conn, gint64 deadline_us, GError **error)
{
  RdmaBulk *b = conn->bulk;
  GError *e = NULL;
  gboolean ok = TRUE;

  if (b == NULL || b->n_lent == 0)
    return TRUE;
  if (!rdma_conn_wait_for (conn, returned, NULL, deadline_us, error))
  {
    rdma_bulk_abandon (conn);
    return FALSE;
  }
  /* The reader has every byte (its DONE came): what follows only takes the keys back.  A
   * connection that fails meanwhile (the reader may close right after its DONE) takes them
   * back too, when the windows are deallocated: the call succeeded all the same, and the
   * connection says it failed at its next operation. */
  for (guint i = 0; i < b->n_lent && ok; i++)
    ok = rdma_window_invalidate (conn, b->win[i], NULL, NULL, &e);
  /* the registrations go back only once no key reaches them */
  if (ok && rdma_conn_wait_for (conn, windows_invalidated, NULL, deadline_us, &e))
  {
    release_lent (conn);
    return TRUE;
  }
  g_debug ("ThriftRdma: the lent fields' windows are deallocated instead of invalidated: %s",
           e->message);
  g_error_free (e);
  rdma_bulk_abandon (conn);
  return TRUE;
}

/* Deallocates every window: that revokes it at once, bound or not, whatever is in flight
 * (and a registration with a bound window could not be deregistered). */
static void
free_windows (RdmaConn *conn, RdmaBulk *b)
{
  for (guint i = 0; i < G_N_ELEMENTS (b->win); i++)
    rdma_window_free (conn, &b->win[i]);
}

void
rdma_bulk_abandon (RdmaConn *conn)
{
  RdmaBulk *b = conn->bulk;

  if (b == NULL || b->n_lent == 0)
    return;
  free_windows (conn, b);
  release_lent (conn);
}

/* ---- pulling ---- */

static gboolean
read_done (RdmaConn *conn, RdmaOp *op, const struct ibv_wc *wc, GError **error)
{
  conn->bulk->reads--;
  conn->stats.bulk_received += op->arg;
  return TRUE;
}

typedef struct
{
  guint depth;
} ReadRoom;

static gboolean
read_room (RdmaConn *conn, gpointer data)
{
  return conn->bulk->reads < ((ReadRoom *) data)->depth && conn->sq_used < conn->sq_depth;
}

static gboolean
reads_idle (RdmaConn *conn, gpointer data)
{
  return conn->bulk->reads == 0;
}

/* After a failure with READs in flight: the QP goes to the error state, so the device places
 * no more bytes in the reader's buffer once the call has returned (the buffer is then freed). */
static void
stop_reads (RdmaConn *conn)
{
  RdmaBulk *b = conn->bulk;

  if (b->reads == 0 || conn->id == NULL)
    return;
  rdma_verbs->disconnect (conn->id);
}

/* The size of registration window @k of a pipelined pull: one chunk first, so the first READ
 * waits for little, then doubling up to RDMA_BULK_WINDOW_MAX (fewer registrations, each
 * made while the READs of the one before are in flight). */
static gsize
window_size (gsize chunk, guint k)
{
  gsize w = chunk;

  while (k-- > 0 && w < RDMA_BULK_WINDOW_MAX)
    w *= 2;
  return MAX (w, chunk);
}

/* Registers the window of @dst + [@at, ...) for READs to land in; it ends on a 4 KiB boundary
 * (so the next window starts aligned, as a READ of a whole chunk then is) or at @n. */
static RdmaRcacheEntry *
window_acquire (RdmaBulk *b, guint8 *dst, gsize at, gsize n, gsize size, int access, GError **error)
{
  gsize end = at + size;

  end -= ((guintptr) (dst + end)) & (RDMA_BULK_PAGE - 1);
  if (end <= at || end > n)
    end = n;
  return rdma_rcache_acquire_for (b->cache, dst + at, end - at, access, &b->tally, error);
}

/* Releases the regions a pull holds, those from @first on in b->reading. */
static void
release_windows (RdmaBulk *b, guint first)
{
  while (b->reading->len > first)
    rdma_rcache_release (b->cache, g_ptr_array_steal_index_fast (b->reading, first));
}

gboolean
rdma_bulk_pull (RdmaConn *conn, const RdmaBulkDesc *desc, gsize off, guint8 *dst, gsize n,
                gint64 deadline_us, GError **error)
{
  RdmaBulk *b = bulk_get (conn);
  gsize chunk = MAX (conn->settings.bulk_chunk, 4096u);
  ReadRoom room = { MIN (MAX (conn->settings.bulk_depth, 1u), MAX (conn->max_rd_atomic, 1u)) };
  int access = bulk_access (conn, IBV_ACCESS_LOCAL_WRITE);
  RdmaRcacheEntry *cur; /* the window the next READ lands in */
  guint first = b->reading->len, windows = 0;
  gsize posted = 0;

  g_return_val_if_fail (off <= desc->len && n <= desc->len - off, FALSE);
  if (n == 0)
    return TRUE;
  /* A buffer registered before (cached) needs no windows; unpipelined, all of it is
   * registered before the first byte moves. */
  cur = rdma_rcache_lookup (b->cache, dst, n, access);
  if (cur != NULL)
    b->tally.hits++;
  else
    cur = room.depth == 1 || n <= chunk
              ? rdma_rcache_acquire_for (b->cache, dst, n, access, &b->tally, error)
              : window_acquire (b, dst, 0, n, window_size (chunk, windows++), access, error);
  if (cur == NULL)
    return FALSE;
  g_ptr_array_add (b->reading, cur);

  while (posted < n)
  {
    /* a cached region may reach past the field: READ only the field */
    gsize cur_end = MIN ((gsize) (cur->addr + cur->length - dst), n);
    gsize k = MIN (chunk, cur_end - posted);
    struct ibv_sge sge;
    struct ibv_send_wr wr;
    RdmaOp *op;

    if (!rdma_conn_wait_for (conn, read_room, &room, deadline_us, error))
      goto failed;
    op = rdma_conn_op_get (conn, RDMA_OP_READ, RDMA_WIRE_PROTO_ENGINE);
    op->done = read_done;
    op->arg = k;
    sge = (struct ibv_sge){ .addr = (uintptr_t) (dst + posted),
                            .length = (guint32) k,
                            .lkey = cur->lkey };
    wr = (struct ibv_send_wr){
      .wr_id = rdma_op_wr_id (op),
      .sg_list = &sge,
      .num_sge = 1,
      .opcode = IBV_WR_RDMA_READ,
      .send_flags = IBV_SEND_SIGNALED,
      .wr.rdma = { .remote_addr = desc->addr + off + posted, .rkey = desc->rkey },
    };
    if (!rdma_conn_post_wr (conn, &wr, "READ (a lent field)", error))
      goto failed;
    b->reads++;
    posted += k;
    /* the next window is registered while this one's READs are in flight */
    if (posted == cur_end && posted < n)
    {
      gsize size = window_size (chunk, windows++);
      GError *e = NULL;

      cur = window_acquire (b, dst, posted, n, size, access, &e);
      if (cur == NULL && g_error_matches (e, RDMA_ENGINE_ERROR, RDMA_ERR_NO_MEMORY))
      {
        /* the cache may be full of this pull's own windows: let their READs land, give
         * them back and try again with none held, so a full cache slows the pull down
         * instead of failing it (or, with READs in flight, the connection) */
        g_clear_error (&e);
        if (!rdma_conn_wait_for (conn, reads_idle, NULL, deadline_us, error))
          goto failed;
        release_windows (b, first);
        cur = window_acquire (b, dst, posted, n, size, access, &e);
      }
      if (cur == NULL)
      {
        g_propagate_error (error, e);
        goto failed; /* no READ in flight after a full cache: the call fails, not the QP */
      }
      g_ptr_array_add (b->reading, cur);
    }
  }
  if (!rdma_conn_wait_for (conn, reads_idle, NULL, deadline_us, error))
    goto failed;
  release_windows (b, first);
  return TRUE;

failed:
  stop_reads (conn);
  /* with READs still in flight, the windows stay held until the connection is freed */
  if (b->reads == 0)
    release_windows (b, first);
  return FALSE;
}

gboolean
rdma_bulk_done (RdmaConn *conn, guint32 seq, GError **error)
{
  guint32 le = GUINT32_TO_LE (seq);

  return rdma_conn_send_control (conn, RDMA_WIRE_PROTO_ENGINE, RDMA_BULK_DONE, &le, sizeof le,
                                 error);
}

gboolean
rdma_bulk_control (RdmaConn *conn, guint8 kind, const guint8 *payload, guint32 len, GError **error)
{
  RdmaBulk *b = conn->bulk;
  guint32 seq;

  if (kind != RDMA_BULK_DONE || len != sizeof seq)
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: engine control of kind %u, %u bytes", kind, len);
    return FALSE;
  }
  memcpy (&seq, payload, sizeof seq);
  seq = GUINT32_FROM_LE (seq);
  if (b != NULL && rdma_bulk_stage_returned (conn, &b->stage, seq))
    return TRUE;
  if (b == NULL || b->n_lent == 0 || b->returned || seq != b->tx_seq)
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: the peer returns fields of message %u, which "
                           "it was not lent",
                           seq);
    return FALSE;
  }
  b->returned = TRUE;
  return TRUE;
}

void
rdma_bulk_update_stats (RdmaConn *conn)
{
  RdmaRcacheStats s;

  if (conn->bulk == NULL)
    return;
  /* added as deltas, so that a reset of the connection's stats works as for the others */
  /* hits and misses are this connection's own; evictions, invalidations, entries and bytes
   * are the cache's, which the device's connections share */
  rdma_rcache_get_stats (conn->bulk->cache, &s);
  conn->stats.rcache_hits += conn->bulk->tally.hits - conn->bulk->seen.hits;
  conn->stats.rcache_misses += conn->bulk->tally.misses - conn->bulk->seen.misses;
  conn->stats.rcache_evictions += s.evictions - conn->bulk->seen.evictions;
  conn->stats.rcache_invalidations += s.invalidations - conn->bulk->seen.invalidations;
  conn->stats.rcache_entries = s.entries;
  conn->stats.rcache_bytes = s.pinned_bytes;
  conn->bulk->seen = s;
  conn->bulk->seen.hits = conn->bulk->tally.hits;
  conn->bulk->seen.misses = conn->bulk->tally.misses;
}

void
rdma_bulk_free (RdmaConn *conn)
{
  RdmaBulk *b = conn->bulk;

  if (b == NULL)
    return;
  free_windows (conn, b);
  rdma_bulk_stage_free (conn, &b->stage);
  for (guint i = 0; i < b->n_lent; i++)
    rdma_rcache_release (b->cache, b->lent[i]);
  release_windows (b, 0);
  g_ptr_array_unref (b->reading);
  if (b->own_cache)
    rdma_rcache_free (b->cache);
  g_free (b);
  conn->bulk = NULL;
}

/* ---- as a helper of the connection (rdma_helper.h) ---- */

static gboolean
bulk_owns_control (guint8 kind)
{
  return kind == RDMA_BULK_DONE;
}

static gint64
bulk_due (RdmaConn *conn)
{
  return conn->bulk != NULL ? rdma_bulk_stage_due (&conn->bulk->stage) : 0;
}

static gboolean
bulk_tick (RdmaConn *conn, gint64 now, GError **error)
{
  if (conn->bulk != NULL)
    rdma_bulk_stage_tick (conn, &conn->bulk->stage, now);
  return TRUE;
}

const RdmaHelperOps rdma_bulk_helper = {
  .name = "bulk",
  .owns_control = bulk_owns_control,
  .control = rdma_bulk_control,
  .due = bulk_due,
  .tick = bulk_tick,
  .free = rdma_bulk_free,
};
