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

/* rdma_unmap_watch.c: the process's userfaultfd watch (see rdma_unmap_watch.h). */
#include "config.h"

#include "rdma_unmap_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

/* Taken by users, never by the thread: the references, the descriptors, the page counts. */
static GMutex watch_lock;
static guint refs;
static int uffd = -1;
static int stop_fd = -1;
static GThread *thread;
static GArray *watched; /* RdmaUnmapRange (page-aligned), one per add not yet removed */

/* Taken by the thread while it reads and records (and detaches an mremap's destination), by
 * readers of the ring, and by an add around its registration; nobody allocates or frees
 * under it. */
static GMutex ev_lock;
static RdmaUnmapRange ring[RDMA_UNMAP_WATCH_RING];
static guint64 ev_seq; /* events recorded since the process started */

/* rdma_unmap_watch_hold_for_test */
static GMutex hold_lock;
static GCond hold_cond;
static gboolean held;

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

/* Reads every event as it comes.  Reading and recording happen under ev_lock, so an munmap
 * that returned (its event read) is in the ring for any reader that takes ev_lock after it. */
static gpointer
watch_thread (gpointer data)
{
  struct pollfd fds[2] = { { uffd, POLLIN, 0 }, { stop_fd, POLLIN, 0 } };

  (void) data;
  for (;;)
  {
    if (poll (fds, 2, -1) < 0)
    {
      if (errno == EINTR)
        continue;
      g_warning ("rdma_unmap_watch: poll on userfaultfd: %s", g_strerror (errno));
      return NULL;
    }
    if (fds[1].revents)
      return NULL;
    g_mutex_lock (&hold_lock);
    while (held)
      g_cond_wait (&hold_cond, &hold_lock);
    g_mutex_unlock (&hold_lock);
    g_mutex_lock (&ev_lock);
    for (;;)
    {
      struct uffd_msg msg;
      ssize_t n = read (fds[0].fd, &msg, sizeof msg);
      RdmaUnmapRange r;

      if (n != (ssize_t) sizeof msg)
        break; /* EAGAIN: drained */
      switch (msg.event)
      {
      case UFFD_EVENT_UNMAP:
      case UFFD_EVENT_REMOVE:
        r.start = msg.arg.remove.start;
        r.end = msg.arg.remove.end;
        break;
      case UFFD_EVENT_REMAP: {
        /* the registration moved with the pages and no cache knows the new place: let it go.
         * The mremap may return once the event is read, but an add of the new place
         * registers under ev_lock, so after this */
        struct uffdio_range to = { .start = msg.arg.remap.to, .len = msg.arg.remap.len };

        (void) ioctl (fds[0].fd, UFFDIO_UNREGISTER, &to);
        r.start = msg.arg.remap.from;
        r.end = msg.arg.remap.from + msg.arg.remap.len;
        break;
      }
      default:
        /* No page is write-protected, so no fault can come; nothing else is asked for. */
        continue;
      }
      ring[ev_seq % RDMA_UNMAP_WATCH_RING] = r;
      ev_seq++;
    }
    g_mutex_unlock (&ev_lock);
  }
}

/* TRUE: the page at @start is in a range attached to @fd and present (UFFDIO_ZEROPAGE
 * refuses it with EEXIST and changes nothing); FALSE: it is not attached (ENOENT: another
 * mapping, or none), or was absent (a zero page was placed there), or an unmap of attached
 * memory is in flight and stays so (EAGAIN: the kernel sets it from before the unmap until
 * its event is read). */
static gboolean
probe (int fd, guintptr start)
{
  for (guint tries = 0;; tries++)
  {
    struct uffdio_zeropage zp = { .range = { .start = start, .len = page_size () },
                                  .mode = UFFDIO_ZEROPAGE_MODE_DONTWAKE };

    if (ioctl (fd, UFFDIO_ZEROPAGE, &zp) == 0)
      return FALSE;
    if (errno == EEXIST)
      return TRUE;
    if (errno != EAGAIN || tries == 64)
      return FALSE;
    sched_yield ();
  }
}

/* Whether probe() tells on this kernel: an attached page it must find, a page not attached it
 * must not. */
static gboolean
probe_works (int fd)
{
  gsize ps = page_size ();
  guint8 *p = mmap (NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  struct uffdio_register reg = { .range = { .start = (guintptr) p, .len = ps },
                                 .mode = UFFDIO_REGISTER_MODE_WP };
  gboolean ok;

  if (p == MAP_FAILED)
    return FALSE;
  memset (p, 1, 2 * ps);
  ok = ioctl (fd, UFFDIO_REGISTER, &reg) == 0 && probe (fd, (guintptr) p)
       && !probe (fd, (guintptr) p + ps);
  /* detached first: nobody reads the unmap's event before the thread runs */
  (void) ioctl (fd, UFFDIO_UNREGISTER, &reg.range);
  munmap (p, 2 * ps);
  return ok;
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
  if (fd < 0)
  {
    g_debug ("rdma_unmap_watch: no userfaultfd (%s): caching nothing", g_strerror (errno));
    return -1;
  }
  if (ioctl (fd, UFFDIO_API, &api) < 0)
  {
    g_debug ("rdma_unmap_watch: UFFDIO_API with unmap events: %s: caching nothing",
             g_strerror (errno));
    close (fd);
    return -1;
  }
  if (!probe_works (fd))
  {
    g_debug ("rdma_unmap_watch: this kernel cannot tell a watched page from another: "
             "caching nothing");
    close (fd);
    return -1;
  }
  return fd;
}

gboolean
rdma_unmap_watch_ref (guint64 *cursor)
{
  gboolean watching;

  g_mutex_lock (&watch_lock);
  if (refs++ == 0)
  {
    uffd = uffd_open ();
    if (uffd >= 0 && (stop_fd = eventfd (0, EFD_CLOEXEC)) < 0)
    {
      close (uffd);
      uffd = -1;
    }
    if (uffd >= 0)
    {
      sigset_t all, old;

      watched = g_array_new (FALSE, FALSE, sizeof (RdmaUnmapRange));
      /* born with every signal blocked: a process signal (SIGINT for a server's stop) goes to
       * the program's threads, whose waits it is meant to end, never to ours */
      sigfillset (&all);
      pthread_sigmask (SIG_SETMASK, &all, &old);
      thread = g_thread_new ("rdma-unmap-watch", watch_thread, NULL);
      pthread_sigmask (SIG_SETMASK, &old, NULL);
    }
  }
  watching = uffd >= 0;
  g_mutex_unlock (&watch_lock);

  g_mutex_lock (&ev_lock);
  *cursor = ev_seq;
  g_mutex_unlock (&ev_lock);
  return watching;
}

void
rdma_unmap_watch_unref (void)
{
  g_mutex_lock (&watch_lock);
  if (refs == 0)
  {
    g_mutex_unlock (&watch_lock);
    g_return_if_reached ();
  }
  if (--refs == 0 && uffd >= 0)
  {
    guint64 one = 1;

    if (write (stop_fd, &one, sizeof one) != sizeof one)
      g_warning ("rdma_unmap_watch: cannot stop the watcher: %s", g_strerror (errno));
    g_thread_join (thread);
    thread = NULL;
    /* Closing the userfaultfd detaches it from every page it watches (and lets go any
     * thread held on an event nobody read). */
    close (uffd);
    close (stop_fd);
    uffd = stop_fd = -1;
    g_array_free (watched, TRUE);
    watched = NULL;
  }
  g_mutex_unlock (&watch_lock);
}

gboolean
rdma_unmap_watch_add (gconstpointer addr, gsize len)
{
  struct uffdio_register reg = { 0 };
  guintptr start, end;
  gboolean ok = FALSE;

  g_return_val_if_fail (len > 0, FALSE);
  page_span (addr, len, &start, &end);
  g_mutex_lock (&watch_lock);
  if (uffd >= 0)
  {
    int rc, err;

    reg.range.start = start;
    reg.range.len = end - start;
    reg.mode = UFFDIO_REGISTER_MODE_WP;
    /* pages attached already (by another add) are attached again harmlessly */
    g_mutex_lock (&ev_lock);
    rc = ioctl (uffd, UFFDIO_REGISTER, &reg);
    err = errno;
    g_mutex_unlock (&ev_lock);
    if (rc < 0)
    {
      g_debug ("rdma_unmap_watch: cannot watch %p+%" G_GSIZE_FORMAT " (%s)", addr, len,
               g_strerror (err));
    }
    else
    {
      RdmaUnmapRange r = { start, end };
      g_array_append_val (watched, r);
      ok = TRUE;
    }
  }
  g_mutex_unlock (&watch_lock);
  return ok;
}

static void
detach (guintptr start, guintptr end)
{
  struct uffdio_range range = { .start = start, .len = end - start };

  /* Fails harmlessly where the pages are gone already (an unmap). */
  (void) ioctl (uffd, UFFDIO_UNREGISTER, &range);
}

static gint
by_start (gconstpointer a, gconstpointer b)
{
  const RdmaUnmapRange *x = a, *y = b;

  return x->start < y->start ? -1 : x->start > y->start;
}

void
rdma_unmap_watch_remove (gconstpointer addr, gsize len)
{
  g_autoptr (GArray) others = NULL;
  guintptr start, end, at;
  guint i;

  g_return_if_fail (len > 0);
  page_span (addr, len, &start, &end);
  g_mutex_lock (&watch_lock);
  if (uffd < 0)
  {
    g_mutex_unlock (&watch_lock);
    return;
  }
  /* this add goes; the pages of the span that no other add covers are detached */
  others = g_array_new (FALSE, FALSE, sizeof (RdmaUnmapRange));
  for (i = 0; i < watched->len; i++)
  {
    RdmaUnmapRange *r = &g_array_index (watched, RdmaUnmapRange, i);

    if (r->start == start && r->end == end)
    {
      g_array_remove_index_fast (watched, i);
      break;
    }
  }
  for (i = 0; i < watched->len; i++)
  {
    RdmaUnmapRange *r = &g_array_index (watched, RdmaUnmapRange, i);

    if (r->start < end && start < r->end)
      g_array_append_val (others, *r);
  }
  g_array_sort (others, by_start);
  at = start;
  for (i = 0; i < others->len && at < end; i++)
  {
    RdmaUnmapRange *r = &g_array_index (others, RdmaUnmapRange, i);

    if (r->start > at)
      detach (at, MIN (r->start, end));
    at = MAX (at, r->end);
  }
  if (at < end)
    detach (at, end);
  g_mutex_unlock (&watch_lock);
}

gboolean
rdma_unmap_watch_still (gconstpointer addr)
{
  gsize ps = page_size ();

  /* the caller's cache holds a reference, so the descriptor stays */
  return uffd >= 0 && probe (uffd, (guintptr) addr & ~(guintptr) (ps - 1));
}

void
rdma_unmap_watch_hold_for_test (gboolean hold)
{
  g_mutex_lock (&hold_lock);
  held = hold;
  g_cond_broadcast (&hold_cond);
  g_mutex_unlock (&hold_lock);
}

gboolean
rdma_unmap_watch_events (guint64 *cursor, RdmaUnmapRange out[RDMA_UNMAP_WATCH_RING], guint *n)
{
  gboolean complete;

  g_mutex_lock (&ev_lock);
  complete = ev_seq - *cursor <= RDMA_UNMAP_WATCH_RING;
  *n = 0;
  if (complete)
    for (guint64 s = *cursor; s < ev_seq; s++)
      out[(*n)++] = ring[s % RDMA_UNMAP_WATCH_RING];
  *cursor = ev_seq;
  g_mutex_unlock (&ev_lock);
  return complete;
}
