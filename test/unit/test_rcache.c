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
 * test_rcache.c: the registration cache (rdma_rcache) over the in-memory provider: hits,
 * misses and contained ranges; LRU eviction under the entry and byte bounds; held entries
 * never evicted; an error when everything is held; a buffer unmapped and mapped again at the
 * same address (or its pages dropped) never served by its old registration; threads; and
 * every registration gone at the end.
 */
#define _GNU_SOURCE
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

#include <glib.h>

#include "lib/c_glib/transport/rdma/rdma_rcache.h"
#include "lib/c_glib/transport/rdma/rdma_status.h"
#include "lib/c_glib/transport/rdma/rdma_unmap_watch.h"
#include "lib/c_glib/transport/rdma/rdma_verbs.h"
#include "fake_verbs.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static gsize ps;

typedef struct
{
  struct ibv_pd *pd;
  guint8 *mem; /* pages for the buffers of a test */
  gsize mem_len;
} Fixture;

static guint8 *
map_pages (gsize n)
{
  void *p = mmap (NULL, n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  g_assert_true (p != MAP_FAILED);
  return p;
}

static void
setup (Fixture *f, gconstpointer data)
{
  gchar *what = NULL;

  (void) data;
  g_assert_cmpuint (fake_verbs_live (&what), ==, 0);
  g_free (what);
  f->pd = rdma_verbs->alloc_pd (NULL);
  f->mem_len = 64 * ps;
  f->mem = map_pages (64);
}

static void
teardown (Fixture *f, gconstpointer data)
{
  gchar *what = NULL;
  guint live;

  (void) data;
  if (f->mem != NULL)
    munmap (f->mem, f->mem_len);
  g_assert_cmpint (rdma_verbs->dealloc_pd (f->pd), ==, 0);
  live = fake_verbs_live (&what);
  g_assert_cmpuint (live, ==, 0);
  g_free (what);
  g_assert_cmpuint (fake_verbs_take_misuse (NULL), ==, 0);
}

/* MRs alive beside the fixture's PD. */
static guint
live_mrs (void)
{
  return fake_verbs_live (NULL) - 1;
}

static RdmaRcacheEntry *
get (RdmaRcache *c, gconstpointer addr, gsize len, int access)
{
  GError *error = NULL;
  RdmaRcacheEntry *e = rdma_rcache_acquire (c, addr, len, access, &error);

  g_assert_no_error (error);
  g_assert_nonnull (e);
  /* whatever it is, it covers what was asked, with a key the provider gave */
  g_assert_true (e->addr <= (const guint8 *) addr);
  g_assert_true ((const guint8 *) addr + len <= e->addr + e->length);
  g_assert_true (e->mr != NULL && e->mr->lkey == e->lkey && e->mr->rkey == e->rkey);
  g_assert_true (e->mr->addr == (void *) e->addr && e->mr->length == e->length);
  return e;
}

static RdmaRcacheStats
stats (RdmaRcache *c)
{
  RdmaRcacheStats s;

  rdma_rcache_get_stats (c, &s);
  return s;
}

/* Counters of a cache with nothing left: nothing live, nothing held. */
static void
assert_empty (RdmaRcache *c)
{
  RdmaRcacheStats s = stats (c);

  g_assert_cmpuint (s.held, ==, 0);
  g_assert_cmpuint (s.entries, ==, 0);
  g_assert_cmpuint (s.pinned_bytes, ==, 0);
  g_assert_cmpuint (live_mrs (), ==, 0);
}

/* Tests of what stays cached need the watcher: without it (no userfaultfd on this kernel for
 * this user) nothing is.  TRUE: skipped, @c freed. */
static gboolean
skip_unless_watching (RdmaRcache *c)
{
  if (rdma_rcache_watching (c))
    return FALSE;
  rdma_rcache_free (c);
  g_test_skip ("no userfaultfd: nothing is cached");
  return TRUE;
}

static void
test_hit_miss (Fixture *f, gconstpointer data)
{
  RdmaRcache *c = rdma_rcache_new (f->pd, 16, 1 << 20);
  RdmaRcacheEntry *a, *b, *in, *rw, *other;
  RdmaRcacheStats s;

  (void) data;
  a = get (c, f->mem, 2 * ps, IBV_ACCESS_LOCAL_WRITE);
  g_assert_cmpuint (live_mrs (), ==, 1);
  rdma_rcache_release (c, a);
  g_assert_cmpuint (live_mrs (), ==, 1); /* kept after release: cached */

  b = get (c, f->mem, 2 * ps, IBV_ACCESS_LOCAL_WRITE);
  g_assert_true (b == a);
  in = get (c, f->mem + 100, 300, IBV_ACCESS_LOCAL_WRITE); /* contained */
  g_assert_true (in == a);
  g_assert_cmpuint (live_mrs (), ==, 1);
  /* more access than the cached region has: a registration of its own */
  rw = get (c, f->mem + 100, 300, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
  g_assert_true (rw != a);
  g_assert_cmpuint (rw->rkey, !=, a->rkey);
  /* past the end of the cached region: not covered */
  other = get (c, f->mem + ps, 2 * ps, IBV_ACCESS_LOCAL_WRITE);
  g_assert_true (other != a);
  g_assert_cmpuint (live_mrs (), ==, 3);

  s = stats (c);
  g_assert_cmpuint (s.hits, ==, 2);
  g_assert_cmpuint (s.misses, ==, 3);
  g_assert_cmpuint (s.held, ==, 4 - 1); /* a held twice counts once */
  g_assert_cmpuint (s.entries, ==, 3);
  g_assert_cmpuint (s.pinned_bytes, ==, 2 * ps + 300 + 2 * ps);
  g_assert_cmpuint (s.evictions + s.invalidations, ==, 0);
  g_assert_cmpuint (s.uncached, ==, rdma_rcache_watching (c) ? 0 : 3);

  rdma_rcache_release (c, b);
  rdma_rcache_release (c, in);
  rdma_rcache_release (c, rw);
  rdma_rcache_release (c, other);
  g_assert_cmpuint (stats (c).held, ==, 0);
  rdma_rcache_invalidate (c, f->mem, f->mem_len);
  g_assert_cmpuint (stats (c).invalidations, ==, rdma_rcache_watching (c) ? 3 : 0);
  assert_empty (c);
  rdma_rcache_free (c);
}

/* Whether a userfaultfd of the test's own may watch the page at @p: not while the cache's
 * still does (EBUSY). */
static gboolean
other_may_watch (guint8 *p)
{
  int fd = (int) syscall (SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
  struct uffdio_api api = { .api = UFFD_API };
  struct uffdio_register reg = { .range = { (guintptr) p, ps }, .mode = UFFDIO_REGISTER_MODE_WP };
  gboolean ok;

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (ioctl (fd, UFFDIO_API, &api), ==, 0);
  ok = ioctl (fd, UFFDIO_REGISTER, &reg) == 0;
  close (fd);
  return ok;
}

/* A, B, C released in turn; A used again; then D and B: the least recently used go. */
static void
test_lru_entries (Fixture *f, gconstpointer data)
{
  RdmaRcache *c = rdma_rcache_new (f->pd, 3, 1 << 20);
  guint8 *A = f->mem, *B = f->mem + ps, *C = f->mem + 2 * ps, *D = f->mem + 3 * ps;
  guint32 key_a, key_c;
  RdmaRcacheEntry *e;
  RdmaRcacheStats s;

  (void) data;
  if (skip_unless_watching (c))
    return;
  e = get (c, A, 64, 0);
  key_a = e->lkey;
  rdma_rcache_release (c, e);
  e = get (c, B, 64, 0);
  rdma_rcache_release (c, e);
  e = get (c, C, 64, 0);
  key_c = e->lkey;
  rdma_rcache_release (c, e);
  e = get (c, A, 64, 0);
  g_assert_cmpuint (e->lkey, ==, key_a);
  rdma_rcache_release (c, e);
  g_assert_cmpuint (stats (c).evictions, ==, 0);

  g_assert_false (other_may_watch (B));
  e = get (c, D, 64, 0);
  rdma_rcache_release (c, e);          /* evicts B */
  g_assert_true (other_may_watch (B)); /* B's pages let go */
  g_assert_false (other_may_watch (A));
  s = stats (c);
  g_assert_cmpuint (s.evictions, ==, 1);
  g_assert_cmpuint (s.entries, ==, 3);
  g_assert_cmpuint (live_mrs (), ==, 3);
  e = get (c, C, 64, 0);
  g_assert_cmpuint (e->lkey, ==, key_c);
  rdma_rcache_release (c, e);
  e = get (c, A, 64, 0);
  g_assert_cmpuint (e->lkey, ==, key_a);
  rdma_rcache_release (c, e);
  s = stats (c);
  g_assert_cmpuint (s.hits, ==, 3);
  g_assert_cmpuint (s.misses, ==, 4);
  e = get (c, B, 64, 0);
  rdma_rcache_release (c, e); /* B again: evicts D */
  s = stats (c);
  g_assert_cmpuint (s.misses, ==, 5);
  g_assert_cmpuint (s.evictions, ==, 2);
  e = get (c, D, 64, 0);
  rdma_rcache_release (c, e); /* D was the one gone */
  g_assert_cmpuint (stats (c).misses, ==, 6);
  g_assert_cmpuint (stats (c).entries, ==, 3);
  rdma_rcache_free (c);
  g_assert_cmpuint (live_mrs (), ==, 0);
}

static void
test_lru_bytes (Fixture *f, gconstpointer data)
{
  RdmaRcache *c = rdma_rcache_new (f->pd, 100, 3 * ps);
  guint8 *A = f->mem, *B = f->mem + 4 * ps, *C = f->mem + 8 * ps;
  RdmaRcacheEntry *e;
  RdmaRcacheStats s;
  guint32 key_b;

  (void) data;
  if (skip_unless_watching (c))
    return;
  e = get (c, A, ps, 0);
  rdma_rcache_release (c, e);
  e = get (c, B, 2 * ps, 0);
  key_b = e->lkey;
  rdma_rcache_release (c, e);
  g_assert_cmpuint (stats (c).pinned_bytes, ==, 3 * ps);
  e = get (c, C, ps, 0);
  rdma_rcache_release (c, e); /* A goes, B stays */
  s = stats (c);
  g_assert_cmpuint (s.evictions, ==, 1);
  g_assert_cmpuint (s.pinned_bytes, ==, 3 * ps);
  g_assert_cmpuint (s.entries, ==, 2);
  e = get (c, B, 2 * ps, 0);
  g_assert_cmpuint (e->lkey, ==, key_b);
  rdma_rcache_release (c, e);
  /* two pages need both others to go */
  e = get (c, A, 2 * ps, 0);
  rdma_rcache_release (c, e);
  s = stats (c);
  g_assert_cmpuint (s.evictions, ==, 3);
  g_assert_cmpuint (s.entries, ==, 1);
  g_assert_cmpuint (s.pinned_bytes, ==, 2 * ps);
  g_assert_cmpuint (live_mrs (), ==, 1);
  rdma_rcache_free (c);
  g_assert_cmpuint (live_mrs (), ==, 0);
}

/* Held entries stay whatever the pressure; with everything held, acquire fails. */
/* lookup serves only what is cached: no registration, no miss counted */
static void
test_lookup (Fixture *f, gconstpointer data)
{
  RdmaRcache *c = rdma_rcache_new (f->pd, 16, 1 << 20);
  RdmaRcacheEntry *a, *found;
  RdmaRcacheStats s;

  (void) data;
  g_assert_null (rdma_rcache_lookup (c, f->mem, ps, IBV_ACCESS_LOCAL_WRITE));
  g_assert_cmpuint (live_mrs (), ==, 0);
  a = get (c, f->mem, 2 * ps, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
  rdma_rcache_release (c, a);
  s = stats (c);
  found = rdma_rcache_lookup (c, f->mem + 10, ps, IBV_ACCESS_MW_BIND);
  if (rdma_rcache_watching (c))
  {
    g_assert_true (found == a);
    g_assert_cmpuint (stats (c).hits, ==, s.hits + 1);
    g_assert_cmpuint (stats (c).held, ==, 1);
    rdma_rcache_release (c, found);
  }
  else
  {
    g_assert_null (found); /* nothing was cached */
  }
  /* more than the cached region covers, or more access: not found, nothing registered */
  g_assert_null (rdma_rcache_lookup (c, f->mem + ps, 2 * ps, IBV_ACCESS_LOCAL_WRITE));
  g_assert_null (rdma_rcache_lookup (c, f->mem, ps, IBV_ACCESS_REMOTE_READ));
  g_assert_cmpuint (stats (c).misses, ==, s.misses);
  g_assert_cmpuint (live_mrs (), ==, rdma_rcache_watching (c) ? 1 : 0);
  rdma_rcache_free (c);
  g_assert_cmpuint (live_mrs (), ==, 0);
}

/* Two caches (two connections, two PDs) keep the same buffer: both watch it, an unmap
 * reaches both, and one that goes leaves the other's watch in place. */
static void
test_shared (Fixture *f, gconstpointer data)
{
  struct ibv_pd *pd2 = rdma_verbs->alloc_pd (NULL);
  RdmaRcache *a = rdma_rcache_new (f->pd, 16, 1 << 20);
  RdmaRcache *b = rdma_rcache_new (pd2, 16, 1 << 20);
  guint8 *buf = map_pages (4);
  RdmaRcacheEntry *e;

  (void) data;
  if (skip_unless_watching (a))
  {
    rdma_rcache_free (b);
    g_assert_cmpint (rdma_verbs->dealloc_pd (pd2), ==, 0);
    munmap (buf, 4 * ps);
    return;
  }
  memset (buf, 1, 4 * ps);
  rdma_rcache_release (a, get (a, buf, 4 * ps, IBV_ACCESS_LOCAL_WRITE));
  rdma_rcache_release (b, get (b, buf + 100, 2 * ps, IBV_ACCESS_LOCAL_WRITE));
  /* each cache kept its registration: the second acquire of each is a hit */
  e = get (a, buf, 4 * ps, IBV_ACCESS_LOCAL_WRITE);
  rdma_rcache_release (a, e);
  e = get (b, buf + 100, 2 * ps, IBV_ACCESS_LOCAL_WRITE);
  rdma_rcache_release (b, e);
  g_assert_cmpuint (stats (a).hits, ==, 1);
  g_assert_cmpuint (stats (b).hits, ==, 1);
  g_assert_cmpuint (stats (a).uncached + stats (b).uncached, ==, 0);
  g_assert_cmpuint (live_mrs (), ==, 1 + 2); /* pd2 and the two registrations */

  g_assert_false (other_may_watch (buf + 3 * ps));
  rdma_rcache_free (a);
  g_assert_cmpuint (live_mrs (), ==, 1 + 1);
  /* the page only a watched is let go; the ones b still needs are not */
  g_assert_true (other_may_watch (buf + 3 * ps));
  g_assert_false (other_may_watch (buf + ps));
  /* b still hears of its pages going */
  g_assert_cmpint (munmap (buf + ps, ps), ==, 0);
  g_assert_cmpuint (stats (b).invalidations, ==, 1);
  g_assert_cmpuint (live_mrs (), ==, 1);
  rdma_rcache_free (b);
  g_assert_cmpint (rdma_verbs->dealloc_pd (pd2), ==, 0);
  munmap (buf, 4 * ps);
}

static void
test_held (Fixture *f, gconstpointer data)
{
  RdmaRcache *c = rdma_rcache_new (f->pd, 2, 4 * ps);
  RdmaRcacheEntry *a, *b, *e;
  GError *error = NULL;
  RdmaRcacheStats s;

  (void) data;
  a = get (c, f->mem, 64, 0); /* held throughout */
  b = get (c, f->mem + ps, 64, 0);
  rdma_rcache_release (c, b);
  e = get (c, f->mem + 2 * ps, 64, 0); /* B goes, not A */
  g_assert_cmpuint (stats (c).evictions, ==, rdma_rcache_watching (c) ? 1 : 0);
  g_assert_cmpuint (live_mrs (), ==, 2);

  /* both held: no room for a third */
  g_assert_null (rdma_rcache_acquire (c, f->mem + 3 * ps, 64, 0, &error));
  g_assert_error (error, RDMA_ENGINE_ERROR, RDMA_ERR_NO_MEMORY);
  g_assert_nonnull (strstr (error->message, "registration cache full"));
  g_clear_error (&error);
  /* larger than the byte bound alone */
  g_assert_null (rdma_rcache_acquire (c, f->mem, 5 * ps, 0, &error));
  g_assert_error (error, RDMA_ENGINE_ERROR, RDMA_ERR_NO_MEMORY);
  g_clear_error (&error);
  s = stats (c);
  g_assert_cmpuint (s.entries, ==, 2);
  g_assert_cmpuint (s.held, ==, 2);
  g_assert_cmpuint (live_mrs (), ==, 2);
  /* A still the same registration */
  if (rdma_rcache_watching (c))
  {
    RdmaRcacheEntry *again = get (c, f->mem, 64, 0);

    g_assert_true (again == a);
    rdma_rcache_release (c, again);
  }

  rdma_rcache_release (c, e);
  e = get (c, f->mem + 3 * ps, 64, 0); /* room once one is free */
  rdma_rcache_release (c, e);
  rdma_rcache_release (c, a);
  rdma_rcache_free (c);
  g_assert_cmpuint (live_mrs (), ==, 0);
}

/* The stale case: the same address, other memory. */
static void
test_stale (Fixture *f, gconstpointer data)
{
  RdmaRcache *c = rdma_rcache_new (f->pd, 16, 1 << 20);
  guint8 *buf = map_pages (4), *again;
  RdmaRcacheEntry *e, *held;
  guint32 old_key;
  RdmaRcacheStats s;

  (void) data;
  if (skip_unless_watching (c))
  {
    munmap (buf, 4 * ps);
    return;
  }
  /* A first event for the watcher thread: under ASan its first calls map memory of their own,
   * which could land where a buffer was just unmapped and make the remaps below fail. */
  {
    guint8 *scratch = map_pages (1);

    e = get (c, scratch, 64, 0);
    rdma_rcache_release (c, e);
    g_assert_cmpint (munmap (scratch, ps), ==, 0);
    g_assert_cmpuint (stats (c).invalidations, ==, 1);
    g_assert_cmpuint (live_mrs (), ==, 0);
  }

  memset (buf, 1, 4 * ps);
  e = get (c, buf, 4 * ps, IBV_ACCESS_LOCAL_WRITE);
  old_key = e->lkey;
  rdma_rcache_release (c, e);
  e = get (c, buf, 4 * ps, IBV_ACCESS_LOCAL_WRITE);
  g_assert_cmpuint (e->lkey, ==, old_key); /* cached */
  rdma_rcache_release (c, e);

  g_assert_cmpint (munmap (buf, 4 * ps), ==, 0);
  again = mmap (buf, 4 * ps, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  g_assert_true (again == buf);
  e = get (c, buf, 4 * ps, IBV_ACCESS_LOCAL_WRITE);
  g_assert_cmpuint (e->lkey, !=, old_key); /* a new registration */
  s = stats (c);
  g_assert_cmpuint (s.invalidations, ==, 2);
  g_assert_cmpuint (s.misses, ==, 3);
  g_assert_cmpuint (s.entries, ==, 1);
  g_assert_cmpuint (live_mrs (), ==, 1); /* the old one deregistered */
  rdma_rcache_release (c, e);

  /* MAP_FIXED over part of it (no munmap call) */
  old_key = e->lkey;
  again = mmap (buf + ps, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
                0);
  g_assert_true (again == buf + ps);
  e = get (c, buf, 64, IBV_ACCESS_LOCAL_WRITE);
  g_assert_cmpuint (e->lkey, !=, old_key);
  g_assert_cmpuint (stats (c).invalidations, ==, 3);
  rdma_rcache_release (c, e);

  /* pages dropped (what glibc does when it trims a heap): new zero pages behind the range */
  old_key = e->lkey;
  g_assert_cmpint (madvise (buf, ps, MADV_DONTNEED), ==, 0);
  e = get (c, buf, 64, IBV_ACCESS_LOCAL_WRITE);
  g_assert_cmpuint (e->lkey, !=, old_key);
  g_assert_cmpuint (stats (c).invalidations, ==, 4);

  /* unmapped while held: dropped from the cache now, deregistered at its release */
  held = e;
  g_assert_cmpint (munmap (buf, 4 * ps), ==, 0);
  again = mmap (buf, 4 * ps, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  g_assert_true (again == buf);
  e = get (c, buf, 64, IBV_ACCESS_LOCAL_WRITE);
  g_assert_true (e != held);
  s = stats (c);
  g_assert_cmpuint (s.invalidations, ==, 5);
  g_assert_cmpuint (s.entries, ==, 2);
  g_assert_cmpuint (live_mrs (), ==, 2);
  rdma_rcache_release (c, held);
  g_assert_cmpuint (live_mrs (), ==, 1);
  rdma_rcache_release (c, e);

  /* an unmap elsewhere leaves it */
  {
    guint8 *other = map_pages (1);

    e = get (c, other, 64, 0);
    rdma_rcache_release (c, e);
    g_assert_cmpint (munmap (other, ps), ==, 0);
    g_assert_cmpuint (stats (c).invalidations, ==, 6);
    e = get (c, buf, 64, IBV_ACCESS_LOCAL_WRITE);
    g_assert_cmpuint (stats (c).hits, ==, 2);
    rdma_rcache_release (c, e);
  }

  rdma_rcache_free (c);
  g_assert_cmpuint (live_mrs (), ==, 0);
  munmap (buf, 4 * ps);
}

typedef struct
{
  RdmaRcache *cache;
  guint8 *mem;
  guint seed;
  guint acquires;
} Worker;

#define WORKER_ROUNDS 3000
#define WORKER_BUFS 16

static gpointer
worker (gpointer data)
{
  Worker *w = data;
  GRand *rand = g_rand_new_with_seed (w->seed);
  guint i;

  for (i = 0; i < WORKER_ROUNDS; i++)
  {
    guint8 *p = w->mem + g_rand_int_range (rand, 0, WORKER_BUFS) * ps;
    guint8 *q = w->mem + g_rand_int_range (rand, 0, WORKER_BUFS) * ps;
    gsize off = g_rand_int_range (rand, 0, 64);
    RdmaRcacheEntry *a = get (w->cache, p + off, 128, 0);
    RdmaRcacheEntry *b = get (w->cache, q, ps, 0);

    g_assert_cmpuint (a->lkey, !=, 0);
    rdma_rcache_release (w->cache, a);
    rdma_rcache_release (w->cache, b);
    w->acquires += 2;
  }
  g_rand_free (rand);
  return NULL;
}

/* Four threads, two held each at most, eight entries: evictions all the time, never an
 * error (one entry can always be evicted or is free), and the counts add up. */
/* Registers @len bytes at @buf and asserts that a second acquire is the cached entry; its
 * key. */
static guint32
cached_key (RdmaRcache *c, guint8 *buf, gsize len)
{
  RdmaRcacheEntry *e = get (c, buf, len, IBV_ACCESS_LOCAL_WRITE);
  guint32 key = e->lkey;

  rdma_rcache_release (c, e);
  e = get (c, buf, len, IBV_ACCESS_LOCAL_WRITE);
  g_assert_cmpuint (e->lkey, ==, key);
  rdma_rcache_release (c, e);
  return key;
}

static gpointer
remap_thread (gpointer buf)
{
  /* a new mapping in the place of the old, whose unmap event this call waits for: it
   * returns only once the watch reads it */
  g_assert_true (
      mmap (buf, 4 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0)
      == buf);
  return NULL;
}

/* An munmap frees its range before its event is read: another thread can map the same address
 * and look it up while the unmap is in flight.  The cache must not answer with the old
 * registration (its pages are not the new mapping's: READs into it would be lost).  The new
 * mapping replaces the old in one mmap (MAP_FIXED), whose unmap event is in flight the same
 * way: an munmap and a second mmap left a moment in which another mapping of the process
 * could take the hole (1 run in 40 to 150, the hole part of a larger mapping then). */
static void
test_unmap_in_flight (Fixture *f, gconstpointer data)
{
  RdmaRcache *c = rdma_rcache_new (f->pd, 16, 1 << 20);
  guint8 *buf = map_pages (4);
  volatile guint8 *seen = buf;
  RdmaRcacheEntry *e;
  guint32 old_key;
  GThread *unmapper;
  gint64 until;

  (void) data;
  if (skip_unless_watching (c))
  {
    munmap (buf, 4 * ps);
    return;
  }
  memset (buf, 1, 4 * ps);
  old_key = cached_key (c, buf, 4 * ps);

  rdma_unmap_watch_hold_for_test (TRUE);
  unmapper = g_thread_new ("unmapper", remap_thread, buf);
  /* the new mapping is in place (its pages read 0, the old ones 1) before the event of the
   * old one's unmap goes anywhere */
  until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (seen[0] != 0 && g_get_monotonic_time () < until)
    g_usleep (1000);
  g_assert_cmpuint (seen[0], ==, 0);
  memset (buf, 2, 4 * ps);

  /* the event is unread: only the memory itself can tell */
  e = rdma_rcache_lookup (c, buf, 4 * ps, IBV_ACCESS_LOCAL_WRITE);
  g_assert_null (e);
  e = get (c, buf, 4 * ps, IBV_ACCESS_LOCAL_WRITE);
  g_assert_cmpuint (e->lkey, !=, old_key); /* registered anew */
  g_assert_cmpuint (stats (c).invalidations, ==, 1);
  g_assert_cmpuint (live_mrs (), ==, 1); /* the old one deregistered */
  rdma_rcache_release (c, e);

  rdma_unmap_watch_hold_for_test (FALSE);
  g_thread_join (unmapper);
  /* the late event drops the new entry too (it cannot tell the mappings apart): a miss, not a
   * wrong hit */
  e = get (c, buf, 4 * ps, IBV_ACCESS_LOCAL_WRITE);
  rdma_rcache_release (c, e);
  g_assert_cmpuint (stats (c).misses, ==, 3);
  munmap (buf, 4 * ps);
  rdma_rcache_free (c);
  g_assert_cmpuint (live_mrs (), ==, 0);
}

static void
test_threads (Fixture *f, gconstpointer data)
{
  RdmaRcache *c = rdma_rcache_new (f->pd, 8, 1 << 20);
  Worker w[4];
  GThread *t[4];
  guint i, total = 0;
  RdmaRcacheStats s;

  (void) data;
  for (i = 0; i < 4; i++)
  {
    w[i] = (Worker){ c, f->mem, 17 + i, 0 };
    t[i] = g_thread_new ("rcache-worker", worker, &w[i]);
  }
  for (i = 0; i < 4; i++)
  {
    g_thread_join (t[i]);
    total += w[i].acquires;
  }
  s = stats (c);
  g_assert_cmpuint (s.hits + s.misses, ==, total);
  g_assert_cmpuint (s.held, ==, 0);
  g_assert_cmpuint (s.entries, <=, 8);
  g_assert_cmpuint (s.entries, ==, live_mrs ());
  if (rdma_rcache_watching (c))
  {
    g_assert_cmpuint (s.hits, >, 0);
    g_assert_cmpuint (s.evictions, >, 0);
    g_assert_cmpuint (s.misses - s.evictions, ==, s.entries);
  }
  rdma_rcache_free (c);
  g_assert_cmpuint (live_mrs (), ==, 0);
}

/* Memory userfaultfd cannot watch (a private mapping of a regular file): registered for the
 * one use, never cached. */
static void
test_uncached (Fixture *f, gconstpointer data)
{
  RdmaRcache *c = rdma_rcache_new (f->pd, 4, 1 << 20);
  int fd = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  guint8 *file;
  RdmaRcacheEntry *a, *b;
  RdmaRcacheStats s;

  (void) data;
  g_assert_cmpint (fd, >=, 0);
  file = mmap (NULL, ps, PROT_READ, MAP_PRIVATE, fd, 0);
  g_assert_true (file != MAP_FAILED);
  close (fd);
  a = get (c, file, 64, 0);
  b = get (c, file, 64, 0);
  g_assert_true (a != b);
  g_assert_cmpuint (a->lkey, !=, b->lkey);
  s = stats (c);
  g_assert_cmpuint (s.misses, ==, 2);
  g_assert_cmpuint (s.uncached, ==, 2);
  g_assert_cmpuint (s.hits, ==, 0);
  g_assert_cmpuint (s.entries, ==, 2);
  rdma_rcache_release (c, a);
  g_assert_cmpuint (live_mrs (), ==, 1); /* gone at its release */
  rdma_rcache_release (c, b);
  assert_empty (c);
  rdma_rcache_free (c);
  munmap (file, ps);
}

/* Threads acquiring slots while another maps new memory over them (mmap MAP_FIXED): never a
 * registration older than a replacement that ended before the acquire began.  The provider's
 * keys only grow, so a key taken before a replacement starts bounds the keys of the
 * registrations it makes stale. */
#define SLOTS 8

typedef struct
{
  RdmaRcache *cache;
  struct ibv_pd *pd;
  guint8 *mem;
  gint stop;
  guint32 min_key[SLOTS];  /* a registration of the slot with a lower lkey is stale */
  guint replaced, checked; /* slots replaced, acquires checked */
} Churn;

static gpointer
churn_mapper (gpointer data)
{
  Churn *ch = data;
  guint i;

  for (i = 0; i < 400; i++)
  {
    guint slot = i % SLOTS;
    struct ibv_mr *probe = rdma_verbs->reg_mr (ch->pd, ch->mem, 1, 0);
    guint32 key = probe->lkey;
    void *p;

    rdma_verbs->dereg_mr (probe);
    p = mmap (ch->mem + slot * ps, ps, PROT_READ | PROT_WRITE,
              MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    g_assert_true (p == ch->mem + slot * ps);
    g_atomic_int_set ((gint *) &ch->min_key[slot], (gint) key);
    ch->replaced++;
    g_usleep (100);
  }
  g_atomic_int_set (&ch->stop, 1);
  return NULL;
}

static gpointer
churn_user (gpointer data)
{
  Churn *ch = data;
  while (!g_atomic_int_get (&ch->stop))
  {
    guint slot = g_random_int_range (0, SLOTS);
    guint32 min = (guint32) g_atomic_int_get ((gint *) &ch->min_key[slot]);
    RdmaRcacheEntry *e = get (ch->cache, ch->mem + slot * ps + 8, 256, 0);

    g_assert_cmpuint (e->lkey, >, min);
    rdma_rcache_release (ch->cache, e);
    g_atomic_int_inc ((gint *) &ch->checked);
  }
  return NULL;
}

static void
test_churn (Fixture *f, gconstpointer data)
{
  Churn ch = { rdma_rcache_new (f->pd, SLOTS, 1 << 20), f->pd, f->mem, 0, { 0 }, 0, 0 };
  GThread *mapper, *users[3];
  RdmaRcacheStats s;
  guint i;

  (void) data;
  if (skip_unless_watching (ch.cache))
    return;
  mapper = g_thread_new ("rcache-mapper", churn_mapper, &ch);
  for (i = 0; i < 3; i++)
    users[i] = g_thread_new ("rcache-user", churn_user, &ch);
  g_thread_join (mapper);
  for (i = 0; i < 3; i++)
    g_thread_join (users[i]);
  s = stats (ch.cache);
  g_test_message ("%u replacements, %u acquires: %" G_GUINT64_FORMAT " hits, %" G_GUINT64_FORMAT
                  " invalidations",
                  ch.replaced, ch.checked, s.hits, s.invalidations);
  g_assert_cmpuint (ch.replaced, ==, 400);
  g_assert_cmpuint (s.hits + s.misses, ==, ch.checked);
  g_assert_cmpuint (s.invalidations, >, 0);
  g_assert_cmpuint (s.hits, >, 0);
  g_assert_cmpuint (s.held, ==, 0);
  g_assert_cmpuint (s.entries, ==, live_mrs ());
  rdma_rcache_free (ch.cache);
  g_assert_cmpuint (live_mrs (), ==, 0);
}

/* The VmFlags of the mapping that holds @addr (/proc/self/smaps), or NULL. */
static gchar *
vma_flags (gconstpointer addr)
{
  g_autofree gchar *smaps = NULL;
  g_auto (GStrv) lines = NULL;
  gboolean inside = FALSE;

  if (!g_file_get_contents ("/proc/self/smaps", &smaps, NULL, NULL))
    return NULL;
  lines = g_strsplit (smaps, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
  {
    guint64 lo, hi;

    /* a mapping's line: "START-END perms ..."; its fields' lines are "Name: value" */
    if (g_ascii_isxdigit (lines[i][0])
        && sscanf (lines[i], "%" G_GINT64_MODIFIER "x-%" G_GINT64_MODIFIER "x", &lo, &hi) == 2)
      inside = (guintptr) addr >= lo && (guintptr) addr < hi;
    else if (inside && g_str_has_prefix (lines[i], "VmFlags:"))
      return g_strdup (lines[i] + strlen ("VmFlags:"));
  }
  return NULL;
}

static gboolean
watched_by_userfaultfd (gconstpointer addr)
{
  g_autofree gchar *flags = vma_flags (addr);

  /* uw: registered with userfaultfd for write protection, as the watch registers */
  return flags != NULL && strstr (flags, " uw") != NULL;
}

/* A watched buffer moved by mremap (MREMAP_MAYMOVE): the entry is dropped, and the pages at
 * their new place are no longer attached to the process's userfaultfd, with a cache still
 * alive (the watch kept them until the last cache went). */
static void
test_remap_detached (Fixture *f, gconstpointer data)
{
  RdmaRcache *c = rdma_rcache_new (f->pd, 16, 1 << 20);
  guint8 *buf = map_pages (4), *dest = map_pages (4), *moved;
  RdmaRcacheEntry *e;
  guint32 old_key;

  (void) data;
  if (skip_unless_watching (c))
  {
    munmap (buf, 4 * ps);
    munmap (dest, 4 * ps);
    return;
  }
  memset (buf, 7, 4 * ps);
  e = get (c, buf, 4 * ps, IBV_ACCESS_LOCAL_WRITE);
  old_key = e->lkey;
  rdma_rcache_release (c, e);
  if (!watched_by_userfaultfd (buf))
  {
    rdma_rcache_free (c);
    munmap (buf, 4 * ps);
    munmap (dest, 4 * ps);
    g_test_skip ("this kernel's smaps does not show userfaultfd registrations");
    return;
  }
  moved = mremap (buf, 4 * ps, 4 * ps, MREMAP_MAYMOVE | MREMAP_FIXED, dest);
  g_assert_true (moved == dest);
  g_assert_cmpuint (moved[5], ==, 7);
  g_assert_false (watched_by_userfaultfd (moved));
  /* the old place is gone from the cache: mapped anew, it gets a registration of its own */
  g_assert_true (mmap (buf, 4 * ps, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)
                 == buf);
  e = get (c, buf, 4 * ps, IBV_ACCESS_LOCAL_WRITE);
  g_assert_cmpuint (e->lkey, !=, old_key);
  rdma_rcache_release (c, e);
  rdma_rcache_free (c);
  munmap (buf, 4 * ps);
  munmap (moved, 4 * ps);
}

/* Freeing a cache with an entry held: a warning, counted, and nothing left registered. */
static void
test_free_held (Fixture *f, gconstpointer data)
{
  RdmaRcache *c = rdma_rcache_new (f->pd, 4, 1 << 20);
  guint64 before = rdma_rcache_misuse_total ();

  (void) data;
  get (c, f->mem, 64, 0);
  get (c, f->mem + ps, 64, IBV_ACCESS_LOCAL_WRITE);
  g_assert_cmpuint (live_mrs (), ==, 2);
  g_test_expect_message (NULL, G_LOG_LEVEL_WARNING, "*2 entries still held*");
  rdma_rcache_free (c);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (rdma_rcache_misuse_total (), ==, before + 2);
  g_assert_cmpuint (live_mrs (), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  ps = (gsize) sysconf (_SC_PAGESIZE);
  fake_verbs_install ();
#define ADD(path, fn) g_test_add (path, Fixture, NULL, setup, fn, teardown)
  ADD ("/rcache/hit_miss", test_hit_miss);
  ADD ("/rcache/lru/entries", test_lru_entries);
  ADD ("/rcache/lru/bytes", test_lru_bytes);
  ADD ("/rcache/lookup", test_lookup);
  ADD ("/rcache/shared", test_shared);
  ADD ("/rcache/held", test_held);
  ADD ("/rcache/stale", test_stale);
  ADD ("/rcache/unmap_in_flight", test_unmap_in_flight);
  ADD ("/rcache/threads", test_threads);
  ADD ("/rcache/uncached", test_uncached);
  ADD ("/rcache/churn", test_churn);
  ADD ("/rcache/free_held", test_free_held);
  ADD ("/rcache/remap_detached", test_remap_detached);
  return g_test_run ();
}
