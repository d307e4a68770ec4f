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
 * thrift_server_dispatch.c: run-to-completion dispatch (thrift_server_dispatch.h).
 *
 * Why one epoll set per connection inside the shared one: a connection has several
 * descriptors (ThriftRdma: completion and CM channels), and with each of them in the shared
 * set two dispatchers could take events of the same connection at once, one of them after
 * the other closed it.  As one entry (its own set, level-triggered inside, one-shot outside)
 * the connection fires once and only the dispatcher that took it may arm it again.  Its
 * deadline is a timerfd in its own set for the same reason: no dispatcher looks for expired
 * connections in a list others may be freeing.  A connection that is READY when it arrives
 * (bytes already buffered) fires through the same timer, set to the past.
 *
 * Turns: a connection served while every dispatcher is busy and another connection's
 * request waits gives its dispatcher up even if its next request is there
 * (thrift_server_dispatch_others_ready).  It then waits in a queue of our own, not in the
 * set: it is known to be ready, so re-arming it (a timer set to the past, epoll_ctl, the
 * wake-up, reading the timer) would cost system calls for nothing.  Dispatchers take from
 * the queue and the set in turn, so neither waits behind the other for long.
 *
 * Stopping: an eventfd in the shared set, written once and never read; level-triggered, so
 * each dispatcher woken by it leaves and the next is woken.
 *
 * No lock on a request's path: the connection a dispatcher holds is its own (one entry,
 * one-shot), the counts are atomic, and whether a busy dispatcher was replaced is decided by
 * one compare-and-swap on its phase, which the watchdog and the dispatcher both try.  The
 * lock guards the list of connections (added and closed), the turns' queue and the threads.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "thrift_server_dispatch.h"

/* A dispatcher's phase: the watchdog replaces a SERVING one (SERVING -> REPLACED, under the
 * lock), the dispatcher ends its call (SERVING -> FREE): whichever swaps first decides. */
enum
{
  PHASE_FREE,
  PHASE_SERVING,
  PHASE_REPLACED /* another dispatcher has its place: it ends after the call it is in */
};

typedef struct
{
  ThriftServerDispatch *d;
  GThread *thread;
  gint64 busy_since; /* serving a request since (monotonic), 0: not; __atomic (a
                           request's start, thrift_server_dispatch_progress) */
  gint phase;        /* atomic: PHASE_* */
} Dispatcher;

/* the dispatcher the calling thread is (NULL: not one) */
static __thread Dispatcher *current;

struct _ThriftServerDispatch
{
  const ThriftServerDispatchOps *ops;
  guint target; /* dispatchers free to take work when nothing is long */
  guint max_threads;
  int epoll_fd; /* (owned) the connections' sets and stop_fd */
  int stop_fd;  /* (owned) */

  GMutex lock;
  GCond watchdog_cond;
  gint stopping;        /* atomic, set under lock */
  gint watchdog_asleep; /* atomic, set under lock: it waits without a deadline */
  guint64 turns_taken;  /* __atomic: connections taken from the turns' queue */
  gint free;            /* atomic: dispatchers neither serving nor replaced */
  gint waiting;         /* atomic: dispatchers in epoll_wait */
  GPtrArray *threads;   /* (owned) Dispatcher *, under lock */
  GPtrArray *retired;   /* (owned) Dispatcher * that ended, to join; under lock */
  GList *all;           /* ThriftServerWatch * added and not closed; under lock */
  GQueue turns;         /* ThriftServerWatch * that gave their dispatcher up with a
                             request there, oldest first; under lock */
  gint n_turns;         /* atomic: turns.length, read without the lock */
  GThread *watchdog;
  ThriftServerDispatchStats stats; /* handovers under lock, the rest __atomic */
  gboolean start_failed; /* under lock: the last dispatcher could not be started (said once) */
};

void
thrift_server_watch_init (ThriftServerWatch *w, gpointer owner, ThriftTransport *transport)
{
  memset (w, 0, sizeof *w);
  w->owner = owner;
  w->transport = transport;
  w->set_fd = -1;
  w->timer_fd = -1;
}

void
thrift_server_watch_clear (ThriftServerWatch *w)
{
  if (w->timer_fd >= 0)
    close (w->timer_fd);
  if (w->set_fd >= 0)
    close (w->set_fd);
  w->timer_fd = w->set_fd = -1;
  w->n_in_set = 0;
  w->in_dispatch = FALSE;
}

/* Out of the shared set before its set is closed: a copy of set_fd (a forked child's) would
 * otherwise keep the entry, and its pointer to @w, alive. */
static void
leave (ThriftServerDispatch *d, ThriftServerWatch *w)
{
  if (w->in_dispatch)
    epoll_ctl (d->epoll_fd, EPOLL_CTL_DEL, w->set_fd, NULL);
  w->in_dispatch = FALSE;
}

/* timer_fd fires at @at_us (monotonic, as g_get_monotonic_time and CLOCK_MONOTONIC are). */
static gboolean
set_timer (ThriftServerWatch *w, gint64 at_us)
{
  struct itimerspec its = { .it_value = { .tv_sec = at_us / G_USEC_PER_SEC,
                                          .tv_nsec = (at_us % G_USEC_PER_SEC) * 1000 } };

  if (w->timer_fd < 0)
  {
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = -1 };

    w->timer_fd = timerfd_create (CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (w->timer_fd < 0 || epoll_ctl (w->set_fd, EPOLL_CTL_ADD, w->timer_fd, &ev) != 0)
      return FALSE;
  }
  if (timerfd_settime (w->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
    return FALSE;
  w->timer_at = at_us;
  return TRUE;
}

static void
count (guint64 *counter)
{
  __atomic_fetch_add (counter, 1, __ATOMIC_RELAXED);
}

/* epoll_ctl, counted */
static int
ctl (ThriftServerDispatch *d, int set_fd, int op, int fd, struct epoll_event *ev)
{
  count (&d->stats.set_updates);
  return epoll_ctl (set_fd, op, fd, ev);
}

/* Brings the connection's own set up to date with what it watches now, sets its timer (at
 * once if @ready) and arms it in the shared set for one event.  By its holder.  FALSE
 * (errno set) if the kernel refuses. */
static gboolean
arm (ThriftServerDispatch *d, ThriftServerWatch *w, gboolean ready)
{
  struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.ptr = w };
  gint64 due = ready ? 1 : w->deadline_us;
  gboolean was_in;

  if (w->set_fd < 0 && (w->set_fd = epoll_create1 (EPOLL_CLOEXEC)) < 0)
    return FALSE;
  for (guint i = 0; i < w->n_in_set; i++)
  {
    gboolean kept = FALSE;

    for (guint k = 0; k < w->n_fds; k++)
      kept = kept || w->fds[k].fd == w->in_set[i];
    if (!kept)
      ctl (d, w->set_fd, EPOLL_CTL_DEL, w->in_set[i], NULL);
  }
  for (guint k = 0; k < w->n_fds; k++)
  {
    /* GLib's G_IO_ flags are poll(2)'s, which are epoll's; level-triggered in here */
    struct epoll_event in = { .events = w->fds[k].events, .data.fd = w->fds[k].fd };
    gint known = -1;

    for (guint i = 0; i < w->n_in_set; i++)
      if (w->in_set[i] == w->fds[k].fd)
        known = (gint) i;
    /* a descriptor listed again is the same file (thrift_idle_watch.h): registered once,
     * which saves two system calls per request of a ThriftRdma connection */
    if (known >= 0 && w->in_events[known] == w->fds[k].events)
      continue;
    /* (should a number have come back for a new file all the same: the other operation) */
    if (ctl (d, w->set_fd, known >= 0 ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, w->fds[k].fd, &in) != 0
        && ctl (d, w->set_fd, known >= 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, w->fds[k].fd, &in) != 0)
    {
      w->n_in_set = 0;
      return FALSE;
    }
  }
  for (guint k = 0; k < w->n_fds; k++)
  {
    w->in_set[k] = w->fds[k].fd;
    w->in_events[k] = w->fds[k].events;
  }
  w->n_in_set = w->n_fds;

  /* a timer set for later than now is due fires early: the check then finds nothing and
   * the connection is armed again for its new deadline */
  if (due != 0 && (w->timer_at == 0 || due < w->timer_at) && !set_timer (w, due))
    return FALSE;

  /* armed, another dispatcher may take it at once: nothing of @w is written after the ctl */
  was_in = w->in_dispatch;
  w->in_dispatch = TRUE;
  if (ctl (d, d->epoll_fd, was_in ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, w->set_fd, &ev) != 0)
  {
    w->in_dispatch = was_in;
    return FALSE;
  }
  return TRUE;
}

/* The dispatcher is done with @w (@st: what the transport said): armed again, or closed.
 * Once armed, another dispatcher may hold it: it is not touched again here. */
static void
put_back (ThriftServerDispatch *d, ThriftServerWatch *w, ThriftIdleState st, gboolean ready)
{
  gboolean stopping = g_atomic_int_get (&d->stopping);
  int err = 0;

  if (!stopping && st == THRIFT_IDLE_READY && w->in_dispatch)
  {
    /* its request is there: it waits its turn here, not in the set (see the top) */
    g_mutex_lock (&d->lock);
    g_queue_push_tail (&d->turns, w);
    g_atomic_int_set (&d->n_turns, (gint) d->turns.length);
    g_mutex_unlock (&d->lock);
    return;
  }
  if (!stopping && (st == THRIFT_IDLE_WAIT || st == THRIFT_IDLE_READY))
  {
    if (arm (d, w, ready))
      return;
    err = errno;
  }
  if (err != 0)
    g_message ("thrift_threaded_server: cannot watch a connection (%s): closed", g_strerror (err));
  g_mutex_lock (&d->lock);
  d->all = g_list_delete_link (d->all, w->link);
  w->link = NULL;
  g_mutex_unlock (&d->lock);
  leave (d, w);
  d->ops->close (w->owner, w);
}

void
thrift_server_dispatch_add (ThriftServerDispatch *d, ThriftServerWatch *w, ThriftIdleState st)
{
  g_mutex_lock (&d->lock);
  d->all = g_list_prepend (d->all, w);
  w->link = d->all;
  g_mutex_unlock (&d->lock);
  put_back (d, w, st, st == THRIFT_IDLE_READY);
}

/* What the taken connection's descriptors and timer say now, without blocking. */
static ThriftIdleState
look (ThriftServerWatch *w)
{
  guint n = w->n_fds;
  gint64 deadline;
  ThriftIdleState st;

  if (w->timer_at != 0 && g_get_monotonic_time () >= w->timer_at)
  {
    guint64 expirations;

    if (read (w->timer_fd, &expirations, sizeof expirations) < 0)
    {
      /* EAGAIN: already taken */
    }
    w->timer_at = 0;
  }
  /* which descriptor fired is not known (its set did): ThriftRdma finds out by reading its
   * completion channel, as it would after a poll; others are polled */
  st = thrift_idle_watch_look (w->transport, w->fds, &n, &deadline);
  w->n_fds = n;
  w->deadline_us = deadline;
  return st;
}

/* Wakes the watchdog if it sleeps (under the lock). */
static void
poke_watchdog (ThriftServerDispatch *d)
{
  if (g_atomic_int_get (&d->watchdog_asleep))
    g_cond_signal (&d->watchdog_cond);
}

static gpointer
dispatcher_main (gpointer data)
{
  Dispatcher *me = data;
  ThriftServerDispatch *d = me->d;
  gboolean queue_turn = FALSE; /* the queue's turn next, when both have work */

  current = me;
  for (;;)
  {
    struct epoll_event ev;
    ThriftServerWatch *w = NULL;
    ThriftIdleState st;
    gboolean queued;
    int n;

    /* the queue and the set in turn while both have work; the set alone blocks */
    queued = g_atomic_int_get (&d->n_turns) > 0;
    if (!queued || !queue_turn)
    {
      if (!queued)
        g_atomic_int_inc (&d->waiting);
      n = epoll_wait (d->epoll_fd, &ev, 1, queued ? 0 : -1);
      if (!queued)
        g_atomic_int_add (&d->waiting, -1);
      if (n < 0 && errno != EINTR)
      {
        g_message ("thrift_threaded_server: epoll_wait: %s", g_strerror (errno));
        g_usleep (10000);
      }
      if (n > 0 && ev.data.ptr == NULL)
        break; /* stop_fd */
      if (n > 0)
        w = ev.data.ptr;
      else if (!queued)
        continue;
    }
    queue_turn = w != NULL;

    if (w == NULL)
    {
      if (g_atomic_int_get (&d->stopping))
        break;
      g_mutex_lock (&d->lock);
      w = g_queue_pop_head (&d->turns);
      g_atomic_int_set (&d->n_turns, (gint) d->turns.length);
      g_mutex_unlock (&d->lock);
      if (w == NULL)
        continue; /* another dispatcher took it */
      count (&d->turns_taken);
      queued = TRUE;
    }
    else
    {
      queued = FALSE;
      count (&d->stats.wakeups);
    }
    __atomic_store_n (&me->busy_since, g_get_monotonic_time (), __ATOMIC_RELAXED);
    g_atomic_int_set (&me->phase, PHASE_SERVING);
    /* the last free place taken: the watchdog must look, and is woken if it sleeps for
     * good (it said so before it looked at @free: one of the two sees the other) */
    if (g_atomic_int_dec_and_test (&d->free) && g_atomic_int_get (&d->watchdog_asleep))
    {
      g_mutex_lock (&d->lock);
      poke_watchdog (d);
      g_mutex_unlock (&d->lock);
    }

    /* (one from the queue is known to be ready: no need to look) */
    st = queued ? THRIFT_IDLE_READY : look (w);
    if (st == THRIFT_IDLE_READY)
      st = d->ops->serve (w->owner, w);
    /* READY: it gave the dispatcher up to others with its next request there */
    put_back (d, w, st, st == THRIFT_IDLE_READY);

    __atomic_store_n (&me->busy_since, 0, __ATOMIC_RELAXED);
    if (g_atomic_int_compare_and_exchange (&me->phase, PHASE_SERVING, PHASE_FREE))
    {
      g_atomic_int_inc (&d->free);
      continue;
    }
    /* replaced: its place was given to another, unless the watchdog could not start the
     * other after all (it sets the phase back under the lock) */
    g_mutex_lock (&d->lock);
    if (g_atomic_int_compare_and_exchange (&me->phase, PHASE_SERVING, PHASE_FREE))
      g_atomic_int_inc (&d->free);
    else if (!g_atomic_int_get (&d->stopping))
    {
      /* end, for the watchdog to join */
      g_ptr_array_remove_fast (d->threads, me);
      g_ptr_array_add (d->retired, me);
      poke_watchdog (d);
      g_mutex_unlock (&d->lock);
      break;
    }
    g_mutex_unlock (&d->lock);
  }
  current = NULL;
  return NULL;
}

void
thrift_server_dispatch_progress (void)
{
  /* a connection served request after request (back to back, or after a linger) holds its
   * dispatcher for no longer than its current request: that is what the handover bounds */
  if (current != NULL)
    __atomic_store_n (&current->busy_since, g_get_monotonic_time (), __ATOMIC_RELAXED);
}

/* A new dispatcher (under the lock); FALSE if no thread could be made. */
static gboolean
add_dispatcher (ThriftServerDispatch *d, GError **error)
{
  Dispatcher *t = g_new0 (Dispatcher, 1);

  t->d = d;
  t->thread = g_thread_try_new ("thrift-dispatch", dispatcher_main, t, error);
  if (t->thread == NULL)
  {
    g_free (t);
    return FALSE;
  }
  g_ptr_array_add (d->threads, t);
  g_atomic_int_inc (&d->free);
  return TRUE;
}

/* Joins the dispatchers that ended after a handover (the lock held, dropped meanwhile). */
static void
join_retired (ThriftServerDispatch *d)
{
  while (d->retired->len > 0)
  {
    Dispatcher *t = g_ptr_array_steal_index_fast (d->retired, d->retired->len - 1);

    g_mutex_unlock (&d->lock);
    g_thread_join (t->thread);
    g_free (t);
    g_mutex_lock (&d->lock);
  }
}

/* The watchdog: while every dispatcher is busy, the one busy longest past the handover bound
 * gets a successor; otherwise it sleeps until a dispatcher takes the last free place. */
static gpointer
watchdog_main (gpointer data)
{
  ThriftServerDispatch *d = data;
  guint64 last_taken = 0;

  g_mutex_lock (&d->lock);
  while (!g_atomic_int_get (&d->stopping))
  {
    gint64 now = g_get_monotonic_time (), due = 0;
    guint64 taken = __atomic_load_n (&d->stats.wakeups, __ATOMIC_RELAXED)
                    + __atomic_load_n (&d->turns_taken, __ATOMIC_RELAXED);

    join_retired (d);
    if (g_atomic_int_get (&d->stopping))
      break;
    if (g_atomic_int_get (&d->free) <= 0)
    {
      Dispatcher *oldest = NULL;

      gint64 since = 0;

      for (guint i = 0; i < d->threads->len; i++)
      {
        Dispatcher *t = g_ptr_array_index (d->threads, i);
        gint64 b = __atomic_load_n (&t->busy_since, __ATOMIC_RELAXED);

        if (b != 0 && g_atomic_int_get (&t->phase) == PHASE_SERVING
            && (oldest == NULL || b < since))
        {
          oldest = t;
          since = b;
        }
      }
      if (oldest != NULL && now - since >= THRIFT_SERVER_DISPATCH_HANDOVER_US
          && d->threads->len < d->max_threads
          && g_atomic_int_compare_and_exchange (&oldest->phase, PHASE_SERVING, PHASE_REPLACED))
      {
        GError *error = NULL;

        /* (the replaced one, should its call end meanwhile, waits for the lock) */
        if (add_dispatcher (d, &error))
        {
          d->stats.handovers++;
          d->start_failed = FALSE;
          continue;
        }
        g_atomic_int_set (&oldest->phase, PHASE_SERVING);
        if (!d->start_failed)
          g_message ("thrift_threaded_server: no dispatcher to take over from a long call "
                     "(tried again while it lasts): %s",
                     error->message);
        d->start_failed = TRUE;
        g_clear_error (&error);
      }
      if (oldest != NULL)
        due = MAX (since + THRIFT_SERVER_DISPATCH_HANDOVER_US,
                   now + THRIFT_SERVER_DISPATCH_HANDOVER_US / 4);
      else
        due = now + THRIFT_SERVER_DISPATCH_HANDOVER_US;
    }
    else if (taken != last_taken)
    {
      /* requests come: look again in a while rather than be woken each time the last free
       * place is taken (a lock, a futex wake and a switch to this thread, about once per
       * request at 4 clients on 2 dispatchers); a call that began since is still found
       * HANDOVER_US after it began, since this look comes first */
      due = now + THRIFT_SERVER_DISPATCH_HANDOVER_US / 2;
    }
    last_taken = taken;
    if (due != 0)
      g_cond_wait_until (&d->watchdog_cond, &d->lock, due);
    else
    {
      g_atomic_int_set (&d->watchdog_asleep, TRUE);
      if (g_atomic_int_get (&d->free) <= 0)
        g_atomic_int_set (&d->watchdog_asleep, FALSE); /* taken meanwhile: look again */
      else
        g_cond_wait (&d->watchdog_cond, &d->lock);
      g_atomic_int_set (&d->watchdog_asleep, FALSE);
    }
  }
  g_mutex_unlock (&d->lock);
  return NULL;
}

ThriftServerDispatch *
thrift_server_dispatch_start (guint dispatchers, guint max_threads,
                              const ThriftServerDispatchOps *ops, GError **error)
{
  ThriftServerDispatch *d = g_new0 (ThriftServerDispatch, 1);
  struct epoll_event stop = { .events = EPOLLIN, .data.ptr = NULL };
  gboolean ok = TRUE;

  d->ops = ops;
  d->target = MAX (dispatchers, 1);
  d->max_threads = MAX (max_threads, d->target);
  g_mutex_init (&d->lock);
  g_cond_init (&d->watchdog_cond);
  d->threads = g_ptr_array_new ();
  d->retired = g_ptr_array_new ();
  d->stop_fd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
  d->epoll_fd = epoll_create1 (EPOLL_CLOEXEC);
  if (d->stop_fd < 0 || d->epoll_fd < 0
      || epoll_ctl (d->epoll_fd, EPOLL_CTL_ADD, d->stop_fd, &stop) != 0)
  {
    int err = errno;
    g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (err),
                 "thrift_threaded_server: %s: %s", d->stop_fd < 0 ? "eventfd" : "epoll",
                 g_strerror (err));
    ok = FALSE;
  }
  g_mutex_lock (&d->lock);
  while (ok && d->threads->len < d->target)
    ok = add_dispatcher (d, error);
  g_mutex_unlock (&d->lock);
  if (ok)
    ok = (d->watchdog = g_thread_try_new ("thrift-handover", watchdog_main, d, error)) != NULL;
  if (!ok)
  {
    thrift_server_dispatch_stop (d);
    thrift_server_dispatch_free (d);
    return NULL;
  }
  return d;
}

gboolean
thrift_server_dispatch_others_wait (ThriftServerDispatch *d)
{
  return g_atomic_int_get (&d->waiting) > 0;
}

gboolean
thrift_server_dispatch_others_ready (ThriftServerDispatch *d)
{
  /* readable: an armed connection (or the stop) has fired and no dispatcher took it yet */
  struct pollfd pfd = { .fd = d->epoll_fd, .events = POLLIN };

  return g_atomic_int_get (&d->n_turns) > 0 || poll (&pfd, 1, 0) > 0;
}

void
thrift_server_dispatch_stats (ThriftServerDispatch *d, ThriftServerDispatchStats *out)
{
  g_mutex_lock (&d->lock);
  out->handovers = d->stats.handovers;
  g_mutex_unlock (&d->lock);
  out->wakeups = __atomic_load_n (&d->stats.wakeups, __ATOMIC_RELAXED);
  out->set_updates = __atomic_load_n (&d->stats.set_updates, __ATOMIC_RELAXED);
}

void
thrift_server_dispatch_stop (ThriftServerDispatch *d)
{
  guint64 one = 1;
  GList *idle;

  g_mutex_lock (&d->lock);
  g_atomic_int_set (&d->stopping, 1);
  g_cond_signal (&d->watchdog_cond);
  g_mutex_unlock (&d->lock);
  if (d->stop_fd >= 0 && write (d->stop_fd, &one, sizeof one) < 0)
  {
    /* EAGAIN: it is readable already */
  }
  if (d->watchdog != NULL)
    g_thread_join (d->watchdog);
  /* no dispatcher retires or starts once stopping is set */
  g_mutex_lock (&d->lock);
  join_retired (d);
  g_mutex_unlock (&d->lock);
  for (guint i = 0; i < d->threads->len; i++)
  {
    Dispatcher *t = g_ptr_array_index (d->threads, i);
    g_thread_join (t->thread);
    g_free (t);
  }
  g_mutex_lock (&d->lock);
  idle = d->all; /* (those in turns too) */
  d->all = NULL;
  g_queue_clear (&d->turns);
  g_atomic_int_set (&d->n_turns, 0);
  g_mutex_unlock (&d->lock);
  for (GList *l = idle; l != NULL; l = l->next)
  {
    ThriftServerWatch *w = l->data;
    w->link = NULL;
    leave (d, w);
    d->ops->close (w->owner, w);
  }
  g_list_free (idle);
  g_ptr_array_set_size (d->threads, 0);
}

void
thrift_server_dispatch_free (ThriftServerDispatch *d)
{
  g_ptr_array_unref (d->threads);
  g_ptr_array_unref (d->retired);
  if (d->epoll_fd >= 0)
    close (d->epoll_fd);
  if (d->stop_fd >= 0)
    close (d->stop_fd);
  g_cond_clear (&d->watchdog_cond);
  g_mutex_clear (&d->lock);
  g_free (d);
}
