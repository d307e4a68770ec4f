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

/* thrift_idle_watch.c: idle connections in a shared poll set (see thrift_idle_watch.h). */
#include "config.h"

#include <poll.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/transport/thrift_buffered_transport.h>
#include <thrift/c_glib/transport/thrift_framed_transport.h>
#include <thrift/c_glib/transport/thrift_socket.h>

#include <thrift/c_glib/transport/thrift_idle_watch.h>

#include "thrift_transport_unwrap.h"

G_DEFINE_INTERFACE (ThriftIdleWatch, thrift_idle_watch, G_TYPE_OBJECT)

static void
thrift_idle_watch_default_init (ThriftIdleWatchInterface *iface)
{
  (void) iface;
}

typedef enum
{
  WRAPPERS_EMPTY,  /* nothing buffered between @connection and @inner */
  WRAPPERS_BUFFER, /* a request may be there without anything to read from below */
  WRAPPERS_UNKNOWN /* a wrapper whose buffers we cannot see (zlib) */
} Wrappers;

/* What the wrappers between @connection and @inner hold already. */
static Wrappers
wrappers_buffer (ThriftTransport *connection, ThriftTransport *inner)
{
  for (int depth = 0; connection != NULL && connection != inner && depth < 16; depth++)
  {
    if (THRIFT_IS_BUFFERED_TRANSPORT (connection))
    {
      if (THRIFT_BUFFERED_TRANSPORT (connection)->r_buf->len > 0)
        return WRAPPERS_BUFFER;
      connection = THRIFT_BUFFERED_TRANSPORT (connection)->transport;
    }
    else if (THRIFT_IS_FRAMED_TRANSPORT (connection))
    {
      if (THRIFT_FRAMED_TRANSPORT (connection)->r_buf->len > 0)
        return WRAPPERS_BUFFER;
      connection = THRIFT_FRAMED_TRANSPORT (connection)->transport;
    }
    else
    {
      return WRAPPERS_UNKNOWN;
    }
  }
  return WRAPPERS_EMPTY;
}

/* The transport under @connection that can be watched (a ThriftIdleWatch or ThriftSocket)
 * and what the wrappers above it hold; NULL when there is none or a wrapper hides its
 * buffers. */
static ThriftTransport *
watched_transport (ThriftTransport *connection, Wrappers *wrappers)
{
  ThriftTransport *inner = thrift_transport_find_wrapped (connection, THRIFT_TYPE_IDLE_WATCH);

  if (inner == NULL)
    inner = thrift_transport_find_wrapped (connection, THRIFT_TYPE_SOCKET);
  if (inner == NULL)
    return NULL;
  *wrappers = wrappers_buffer (connection, inner);
  return *wrappers == WRAPPERS_UNKNOWN ? NULL : inner;
}

typedef enum
{
  WATCH_PREPARE,
  WATCH_CHECK, /* @fds as prepare filled them, revents set */
  WATCH_LOOK   /* @fds as prepare filled them, revents unknown */
} WatchStep;

/* revents of @fds by a poll (2) that does not wait (none if it fails: the caller's set then
 * fires again, as its descriptors are still readable) */
static void
poll_now (GPollFD *fds, guint n_fds)
{
  for (guint i = 0; i < n_fds; i++)
    fds[i].revents = 0;
  /* (GPollFD is struct pollfd on Unix) */
  if (n_fds > 0 && poll ((struct pollfd *) fds, n_fds, 0) < 0)
    for (guint i = 0; i < n_fds; i++)
      fds[i].revents = 0;
}

static ThriftIdleState
watch (ThriftTransport *connection, WatchStep step, GPollFD *fds, guint *n_fds, gint64 *deadline_us)
{
  Wrappers wrappers = WRAPPERS_EMPTY;
  ThriftTransport *inner = watched_transport (connection, &wrappers);
  ThriftIdleWatchInterface *iface = NULL;
  gboolean fired = FALSE;

  if (inner != NULL && THRIFT_IS_IDLE_WATCH (inner))
    iface = THRIFT_IDLE_WATCH_GET_INTERFACE (inner);
  if (step == WATCH_LOOK && (iface == NULL || iface->look == NULL))
  {
    poll_now (fds, *n_fds);
    step = WATCH_CHECK;
  }
  if (step == WATCH_CHECK)
    for (guint i = 0; i < *n_fds; i++)
      fired = fired || fds[i].revents != 0;
  else if (step == WATCH_PREPARE)
    *n_fds = 0;
  *deadline_us = 0;
  if (inner == NULL)
    return THRIFT_IDLE_UNSUPPORTED;
  if (iface != NULL)
  {
    if (wrappers == WRAPPERS_BUFFER)
      return THRIFT_IDLE_READY;
    return (step == WATCH_LOOK    ? iface->look
            : step == WATCH_CHECK ? iface->check
                                  : iface->prepare) (THRIFT_IDLE_WATCH (inner), fds,
                                                     THRIFT_IDLE_WATCH_MAX_FDS, n_fds, deadline_us);
  }
  if (THRIFT_SOCKET (inner)->sd == THRIFT_INVALID_SOCKET)
    return THRIFT_IDLE_GONE;
  /* readable: data or the end of the stream, which peek tells apart */
  if (wrappers == WRAPPERS_BUFFER || fired)
    return THRIFT_IDLE_READY;
  fds[0] = (GPollFD){ .fd = THRIFT_SOCKET (inner)->sd, .events = G_IO_IN | G_IO_HUP | G_IO_ERR };
  *n_fds = 1;
  return THRIFT_IDLE_WAIT;
}

ThriftIdleState
thrift_idle_watch_prepare (ThriftTransport *connection, GPollFD *fds, guint *n_fds,
                           gint64 *deadline_us)
{
  return watch (connection, WATCH_PREPARE, fds, n_fds, deadline_us);
}

ThriftIdleState
thrift_idle_watch_check (ThriftTransport *connection, GPollFD *fds, guint *n_fds,
                         gint64 *deadline_us)
{
  return watch (connection, WATCH_CHECK, fds, n_fds, deadline_us);
}

ThriftIdleState
thrift_idle_watch_look (ThriftTransport *connection, GPollFD *fds, guint *n_fds,
                        gint64 *deadline_us)
{
  return watch (connection, WATCH_LOOK, fds, n_fds, deadline_us);
}

gboolean
thrift_idle_watch_linger (ThriftTransport *connection, gint64 max_us)
{
  Wrappers wrappers = WRAPPERS_EMPTY;
  ThriftTransport *inner = watched_transport (connection, &wrappers);
  GPollFD fds[THRIFT_IDLE_WATCH_MAX_FDS];
  guint n = 0;
  gint64 deadline = 0;

  if (inner == NULL)
    return FALSE;
  if (wrappers == WRAPPERS_BUFFER)
    return TRUE;
  if (THRIFT_IS_IDLE_WATCH (inner) && THRIFT_IDLE_WATCH_GET_INTERFACE (inner)->linger != NULL)
    return THRIFT_IDLE_WATCH_GET_INTERFACE (inner)->linger (THRIFT_IDLE_WATCH (inner), max_us);
  switch (watch (connection, WATCH_PREPARE, fds, &n, &deadline))
  {
  case THRIFT_IDLE_WAIT:
    return g_poll (fds, n, (gint) ((max_us + 999) / 1000)) > 0;
  case THRIFT_IDLE_UNSUPPORTED:
    return FALSE;
  default:
    return TRUE;
  }
}
