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
 * ThriftThreadedServer: a ThriftServer that serves many connections at once over any
 * ThriftServerTransport (ThriftServerSocket, ThriftServerRdma, ...).  By default (the POOL
 * mode) a connection waiting for its next request holds no thread: idle connections wait in
 * one poll set and dispatcher threads (one per core) run whichever has a request to
 * completion (a call that runs long is handed over to a new dispatcher), so thousands of
 * idle clients cost descriptors and memory, not threads (the process's descriptor limit is
 * raised to its hard limit when serving starts).  PER_CONNECTION gives each connection its
 * own thread, as a handler that waits for other calls may need.
 *
 * Connections are bounded by the "max-connections" property: when that many are open, the
 * server stops accepting and further clients wait in the listen backlog of the
 * server transport until a connection ends (they are neither refused nor dropped; a client
 * with a connect timeout may give up meanwhile).
 *
 * thrift_server_serve () listens, accepts and serves until thrift_server_stop () is called
 * (from any thread, or from a signal registered with
 * thrift_threaded_server_stop_on_signal ()). Stopping wakes the accepting thread, shuts
 * down every connection (a worker in the middle of a handler call finishes that call
 * first), joins every worker, closes the server transport, and then serve returns TRUE.
 * serve returns FALSE with an error when listening fails or accepting keeps failing.
 * The same server can serve again after it stopped.
 */
#ifndef _THRIFT_THREADED_SERVER_H
#define _THRIFT_THREADED_SERVER_H

#include <glib-object.h>

#include <thrift/c_glib/server/thrift_server.h>

G_BEGIN_DECLS

#define THRIFT_TYPE_THREADED_SERVER (thrift_threaded_server_get_type ())
#define THRIFT_THREADED_SERVER(obj) \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), THRIFT_TYPE_THREADED_SERVER, ThriftThreadedServer))
#define THRIFT_IS_THREADED_SERVER(obj) \
  (G_TYPE_CHECK_INSTANCE_TYPE ((obj), THRIFT_TYPE_THREADED_SERVER))
#define THRIFT_THREADED_SERVER_CLASS(c) \
  (G_TYPE_CHECK_CLASS_CAST ((c), THRIFT_TYPE_THREADED_SERVER, ThriftThreadedServerClass))
#define THRIFT_IS_THREADED_SERVER_CLASS(c) \
  (G_TYPE_CHECK_CLASS_TYPE ((c), THRIFT_TYPE_THREADED_SERVER))
#define THRIFT_THREADED_SERVER_GET_CLASS(obj) \
  (G_TYPE_INSTANCE_GET_CLASS ((obj), THRIFT_TYPE_THREADED_SERVER, ThriftThreadedServerClass))

typedef struct _ThriftThreadedServer ThriftThreadedServer;
typedef struct _ThriftThreadedServerClass ThriftThreadedServerClass;

/* Properties (besides ThriftServer's processor, server_transport and factories):
 *   "mode"                  ThriftThreadedServerMode, default POOL
 *   "workers"               guint, 0 to 4096, default 0: POOL's dispatcher threads, 0 for one
 *                           per core.  A dispatcher runs the requests of the connection it
 *                           takes to completion; when every dispatcher is busy and one call
 *                           has run for 20 ms, a new dispatcher takes its place (so blocking
 *                           handlers need no more)
 *   "handovers"             guint64, read-only: calls that were handed over so
 *   "wakeups"               guint64, read-only: POOL: connections a dispatcher took from
 *                           the shared epoll set (one wake-up each)
 *   "watch-updates"         guint64, read-only: POOL: epoll_ctl calls that armed idle
 *                           connections (one per arming while a connection's descriptors
 *                           stay the same)
 *   "max-connections"       guint, 1 to 65535, default 4096: connections open at once
 *   "active-connections"    guint, read-only: connections being served now
 *   "connections-accepted"  guint64, read-only: connections accepted since construction
 *   "listening"             gboolean, read-only: TRUE from a successful listen until serve
 *                           returns; "notify::listening" is emitted in the serving thread
 *                           (a program can print "ready" there)
 *
 * Transport and protocol factories that are not set default to passing the connection
 * through unchanged (ThriftTransportFactory) and to ThriftCheckedBinaryProtocol, which also
 * replaces a plain ThriftBinaryProtocolFactory (the same wire format; it refuses a length
 * the message cannot hold before allocating it). */
struct _ThriftThreadedServer
{
  ThriftServer parent;
};

struct _ThriftThreadedServerClass
{
  ThriftServerClass parent;
};

GType thrift_threaded_server_get_type (void);

#define THRIFT_THREADED_SERVER_DEFAULT_MAX_CONNECTIONS 4096

typedef enum
{
  THRIFT_THREADED_SERVER_ERROR_BUSY,     /* serve called while the server is serving */
  THRIFT_THREADED_SERVER_ERROR_SIGNAL,   /* a signal that cannot stop the server */
  THRIFT_THREADED_SERVER_ERROR_RESOURCES /* no descriptor or thread for the pool */
} ThriftThreadedServerError;

/**
 * ThriftThreadedServerMode:
 * @THRIFT_THREADED_SERVER_POOL: connections waiting for their next request wait in one
 *   poll set (no thread each); a pool of "workers" threads serves whichever connection has
 *   a request.  Works for ThriftRdma and ThriftSocket (under buffered or framed wrappers);
 *   a connection of another transport gets a thread of its own.
 * @THRIFT_THREADED_SERVER_PER_CONNECTION: one thread per connection.
 */
typedef enum
{
  THRIFT_THREADED_SERVER_POOL,
  THRIFT_THREADED_SERVER_PER_CONNECTION
} ThriftThreadedServerMode;

GType thrift_threaded_server_mode_get_type (void);
#define THRIFT_TYPE_THREADED_SERVER_MODE (thrift_threaded_server_mode_get_type ())

#define THRIFT_THREADED_SERVER_ERROR (thrift_threaded_server_error_quark ())
GQuark thrift_threaded_server_error_quark (void);

/* Makes signal SIGNUM (SIGINT, SIGTERM, SIGHUP, SIGUSR1 or SIGUSR2) stop the server while
 * it serves: the signal is handled by GLib's unix signal sources, so the process is not
 * interrupted in a handler and the stop runs in the serving thread. Returns FALSE with
 * THRIFT_THREADED_SERVER_ERROR_SIGNAL for other signals. Can be called before or during serve. */
gboolean thrift_threaded_server_stop_on_signal (ThriftThreadedServer *server, gint signum,
                                                GError **error);

G_END_DECLS

#endif /* _THRIFT_THREADED_SERVER_H */
