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
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

#include "rdma_status.h"
#include "rdma_verbs.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

/* Ranges the watcher read and acquire has not yet applied.  Fixed, so the watcher never
 * allocates; on overflow every cached region is dropped. */
#define RCACHE_RING 256

typedef struct
{
  RdmaRcacheEntry pub;        /* first: the holder's pointer is the entry's */
  int access;
  guint refs;
  gboolean cached;            /* in the lookup list (else: dropped at its release) */
  GList link;                 /* in cache->lru while cached, else in cache->orphans */
} Entry;

struct _RdmaRcache
{
  struct ibv_pd *pd;
  guint max_entries;
  gsize max_bytes;

  GMutex lock;                /* everything below but the event ring */
  GQueue lru;                 /* cached entries, most recently used first */
  GQueue orphans;             /* held entries not cached (uncached, or dropped meanwhile) */
  RdmaRcacheStats stats;

  /* the watcher */
  int uffd;                   /* -1: not watching */
  int stop_fd;                /* eventfd telling the thread to end */
  GThread *thread;
  GMutex ev_lock;             /* the ring; never held while taking lock */
  guintptr ev_start[RCACHE_RING], ev_end[RCACHE_RING];
  guint ev_count;
  gboolean ev_overflow;
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

static gsize
page_size (void)
{
  static gsize size;

  if (size == 0)
    size = (gsize) sysconf (_SC_PAGESIZE);
  return size;
}

static void
page_span (gconstpointer addr, gsize len, guintptr *start, guintptr *end)
{
  gsize ps = page_size ();

  *start = (guintptr) addr & ~(guintptr) (ps - 1);
  *end = ((guintptr) addr + len + ps - 1) & ~(guintptr) (ps - 1);
}

/* The watcher: reads every event as it comes, records unmapped ranges.  Reading and recording
 * happen under ev_lock, so a munmap that returned (its event read) is in the ring for any
 * acquire that takes ev_lock after it. */
static gpointer
watch_thread (gpointer data)
{
  RdmaRcache *cache = data;
  struct pollfd fds[2] = { { cache->uffd, POLLIN, 0 }, { cache->stop_fd, POLLIN, 0 } };

  for (;;) {
    if (poll (fds, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      g_warning ("rdma_rcache: poll on userfaultfd: %s", g_strerror (errno));
      return NULL;
    }
    if (fds[1].revents)
      return NULL;
    g_mutex_lock (&cache->ev_lock);
    for (;;) {
      struct uffd_msg msg;
      ssize_t n = read (cache->uffd, &msg, sizeof msg);
      guintptr start = 0, end = 0;

      if (n != (ssize_t) sizeof msg)
        break;               /* EAGAIN: drained */
      switch (msg.event) {
      case UFFD_EVENT_UNMAP:
      case UFFD_EVENT_REMOVE:
        start = msg.arg.remove.start;
        end = msg.arg.remove.end;
        break;
      case UFFD_EVENT_REMAP:
        start = msg.arg.remap.from;
        end = msg.arg.remap.from + msg.arg.remap.len;
        break;
      default:
        /* No page is write-protected, so no fault can come; nothing else is asked for. */
        continue;
      }
      if (cache->ev_count == RCACHE_RING) {
        cache->ev_overflow = TRUE;
      } else {
        cache->ev_start[cache->ev_count] = start;
        cache->ev_end[cache->ev_count] = end;
        cache->ev_count++;
      }
    }
    g_mutex_unlock (&cache->ev_lock);
  }
}

static int
uffd_open (void)
{
  int fd;
  struct uffdio_api api = { .api = UFFD_API,
                            .features = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE
                                        | UFFD_FEATURE_EVENT_REMAP };

  /* User mode only first: the only kind an unprivileged process gets when
   * vm.unprivileged_userfaultfd is 0; older kernels refuse the flag (EINVAL). */
  fd = (int) syscall (SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
  if (fd < 0 && errno == EINVAL)
    fd = (int) syscall (SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    g_debug ("rdma_rcache: no userfaultfd (%s): caching nothing", g_strerror (errno));
    return -1;
  }
  if (ioctl (fd, UFFDIO_API, &api) < 0) {
    g_debug ("rdma_rcache: UFFDIO_API with unmap events: %s: caching nothing",
             g_strerror (errno));
    close (fd);
    return -1;
  }
  return fd;
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
  g_mutex_init (&cache->ev_lock);
  g_queue_init (&cache->lru);
  g_queue_init (&cache->orphans);
  cache->stop_fd = -1;
  cache->uffd = uffd_open ();
  if (cache->uffd >= 0) {
    cache->stop_fd = eventfd (0, EFD_CLOEXEC);
    if (cache->stop_fd < 0) {
      close (cache->uffd);
      cache->uffd = -1;
    } else {
      cache->thread = g_thread_new ("rdma-rcache", watch_thread, cache);
    }
  }
  return cache;
}

gboolean
rdma_rcache_watching (RdmaRcache *cache)
{
  return cache->uffd >= 0;
}

/* Detaches the userfaultfd from the pages of a cached region that goes, unless a region still
 * cached shares one of them: so a range no longer cached neither waits for the watcher when
 * it is unmapped nor keeps another userfaultfd (EBUSY) off it.  Under lock. */
static void
unwatch (RdmaRcache *cache, Entry *gone)
{
  struct uffdio_range range;
  guintptr start, end;
  GList *l;

  page_span (gone->pub.addr, gone->pub.length, &start, &end);
  for (l = cache->lru.head; l != NULL; l = l->next) {
    Entry *e = l->data;
    guintptr s, t;

    page_span (e->pub.addr, e->pub.length, &s, &t);
    if (s < end && start < t)
      return;
  }
  range.start = start;
  range.len = end - start;
  /* Fails harmlessly where the pages are gone already (an invalidation). */
  (void) ioctl (cache->uffd, UFFDIO_UNREGISTER, &range);
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

  while (l != NULL) {
    Entry *e = l->data;

    l = l->next;
    if (all || overlaps (e, start, end)) {
      cache->stats.invalidations++;
      entry_drop (cache, e);
    }
  }
}

/* Applies what the watcher recorded.  Under lock. */
static void
drain_events (RdmaRcache *cache)
{
  guint i;

  if (cache->uffd < 0)
    return;
  g_mutex_lock (&cache->ev_lock);
  if (cache->ev_overflow)
    invalidate_range (cache, 0, 0, TRUE);
  else
    for (i = 0; i < cache->ev_count; i++)
      invalidate_range (cache, cache->ev_start[i], cache->ev_end[i], FALSE);
  cache->ev_count = 0;
  cache->ev_overflow = FALSE;
  g_mutex_unlock (&cache->ev_lock);
}

/* Attaches the cache's userfaultfd to the pages of [addr, addr+len). */
static gboolean
watch (RdmaRcache *cache, gconstpointer addr, gsize len)
{
  struct uffdio_register reg;
  guintptr start, end;

  if (cache->uffd < 0)
    return FALSE;
  page_span (addr, len, &start, &end);
  memset (&reg, 0, sizeof reg);
  reg.range.start = start;
  reg.range.len = end - start;
  reg.mode = UFFDIO_REGISTER_MODE_WP;
  if (ioctl (cache->uffd, UFFDIO_REGISTER, &reg) < 0) {
    g_debug ("rdma_rcache: cannot watch %p+%" G_GSIZE_FORMAT " (%s): not cached", addr, len,
             g_strerror (errno));
    return FALSE;
  }
  return TRUE;
}

/* Deregisters least recently used entries nobody holds until @len more bytes and one more
 * entry fit.  Under lock. */
static gboolean
make_room (RdmaRcache *cache, gsize len)
{
  GList *l = cache->lru.tail;

  while (cache->stats.entries + 1 > cache->max_entries
         || cache->stats.pinned_bytes + len > cache->max_bytes) {
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
 * Under lock, after drain_events. */
static Entry *
find_cached (RdmaRcache *cache, gconstpointer addr, gsize len, int access)
{
  guintptr a = (guintptr) addr;

  for (GList *l = cache->lru.head; l != NULL; l = l->next) {
    Entry *e = l->data;

    if ((guintptr) e->pub.addr <= a && a + len <= (guintptr) e->pub.addr + e->pub.length
        && (e->access & access) == access) {
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

  g_return_val_if_fail (cache != NULL && len > 0, NULL);
  g_mutex_lock (&cache->lock);
  drain_events (cache);
  e = find_cached (cache, addr, len, access);
  g_mutex_unlock (&cache->lock);
  return e != NULL ? &e->pub : NULL;
}

RdmaRcacheEntry *
rdma_rcache_acquire (RdmaRcache *cache, gconstpointer addr, gsize len, int access,
                     GError **error)
{
  Entry *e;
  struct ibv_mr *mr;

  g_return_val_if_fail (cache != NULL && len > 0, NULL);
  g_mutex_lock (&cache->lock);
  drain_events (cache);

  if ((e = find_cached (cache, addr, len, access)) != NULL) {
    g_mutex_unlock (&cache->lock);
    return &e->pub;
  }

  if (len > cache->max_bytes || !make_room (cache, len)) {
    g_set_error (error, RDMA_ENGINE_ERROR, RDMA_ERR_NO_MEMORY,
                 "registration cache full: %p+%" G_GSIZE_FORMAT " does not fit in %u entries "
                 "and %" G_GSIZE_FORMAT " bytes with %u entries (%" G_GUINT64_FORMAT
                 " bytes) held; release entries or raise the bounds",
                 addr, len, cache->max_entries, cache->max_bytes, cache->stats.held,
                 cache->stats.pinned_bytes);
    g_mutex_unlock (&cache->lock);
    return NULL;
  }

  e = g_new0 (Entry, 1);
  /* Watch before registering: an unmap between the two is then reported, and drops the
   * entry at the next acquire. */
  e->cached = watch (cache, addr, len);
  mr = rdma_verbs->reg_mr (cache->pd, (void *) addr, len, access);
  if (mr == NULL) {
    int err = errno;

    if (e->cached) {
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
  return &e->pub;
}

void
rdma_rcache_release (RdmaRcache *cache, RdmaRcacheEntry *entry)
{
  Entry *e = (Entry *) entry;

  g_return_if_fail (cache != NULL && entry != NULL);
  g_mutex_lock (&cache->lock);
  if (e->refs == 0) {
    cache->stats.misuse++;
    g_mutex_unlock (&cache->lock);
    g_warning ("rdma_rcache: release of an entry not held (%p)", entry);
    return;
  }
  if (--e->refs == 0) {
    cache->stats.held--;
    if (!e->cached) {
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
  if (cache->thread != NULL) {
    guint64 one = 1;

    if (write (cache->stop_fd, &one, sizeof one) != sizeof one)
      g_warning ("rdma_rcache: cannot stop the watcher: %s", g_strerror (errno));
    g_thread_join (cache->thread);
  }
  /* Closing the userfaultfd detaches it from every range it watches. */
  if (cache->uffd >= 0)
    close (cache->uffd);
  if (cache->stop_fd >= 0)
    close (cache->stop_fd);

  g_mutex_lock (&cache->lock);
  if (cache->stats.held > 0) {
    g_warning ("rdma_rcache_free: %u entries still held (%" G_GUINT64_FORMAT
               " bytes); deregistering them under their holders", cache->stats.held,
               cache->stats.pinned_bytes);
    G_LOCK (misuse);
    misuse_total += cache->stats.held;
    G_UNLOCK (misuse);
  }
  while ((e = g_queue_peek_head (&cache->lru)) != NULL) {
    g_queue_unlink (&cache->lru, &e->link);
    entry_destroy (cache, e);
  }
  while ((e = g_queue_peek_head (&cache->orphans)) != NULL) {
    g_queue_unlink (&cache->orphans, &e->link);
    entry_destroy (cache, e);
  }
  g_mutex_unlock (&cache->lock);
  g_mutex_clear (&cache->lock);
  g_mutex_clear (&cache->ev_lock);
  g_free (cache);
}
