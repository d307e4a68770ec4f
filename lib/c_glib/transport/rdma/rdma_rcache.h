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
 * rdma_rcache.h: a registration cache: memory regions of one PD kept registered between uses,
 * so that a buffer sent or received again costs no ibv_reg_mr.  Bounded by a number of
 * entries and a number of pinned bytes; when a new registration would pass either bound, the
 * least recently used entries that nobody holds are deregistered first, and if those are not
 * enough (everything is held) the acquire fails.  Thread-safe.  One cache per PD; the engine
 * makes one per device, in its shared PD, for all the process's connections on it
 * (rdma_domain_rcache): its registrations give no remote access, a peer reaches a lent field
 * only through a memory window bound on its own connection (rdma_conn_window.h).  The watch below
 * is one per process.  Every registration
 * goes through rdma_verbs (reg_mr, dereg_mr), so the host tests run it over the in-memory
 * provider.
 *
 * Never stale.  A registration pins the pages mapped at the time; if the buffer is unmapped
 * and memory is mapped again at the same address, the old MR still points at the old pages,
 * and serving it would send old bytes or land new ones where nobody looks.  The cache hears
 * of every such change through the process's userfaultfd watch (rdma_unmap_watch.h), shared
 * by every cache of the process:
 *   - each cached range (its pages) is attached to the userfaultfd in write-protect mode,
 *     with no page ever write-protected: this traps no fault at all (missing-page mode would
 *     stop every first touch of a page), it only makes the kernel report what happens to it;
 *   - EVENT_UNMAP (munmap, mmap MAP_FIXED over it, brk shrinking, mremap shrinking),
 *     EVENT_REMOVE (madvise DONTNEED/REMOVE: glibc's trimming of its heaps) and EVENT_REMAP
 *     (mremap moving it) report the range;
 *   - the thread that unmaps is held in the kernel until the event is read.  The watch's
 *     thread reads and records it before letting go of its event lock, and every acquire
 *     first applies what was recorded since its last one, so once munmap has returned, the
 *     next acquire drops the entries the range touches (counted as invalidations) before it
 *     looks anything up;
 *   - that is not enough on its own: munmap frees the range before it reports it, so another
 *     thread can map the same address and look it up while the event is unread (a soak found
 *     it: the bench server's READs landed in old pinned pages and a call read zeros).  So an
 *     entry is served only if the memory asked for is still attached to the watch, present,
 *     and no unmap is being reported (rdma_unmap_watch_still: a new mapping is not attached);
 *     a registration over memory that is not drops the entries it overlaps first, so that
 *     attaching the new mapping cannot make an old entry over it look watched;
 *   - a region that leaves the cache stops watching its pages (detached once no cache
 *     watches them), so memory no longer cached is not slowed down nor kept from other
 *     userfaultfds.
 * Why this and not on-demand paging: soft-RoCE (rxe) on the guest's 6.1 kernel reports no ODP
 * capability (ibv_devinfo -v: rc_odp_caps NO SUPPORT).  Interposing free() is no option
 * (glibc has no malloc hooks; munmap and brk from elsewhere would be missed).  userfaultfd
 * works as shown by test/unit/test_rcache.c (stale case) on the host, and on the guest's
 * 6.1 kernel, where vm.unprivileged_userfaultfd is 0: the cache opens it with
 * UFFD_USER_MODE_ONLY, which such a kernel (5.11 and later) grants to unprivileged users
 * (the mode only changes which faults are trapped, and the cache traps none).
 *
 * Limits.  Memory that userfaultfd cannot watch (file-backed private mappings other than
 * shmem, a range another userfaultfd of the process watches, no userfaultfd at all: EPERM on
 * an older kernel for an unprivileged user) is registered for the one use and deregistered
 * at its release, never cached (counted as uncached).  Memory the engine allocates itself may
 * be cached anyway if the engine calls rdma_rcache_invalidate when it frees it.  Lookup is a
 * scan of the entries in recency order (bounded by max_entries).  Regions are registered as asked
 * (not widened to pages), so a remote key never covers bytes the caller did not name; a
 * smaller range inside a cached one with the same or fewer access flags hits.
 */
#ifndef _RDMA_RCACHE_H
#define _RDMA_RCACHE_H

#include <glib.h>
#include <infiniband/verbs.h>

G_BEGIN_DECLS

typedef struct _RdmaRcache RdmaRcache;

/* A registered region covering at least what was asked.  Read-only for the holder; valid
 * from acquire to release. */
typedef struct
{
  guint8 *addr; /* (unowned): the region's start and length, the holder's
                                 memory (registered, never freed here) */
  gsize length;
  guint32 lkey, rkey;
  struct ibv_mr *mr; /* (owned): the cache's, deregistered when the entry goes */
} RdmaRcacheEntry;

typedef struct
{
  guint64 hits;          /* acquires served by a cached region */
  guint64 misses;        /* acquires that registered a region */
  guint64 evictions;     /* cached regions deregistered to stay in the bounds */
  guint64 invalidations; /* cached regions dropped because their memory changed */
  guint64 uncached;      /* misses registered for one use (memory not watched) */
  guint64 misuse;        /* releases of entries not held */
  guint entries;         /* live registrations (cached or held) */
  guint held;            /* entries acquired and not yet released */
  guint64 pinned_bytes;  /* bytes of the live registrations */
} RdmaRcacheStats;

/* A cache over @pd holding at most @max_entries registrations and @max_bytes pinned bytes
 * (both > 0).  Starts its watcher thread if userfaultfd is available. */
RdmaRcache *rdma_rcache_new (struct ibv_pd *pd, guint max_entries, gsize max_bytes);

/* Whether the cache watches memory (userfaultfd); if not, every miss is uncached. */
gboolean rdma_rcache_watching (RdmaRcache *cache);

/* A region covering [@addr, @addr + @len) registered with at least @access; held until
 * rdma_rcache_release.  NULL with @error (RDMA_ENGINE_ERROR) if reg_mr fails or the bounds
 * cannot be met because every entry is held. */
RdmaRcacheEntry *rdma_rcache_acquire (RdmaRcache *cache, gconstpointer addr, gsize len, int access,
                                      GError **error);
/* The same, also counting the hit or miss (and uncached) in @tally (nullable): what one user
 * of a shared cache did. */
RdmaRcacheEntry *rdma_rcache_acquire_for (RdmaRcache *cache, gconstpointer addr, gsize len,
                                          int access, RdmaRcacheStats *tally, GError **error);
/* Raises the bounds to at least these (a shared cache: the largest any user asked). */
void rdma_rcache_raise_bounds (RdmaRcache *cache, guint max_entries, gsize max_bytes);
/* The same, but only from what is cached: NULL (and nothing registered, nothing counted as a
 * miss) when no cached region covers the range. */
RdmaRcacheEntry *rdma_rcache_lookup (RdmaRcache *cache, gconstpointer addr, gsize len, int access);
void rdma_rcache_release (RdmaRcache *cache, RdmaRcacheEntry *entry);

/* Drops cached regions touching [@addr, @addr + @len): for memory the engine frees itself.
 * Regions held are dropped at their release. */
void rdma_rcache_invalidate (RdmaRcache *cache, gconstpointer addr, gsize len);

void rdma_rcache_get_stats (RdmaRcache *cache, RdmaRcacheStats *out);

/* Deregisters everything and frees @cache.  Entries still held are misuse: a g_warning,
 * counted (rdma_rcache_misuse_total), and deregistered anyway. */
void rdma_rcache_free (RdmaRcache *cache);
/* Misuse found by rdma_rcache_free over the process's life. */
guint64 rdma_rcache_misuse_total (void);

G_END_DECLS

#endif
