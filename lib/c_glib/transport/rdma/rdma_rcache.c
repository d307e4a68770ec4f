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

/* rdma_rcache.c: the registration cache (see rdma_rcache.h for the design). */
#include "config.h"

#include "rdma_rcache.h"

#include <errno.h>
#include <string.h>

#include "rdma_status.h"
#include "rdma_unmap_watch.h"
#include "rdma_verbs.h"

typedef struct
{
  RdmaRcacheEntry pub; /* first: the holder's pointer is the entry's */
  int access;
  guint refs;
  gboolean cached; /* in the lookup list (else: dropped at its release) */
  GList link;      /* in cache->lru while cached, else in cache->orphans */
} Entry;

struct _RdmaRcache
{
  struct ibv_pd *pd; /* (unowned): its maker's, which outlives the cache */
  guint max_entries;
  gsize max_bytes;

  GMutex lock;    /* everything below but the event ring */
  GQueue lru;     /* Entry * (owned): cached entries, most recently used first */
  GQueue orphans; /* Entry * (owned): held entries not cached (uncached, or
                                 dropped meanwhile), destroyed at their last release */
  RdmaRcacheStats stats;

  /* what the process's watch reported that this cache has applied (rdma_unmap_watch.h) */
  gboolean watching;
  guint64 ev_cursor;
};

G_LOCK_DEFINE_STATIC (misuse);
static guint64 misuse_total;

guint64
rdma_rcache_misuse_total (void)
{
  guint64 n;

  G_LOCK (misuse);
  n = misuse_total;
  G_UNLOCK (misuse);
  return n;
}

RdmaRcache *
rdma_rcache_new (struct ibv_pd *pd, guint max_entries, gsize max_bytes)
{
  RdmaRcache *cache;

  g_return_val_if_fail (max_entries > 0 && max_bytes > 0, NULL);
  cache = g_new0 (RdmaRcache, 1);
  cache->pd = pd;
  cache->max_entries = max_entries;
  cache->max_bytes = max_bytes;
  g_mutex_init (&cache->lock);
  g_queue_init (&cache->lru);
  g_queue_init (&cache->orphans);
  cache->watching = rdma_unmap_watch_ref (&cache->ev_cursor);
  return cache;
}

gboolean
rdma_rcache_watching (RdmaRcache *cache)
{
  return cache->watching;
}

/* Stops watching the pages of a cached region that goes (the watch keeps those another
 * region still needs).  Under lock. */
static void
unwatch (RdmaRcache *cache, Entry *gone)
{
  if (cache->watching)
    rdma_unmap_watch_remove (gone->pub.addr, gone->pub.length);
}

/* Deregisters an entry nobody holds and is out of the list.  Under lock. */
static void
entry_destroy (RdmaRcache *cache, Entry *e)
{
  int err = rdma_verbs->dereg_mr (e->pub.mr);

  if (err != 0)
    g_warning ("rdma_rcache: ibv_dereg_mr of %p+%" G_GSIZE_FORMAT ": %s", e->pub.addr,
               e->pub.length, g_strerror (err));
  cache->stats.entries--;
  cache->stats.pinned_bytes -= e->pub.length;
  g_free (e);
}

/* Takes @e out of the lookup list; deregisters it unless held (then at its release).  Under
 * lock. */
static void
entry_drop (RdmaRcache *cache, Entry *e)
{
  g_assert (e->cached);
  g_queue_unlink (&cache->lru, &e->link);
  e->cached = FALSE;
  unwatch (cache, e);
  if (e->refs == 0)
    entry_destroy (cache, e);
  else
    g_queue_push_head_link (&cache->orphans, &e->link);
}

static gboolean
overlaps (Entry *e, guintptr start, guintptr end)
{
  guintptr s = (guintptr) e->pub.addr;

  return s < end && start < s + e->pub.length;
}

static void
invalidate_range (RdmaRcache *cache, guintptr start, guintptr end, gboolean all)
{
  GList *l = cache->lru.head;

  while (l != NULL)
  {
    Entry *e = l->data;

    l = l->next;
    if (all || overlaps (e, start, end))
    {
      cache->stats.invalidations++;
      entry_drop (cache, e);
    }
  }
}

/* Applies what the watch reported since the last time.  Under lock.  The ranges are copied
 * out first: dropping entries frees memory, which must not happen under the watch's event
 * lock. */
static void
drain_events (RdmaRcache *cache)
{
  RdmaUnmapRange ev[RDMA_UNMAP_WATCH_RING];
  guint n;

  if (!cache->watching)
    return;
  if (!rdma_unmap_watch_events (&cache->ev_cursor, ev, &n))
    invalidate_range (cache, 0, 0, TRUE);
  else
    for (guint i = 0; i < n; i++)
      invalidate_range (cache, ev[i].start, ev[i].end, FALSE);
}

static gboolean
watch (RdmaRcache *cache, gconstpointer addr, gsize len)
{
  return cache->watching && rdma_unmap_watch_add (addr, len);
}

/* Deregisters least recently used entries nobody holds until @len more bytes and one more
 * entry fit.  Under lock. */
static gboolean
make_room (RdmaRcache *cache, gsize len)
{
  GList *l = cache->lru.tail;

  while (cache->stats.entries + 1 > cache->max_entries
         || cache->stats.pinned_bytes + len > cache->max_bytes)
  {
    Entry *e;

    while (l != NULL && ((Entry *) l->data)->refs > 0)
      l = l->prev;
    if (l == NULL)
      return FALSE;
    e = l->data;
    l = l->prev;
    cache->stats.evictions++;
    entry_drop (cache, e);
  }
  return TRUE;
}

/* A cached entry covering [addr, addr+len) with @access, held and made most recent, or NULL.
 * Under lock, after drain_events.  The events are not enough: an munmap frees its range for
 * the next mmap before its event is read, so another thread can map the same address and look
 * it up first (the bench's server did, one call in a few hundred: READs landed in the old
 * pinned pages and the call read zeros).  So the memory asked for must still be what the
 * watch attached (rdma_unmap_watch_still, asked once, at the first entry that covers it;
 * *@still keeps the answer, -1 if not asked); an entry over memory that is not is dropped. */
static Entry *
find_cached (RdmaRcache *cache, gconstpointer addr, gsize len, int access, gint *still)
{
  guintptr a = (guintptr) addr;
  GList *l = cache->lru.head;

  *still = -1;
  while (l != NULL)
  {
    Entry *e = l->data;

    l = l->next;
    if ((guintptr) e->pub.addr <= a && a + len <= (guintptr) e->pub.addr + e->pub.length
        && (e->access & access) == access)
    {
      if (*still < 0)
        *still = rdma_unmap_watch_still (addr);
      if (!*still)
      {
        cache->stats.invalidations++;
        entry_drop (cache, e);
        continue;
      }
      cache->stats.hits++;
      if (e->refs++ == 0)
        cache->stats.held++;
      g_queue_unlink (&cache->lru, &e->link);
      g_queue_push_head_link (&cache->lru, &e->link);
      return e;
    }
  }
  return NULL;
}

RdmaRcacheEntry *
rdma_rcache_lookup (RdmaRcache *cache, gconstpointer addr, gsize len, int access)
{
  Entry *e;
  gint still;

  g_return_val_if_fail (cache != NULL && len > 0, NULL);
  g_mutex_lock (&cache->lock);
  drain_events (cache);
  e = find_cached (cache, addr, len, access, &still);
  g_mutex_unlock (&cache->lock);
  return e != NULL ? &e->pub : NULL;
}

void
rdma_rcache_raise_bounds (RdmaRcache *cache, guint max_entries, gsize max_bytes)
{
  g_mutex_lock (&cache->lock);
  cache->max_entries = MAX (cache->max_entries, max_entries);
  cache->max_bytes = MAX (cache->max_bytes, max_bytes);
  g_mutex_unlock (&cache->lock);
}

RdmaRcacheEntry *
rdma_rcache_acquire (RdmaRcache *cache, gconstpointer addr, gsize len, int access, GError **error)
{
  return rdma_rcache_acquire_for (cache, addr, len, access, NULL, error);
}

RdmaRcacheEntry *
rdma_rcache_acquire_for (RdmaRcache *cache, gconstpointer addr, gsize len, int access,
                         RdmaRcacheStats *tally, GError **error)
{
  Entry *e;
  struct ibv_mr *mr;
  gint still;

  g_return_val_if_fail (cache != NULL && len > 0, NULL);
  g_mutex_lock (&cache->lock);
  drain_events (cache);

  if ((e = find_cached (cache, addr, len, access, &still)) != NULL)
  {
    g_mutex_unlock (&cache->lock);
    if (tally != NULL)
      tally->hits++;
    return &e->pub;
  }

  if (len > cache->max_bytes || !make_room (cache, len))
  {
    g_set_error (error, RDMA_ENGINE_ERROR, RDMA_ERR_NO_MEMORY,
                 "registration cache full: %p+%" G_GSIZE_FORMAT " does not fit in %u entries "
                 "and %" G_GSIZE_FORMAT " bytes with %u entries (%" G_GUINT64_FORMAT
                 " bytes) held; release entries or raise the bounds",
                 addr, len, cache->max_entries, cache->max_bytes, cache->stats.held,
                 cache->stats.pinned_bytes);
    g_mutex_unlock (&cache->lock);
    return NULL;
  }

  /* Memory the watch does not hold as it was may be a new mapping where a cached one was,
   * its unmap not reported yet: an entry over it (not covering all of this) must go before
   * the new registration attaches the address again and makes it look watched. */
  if (still < 0 && cache->watching)
    still = rdma_unmap_watch_still (addr);
  if (still == 0)
    invalidate_range (cache, (guintptr) addr, (guintptr) addr + len, FALSE);

  e = g_new0 (Entry, 1);
  /* Watch before registering: an unmap between the two is then reported, and drops the
   * entry at the next acquire. */
  e->cached = watch (cache, addr, len);
  mr = rdma_verbs->reg_mr (cache->pd, (void *) addr, len, access);
  if (mr == NULL)
  {
    int err = errno;

    if (e->cached)
    {
      e->pub.addr = (guint8 *) addr;
      e->pub.length = len;
      unwatch (cache, e);
    }
    g_free (e);
    g_mutex_unlock (&cache->lock);
    rdma_status_set_error (error, rdma_status_from_errno (err), "ibv_reg_mr", err, -1,
                           "%p+%" G_GSIZE_FORMAT, addr, len);
    return NULL;
  }
  e->pub.addr = (guint8 *) addr;
  e->pub.length = len;
  e->pub.lkey = mr->lkey;
  e->pub.rkey = mr->rkey;
  e->pub.mr = mr;
  e->access = access;
  e->refs = 1;
  e->link.data = e;
  cache->stats.misses++;
  if (!e->cached)
    cache->stats.uncached++;
  cache->stats.entries++;
  cache->stats.held++;
  cache->stats.pinned_bytes += len;
  g_queue_push_head_link (e->cached ? &cache->lru : &cache->orphans, &e->link);
  g_mutex_unlock (&cache->lock);
  if (tally != NULL)
  {
    tally->misses++;
    if (!e->cached)
      tally->uncached++;
  }
  return &e->pub;
}

void
rdma_rcache_release (RdmaRcache *cache, RdmaRcacheEntry *entry)
{
  Entry *e = (Entry *) entry;

  g_return_if_fail (cache != NULL && entry != NULL);
  g_mutex_lock (&cache->lock);
  if (e->refs == 0)
  {
    cache->stats.misuse++;
    g_mutex_unlock (&cache->lock);
    g_warning ("rdma_rcache: release of an entry not held (%p)", entry);
    return;
  }
  if (--e->refs == 0)
  {
    cache->stats.held--;
    if (!e->cached)
    {
      g_queue_unlink (&cache->orphans, &e->link);
      entry_destroy (cache, e);
    }
  }
  g_mutex_unlock (&cache->lock);
}

void
rdma_rcache_invalidate (RdmaRcache *cache, gconstpointer addr, gsize len)
{
  g_mutex_lock (&cache->lock);
  invalidate_range (cache, (guintptr) addr, (guintptr) addr + len, FALSE);
  g_mutex_unlock (&cache->lock);
}

void
rdma_rcache_get_stats (RdmaRcache *cache, RdmaRcacheStats *out)
{
  g_mutex_lock (&cache->lock);
  drain_events (cache);
  *out = cache->stats;
  g_mutex_unlock (&cache->lock);
}

void
rdma_rcache_free (RdmaRcache *cache)
{
  Entry *e;

  if (cache == NULL)
    return;
  g_mutex_lock (&cache->lock);
  if (cache->stats.held > 0)
  {
    g_warning ("rdma_rcache_free: %u entries still held (%" G_GUINT64_FORMAT
               " bytes); deregistering them under their holders",
               cache->stats.held, cache->stats.pinned_bytes);
    G_LOCK (misuse);
    misuse_total += cache->stats.held;
    G_UNLOCK (misuse);
  }
  while ((e = g_queue_peek_head (&cache->lru)) != NULL)
  {
    g_queue_unlink (&cache->lru, &e->link);
    unwatch (cache, e);
    entry_destroy (cache, e);
  }
  while ((e = g_queue_peek_head (&cache->orphans)) != NULL)
  {
    g_queue_unlink (&cache->orphans, &e->link);
    entry_destroy (cache, e);
  }
  g_mutex_unlock (&cache->lock);
  rdma_unmap_watch_unref ();
  g_mutex_clear (&cache->lock);
  g_free (cache);
}
