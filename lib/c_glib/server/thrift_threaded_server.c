/*
 * ThriftThreadedServer: one worker thread per connection, over any ThriftServerTransport.
 *
 * Threads while serving:
 *   - the serving thread (the caller of thrift_server_serve) runs a private GMainLoop that
 *     only waits for a stop request (thrift_server_stop, a registered signal, or the
 *     acceptor giving up), then tears everything down;
 *   - the acceptor thread loops: reap finished workers, wait for a free slot
 *     (max-connections), accept, start a worker;
 *   - one worker per connection: peek, process, until the peer is gone or the server stops.
 *
 * Stopping wakes what blocks: the acceptor in accept (ThriftServerSocket: shutdown of the
 * listening socket; ThriftServerRdma: its interrupt; other transports: close) and each worker
 * in peek or read (ThriftSocket: shutdown of its socket; ThriftRdma: its interrupt; other
 * transports: close). A connection is only interrupted while its worker has not begun to
 * close it; both happen under the server's lock, so a descriptor is never touched after
 * it was closed.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <glib-unix.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/processor/thrift_processor.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol_factory.h>
#include <thrift/c_glib/protocol/thrift_checked_binary_protocol.h>
#include <thrift/c_glib/transport/thrift_server_socket.h>
#include <thrift/c_glib/transport/thrift_socket.h>
#include <thrift/c_glib/transport/thrift_transport_factory.h>

#include <thrift/c_glib/server/thrift_threaded_server.h>
#include "thrift_server_interrupt.h"

enum
{
  PROP_0,
  PROP_MAX_CONNECTIONS,
  PROP_ACTIVE_CONNECTIONS,
  PROP_CONNECTIONS_ACCEPTED,
  PROP_LISTENING,
  N_PROPS
};

/* Consecutive accept failures after which serve gives up (with a growing pause between
 * attempts, 10 ms doubling up to 1 s: about 45 s in all). A failed handshake of one client
 * is one failure; the next good accept resets the count. */
#define ACCEPT_MAX_FAILURES 50

typedef struct _Connection Connection;

typedef struct
{
  guint max_connections;

  GMutex lock;
  GCond slot_freed;           /* a worker ended, or stop began */
  gint stopping;              /* atomic: set by the teardown, read by workers */
  gboolean stop_requested;    /* under lock: stop asked before or while serving */
  gboolean serving;           /* under lock */
  gboolean listening;         /* under lock: between listen and the end of the teardown */
  GMainLoop *loop;            /* under lock; set while serving */
  GArray *signals;            /* gint signal numbers that stop the server */

  GList *connections;         /* Connection *, under lock */
  guint active;               /* under lock */
  guint64 accepted;           /* under lock */

  GThread *acceptor;
  GError *accept_error;       /* under lock: why the acceptor gave up */
  gboolean listener_closed;   /* the interrupt closed the server transport */
} ThriftThreadedServerPrivate;

struct _Connection
{
  ThriftThreadedServer *server;
  ThriftTransport *client;
  GThread *thread;
  gboolean closing;           /* under lock: the worker closes the transport; hands off */
  gboolean finished;          /* under lock: the worker is about to return */
};

G_DEFINE_QUARK (thrift-threaded-server-error-quark, thrift_threaded_server_error)
G_DEFINE_TYPE_WITH_PRIVATE (ThriftThreadedServer, thrift_threaded_server, THRIFT_TYPE_SERVER)

static GParamSpec *props[N_PROPS];

#define PRIV(s) ((ThriftThreadedServerPrivate *) thrift_threaded_server_get_instance_private (s))

/* Asks the serving thread to stop; safe from any thread. */
static void
request_stop (ThriftThreadedServer *self)
{
  ThriftThreadedServerPrivate *priv = PRIV (self);

  g_mutex_lock (&priv->lock);
  priv->stop_requested = TRUE;
  if (priv->loop != NULL)
    g_main_loop_quit (priv->loop);
  g_cond_broadcast (&priv->slot_freed);
  g_mutex_unlock (&priv->lock);
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
    return THRIFT_PROTOCOL (g_object_new (THRIFT_TYPE_CHECKED_BINARY_PROTOCOL,
                                          "transport", transport, NULL));
  return THRIFT_PROTOCOL_FACTORY_GET_CLASS (factory)->get_protocol (factory, transport);
}

static gpointer
worker_main (gpointer data)
{
  Connection *conn = data;
  ThriftThreadedServer *self = conn->server;
  ThriftThreadedServerPrivate *priv = PRIV (self);
  ThriftServer *server = THRIFT_SERVER (self);
  ThriftTransport *in_t, *out_t;
  ThriftProtocol *in_p, *out_p;
  GError *error = NULL;

  in_t = wrap_transport (server->input_transport_factory, conn->client);
  out_t = wrap_transport (server->output_transport_factory, conn->client);
  in_p = make_protocol (server->input_protocol_factory, in_t);
  out_p = make_protocol (server->output_protocol_factory, out_t);

  while (!g_atomic_int_get (&priv->stopping)
         && thrift_transport_peek (in_t, &error))
  {
    if (!thrift_processor_process (server->processor, in_p, out_p, &error))
      break;
  }
  if (error != NULL)
  {
    if (!g_atomic_int_get (&priv->stopping))
      g_message ("thrift_threaded_server: connection ended: %s", error->message);
    g_clear_error (&error);
  }

  g_mutex_lock (&priv->lock);
  conn->closing = TRUE;
  g_mutex_unlock (&priv->lock);

  /* Both wrappers may sit on the same connection: close it once, through the input side
   * (the processor has flushed every reply). */
  thrift_transport_close (in_t, NULL);
  if (thrift_transport_is_open (out_t))
    thrift_transport_close (out_t, NULL);
  g_object_unref (in_p);
  g_object_unref (out_p);
  g_object_unref (in_t);
  g_object_unref (out_t);

  g_mutex_lock (&priv->lock);
  g_clear_object (&conn->client);
  conn->finished = TRUE;
  priv->active--;
  g_cond_broadcast (&priv->slot_freed);
  g_mutex_unlock (&priv->lock);
  return NULL;
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
    if (all || conn->finished)
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
start_worker (ThriftThreadedServer *self, ThriftTransport *client)
{
  ThriftThreadedServerPrivate *priv = PRIV (self);
  Connection *conn = g_new0 (Connection, 1);
  GError *error = NULL;

  conn->server = self;
  conn->client = client;

  g_mutex_lock (&priv->lock);
  priv->active++;
  priv->accepted++;
  conn->thread = g_thread_try_new ("thrift-conn", worker_main, conn, &error);
  if (conn->thread != NULL)
    priv->connections = g_list_prepend (priv->connections, conn);
  else
    priv->active--;
  g_mutex_unlock (&priv->lock);

  if (conn->thread == NULL)
  {
    g_message ("thrift_threaded_server: cannot start a worker, connection dropped: %s",
               error->message);
    g_clear_error (&error);
    thrift_transport_close (client, NULL);
    g_object_unref (client);
    g_free (conn);
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
        g_propagate_prefixed_error (&priv->accept_error,
                                    error != NULL ? error
                                    : g_error_new_literal (THRIFT_TRANSPORT_ERROR,
                                                           THRIFT_TRANSPORT_ERROR_UNKNOWN,
                                                           "accept failed"),
                                    "thrift_threaded_server: giving up after %u failed accepts: ",
                                    failures);
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
    start_worker (self, client);
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
    if (!conn->closing)
      thrift_server_interrupt_connection (conn->client);
  }
  g_mutex_unlock (&priv->lock);
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

  if (!thrift_server_transport_listen (server->server_transport, error))
  {
    g_mutex_lock (&priv->lock);
    priv->serving = FALSE;
    priv->stop_requested = FALSE;
    g_mutex_unlock (&priv->lock);
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

  g_atomic_int_set (&priv->stopping, 0);
  priv->listener_closed = FALSE;
  priv->acceptor = g_thread_try_new ("thrift-accept", acceptor_main, self, error);
  if (priv->acceptor == NULL)
  {
    thrift_server_transport_close (server->server_transport, NULL);
    ok = FALSE;
  }
  else
  {
    g_mutex_lock (&priv->lock);
    priv->loop = loop;
    if (!priv->stop_requested)
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
  priv->stop_requested = FALSE;
  g_mutex_unlock (&priv->lock);
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
thrift_threaded_server_stop_on_signal (ThriftThreadedServer *server, gint signum,
                                       GError **error)
{
  ThriftThreadedServerPrivate *priv;
  guint i;

  g_return_val_if_fail (THRIFT_IS_THREADED_SERVER (server), FALSE);
  priv = PRIV (server);

  if (signum != SIGINT && signum != SIGTERM && signum != SIGHUP
      && signum != SIGUSR1 && signum != SIGUSR2)
  {
    g_set_error (error, THRIFT_THREADED_SERVER_ERROR, THRIFT_THREADED_SERVER_ERROR_SIGNAL,
                 "thrift_threaded_server: cannot stop on signal %d; "
                 "use SIGINT, SIGTERM, SIGHUP, SIGUSR1 or SIGUSR2", signum);
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
      g_source_unref (s);   /* destroyed with the context at the end of serve */
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
    case PROP_LISTENING:
      g_mutex_lock (&priv->lock);
      g_value_set_boolean (value, priv->listening);
      g_mutex_unlock (&priv->lock);
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

  props[PROP_MAX_CONNECTIONS] =
    g_param_spec_uint ("max-connections", "Max connections",
                       "Connections served at once; more wait in the listen backlog",
                       1, 65535, THRIFT_THREADED_SERVER_DEFAULT_MAX_CONNECTIONS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);
  props[PROP_ACTIVE_CONNECTIONS] =
    g_param_spec_uint ("active-connections", "Active connections",
                       "Connections being served now",
                       0, G_MAXUINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_CONNECTIONS_ACCEPTED] =
    g_param_spec_uint64 ("connections-accepted", "Connections accepted",
                         "Connections accepted since the server was made",
                         0, G_MAXUINT64, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_LISTENING] =
    g_param_spec_boolean ("listening", "Listening",
                          "TRUE from a successful listen until serve returns; notified (in "
                          "the serving thread) when it changes",
                          FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
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
}
