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
 * rdma_block.c: the watcher of owners blocked in their completion channel's read (see
 * rdma_block.h).
 *
 * An owner's place (state) is RUNNING, BLOCKED (it is in, or about to enter, the read) or
 * WATCHER (the watcher acts for it).  The watcher takes the place only from BLOCKED, by a
 * compare-and-exchange, and gives it back as BLOCKED; the owner leaves BLOCKED the same way,
 * waiting while the watcher holds it.  So the two never run the owner's code together, and the
 * sequentially consistent atomics order what each wrote before.
 *
 * Registrations are found by number, under the lock, both from epoll's events and by the
 * owner's unregistering: the watcher never touches a registration that is gone.
 */
#include "config.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rdma_block.h"
#include "rdma_status.h"

enum
{
  RUNNING,
  BLOCKED,
  WATCHER
};

/* epoll's data: the registration's number, and which of its fds */
#define FD_KICK 0u
#define FD_CM 1u
#define FD_WAKE 2u
#define DATA(id, which) ((guint64) (id) << 2 | (which))

#define ATOMIC_GET(p) __atomic_load_n ((p), __ATOMIC_SEQ_CST)
#define ATOMIC_SET(p, v) __atomic_store_n ((p), (v), __ATOMIC_SEQ_CST)

/* One watcher: a new one starts if a registration comes while the last one stops. */
typedef struct
{
  GThread *thread;
  int epfd, kick_fd;
  GHashTable *regs; /* id -> RdmaBlock * */
  gboolean stopping;
  gint64 planned; /* when it wakes next (atomic) */
} Watcher;

struct _RdmaBlock
{
  Watcher *w;
  guint64 id;
  int cm_fd, wake_fd;
  const RdmaBlockOps *ops;
  gpointer owner;
  gint state;         /* RUNNING, BLOCKED, WATCHER (atomic) */
  gint pending;       /* RdmaBlockWhy its fds said, not yet seen by the owner */
  gint woke;          /* RdmaBlockWhy the watcher forced the owner awake for */
  gint64 deadline_us; /* published by the owner as it blocks (0: none) */
  gint64 timer_us;
  GError *failure; /* RDMA_BLOCK_FAILED: the tick's */
};

static GMutex lock;
static Watcher *current; /* (nullable) the one that takes registrations */
static guint64 next_id = 1;

static void
kick (Watcher *w)
{
  guint64 one = 1;

  if (write (w->kick_fd, &one, sizeof one) != sizeof one && errno != EAGAIN)
    g_warning ("ThriftRdma: waking the watcher: %s", g_strerror (errno));
}

/* Acts for @b if it is blocked and something needs it (the lock held). */
static void
act (RdmaBlock *b, gint64 now)
{
  guint why;
  gint64 t;

  if (!g_atomic_int_compare_and_exchange (&b->state, BLOCKED, WATCHER))
    return;
  why = (guint) g_atomic_int_get (&b->pending);
  if (g_atomic_int_get (&b->woke) != 0)
  {
    g_atomic_int_set (&b->state, BLOCKED); /* woken already: the owner is on its way */
    return;
  }
  t = ATOMIC_GET (&b->deadline_us);
  if (why == 0 && t > 0 && now >= t)
    why |= RDMA_BLOCK_DEADLINE;
  t = ATOMIC_GET (&b->timer_us);
  if (why == 0 && t > 0 && now >= t)
  {
    if (b->ops->tick (b->owner, now, &b->failure))
      ATOMIC_SET (&b->timer_us, b->ops->timer_due (b->owner));
    else
      why |= RDMA_BLOCK_FAILED;
  }
  if (why != 0)
  {
    b->ops->force (b->owner);
    ATOMIC_SET (&b->deadline_us, 0);
    ATOMIC_SET (&b->timer_us, 0);
    g_atomic_int_or (&b->woke, why);
  }
  g_atomic_int_set (&b->state, BLOCKED);
}

static gint64
earliest (gint64 a, gint64 b)
{
  return a == 0 ? b : b == 0 ? a : MIN (a, b);
}

/* The earliest due time after @now of the registrations (the lock held). */
static gint64
next_due (Watcher *w, gint64 now)
{
  GHashTableIter it;
  gpointer v;
  gint64 next = G_MAXINT64;

  g_hash_table_iter_init (&it, w->regs);
  while (g_hash_table_iter_next (&it, NULL, &v))
  {
    RdmaBlock *b = v;
    gint64 due = earliest (ATOMIC_GET (&b->deadline_us), ATOMIC_GET (&b->timer_us));

    if (due > 0 && g_atomic_int_get (&b->state) == BLOCKED && due <= now)
      act (b, now);
    else if (due > now && due < next)
      next = due;
  }
  return next;
}

static gpointer
watcher_main (gpointer data)
{
  Watcher *w = data;
  struct epoll_event ev[16];

  g_mutex_lock (&lock);
  while (!w->stopping)
  {
    gint64 now = g_get_monotonic_time (), next;
    int n, timeout;

    next = next_due (w, now);
    /* published first, then looked again: an owner that published its time before this
     * store is seen by the second look, one after it sees the store and kicks */
    ATOMIC_SET (&w->planned, next);
    next = MIN (next, next_due (w, now));
    ATOMIC_SET (&w->planned, next);
    g_mutex_unlock (&lock);
    timeout = next == G_MAXINT64 ? -1 : (int) MIN ((next - now + 999) / 1000, G_MAXINT);
    n = epoll_wait (w->epfd, ev, G_N_ELEMENTS (ev), timeout);
    if (n < 0 && errno != EINTR)
      g_warning ("ThriftRdma: the watcher's epoll_wait: %s", g_strerror (errno));
    g_mutex_lock (&lock);
    now = g_get_monotonic_time ();
    for (int i = 0; i < n; i++)
    {
      guint which = (guint) (ev[i].data.u64 & 3);
      RdmaBlock *b;

      if (which == FD_KICK)
      {
        guint64 count;
        if (read (w->kick_fd, &count, sizeof count) < 0)
        {
          /* EAGAIN: read already */
        }
        continue;
      }
      b = g_hash_table_lookup (w->regs, &(guint64){ ev[i].data.u64 >> 2 });
      if (b == NULL)
        continue; /* unregistered since */
      g_atomic_int_or (&b->pending, which == FD_CM ? RDMA_BLOCK_CM : RDMA_BLOCK_INTERRUPT);
      act (b, now);
    }
  }
  g_mutex_unlock (&lock);
  return NULL;
}

/* A watcher: its epoll set, eventfd and thread (the lock held). */
static Watcher *
start (GError **error)
{
  Watcher *w = g_new0 (Watcher, 1);
  struct epoll_event ev = { .events = EPOLLIN, .data.u64 = DATA (0, FD_KICK) };

  w->epfd = epoll_create1 (EPOLL_CLOEXEC);
  w->kick_fd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (w->epfd < 0 || w->kick_fd < 0 || epoll_ctl (w->epfd, EPOLL_CTL_ADD, w->kick_fd, &ev) != 0)
  {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_SYSTEM, "epoll", err, -1,
                           "the watcher of blocked waits");
    if (w->epfd >= 0)
      close (w->epfd);
    if (w->kick_fd >= 0)
      close (w->kick_fd);
    g_free (w);
    return NULL;
  }
  w->regs = g_hash_table_new (g_int64_hash, g_int64_equal);
  w->planned = G_MAXINT64;
  w->thread = g_thread_new ("rdma-watcher", watcher_main, w);
  return w;
}

static gboolean
watch_fd (Watcher *w, int fd, guint64 data, int op)
{
  struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.u64 = data };

  return fd < 0 || epoll_ctl (w->epfd, op, fd, &ev) == 0;
}

RdmaBlock *
rdma_block_register (int cm_fd, int wake_fd, const RdmaBlockOps *ops, gpointer owner,
                     GError **error)
{
  RdmaBlock *b;

  g_mutex_lock (&lock);
  if (current == NULL && (current = start (error)) == NULL)
  {
    g_mutex_unlock (&lock);
    return NULL;
  }
  b = g_new0 (RdmaBlock, 1);
  *b = (RdmaBlock){ .w = current,
                    .id = next_id++,
                    .cm_fd = cm_fd,
                    .wake_fd = wake_fd,
                    .ops = ops,
                    .owner = owner,
                    .state = RUNNING };
  if (!watch_fd (current, cm_fd, DATA (b->id, FD_CM), EPOLL_CTL_ADD)
      || !watch_fd (current, wake_fd, DATA (b->id, FD_WAKE), EPOLL_CTL_ADD))
  {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_SYSTEM, "epoll_ctl", err, -1,
                           "the watcher of blocked waits");
    if (cm_fd >= 0)
      epoll_ctl (current->epfd, EPOLL_CTL_DEL, cm_fd, NULL);
    g_free (b);
    b = NULL;
  }
  else
  {
    g_hash_table_insert (current->regs, &b->id, b);
  }
  g_mutex_unlock (&lock);
  return b;
}

void
rdma_block_unregister (RdmaBlock *b)
{
  Watcher *w, *last = NULL;

  if (b == NULL)
    return;
  w = b->w;
  g_mutex_lock (&lock);
  if (b->cm_fd >= 0)
    epoll_ctl (w->epfd, EPOLL_CTL_DEL, b->cm_fd, NULL);
  if (b->wake_fd >= 0)
    epoll_ctl (w->epfd, EPOLL_CTL_DEL, b->wake_fd, NULL);
  g_hash_table_remove (w->regs, &b->id);
  /* the last one stops it (a registration that comes meanwhile starts another) */
  if (g_hash_table_size (w->regs) == 0)
  {
    w->stopping = TRUE;
    if (current == w)
      current = NULL;
    last = w;
    kick (w);
  }
  g_mutex_unlock (&lock);
  g_clear_error (&b->failure);
  g_free (b);
  if (last != NULL)
  {
    g_thread_join (last->thread);
    close (last->epfd);
    close (last->kick_fd);
    g_hash_table_unref (last->regs);
    g_free (last);
  }
}

guint
rdma_block_enter (RdmaBlock *b, gint64 deadline_us, gint64 timer_us)
{
  gint64 due = earliest (deadline_us, timer_us);

  ATOMIC_SET (&b->deadline_us, deadline_us);
  ATOMIC_SET (&b->timer_us, timer_us);
  g_atomic_int_set (&b->state, BLOCKED);
  if (g_atomic_int_get (&b->pending) != 0)
    return (guint) g_atomic_int_get (&b->pending);
  /* the one system call a wait may add: a time earlier than the watcher sleeps until */
  if (due != 0 && due < ATOMIC_GET (&b->w->planned))
    kick (b->w);
  return 0;
}

guint
rdma_block_leave (RdmaBlock *b, GError **error)
{
  guint why;

  while (!g_atomic_int_compare_and_exchange (&b->state, BLOCKED, RUNNING))
    g_thread_yield (); /* the watcher acts for us: a few verbs calls */
  /* (the due times stay: one in the future makes the watcher's next wake-up, so the next
   * wait's, later, needs no kick) */
  why = (guint) __atomic_exchange_n (&b->woke, 0, __ATOMIC_SEQ_CST)
        | (guint) __atomic_exchange_n (&b->pending, 0, __ATOMIC_SEQ_CST);
  if (b->failure != NULL)
    g_propagate_error (error, g_steal_pointer (&b->failure));
  return why;
}

void
rdma_block_rearm_cm (RdmaBlock *b)
{
  g_mutex_lock (&lock);
  if (!watch_fd (b->w, b->cm_fd, DATA (b->id, FD_CM), EPOLL_CTL_MOD))
    g_warning ("ThriftRdma: watching a CM channel again: %s", g_strerror (errno));
  g_mutex_unlock (&lock);
}

guint
rdma_block_threads (void)
{
  guint n;

  g_mutex_lock (&lock);
  n = current != NULL;
  g_mutex_unlock (&lock);
  return n;
}

guint
rdma_block_registered (void)
{
  guint n;

  g_mutex_lock (&lock);
  n = current != NULL ? g_hash_table_size (current->regs) : 0;
  g_mutex_unlock (&lock);
  return n;
}
