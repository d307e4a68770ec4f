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
 * ThriftThreadedServer: many connections at once over any ThriftServerTransport, in one of
 * two modes.
 *
 * POOL (the default): a connection waiting for its next request needs no thread.  Idle
 * connections wait in one epoll set (thrift_idle_watch.h: ThriftRdma's completion and CM
 * channels, ThriftSocket's descriptor), armed for one event each, so a wake-up costs the
 * same with ten connections or ten thousand; dispatcher threads (one per core by default)
 * wait in that set themselves and run the requests of the connection they take to
 * completion, then arm it again (thrift_server_dispatch.h: no queue, no second thread per
 * request; a call that runs long is handed over).  A transport that cannot be watched gets a
 * thread of its own, as in the other mode.
 * PER_CONNECTION: one worker thread per connection, blocking in peek between requests.
 *
 * Threads while serving:
 *   - the serving thread (the caller of thrift_server_serve) runs a private GMainLoop that
 *     only waits for a stop request (thrift_server_stop, a registered signal, or the
 *     acceptor giving up), then tears everything down;
 *   - the acceptor thread loops: reap finished workers, wait for a free slot
 *     (max-connections), accept, start the connection;
 *   - POOL: the dispatchers and their watchdog; PER_CONNECTION: one worker per connection
 *     (peek, process, until the peer is gone or the server stops).
 *
 * Stopping wakes what blocks: the acceptor in accept, the dispatchers (an eventfd in their
 * set) and each worker or dispatcher in peek or read; the transports wake their own accept
 * and reads (thrift_interruptible.h: ThriftInterruptible, or shutdown of a stock socket),
 * and one that cannot is closed.  A connection is only interrupted while a worker has it and
 * has not begun to close it; both happen under the server's lock, so a descriptor is never
 * touched after it was closed.
 */
#include "config.h"

#include <errno.h>
#ifdef HAVE_MALLOC_H
#include <malloc.h>
#endif
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <glib-unix.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/processor/thrift_processor.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol_factory.h>
#include <thrift/c_glib/protocol/thrift_checked_binary_protocol.h>
#include <thrift/c_glib/transport/thrift_transport_factory.h>
#include <thrift/c_glib/transport/thrift_hints.h>
#include <thrift/c_glib/transport/thrift_idle_watch.h>
#include <thrift/c_glib/transport/thrift_checked_framed_transport.h>

#include <thrift/c_glib/server/thrift_threaded_server.h>
#include "thrift_server_dispatch.h"
#include "thrift_server_interrupt.h"

enum
{
  PROP_0,
  PROP_MAX_CONNECTIONS,
  PROP_ACTIVE_CONNECTIONS,
  PROP_CONNECTIONS_ACCEPTED,
  PROP_LISTENING,
  PROP_MODE,
  PROP_WORKERS,
  PROP_HANDOVERS,
  PROP_WAKEUPS,
  PROP_WATCH_UPDATES,
  N_PROPS
};

/* Consecutive accept failures after which serve gives up (with a growing pause between
 * attempts, 10 ms doubling up to 1 s: about 45 s in all). A failed handshake of one client
 * is one failure; the next good accept resets the count. */
#define ACCEPT_MAX_FAILURES 50

/* POOL: how long a dispatcher keeps a connection whose request it served, waiting for the
 * next (only while another dispatcher waits for work). */
#define POOL_LINGER_US 2000

typedef struct _Connection Connection;

typedef struct
{
  guint max_connections;
  ThriftThreadedServerMode mode;         /* property */
  ThriftThreadedServerMode serving_mode; /* the mode of the serve in progress */
  guint workers;                         /* property; 0: automatic */

  GMutex lock;
  GCond slot_freed;    /* a worker ended, or stop began */
  gint stopping;       /* atomic: set by the teardown, read by workers */
  gint stop_requested; /* atomic: stop asked before or while serving */
  int stop_fd;         /* eventfd the serving loop watches (-1: none, use the lock) */
  gboolean serving;    /* under lock */
  gboolean listening;  /* under lock: between listen and the end of the teardown */
  GMainLoop *loop;     /* under lock; set while serving */
  GArray *signals;     /* gint signal numbers that stop the server */

  GList *connections; /* Connection *, under lock */
  guint active;       /* under lock */
  guint64 accepted;   /* under lock */

  GThread *acceptor;
  GError *accept_error;     /* under lock: why the acceptor gave up */
  gboolean listener_closed; /* the interrupt closed the server transport */

  ThriftServerDispatch *dispatch;  /* POOL: while serving (set, and cleared under lock) */
  ThriftServerDispatchStats ended; /* under lock: the dispatch counts of serves that
                                        ended */
} ThriftThreadedServerPrivate;

struct _Connection
{
  ThriftThreadedServer *server;
  ThriftTransport *client; /* (owned) as accepted */
  ThriftTransport *in_t;   /* (owned) from the factories */
  ThriftTransport *out_t;  /* (owned) */
  ThriftProtocol *in_p;    /* (owned) */
  ThriftProtocol *out_p;   /* (owned) */
  GThread *thread;         /* PER_CONNECTION (or an unwatchable transport): its worker */
  gint busy;               /* atomic: a worker (or its own thread) serves it (read under
                                 lock, with conn->client) */
  gboolean closing;        /* under lock: the worker closes the transport; hands off */
  gboolean finished;       /* under lock: the worker is about to return */
  ThriftServerWatch watch; /* POOL: how it waits for its next request */
};

/* the domain is spelled out as it is, not an expression */
/* clang-format off */
G_DEFINE_QUARK (thrift-threaded-server-error-quark, thrift_threaded_server_error)
/* clang-format on */

GType
thrift_threaded_server_mode_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    { THRIFT_THREADED_SERVER_POOL, "THRIFT_THREADED_SERVER_POOL", "pool" },
    { THRIFT_THREADED_SERVER_PER_CONNECTION, "THRIFT_THREADED_SERVER_PER_CONNECTION",
      "per-connection" },
    { 0, NULL, NULL }
  };
  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("ThriftThreadedServerMode", values));
  return type;
}
G_DEFINE_TYPE_WITH_PRIVATE (ThriftThreadedServer, thrift_threaded_server, THRIFT_TYPE_SERVER)

static GParamSpec *props[N_PROPS];

#define PRIV(s) ((ThriftThreadedServerPrivate *) thrift_threaded_server_get_instance_private (s))

/* Asks the serving thread to stop; safe from any thread, and from a signal handler, as
 * upstream's programs call thrift_server_stop from their SIGINT handler: a flag and a write to
 * the eventfd the serving loop watches, no lock (the handler may have interrupted a thread
 * that holds it).  The teardown wakes the acceptor. */
static void
request_stop (ThriftThreadedServer *self)
{
  ThriftThreadedServerPrivate *priv = PRIV (self);

  g_atomic_int_set (&priv->stop_requested, 1);
  if (priv->stop_fd >= 0)
  {
    guint64 one = 1;
    ssize_t r = write (priv->stop_fd, &one, sizeof one);
    (void) r; /* EAGAIN: the counter is already non-zero, the loop wakes anyway */
    return;
  }
  g_mutex_lock (&priv->lock);
  if (priv->loop != NULL)
    g_main_loop_quit (priv->loop);
  g_mutex_unlock (&priv->lock);
}

static gboolean
on_stop_fd (gint fd, GIOCondition condition, gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_CONTINUE;
}

/* Forgets a stop that was asked: serve has returned. */
static void
clear_stop (ThriftThreadedServerPrivate *priv)
{
  guint64 v;

  if (priv->stop_fd >= 0)
    while (read (priv->stop_fd, &v, sizeof v) > 0)
      ;
  g_atomic_int_set (&priv->stop_requested, 0);
}

/* Per-connection transports and protocols from the server's factories. The base
 * ThriftTransportFactory passes the connection through without a reference: take one, so
 * that every object made here is released the same way. Other factories (wrappers, and
 * the URI helpers' pass-through) return a reference of their own. */
static ThriftTransport *
wrap_transport (ThriftTransportFactory *factory, ThriftTransport *client)
{
  ThriftTransport *t;

  if (factory == NULL)
    return g_object_ref (client);
  /* a plain framed factory's transports are replaced by checked ones (the same wire
   * format): Thrift 0.17's reads across a frame's end copy the wrong bytes
   * (thrift_checked_framed_transport.h) */
  if (G_OBJECT_TYPE (factory) == THRIFT_TYPE_FRAMED_TRANSPORT_FACTORY)
    return THRIFT_TRANSPORT (
        g_object_new (THRIFT_TYPE_CHECKED_FRAMED_TRANSPORT, "transport", client, NULL));
  /* thrift_transport_factory_get_transport () is the base class's pass-through, not a
   * dispatcher: call the factory's own method */
  t = THRIFT_TRANSPORT_FACTORY_GET_CLASS (factory)->get_transport (factory, client);
  if (t == client && G_OBJECT_TYPE (factory) == THRIFT_TYPE_TRANSPORT_FACTORY)
    g_object_ref (t);
  return t;
}

/* The binary protocol is checked (thrift_checked_binary_protocol.h): Thrift 0.17's own
 * allocates whatever length a request announces. A plain ThriftBinaryProtocolFactory is
 * replaced by the checked one (the same wire format); other factories are used as set. */
static ThriftProtocol *
make_protocol (ThriftProtocolFactory *factory, ThriftTransport *transport)
{
  if (factory == NULL || G_OBJECT_TYPE (factory) == THRIFT_TYPE_BINARY_PROTOCOL_FACTORY)
    return THRIFT_PROTOCOL (
        g_object_new (THRIFT_TYPE_CHECKED_BINARY_PROTOCOL, "transport", transport, NULL));
  return THRIFT_PROTOCOL_FACTORY_GET_CLASS (factory)->get_protocol (factory, transport);
}

/* The connection's transports and protocols, from the server's factories. */
static void
connection_setup (Connection *conn)
{
  ThriftServer *server = THRIFT_SERVER (conn->server);

  conn->in_t = wrap_transport (server->input_transport_factory, conn->client);
  conn->out_t = wrap_transport (server->output_transport_factory, conn->client);
  conn->in_p = make_protocol (server->input_protocol_factory, conn->in_t);
  conn->out_p = make_protocol (server->output_protocol_factory, conn->out_t);
}

/* Large blocks straight from the system, once per process, as the first server starts.
 * glibc raises its mmap threshold to the largest block freed (up to 32 MiB), so the large
 * arguments and results of later calls come from the arena of the worker that serves them,
 * and an arena keeps its top when they are freed (malloc_trim gives back the main arena's
 * only): measured in the guest, the tutorial server's VmRSS grew by 32 MiB with every client
 * of a 16 MiB reverse(), killed mid-reply or not, up to an arena per worker (16 on two cores).
 * A fixed threshold ends the climb: blocks of 1 MiB and more are mapped and unmapped with
 * their call.  A process that tunes malloc itself (MALLOC_MMAP_THRESHOLD_, GLIBC_TUNABLES)
 * keeps its setting. */
#define SERVER_MMAP_THRESHOLD (1u << 20)

static void
bound_allocator (void)
{
#if defined(HAVE_MALLOPT) && defined(M_MMAP_THRESHOLD)
  static gsize once;

  if (g_once_init_enter (&once))
  {
    const gchar *tunables = g_getenv ("GLIBC_TUNABLES");

    if (g_getenv ("MALLOC_MMAP_THRESHOLD_") == NULL
        && (tunables == NULL || strstr (tunables, "mmap_threshold") == NULL))
    {
      if (mallopt (M_MMAP_THRESHOLD, SERVER_MMAP_THRESHOLD) == 1)
        g_debug ("thrift_threaded_server: malloc's mmap threshold fixed at %u bytes",
                 SERVER_MMAP_THRESHOLD);
    }
    g_once_init_leave (&once, 1);
  }
#endif
}

/* Closes the connection and releases everything; it stops counting as active. */
static void
connection_close (Connection *conn)
{
  ThriftThreadedServerPrivate *priv = PRIV (conn->server);

  g_mutex_lock (&priv->lock);
  conn->closing = TRUE;
  g_mutex_unlock (&priv->lock);

  /* Both wrappers may sit on the same connection: close it once, through the input side
   * (the processor has flushed every reply). */
  thrift_transport_close (conn->in_t, NULL);
  if (thrift_transport_is_open (conn->out_t))
    thrift_transport_close (conn->out_t, NULL);
  g_clear_object (&conn->in_p);
  g_clear_object (&conn->out_p);
  g_clear_object (&conn->in_t);
  g_clear_object (&conn->out_t);

  g_mutex_lock (&priv->lock);
  g_clear_object (&conn->client);
  conn->finished = TRUE;
  priv->active--;
  if (conn->thread == NULL) /* nothing to join: forget it now */
  {
    priv->connections = g_list_remove (priv->connections, conn);
    g_free (conn);
  }
  g_cond_broadcast (&priv->slot_freed);
  g_mutex_unlock (&priv->lock);
}

/* Serves requests while one is there or (@block) until the peer is gone: GONE when the
 * connection is over, WAIT when it waits for its next request, READY when it gives its
 * dispatcher up to other connections with its next request there (not @block). */
static ThriftIdleState
serve_requests (Connection *conn, gboolean block)
{
  ThriftThreadedServerPrivate *priv = PRIV (conn->server);
  ThriftServer *server = THRIFT_SERVER (conn->server);
  GError *error = NULL;
  ThriftIdleState result = THRIFT_IDLE_WAIT;

  for (;;)
  {
    if (!block)
      thrift_server_dispatch_progress ();
    if (g_atomic_int_get (&priv->stopping) || !thrift_transport_peek (conn->in_t, &error)
        || !thrift_processor_process (server->processor, conn->in_p, conn->out_p, &error))
    {
      result = THRIFT_IDLE_GONE;
      break;
    }
    if (!block)
    {
      guint n;
      gint64 deadline;
      ThriftIdleState st;

      /* A client calling back to back sends its next request about a round trip after the
       * reply: wait that long here, as the connection waits in a call (its hints' polling),
       * while another dispatcher waits for work, rather than arm the connection and take it
       * back (a blocking wait and a wake-up through the kernel). */
      gboolean others_wait = thrift_server_dispatch_others_wait (priv->dispatch);

      if (others_wait && thrift_idle_watch_linger (conn->in_t, POOL_LINGER_US))
        continue;
      st = thrift_idle_watch_prepare (conn->in_t, conn->watch.fds, &n, &deadline);
      conn->watch.n_fds = n;
      conn->watch.deadline_us = deadline;
      /* Its next request is there: served now unless every dispatcher is busy and another
       * connection's request waits (then this one goes behind it).  A client that spins
       * for its reply sends the next request before the dispatcher looks: without this
       * check it kept the dispatcher for as long as it kept calling, and 14 of 16 clients
       * of two dispatchers waited out whole benchmark rounds (p99 0.5 s). */
      if (st == THRIFT_IDLE_READY
          && (others_wait || !thrift_server_dispatch_others_ready (priv->dispatch)))
        continue;
      result = st;
      break;
    }
  }
  if (error != NULL)
  {
    if (!g_atomic_int_get (&priv->stopping))
      g_message ("thrift_threaded_server: connection ended: %s", error->message);
    g_clear_error (&error);
  }
  return result;
}

/* PER_CONNECTION (and transports the poll set cannot watch): the connection's own thread. */
static gpointer
worker_main (gpointer data)
{
  Connection *conn = data;

  serve_requests (conn, TRUE);
  connection_close (conn);
  return NULL;
}

/* ---- POOL mode: run-to-completion dispatch (thrift_server_dispatch.h) ---- */

/* implements ThriftServerDispatchOps.serve */
static ThriftIdleState
pool_serve (gpointer owner, G_GNUC_UNUSED ThriftServerWatch *w)
{
  Connection *conn = owner;
  ThriftThreadedServerPrivate *priv = PRIV (conn->server);
  ThriftIdleState st;

  /* (busy before stopping is read, teardown sets stopping before it reads busy: one of the
   * two sees the other, without the server's lock on each request) */
  g_atomic_int_set (&conn->busy, 1);
  st = g_atomic_int_get (&priv->stopping) ? THRIFT_IDLE_GONE : serve_requests (conn, FALSE);
  g_atomic_int_set (&conn->busy, 0);
  return st;
}

/* implements ThriftServerDispatchOps.close */
static void
pool_close (gpointer owner, ThriftServerWatch *w)
{
  thrift_server_watch_clear (w);
  connection_close (owner);
}

static const ThriftServerDispatchOps pool_ops = {
  .serve = pool_serve,
  .close = pool_close,
};

/* Dispatchers: the "workers" property, else one per core (handlers that block or run long
 * are handed over, thrift_server_dispatch.h, so there is no need for more). */
static guint
pool_size (ThriftThreadedServer *self)
{
  ThriftThreadedServerPrivate *priv = PRIV (self);

  if (priv->workers > 0)
    return priv->workers;
  return MAX (1, g_get_num_processors ());
}

/* Idle connections hold descriptors, not threads: let the process have as many as it may. */
static void
raise_fd_limit (void)
{
  struct rlimit rl;

  if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max)
  {
    rlim_t was = rl.rlim_cur;
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit (RLIMIT_NOFILE, &rl) == 0)
      g_debug ("thrift_threaded_server: descriptor limit raised from %lu to %lu", (gulong) was,
               (gulong) rl.rlim_cur);
  }
}

/* Starts the dispatchers; FALSE with @error if a thread or descriptor cannot be made. */
static gboolean
pool_start (ThriftThreadedServer *self, GError **error)
{
  ThriftThreadedServerPrivate *priv = PRIV (self);
  guint n = pool_size (self);
  ThriftServerDispatch *d;

  raise_fd_limit ();
  /* a held dispatcher holds one connection's call: never more than the connections */
  d = thrift_server_dispatch_start (n, n + priv->max_connections, &pool_ops, error);
  g_mutex_lock (&priv->lock);
  priv->dispatch = d;
  g_mutex_unlock (&priv->lock);
  return d != NULL;
}

/* Adds @d's counts so far to @to. */
static void
stats_add (ThriftServerDispatchStats *to, ThriftServerDispatch *d)
{
  ThriftServerDispatchStats st;

  thrift_server_dispatch_stats (d, &st);
  to->handovers += st.handovers;
  to->wakeups += st.wakeups;
  to->set_updates += st.set_updates;
}

/* Waits for the dispatchers (those in a call finish it; a blocked read is interrupted by the
 * caller first) and closes the idle connections. */
static void
pool_stop (ThriftThreadedServer *self)
{
  ThriftThreadedServerPrivate *priv = PRIV (self);

  ThriftServerDispatch *d = priv->dispatch;

  if (d == NULL)
    return;
  thrift_server_dispatch_stop (d);
  g_mutex_lock (&priv->lock);
  stats_add (&priv->ended, d);
  priv->dispatch = NULL;
  g_mutex_unlock (&priv->lock);
  thrift_server_dispatch_free (d);
}

/* Joins and frees the connections whose workers have finished (all of them if ALL). */
static void
reap_connections (ThriftThreadedServer *self, gboolean all)
{
  ThriftThreadedServerPrivate *priv = PRIV (self);
  GList *done = NULL, *l, *next;

  g_mutex_lock (&priv->lock);
  for (l = priv->connections; l != NULL; l = next)
  {
    Connection *conn = l->data;
    next = l->next;
    if (conn->thread != NULL && (all || conn->finished))
    {
      priv->connections = g_list_remove_link (priv->connections, l);
      done = g_list_concat (l, done);
    }
  }
  g_mutex_unlock (&priv->lock);

  for (l = done; l != NULL; l = l->next)
  {
    Connection *conn = l->data;
    g_thread_join (conn->thread);
    g_free (conn);
  }
  g_list_free (done);
}

static void
start_connection (ThriftThreadedServer *self, ThriftTransport *client)
{
  ThriftThreadedServerPrivate *priv = PRIV (self);
  Connection *conn = g_new0 (Connection, 1);
  GError *error = NULL;
  ThriftIdleState st = THRIFT_IDLE_UNSUPPORTED;

  conn->server = self;
  conn->client = client;
  connection_setup (conn);

  g_mutex_lock (&priv->lock);
  priv->active++;
  priv->accepted++;
  priv->connections = g_list_prepend (priv->connections, conn);
  g_mutex_unlock (&priv->lock);

  if (priv->serving_mode == THRIFT_THREADED_SERVER_POOL)
  {
    ThriftServerWatch *w = &conn->watch;
    guint n;
    gint64 deadline;

    thrift_server_watch_init (w, conn, conn->in_t);
    st = thrift_idle_watch_prepare (conn->in_t, w->fds, &n, &deadline);
    w->n_fds = n;
    w->deadline_us = deadline;
    if (st != THRIFT_IDLE_UNSUPPORTED)
    {
      thrift_server_dispatch_add (priv->dispatch, w, st);
      return;
    }
  }

  g_mutex_lock (&priv->lock);
  g_atomic_int_set (&conn->busy, 1);
  conn->thread = g_thread_try_new ("thrift-conn", worker_main, conn, &error);
  g_mutex_unlock (&priv->lock);
  if (conn->thread == NULL)
  {
    g_message ("thrift_threaded_server: cannot start a worker, connection dropped: %s",
               error->message);
    g_clear_error (&error);
    connection_close (conn);
  }
}

static gpointer
acceptor_main (gpointer data)
{
  ThriftThreadedServer *self = data;
  ThriftThreadedServerPrivate *priv = PRIV (self);
  ThriftServer *server = THRIFT_SERVER (self);
  guint failures = 0;
  gulong pause_us = 10000;

  for (;;)
  {
    ThriftTransport *client;
    GError *error = NULL;

    reap_connections (self, FALSE);

    g_mutex_lock (&priv->lock);
    while (priv->active >= priv->max_connections && !g_atomic_int_get (&priv->stopping))
      g_cond_wait (&priv->slot_freed, &priv->lock);
    g_mutex_unlock (&priv->lock);
    if (g_atomic_int_get (&priv->stopping))
      break;

    client = thrift_server_transport_accept (server->server_transport, &error);
    if (g_atomic_int_get (&priv->stopping))
    {
      g_clear_error (&error);
      if (client != NULL)
      {
        thrift_transport_close (client, NULL);
        g_object_unref (client);
      }
      break;
    }
    if (client == NULL)
    {
      if (++failures >= ACCEPT_MAX_FAILURES)
      {
        g_mutex_lock (&priv->lock);
        g_propagate_prefixed_error (
            &priv->accept_error,
            error != NULL ? error
                          : g_error_new_literal (THRIFT_TRANSPORT_ERROR,
                                                 THRIFT_TRANSPORT_ERROR_UNKNOWN, "accept failed"),
            "thrift_threaded_server: giving up after %u failed accepts: ", failures);
        g_mutex_unlock (&priv->lock);
        request_stop (self);
        break;
      }
      g_message ("thrift_threaded_server: accept failed: %s",
                 error != NULL ? error->message : "no reason given");
      g_clear_error (&error);
      g_usleep (pause_us);
      pause_us = MIN (pause_us * 2, G_USEC_PER_SEC);
      continue;
    }
    failures = 0;
    pause_us = 10000;
    start_connection (self, client);
  }
  return NULL;
}

static gboolean
on_stop_signal (gpointer data)
{
  request_stop (THRIFT_THREADED_SERVER (data));
  return G_SOURCE_CONTINUE;
}

/* Stops everything serve started, in order: acceptor, connections, listener. */
static void
teardown (ThriftThreadedServer *self)
{
  ThriftThreadedServerPrivate *priv = PRIV (self);
  ThriftServer *server = THRIFT_SERVER (self);
  GList *l;

  g_mutex_lock (&priv->lock);
  g_atomic_int_set (&priv->stopping, 1);
  g_cond_broadcast (&priv->slot_freed);
  g_mutex_unlock (&priv->lock);

  priv->listener_closed = thrift_server_interrupt_accept (server->server_transport);
  g_thread_join (priv->acceptor);
  priv->acceptor = NULL;

  g_mutex_lock (&priv->lock);
  for (l = priv->connections; l != NULL; l = l->next)
  {
    Connection *conn = l->data;
    if (g_atomic_int_get (&conn->busy) && !conn->closing)
      thrift_server_interrupt_connection (conn->client);
  }
  g_mutex_unlock (&priv->lock);
  pool_stop (self);
  reap_connections (self, TRUE);

  if (!priv->listener_closed)
    thrift_server_transport_close (server->server_transport, NULL);
}

/* implements thrift_server_serve */
static gboolean
thrift_threaded_server_serve (ThriftServer *server, GError **error)
{
  ThriftThreadedServer *self = THRIFT_THREADED_SERVER (server);
  ThriftThreadedServerPrivate *priv = PRIV (self);
  GMainContext *context;
  GMainLoop *loop;
  GPtrArray *sources;
  gboolean ok = TRUE;
  guint i;

  g_return_val_if_fail (server->processor != NULL, FALSE);
  g_return_val_if_fail (server->server_transport != NULL, FALSE);

  g_mutex_lock (&priv->lock);
  if (priv->serving)
  {
    g_mutex_unlock (&priv->lock);
    g_set_error (error, THRIFT_THREADED_SERVER_ERROR, THRIFT_THREADED_SERVER_ERROR_BUSY,
                 "thrift_threaded_server: already serving");
    return FALSE;
  }
  priv->serving = TRUE;
  g_mutex_unlock (&priv->lock);

  bound_allocator ();
  if (!thrift_server_transport_listen (server->server_transport, error))
  {
    g_mutex_lock (&priv->lock);
    priv->serving = FALSE;
    g_mutex_unlock (&priv->lock);
    clear_stop (priv);
    return FALSE;
  }

  g_mutex_lock (&priv->lock);
  priv->listening = TRUE;
  g_mutex_unlock (&priv->lock);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_LISTENING]);

  context = g_main_context_new ();
  loop = g_main_loop_new (context, FALSE);
  sources = g_ptr_array_new ();
  for (i = 0; i < priv->signals->len; i++)
  {
    GSource *s = g_unix_signal_source_new (g_array_index (priv->signals, gint, i));
    g_source_set_callback (s, on_stop_signal, self, NULL);
    g_source_attach (s, context);
    g_ptr_array_add (sources, s);
  }
  if (priv->stop_fd >= 0)
  {
    GSource *s = g_unix_fd_source_new (priv->stop_fd, G_IO_IN);
    g_source_set_callback (s, (GSourceFunc) (void (*) (void)) on_stop_fd, loop, NULL);
    g_source_attach (s, context);
    g_ptr_array_add (sources, s);
  }

  g_atomic_int_set (&priv->stopping, 0);
  priv->listener_closed = FALSE;
  priv->serving_mode = priv->mode; /* a change while serving applies to the next serve */
  if (priv->serving_mode == THRIFT_THREADED_SERVER_POOL && !pool_start (self, error))
    priv->acceptor = NULL;
  else
    priv->acceptor = g_thread_try_new ("thrift-accept", acceptor_main, self, error);
  if (priv->acceptor == NULL)
  {
    g_atomic_int_set (&priv->stopping, 1);
    pool_stop (self);
    thrift_server_transport_close (server->server_transport, NULL);
    ok = FALSE;
  }
  else
  {
    g_mutex_lock (&priv->lock);
    priv->loop = loop;
    if (!g_atomic_int_get (&priv->stop_requested))
    {
      g_mutex_unlock (&priv->lock);
      g_main_loop_run (loop);
      g_mutex_lock (&priv->lock);
    }
    priv->loop = NULL;
    g_mutex_unlock (&priv->lock);

    teardown (self);

    g_mutex_lock (&priv->lock);
    if (priv->accept_error != NULL)
    {
      g_propagate_error (error, priv->accept_error);
      priv->accept_error = NULL;
      ok = FALSE;
    }
    g_mutex_unlock (&priv->lock);
  }

  for (i = 0; i < sources->len; i++)
  {
    g_source_destroy (g_ptr_array_index (sources, i));
    g_source_unref (g_ptr_array_index (sources, i));
  }
  g_ptr_array_free (sources, TRUE);
  g_main_loop_unref (loop);
  g_main_context_unref (context);

  g_mutex_lock (&priv->lock);
  priv->serving = FALSE;
  priv->listening = FALSE;
  g_mutex_unlock (&priv->lock);
  clear_stop (priv);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_LISTENING]);
  return ok;
}

/* implements thrift_server_stop */
static void
thrift_threaded_server_stop (ThriftServer *server)
{
  request_stop (THRIFT_THREADED_SERVER (server));
}

gboolean
thrift_threaded_server_stop_on_signal (ThriftThreadedServer *server, gint signum, GError **error)
{
  ThriftThreadedServerPrivate *priv;
  guint i;

  g_return_val_if_fail (THRIFT_IS_THREADED_SERVER (server), FALSE);
  priv = PRIV (server);

  if (signum != SIGINT && signum != SIGTERM && signum != SIGHUP && signum != SIGUSR1
      && signum != SIGUSR2)
  {
    g_set_error (error, THRIFT_THREADED_SERVER_ERROR, THRIFT_THREADED_SERVER_ERROR_SIGNAL,
                 "thrift_threaded_server: cannot stop on signal %d; "
                 "use SIGINT, SIGTERM, SIGHUP, SIGUSR1 or SIGUSR2",
                 signum);
    return FALSE;
  }

  g_mutex_lock (&priv->lock);
  for (i = 0; i < priv->signals->len; i++)
    if (g_array_index (priv->signals, gint, i) == signum)
      break;
  if (i == priv->signals->len)
  {
    g_array_append_val (priv->signals, signum);
    if (priv->loop != NULL)
    {
      GSource *s = g_unix_signal_source_new (signum);
      g_source_set_callback (s, on_stop_signal, server, NULL);
      g_source_attach (s, g_main_loop_get_context (priv->loop));
      g_source_unref (s); /* destroyed with the context at the end of serve */
    }
  }
  g_mutex_unlock (&priv->lock);
  return TRUE;
}

static void
thrift_threaded_server_get_property (GObject *object, guint prop_id, GValue *value,
                                     GParamSpec *pspec)
{
  ThriftThreadedServerPrivate *priv = PRIV (THRIFT_THREADED_SERVER (object));

  switch (prop_id)
  {
  case PROP_MAX_CONNECTIONS:
    g_value_set_uint (value, priv->max_connections);
    break;
  case PROP_ACTIVE_CONNECTIONS:
    g_mutex_lock (&priv->lock);
    g_value_set_uint (value, priv->active);
    g_mutex_unlock (&priv->lock);
    break;
  case PROP_CONNECTIONS_ACCEPTED:
    g_mutex_lock (&priv->lock);
    g_value_set_uint64 (value, priv->accepted);
    g_mutex_unlock (&priv->lock);
    break;
  case PROP_HANDOVERS:
  case PROP_WAKEUPS:
  case PROP_WATCH_UPDATES: {
    ThriftServerDispatchStats now;

    g_mutex_lock (&priv->lock);
    now = priv->ended;
    if (priv->dispatch != NULL)
      stats_add (&now, priv->dispatch);
    g_mutex_unlock (&priv->lock);
    g_value_set_uint64 (value, prop_id == PROP_HANDOVERS ? now.handovers
                               : prop_id == PROP_WAKEUPS ? now.wakeups
                                                         : now.set_updates);
    break;
  }
  case PROP_LISTENING:
    g_mutex_lock (&priv->lock);
    g_value_set_boolean (value, priv->listening);
    g_mutex_unlock (&priv->lock);
    break;
  case PROP_MODE:
    g_value_set_enum (value, priv->mode);
    break;
  case PROP_WORKERS:
    g_value_set_uint (value, priv->workers);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    break;
  }
}

static void
thrift_threaded_server_set_property (GObject *object, guint prop_id, const GValue *value,
                                     GParamSpec *pspec)
{
  ThriftThreadedServerPrivate *priv = PRIV (THRIFT_THREADED_SERVER (object));

  switch (prop_id)
  {
  case PROP_MAX_CONNECTIONS:
    g_mutex_lock (&priv->lock);
    priv->max_connections = g_value_get_uint (value);
    g_cond_broadcast (&priv->slot_freed);
    g_mutex_unlock (&priv->lock);
    break;
  case PROP_MODE:
    priv->mode = g_value_get_enum (value);
    break;
  case PROP_WORKERS:
    priv->workers = g_value_get_uint (value);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    break;
  }
}

static void
thrift_threaded_server_finalize (GObject *object)
{
  ThriftThreadedServerPrivate *priv = PRIV (THRIFT_THREADED_SERVER (object));

  g_array_free (priv->signals, TRUE);
  g_clear_error (&priv->accept_error);
  if (priv->stop_fd >= 0)
    close (priv->stop_fd);
  g_mutex_clear (&priv->lock);
  g_cond_clear (&priv->slot_freed);
  G_OBJECT_CLASS (thrift_threaded_server_parent_class)->finalize (object);
}

static void
thrift_threaded_server_class_init (ThriftThreadedServerClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  ThriftServerClass *server_class = THRIFT_SERVER_CLASS (klass);

  gobject_class->get_property = thrift_threaded_server_get_property;
  gobject_class->set_property = thrift_threaded_server_set_property;
  gobject_class->finalize = thrift_threaded_server_finalize;
  server_class->serve = thrift_threaded_server_serve;
  server_class->stop = thrift_threaded_server_stop;

  props[PROP_MAX_CONNECTIONS] = g_param_spec_uint (
      "max-connections", "Max connections",
      "Connections served at once; more wait in the listen backlog", 1, 65535,
      THRIFT_THREADED_SERVER_DEFAULT_MAX_CONNECTIONS,
      G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  props[PROP_ACTIVE_CONNECTIONS] = g_param_spec_uint ("active-connections", "Active connections",
                                                      "Connections being served now", 0, G_MAXUINT,
                                                      0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_CONNECTIONS_ACCEPTED] = g_param_spec_uint64 (
      "connections-accepted", "Connections accepted",
      "Connections accepted since the server was made", 0, G_MAXUINT64, 0,
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_HANDOVERS] = g_param_spec_uint64 (
      "handovers", "Handovers",
      "POOL: calls that held their dispatcher so long, while every other "
      "was busy, that a new dispatcher took its place",
      0, G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_WAKEUPS] = g_param_spec_uint64 (
      "wakeups", "Wake-ups", "POOL: connections a dispatcher took from the shared epoll set", 0,
      G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_WATCH_UPDATES] = g_param_spec_uint64 (
      "watch-updates", "Watch updates",
      "POOL: epoll_ctl calls that armed idle connections (one per arming "
      "while a connection's descriptors stay the same)",
      0, G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_LISTENING] = g_param_spec_boolean (
      "listening", "Listening",
      "TRUE from a successful listen until serve returns; notified (in "
      "the serving thread) when it changes",
      FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_MODE] = g_param_spec_enum (
      "mode", "Mode",
      "POOL: idle connections wait in one poll set and a pool of workers "
      "serves requests; PER_CONNECTION: one thread per connection",
      THRIFT_TYPE_THREADED_SERVER_MODE, THRIFT_THREADED_SERVER_POOL,
      G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  props[PROP_WORKERS] = g_param_spec_uint (
      "workers", "Workers",
      "POOL: dispatcher threads (0: one per core); a call that runs long is "
      "handed over to one more; read when serve starts",
      0, 4096, 0, G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (gobject_class, N_PROPS, props);
}

static void
thrift_threaded_server_init (ThriftThreadedServer *self)
{
  ThriftThreadedServerPrivate *priv = PRIV (self);

  g_mutex_init (&priv->lock);
  g_cond_init (&priv->slot_freed);
  priv->max_connections = THRIFT_THREADED_SERVER_DEFAULT_MAX_CONNECTIONS;
  priv->signals = g_array_new (FALSE, FALSE, sizeof (gint));
  /* without it (out of descriptors) a stop takes the lock: still right, but not from a
   * signal handler */
  priv->stop_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
}
