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
 * rdma_unmap_watch.h: the process's one watch on memory that goes away: a userfaultfd in
 * non-cooperative mode and a thread that reads its events (unmap, remove, remap), shared by
 * every registration cache of the process (rdma_rcache.h says why a cache needs it).
 *
 * One per process, not one per cache: a page can be attached to one userfaultfd only, so two
 * caches with their own (two connections sending the same buffer) would leave the second
 * unable to watch it (EBUSY), and every connection would cost a thread.  Pages are attached
 * while any cache watches them (the ranges added are kept), and detached when the last stops.
 * The thread never allocates and takes only the event lock: a thread that unmaps watched
 * memory is held in the kernel until its event is read, whatever locks it holds.  Started
 * with the first reference, stopped (and the userfaultfd closed, which detaches everything)
 * with the last.
 */
#ifndef _RDMA_UNMAP_WATCH_H
#define _RDMA_UNMAP_WATCH_H

#include <glib.h>

G_BEGIN_DECLS

/* Events kept for readers that have not caught up; one further behind misses some and must
 * assume that anything went. */
#define RDMA_UNMAP_WATCH_RING 256

typedef struct
{
  guintptr start, end; /* a range unmapped, removed or moved away */
} RdmaUnmapRange;

/* Takes a reference (starting the watch with the first); @cursor is set to "now".  Returns
 * whether memory can be watched (FALSE: no userfaultfd here; the reference is taken anyway). */
gboolean rdma_unmap_watch_ref (guint64 *cursor);
void rdma_unmap_watch_unref (void);

/* Attaches the pages of [@addr, @addr + @len); FALSE if they cannot be watched (memory
 * userfaultfd does not handle, or another userfaultfd's), then nothing is counted. */
gboolean rdma_unmap_watch_add (gconstpointer addr, gsize len);
/* Undoes one rdma_unmap_watch_add of the same range. */
void rdma_unmap_watch_remove (gconstpointer addr, gsize len);

/* Whether the page at @addr is still memory the watch attached, as it was: FALSE when its
 * mapping went (an munmap frees the range for the next mmap before its event is read, so a
 * cache cannot wait for the event: another thread may map the address again and look it up
 * first), when the page was removed, or while an unmap is being reported.  One system call;
 * a removed page reads as zeros after it, as it would have without. */
gboolean rdma_unmap_watch_still (gconstpointer addr);

/* For tests: while @hold, the watch reads no event, so an munmap of watched memory stays in
 * flight (its range free, its event unread). */
void rdma_unmap_watch_hold_for_test (gboolean hold);

/* The ranges reported since *@cursor (at most RDMA_UNMAP_WATCH_RING, into @out), and moves
 * the cursor on.  FALSE if some were missed (more came than the ring holds): then treat all
 * memory as changed.  Once an munmap of watched memory has returned, a call made after it
 * reports the range. */
gboolean rdma_unmap_watch_events (guint64 *cursor, RdmaUnmapRange out[RDMA_UNMAP_WATCH_RING],
                                  guint *n);

G_END_DECLS

#endif
