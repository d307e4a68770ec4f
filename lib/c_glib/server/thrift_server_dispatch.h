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
 * Run-to-completion dispatch of a server's connections (ThriftThreadedServer's POOL mode).
 * Internal to libthrift_c_glib_rdma (G_GNUC_INTERNAL).
 *
 * A connection waiting for its next request holds no thread: its descriptors (and a timer
 * for its deadline) are in an epoll set of its own, and that set in the dispatch's one epoll
 * set, armed for one event (EPOLLONESHOT).  Every dispatcher thread waits in that set; the
 * kernel wakes one per event, and the dispatcher that takes a connection runs its requests
 * itself, then arms it again: no queue and no second thread per request, and a wake-up costs
 * the same with ten idle connections or ten thousand.  A connection is one entry of the
 * shared set, so no two dispatchers ever hold it.
 *
 * A handler that runs long holds its dispatcher, not the others' connections: when every
 * dispatcher is busy and one has been in the same request for THRIFT_SERVER_DISPATCH_
 * HANDOVER_US, a new dispatcher takes its place in the set (a watchdog thread does this; it
 * sleeps while some dispatcher is free), and the held one ends once its call is done.
 */
#ifndef _THRIFT_SERVER_DISPATCH_H
#define _THRIFT_SERVER_DISPATCH_H

#include <glib.h>

#include <thrift/c_glib/transport/thrift_idle_watch.h>

G_BEGIN_DECLS

/* How long one call may hold a dispatcher while no other is free, before another dispatcher
 * takes its place: long against a call's own time (a 128 KiB echo under emulation takes a
 * few ms), short against a client's patience. */
#define THRIFT_SERVER_DISPATCH_HANDOVER_US 20000

typedef struct _ThriftServerDispatch ThriftServerDispatch;

/* What the dispatch keeps of one connection (embedded in it).  The transport fills fds,
 * n_fds and deadline_us (thrift_idle_watch_prepare); the rest is the dispatch's. */
typedef struct
{
  gpointer owner;             /* the server's connection */
  ThriftTransport *transport; /* what thrift_idle_watch_look looks at */
  GPollFD fds[THRIFT_IDLE_WATCH_MAX_FDS];
  guint n_fds;
  gint64 deadline_us; /* monotonic; 0: none */

  int set_fd;                            /* (owned) epoll set of fds and timer_fd (-1: none yet) */
  int timer_fd;                          /* (owned) for deadline_us (-1: none yet) */
  gint64 timer_at;                       /* what timer_fd is set to (0: nothing pending) */
  int in_set[THRIFT_IDLE_WATCH_MAX_FDS]; /* descriptors in set_fd */
  gushort in_events[THRIFT_IDLE_WATCH_MAX_FDS]; /* and the events each is watched for */
  guint n_in_set;
  gboolean in_dispatch; /* set_fd is in the dispatch's set */
  GList *link;          /* in the dispatch's list of connections (its lock) */
} ThriftServerWatch;

typedef struct
{
  /* Serves the requests there are on @owner (the transport said READY), then asks the
   * transport what to wait for (w->fds, n_fds, deadline_us): WAIT or GONE; or READY when
   * it gives the dispatcher up with a request still there because other connections wait
   * for one (thrift_server_dispatch_others_ready): it goes to the back of the set, ready.
   * May wait briefly for the next request while thrift_server_dispatch_others_wait. */
  ThriftIdleState (*serve) (gpointer owner, ThriftServerWatch *w);
  /* Releases thrift_server_watch_clear (w) and closes and frees @owner: it ended, the
   * epoll set refused it, or the dispatch stopped. */
  void (*close) (gpointer owner, ThriftServerWatch *w);
} ThriftServerDispatchOps;

G_GNUC_INTERNAL
void thrift_server_watch_init (ThriftServerWatch *w, gpointer owner, ThriftTransport *transport);
G_GNUC_INTERNAL
void thrift_server_watch_clear (ThriftServerWatch *w);

/* Starts @dispatchers threads (and the watchdog); never more than @max_threads in all
 * (held ones included).  NULL with @error if a thread or descriptor cannot be made. */
G_GNUC_INTERNAL
ThriftServerDispatch *thrift_server_dispatch_start (guint dispatchers, guint max_threads,
                                                    const ThriftServerDispatchOps *ops,
                                                    GError **error);
/* A new connection, with the state thrift_idle_watch_prepare gave (w filled): WAIT and READY
 * go to the set (READY fires at once), GONE is closed. */
G_GNUC_INTERNAL
void thrift_server_dispatch_add (ThriftServerDispatch *d, ThriftServerWatch *w, ThriftIdleState st);
/* TRUE while another dispatcher waits for work: the caller may keep its connection a
 * little longer without delaying anyone's request. */
G_GNUC_INTERNAL
gboolean thrift_server_dispatch_others_wait (ThriftServerDispatch *d);
/* TRUE if another connection's request waits for a dispatcher (one system call): the
 * caller's connection, though it has its next request, should go back to the set behind
 * it, or a client that sends its next request before the reply has been looked at would
 * keep a dispatcher to itself and the others would wait until it stops. */
G_GNUC_INTERNAL
gboolean thrift_server_dispatch_others_ready (ThriftServerDispatch *d);
/* The calling dispatcher begins the next request of the connection it holds: the handover
 * bound counts from here (nothing if the caller is not a dispatcher). */
G_GNUC_INTERNAL
void thrift_server_dispatch_progress (void);
/* What the dispatch did so far: */
typedef struct
{
  guint64 handovers;   /* calls handed over */
  guint64 wakeups;     /* connections taken from the set (not from the turns' queue) */
  guint64 set_updates; /* epoll_ctl calls that armed connections (one per arming when
                            their descriptors stay the same) */
} ThriftServerDispatchStats;
G_GNUC_INTERNAL
void thrift_server_dispatch_stats (ThriftServerDispatch *d, ThriftServerDispatchStats *out);
/* Stops: every dispatcher ends after the call it is in (interrupt blocked ones first), the
 * threads are joined and the idle connections closed.  Then only the counts may be asked
 * before thrift_server_dispatch_free. */
G_GNUC_INTERNAL
void thrift_server_dispatch_stop (ThriftServerDispatch *d);
G_GNUC_INTERNAL
void thrift_server_dispatch_free (ThriftServerDispatch *d);

G_END_DECLS

#endif /* _THRIFT_SERVER_DISPATCH_H */
