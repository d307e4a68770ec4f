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
 * thrift_idle_watch.h: waiting for a connection's next request in a poll set shared with
 * other connections, instead of in a thread of its own.
 *
 * A server that keeps many mostly idle connections (ThriftThreadedServer's pool mode) asks
 * each connection, between requests, what to watch; one thread polls all of them and hands a
 * connection to a worker only when its next request is there (or it ended).
 *
 * ThriftIdleWatch is the interface a transport implements for this (ThriftRdma does): a
 * transport knows which descriptors signal its input and what it has already buffered.  For
 * stock transports thrift_idle_watch_prepare () knows ThriftSocket (its descriptor) under
 * ThriftBufferedTransport and ThriftFramedTransport (their buffered bytes); a connection under
 * another wrapper (ThriftZlibTransport hides what it has inflated) is UNSUPPORTED.
 */
#ifndef _THRIFT_IDLE_WATCH_H
#define _THRIFT_IDLE_WATCH_H

#include <glib-object.h>

#include <thrift/c_glib/transport/thrift_transport.h>

G_BEGIN_DECLS

/* Descriptors a connection may ask to be watched. */
#define THRIFT_IDLE_WATCH_MAX_FDS 4

typedef enum
{
  THRIFT_IDLE_READY,      /* a request (or the end of the connection) is there: peek
                               will not block */
  THRIFT_IDLE_WAIT,       /* nothing yet: watch the descriptors until the deadline */
  THRIFT_IDLE_GONE,       /* the connection is over (peer gone, failed, idle too long) */
  THRIFT_IDLE_UNSUPPORTED /* the transport cannot be watched: give it a thread */
} ThriftIdleState;

typedef struct _ThriftIdleWatch ThriftIdleWatch; /* dummy object */
typedef struct _ThriftIdleWatchInterface ThriftIdleWatchInterface;

/**
 * ThriftIdleWatchInterface:
 * @prepare: before the connection waits: READY or GONE if there is no need to, else fills
 *   up to @max_fds descriptors (events set) in @fds, *@n_fds, and *@deadline_us (monotonic;
 *   0: none) by which @check must be called even if nothing happened (keepalive, idle
 *   timeout), and returns WAIT.  Must not block.
 * @check: after the poll returned or the deadline passed, with @fds and *@n_fds as @prepare
 *   left them and revents set: takes what happened without blocking, and then answers as
 *   @prepare does (refilling @fds).
 * @look: (optional) as @check, for a watcher that did not poll the descriptors (it was woken
 *   by the set they are in, or the deadline): finds out itself, without blocking, what
 *   happened.  Saves the watcher's poll (2) per wake-up where the transport's own look costs
 *   no more (ThriftRdma: reading the completion channel, which it does anyway).
 * @linger: (optional) right after a request was served, waits at most @max_us for the next
 *   one the way the connection waits in a call (its polling mode: a latency hint spins), and
 *   returns TRUE if it is there or the connection ended; FALSE when the time is up.
 *
 * A descriptor listed in consecutive answers must be the same open file all along (a watcher
 * registers it once, not on every answer); a transport that replaces one leaves it out of
 * at least one answer in between.
 */
struct _ThriftIdleWatchInterface
{
  GTypeInterface parent;

  ThriftIdleState (*prepare) (ThriftIdleWatch *self, GPollFD *fds, guint max_fds, guint *n_fds,
                              gint64 *deadline_us);
  ThriftIdleState (*check) (ThriftIdleWatch *self, GPollFD *fds, guint max_fds, guint *n_fds,
                            gint64 *deadline_us);
  gboolean (*linger) (ThriftIdleWatch *self, gint64 max_us);
  ThriftIdleState (*look) (ThriftIdleWatch *self, GPollFD *fds, guint max_fds, guint *n_fds,
                           gint64 *deadline_us);
};

GType thrift_idle_watch_get_type (void);
#define THRIFT_TYPE_IDLE_WATCH (thrift_idle_watch_get_type ())
#define THRIFT_IDLE_WATCH(obj) \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), THRIFT_TYPE_IDLE_WATCH, ThriftIdleWatch))
#define THRIFT_IS_IDLE_WATCH(obj) (G_TYPE_CHECK_INSTANCE_TYPE ((obj), THRIFT_TYPE_IDLE_WATCH))
#define THRIFT_IDLE_WATCH_GET_INTERFACE(inst) \
  (G_TYPE_INSTANCE_GET_INTERFACE ((inst), THRIFT_TYPE_IDLE_WATCH, ThriftIdleWatchInterface))

/* For a connection as a server holds it (maybe under buffered or framed wrappers): the
 * ThriftIdleWatch under it, or ThriftSocket's descriptor; bytes the wrappers already buffer
 * make it READY.  UNSUPPORTED for anything else.  @fds has THRIFT_IDLE_WATCH_MAX_FDS
 * entries. */
ThriftIdleState thrift_idle_watch_prepare (ThriftTransport *connection, GPollFD *fds, guint *n_fds,
                                           gint64 *deadline_us);
/* A worker that just served a request waits at most @max_us for the next on the same
 * connection (a client calling back to back sends it about a round trip later), without the
 * poll set's round trip through another thread; TRUE if it is there (or the connection
 * ended). */
gboolean thrift_idle_watch_linger (ThriftTransport *connection, gint64 max_us);

/* The same after the poll (or the deadline): @fds and *@n_fds as prepare left them, with
 * revents set. */
ThriftIdleState thrift_idle_watch_check (ThriftTransport *connection, GPollFD *fds, guint *n_fds,
                                         gint64 *deadline_us);
/* The same when woken without knowing which descriptor fired (an epoll set holding them
 * fired, or the deadline passed): the transport's own look where it has one, else a poll of
 * @fds (timeout 0) and check. */
ThriftIdleState thrift_idle_watch_look (ThriftTransport *connection, GPollFD *fds, guint *n_fds,
                                        gint64 *deadline_us);

G_END_DECLS

#endif /* _THRIFT_IDLE_WATCH_H */
