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

/* thrift_server_hybrid.c: ThriftServerHybrid, one port for both legs of hybrid:// clients
 * (thrift_server_hybrid.h). */
#include "config.h"

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thrift/c_glib/transport/thrift_interruptible.h>
#include <thrift/c_glib/transport/thrift_socket.h>
#include <thrift/c_glib/transport/thrift_server_rdma.h>
#include <thrift/c_glib/transport/thrift_server_hybrid.h>

#include "hybrid/hybrid_transport.h"
#include "hybrid/hybrid_wire.h"
#include "rdma/rdma_gobject.h"
#include "rdma/rdma_signal.h"

enum
{
  PROP_0,
  PROP_HOSTNAME,
  PROP_PORT,
  PROP_BACKLOG,
  PROP_FALLBACK,
  PROP_CONNECT_TIMEOUT,
  PROP_HINTS,
  PROP_POLLING,
  PROP_CALL_TIMEOUT,
  PROP_IDLE_TIMEOUT,
  PROP_KEEPALIVE,
  PROP_NUMA_NODE,
  PROP_CONFIGURATION, /* these three consecutive: rdma_size_props_* */
  PROP_REMAINING_MESSAGE_SIZE,
  PROP_KNOW_MESSAGE_SIZE,
  PROP_MAX_PINNED_BYTES,
  PROP_BULK_THRESHOLD /* RDMA_BULK_PROPS_N from here: rdma_bulk_props_* */
};

/* A client's TCP leg between its accept and its pairing. */
typedef enum
{
  LEG_READ_HELLO,
  LEG_READ_COMMIT,
  LEG_COMMITTED
} LegState;

typedef struct
{
  int fd;
  LegState state;
  guint8 buf[HYBRID_HELLO_LEN]; /* hello and commit are this long */
  gsize got;
  guint8 token[HYBRID_TOKEN_LEN];
  gboolean framed;   /* its TCP messages are framed: a hybrid client's, or a
                                     stock framed one's (else a stock buffered client) */
  gboolean admitted; /* an RDMA request presented the token: it is used */
  HybridCommit commit;
  ThriftRdma *rdma; /* (owned) (nullable): the RDMA leg, once established */
  gint64 deadline_us;
} Pending;

typedef struct
{
  gchar *hostname; /* (owned) (nullable): NULL listens on any address */
  guint port;
  gint backlog;
  gboolean fallback;
  guint connect_timeout_ms;
  gpointer hints; /* (unowned) (nullable): the caller's (property) */
  ThriftRdmaPolling polling;
  guint call_timeout_ms, idle_timeout_ms, keepalive_ms;
  gint numa_node;
  guint64 max_pinned_bytes; /* handed to the RDMA listener */
  RdmaBulkProps bulk;       /* the RDMA listener's bulk-* and rcache-* */

  int tcp_fd;             /* the TCP listener */
  ThriftServerRdma *rdma; /* (owned) (nullable): the RDMA listener; NULL when serving
                                     TCP alone or not listening */
  int wake_fd;
  GList *pending; /* (owned) (nullable): Pending * (owned), pending_free */
  GQueue ready;   /* ThriftTransport * (owned), to hand out */
} ThriftServerHybridPrivate;

static void thrift_server_hybrid_interruptible_init (ThriftInterruptibleInterface *iface);

G_DEFINE_TYPE_WITH_CODE (ThriftServerHybrid, thrift_server_hybrid, THRIFT_TYPE_SERVER_TRANSPORT,
                         G_ADD_PRIVATE (ThriftServerHybrid)
                             G_IMPLEMENT_INTERFACE (THRIFT_TYPE_INTERRUPTIBLE,
                                                    thrift_server_hybrid_interruptible_init))

#define PRIV(obj)                                                            \
  ((ThriftServerHybridPrivate *) thrift_server_hybrid_get_instance_private ( \
      THRIFT_SERVER_HYBRID (obj)))

static void
pending_free (Pending *p)
{
  if (p->fd >= 0)
    close (p->fd);
  g_clear_object (&p->rdma);
  g_free (p);
}

static Pending *
find_token (ThriftServerHybridPrivate *priv, const guint8 *token)
{
  for (GList *l = priv->pending; l != NULL; l = l->next)
  {
    Pending *p = l->data;
    if (p->state != LEG_READ_HELLO && memcmp (p->token, token, HYBRID_TOKEN_LEN) == 0)
      return p;
  }
  return NULL;
}

/* ThriftServerRdmaAdmitFunc: an RDMA request comes in only with a token a TCP leg waits for,
 * once; without a token it is a plain rdma:// client. */
static gboolean
admit (const guint8 *token, gpointer user_data, gchar **reason)
{
  ThriftServerHybridPrivate *priv = user_data;
  Pending *p;

  if (token == NULL)
    return TRUE;
  p = find_token (priv, token);
  if (p == NULL || p->admitted)
  {
    *reason = g_strdup ("its pair token is unknown or was already used (another client's leg?)");
    return FALSE;
  }
  p->admitted = TRUE;
  return TRUE;
}

static void
close_listeners (ThriftServerHybridPrivate *priv)
{
  if (priv->tcp_fd >= 0)
    close (priv->tcp_fd);
  priv->tcp_fd = -1;
  if (priv->rdma != NULL)
  {
    thrift_server_transport_close (THRIFT_SERVER_TRANSPORT (priv->rdma), NULL);
    g_clear_object (&priv->rdma);
  }
  g_list_free_full (priv->pending, (GDestroyNotify) pending_free);
  priv->pending = NULL;
  while (!g_queue_is_empty (&priv->ready))
    g_object_unref (g_queue_pop_head (&priv->ready));
}

static gboolean
set_nonblocking (int fd, gboolean on)
{
  int flags = fcntl (fd, F_GETFL);
  return flags >= 0 && fcntl (fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK) == 0;
}

static gboolean
listen_tcp (ThriftServerHybridPrivate *priv, GError **error)
{
  struct addrinfo hints = { .ai_flags = AI_PASSIVE,
                            .ai_family = AF_UNSPEC,
                            .ai_socktype = SOCK_STREAM };
  struct addrinfo *list = NULL;
  gchar port[8];
  int err = 0, rc;

  g_snprintf (port, sizeof port, "%u", priv->port);
  if (priv->hostname == NULL)
    hints.ai_family = AF_INET6; /* dual-stack: every address, v4 and v6 */
  rc = getaddrinfo (priv->hostname, port, &hints, &list);
  if (rc != 0)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_HOST,
                 "hybrid: cannot resolve %s: %s", priv->hostname, gai_strerror (rc));
    return FALSE;
  }
  for (struct addrinfo *a = list; a != NULL; a = a->ai_next)
  {
    int fd = socket (a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    int one = 1, zero = 0;

    if (fd < 0)
    {
      err = errno;
      continue;
    }
    setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (a->ai_family == AF_INET6)
      setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    if (bind (fd, a->ai_addr, a->ai_addrlen) == 0 && listen (fd, priv->backlog) == 0)
    {
      priv->tcp_fd = fd;
      break;
    }
    err = errno;
    close (fd);
  }
  freeaddrinfo (list);
  if (priv->tcp_fd < 0)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET,
                 "hybrid: cannot listen on TCP port %u: %s", priv->port, g_strerror (err));
    return FALSE;
  }
  return TRUE;
}

static gboolean
thrift_server_hybrid_listen (ThriftServerTransport *transport, GError **error)
{
  ThriftServerHybridPrivate *priv = PRIV (transport);
  GError *e = NULL;

  /* the caller may listen first to see errors at once; the server's serve listens again */
  if (priv->tcp_fd >= 0)
    return TRUE;
  if (!listen_tcp (priv, error))
    return FALSE;
  priv->rdma = g_object_new (THRIFT_TYPE_SERVER_RDMA, "hostname", priv->hostname, "port",
                             priv->port, "backlog", priv->backlog, "configuration",
                             transport->configuration, "hints", priv->hints, "polling",
                             priv->polling, "call-timeout", priv->call_timeout_ms, "idle-timeout",
                             priv->idle_timeout_ms, "keepalive", priv->keepalive_ms, "numa-node",
                             priv->numa_node, "max-pinned-bytes", priv->max_pinned_bytes, NULL);
  rdma_bulk_props_apply (&priv->bulk, priv->rdma);
  thrift_server_rdma_set_admission (priv->rdma, admit, priv);
  if (!thrift_server_transport_listen (THRIFT_SERVER_TRANSPORT (priv->rdma), &e))
  {
    g_clear_object (&priv->rdma);
    if (!priv->fallback)
    {
      g_propagate_prefixed_error (error, e,
                                  "hybrid: cannot listen for RDMA on port %u "
                                  "(add fallback=tcp to serve over TCP alone): ",
                                  priv->port);
      close_listeners (priv);
      return FALSE;
    }
    g_warning ("hybrid: serving port %u over TCP alone (fallback): no RDMA: %s", priv->port,
               e->message);
    g_error_free (e);
  }
  return TRUE;
}

/* A complete pair (or a TCP leg alone) becomes the transport the server hands out. */
static void
hand_out (ThriftServerHybrid *self, Pending *p)
{
  ThriftServerHybridPrivate *priv = PRIV (self);
  ThriftSocket *socket;

  set_nonblocking (p->fd, FALSE);
  socket = g_object_new (THRIFT_TYPE_SOCKET, NULL);
  socket->sd = p->fd;
  p->fd = -1;
  g_queue_push_tail (&priv->ready,
                     hybrid_transport_new_accepted (socket, g_steal_pointer (&p->rdma), p->framed,
                                                    THRIFT_SERVER_TRANSPORT (self)->configuration));
  priv->pending = g_list_remove (priv->pending, p);
  pending_free (p);
}

static void
maybe_complete (ThriftServerHybrid *self, Pending *p)
{
  if (p->state == LEG_COMMITTED && (p->commit == HYBRID_COMMIT_TCP_ONLY || p->rdma != NULL))
    hand_out (self, p);
}

static void
drop_pending (ThriftServerHybridPrivate *priv, Pending *p, const gchar *why)
{
  g_message ("ThriftServerHybrid: a client's connection was dropped: %s", why);
  priv->pending = g_list_remove (priv->pending, p);
  pending_free (p);
}

/* The TCP leg @p has bytes: read them, and answer what is complete. */
static void
leg_readable (ThriftServerHybrid *self, Pending *p)
{
  ThriftServerHybridPrivate *priv = PRIV (self);
  gsize want = p->state == LEG_READ_HELLO ? HYBRID_HELLO_LEN : HYBRID_COMMIT_LEN;
  HybridMessage m;
  GError *e = NULL;
  ssize_t n;

  if (p->state == LEG_COMMITTED)
  {
    /* a call already: it waits in the socket until the pair is complete */
    return;
  }
  if (p->state == LEG_READ_HELLO && p->got == 0)
  {
    /* a stock client's first bytes are its first call: looked at, left in the socket */
    guint8 first;
    HybridPeer peer;

    n = recv (p->fd, &first, 1, MSG_PEEK);
    peer = n == 1 ? hybrid_wire_first_byte (first) : HYBRID_PEER_HYBRID;
    if (peer != HYBRID_PEER_HYBRID)
    {
      p->framed = peer == HYBRID_PEER_FRAMED;
      p->commit = HYBRID_COMMIT_TCP_ONLY;
      p->state = LEG_COMMITTED;
      maybe_complete (self, p);
      return;
    }
  }
  n = recv (p->fd, p->buf + p->got, want - p->got, 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0)
  {
    drop_pending (priv, p,
                  n == 0 ? "it closed its TCP leg during the handshake" : g_strerror (errno));
    return;
  }
  p->got += (gsize) n;
  if (p->got < want)
    return;
  p->got = 0;
  if (p->state == LEG_READ_HELLO)
  {
    guint8 out[HYBRID_WELCOME_LEN];

    if (!hybrid_wire_parse_hello (p->buf, want, &m, &e) || !hybrid_wire_new_token (p->token, &e))
    {
      drop_pending (priv, p, e->message);
      g_error_free (e);
      return;
    }
    hybrid_wire_welcome (out, HYBRID_STATUS_OK, priv->rdma != NULL ? HYBRID_HAS_RDMA : 0, p->token);
    /* 24 bytes into a fresh connection's empty send buffer: all or nothing */
    if (send (p->fd, out, sizeof out, MSG_NOSIGNAL) != (ssize_t) sizeof out)
    {
      drop_pending (priv, p, "the welcome could not be sent");
      return;
    }
    p->state = LEG_READ_COMMIT;
    return;
  }
  if (!hybrid_wire_parse_commit (p->buf, want, &m, &e))
  {
    drop_pending (priv, p, e->message);
    g_error_free (e);
    return;
  }
  if (m.commit == HYBRID_COMMIT_RDMA && priv->rdma == NULL)
  {
    drop_pending (priv, p, "it committed to an RDMA leg, but this server has none");
    return;
  }
  p->commit = (HybridCommit) m.commit;
  p->state = LEG_COMMITTED;
  maybe_complete (self, p);
}

/* An established RDMA connection: a leg of a pending pair, or a plain rdma:// client. */
static void
rdma_arrived (ThriftServerHybrid *self, ThriftTransport *t)
{
  ThriftServerHybridPrivate *priv = PRIV (self);
  const guint8 *token = thrift_rdma_get_peer_pair_token (THRIFT_RDMA (t));
  Pending *p;

  if (token == NULL)
  {
    g_queue_push_tail (&priv->ready, t);
    return;
  }
  p = find_token (priv, token);
  if (p == NULL || p->rdma != NULL)
  {
    /* admitted, then its TCP leg went away meanwhile */
    g_message ("ThriftServerHybrid: an RDMA leg came after its TCP leg was dropped: closed");
    thrift_transport_close (t, NULL);
    g_object_unref (t);
    return;
  }
  p->rdma = THRIFT_RDMA (t);
  maybe_complete (self, p);
}

static void
expire (ThriftServerHybridPrivate *priv, gint64 now, gint64 *next)
{
  GList *l = priv->pending;

  while (l != NULL)
  {
    GList *following = l->next;
    Pending *p = l->data;

    if (now >= p->deadline_us)
      drop_pending (priv, p,
                    "it did not complete its handshake (both legs) within the "
                    "connect-timeout");
    else if (*next == 0 || p->deadline_us < *next)
      *next = p->deadline_us;
    l = following;
  }
}

static void
accept_tcp (ThriftServerHybridPrivate *priv)
{
  for (;;)
  {
    int fd = accept4 (priv->tcp_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    Pending *p;

    if (fd < 0)
      return; /* EAGAIN, or a connection that went before it was accepted */
    if (g_list_length (priv->pending) >= (guint) priv->backlog)
    {
      guint8 out[HYBRID_WELCOME_LEN];
      hybrid_wire_welcome (out, HYBRID_STATUS_BUSY, 0, NULL);
      (void) send (fd, out, sizeof out, MSG_NOSIGNAL);
      close (fd);
      g_message ("ThriftServerHybrid: %d handshakes in progress (the backlog): a client was "
                 "refused",
                 priv->backlog);
      continue;
    }
    p = g_new0 (Pending, 1);
    p->fd = fd;
    p->state = LEG_READ_HELLO;
    p->framed = TRUE;
    p->deadline_us = g_get_monotonic_time () + (gint64) priv->connect_timeout_ms * 1000;
    priv->pending = g_list_append (priv->pending, p);
  }
}

static ThriftTransport *
thrift_server_hybrid_accept (ThriftServerTransport *transport, GError **error)
{
  ThriftServerHybrid *self = THRIFT_SERVER_HYBRID (transport);
  ThriftServerHybridPrivate *priv = PRIV (self);

  if (priv->tcp_fd < 0)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET,
                 "ThriftServerHybrid is not listening");
    return NULL;
  }
  rdma_signal_snapshot ();
  for (;;)
  {
    guint n_pending = g_list_length (priv->pending);
    g_autofree struct pollfd *pfd = g_new0 (struct pollfd, 3 + n_pending);
    g_autofree Pending **legs = g_new (Pending *, n_pending + 1);
    gint64 next = 0, now;
    guint n = 0, i;
    GList *l;
    int timeout;

    if (!g_queue_is_empty (&priv->ready))
      return g_queue_pop_head (&priv->ready);

    pfd[n++] = (struct pollfd){ .fd = priv->tcp_fd, .events = POLLIN };
    pfd[n++] = (struct pollfd){ .fd = priv->wake_fd, .events = POLLIN };
    pfd[n++] = (struct pollfd){ .fd = priv->rdma != NULL ? thrift_server_rdma_get_fd (priv->rdma)
                                                         : -1,
                                .events = POLLIN };
    for (l = priv->pending, i = 0; l != NULL; l = l->next, i++)
    {
      legs[i] = l->data;
      pfd[n++] = (struct pollfd){ .fd = legs[i]->state == LEG_COMMITTED ? -1 : legs[i]->fd,
                                  .events = POLLIN };
    }
    /* the RDMA listener first: it may have handshakes due, or connections ready */
    if (priv->rdma != NULL)
    {
      gint64 rdma_next = 0;
      GError *e = NULL;
      ThriftTransport *t;

      while ((t = thrift_server_rdma_accept_ready (priv->rdma, &rdma_next, &e)) != NULL)
        rdma_arrived (self, t);
      if (e != NULL)
      {
        g_propagate_prefixed_error (error, e, "hybrid: ");
        return NULL;
      }
      next = rdma_next;
      if (!g_queue_is_empty (&priv->ready))
        continue;
    }
    now = g_get_monotonic_time ();
    expire (priv, now, &next);
    timeout = next == 0 ? -1 : (int) CLAMP ((next - now + 999) / 1000, 0, G_MAXINT);
    if (poll (pfd, n, timeout) < 0)
    {
      int err = errno;
      /* as accept (2) in ThriftServerSocket: a handler without SA_RESTART ends the wait, and
       * the server's loop decides (ThriftSimpleServer stops from a SIGINT handler that way) */
      if (err == EINTR && !rdma_signal_interrupts_waits ())
        continue;
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET,
                   "hybrid: accept: %s",
                   err == EINTR ? "interrupted by a signal (a handler "
                                  "without SA_RESTART)"
                                : g_strerror (err));
      return NULL;
    }
    if (pfd[1].revents & POLLIN)
    {
      guint64 v;
      /* a nonblocking eventfd: EAGAIN means another reader took it, as good */
      if (read (priv->wake_fd, &v, sizeof v) < 0 && errno != EAGAIN)
        g_debug ("hybrid: reading the wake-up: %s", g_strerror (errno));
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET,
                   "hybrid: accept interrupted (thrift_server_hybrid_interrupt)");
      return NULL;
    }
    /* the pending legs polled (a leg may be handed out or dropped on the way) */
    for (i = 0; i < n_pending; i++)
      if (pfd[3 + i].revents != 0 && g_list_find (priv->pending, legs[i]) != NULL)
        leg_readable (self, legs[i]);
    if (pfd[0].revents & POLLIN)
      accept_tcp (priv);
  }
}

static gboolean
thrift_server_hybrid_close (ThriftServerTransport *transport, GError **error)
{
  close_listeners (PRIV (transport));
  return TRUE;
}

void
thrift_server_hybrid_interrupt (ThriftServerHybrid *server)
{
  guint64 one = 1;

  g_return_if_fail (THRIFT_IS_SERVER_HYBRID (server));
  if (PRIV (server)->wake_fd >= 0 && write (PRIV (server)->wake_fd, &one, sizeof one) < 0)
  {
    /* an eventfd's write fails only when its counter would overflow: it is set already */
  }
}

/* ThriftInterruptible: how a stopping server wakes a thread blocked on it */
static void
thrift_server_hybrid_interruptible_interrupt (ThriftInterruptible *self)
{
  thrift_server_hybrid_interrupt (THRIFT_SERVER_HYBRID (self));
}

static void
thrift_server_hybrid_interruptible_init (ThriftInterruptibleInterface *iface)
{
  iface->interrupt = thrift_server_hybrid_interruptible_interrupt;
}

gboolean
thrift_server_hybrid_has_rdma (ThriftServerHybrid *server)
{
  g_return_val_if_fail (THRIFT_IS_SERVER_HYBRID (server), FALSE);
  return PRIV (server)->rdma != NULL;
}

/* ---- GObject ---- */

static void
thrift_server_hybrid_get_property (GObject *object, guint property_id, GValue *value,
                                   GParamSpec *pspec)
{
  ThriftServerHybridPrivate *priv = PRIV (object);
  ThriftServerTransport *st = THRIFT_SERVER_TRANSPORT (object);

  switch (property_id)
  {
  case PROP_HOSTNAME:
    g_value_set_string (value, priv->hostname);
    break;
  case PROP_PORT:
    g_value_set_uint (value, priv->port);
    break;
  case PROP_BACKLOG:
    g_value_set_int (value, priv->backlog);
    break;
  case PROP_FALLBACK:
    g_value_set_boolean (value, priv->fallback);
    break;
  case PROP_CONNECT_TIMEOUT:
    g_value_set_uint (value, priv->connect_timeout_ms);
    break;
  case PROP_HINTS:
    g_value_set_pointer (value, priv->hints);
    break;
  case PROP_POLLING:
    g_value_set_enum (value, priv->polling);
    break;
  case PROP_CALL_TIMEOUT:
    g_value_set_uint (value, priv->call_timeout_ms);
    break;
  case PROP_IDLE_TIMEOUT:
    g_value_set_uint (value, priv->idle_timeout_ms);
    break;
  case PROP_KEEPALIVE:
    g_value_set_uint (value, priv->keepalive_ms);
    break;
  case PROP_NUMA_NODE:
    g_value_set_int (value, priv->numa_node);
    break;
  case PROP_MAX_PINNED_BYTES:
    g_value_set_uint64 (value, priv->max_pinned_bytes);
    break;
  default:
    if (!rdma_size_props_get (property_id, PROP_CONFIGURATION, st->configuration,
                              st->remainingMessageSize_, st->knowMessageSize_, value)
        && !rdma_bulk_props_get (property_id, PROP_BULK_THRESHOLD, &priv->bulk, value))
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, property_id, pspec);
  }
}

static void
thrift_server_hybrid_set_property (GObject *object, guint property_id, const GValue *value,
                                   GParamSpec *pspec)
{
  ThriftServerHybridPrivate *priv = PRIV (object);
  ThriftServerTransport *st = THRIFT_SERVER_TRANSPORT (object);

  switch (property_id)
  {
  case PROP_HOSTNAME:
    g_free (priv->hostname);
    priv->hostname = g_value_dup_string (value);
    break;
  case PROP_PORT:
    priv->port = g_value_get_uint (value);
    break;
  case PROP_BACKLOG:
    priv->backlog = g_value_get_int (value);
    break;
  case PROP_FALLBACK:
    priv->fallback = g_value_get_boolean (value);
    break;
  case PROP_CONNECT_TIMEOUT:
    priv->connect_timeout_ms = g_value_get_uint (value);
    break;
  case PROP_HINTS:
    priv->hints = g_value_get_pointer (value);
    break;
  case PROP_POLLING:
    priv->polling = g_value_get_enum (value);
    break;
  case PROP_CALL_TIMEOUT:
    priv->call_timeout_ms = g_value_get_uint (value);
    break;
  case PROP_IDLE_TIMEOUT:
    priv->idle_timeout_ms = g_value_get_uint (value);
    break;
  case PROP_KEEPALIVE:
    priv->keepalive_ms = g_value_get_uint (value);
    break;
  case PROP_NUMA_NODE:
    priv->numa_node = g_value_get_int (value);
    break;
  case PROP_MAX_PINNED_BYTES:
    priv->max_pinned_bytes = g_value_get_uint64 (value);
    break;
  default:
    if (!rdma_size_props_set (property_id, PROP_CONFIGURATION, &st->configuration,
                              &st->remainingMessageSize_, &st->knowMessageSize_, value)
        && !rdma_bulk_props_set (property_id, PROP_BULK_THRESHOLD, &priv->bulk, value))
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, property_id, pspec);
  }
}

static void
thrift_server_hybrid_finalize (GObject *object)
{
  ThriftServerHybridPrivate *priv = PRIV (object);

  close_listeners (priv);
  if (priv->wake_fd >= 0)
    close (priv->wake_fd);
  g_free (priv->hostname);
  g_clear_object (&THRIFT_SERVER_TRANSPORT (object)->configuration);
  G_OBJECT_CLASS (thrift_server_hybrid_parent_class)->finalize (object);
}

static void
thrift_server_hybrid_class_init (ThriftServerHybridClass *cls)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (cls);
  ThriftServerTransportClass *stc = THRIFT_SERVER_TRANSPORT_CLASS (cls);
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;

  gobject_class->get_property = thrift_server_hybrid_get_property;
  gobject_class->set_property = thrift_server_hybrid_set_property;
  gobject_class->finalize = thrift_server_hybrid_finalize;

  g_object_class_install_property (
      gobject_class, PROP_HOSTNAME,
      g_param_spec_string ("hostname", "hostname", "Address to listen on, both legs (NULL: any)",
                           NULL, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (gobject_class, PROP_PORT,
                                   g_param_spec_uint ("port", "port", "Port for both legs", 1,
                                                      65535, 9090, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (gobject_class, PROP_BACKLOG,
                                   g_param_spec_int ("backlog", "backlog",
                                                     "Listen backlog, and clients in handshake", 1,
                                                     G_MAXINT, 128, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_FALLBACK,
      g_param_spec_boolean ("fallback", "fallback",
                            "Serve over TCP alone, with a warning, when RDMA cannot listen", FALSE,
                            rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_CONNECT_TIMEOUT,
      g_param_spec_uint ("connect-timeout", "connect-timeout",
                         "Milliseconds a client has to bring both legs", 1, G_MAXUINT,
                         THRIFT_RDMA_DEFAULT_CONNECT_TIMEOUT_MS, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_HINTS,
      g_param_spec_pointer ("hints", "hints", "Default hint set of accepted RDMA legs, or NULL",
                            rw));
  g_object_class_install_property (
      gobject_class, PROP_POLLING,
      g_param_spec_enum ("polling", "polling", "Polling mode of accepted RDMA legs",
                         THRIFT_TYPE_RDMA_POLLING, THRIFT_RDMA_DEFAULT_POLLING,
                         rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_CALL_TIMEOUT,
      g_param_spec_uint ("call-timeout", "call-timeout",
                         "Milliseconds an accepted RDMA leg waits within a call (0: forever)", 0,
                         G_MAXUINT, THRIFT_RDMA_DEFAULT_CALL_TIMEOUT_MS, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_IDLE_TIMEOUT,
      g_param_spec_uint ("idle-timeout", "idle-timeout",
                         "Milliseconds an accepted RDMA leg waits for its next request "
                         "(0: forever)",
                         0, G_MAXUINT, 0, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_KEEPALIVE,
      g_param_spec_uint ("keepalive", "keepalive",
                         "Milliseconds after which a silent RDMA client is considered dead "
                         "(0: never)",
                         0, G_MAXUINT, THRIFT_RDMA_DEFAULT_KEEPALIVE_MS, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_NUMA_NODE,
      g_param_spec_int ("numa-node", "numa-node",
                        "NUMA node of accepted RDMA legs' buffers and threads (-1: none)", G_MININT,
                        G_MAXINT, THRIFT_RDMA_DEFAULT_NUMA_NODE, rw | G_PARAM_CONSTRUCT));
  rdma_size_props_install (gobject_class, PROP_CONFIGURATION);
  rdma_budget_prop_install (gobject_class, PROP_MAX_PINNED_BYTES);
  /* handed to the RDMA listener at listen, which hands them to each accepted RDMA leg */
  rdma_bulk_props_install (gobject_class, PROP_BULK_THRESHOLD, TRUE);

  stc->listen = thrift_server_hybrid_listen;
  stc->accept = thrift_server_hybrid_accept;
  stc->close = thrift_server_hybrid_close;
}

static void
thrift_server_hybrid_init (ThriftServerHybrid *self)
{
  ThriftServerHybridPrivate *priv = PRIV (self);

  priv->tcp_fd = -1;
  priv->backlog = 128;
  rdma_bulk_props_init (&priv->bulk, TRUE);
  priv->connect_timeout_ms = THRIFT_RDMA_DEFAULT_CONNECT_TIMEOUT_MS;
  priv->polling = THRIFT_RDMA_DEFAULT_POLLING;
  g_queue_init (&priv->ready);
  priv->wake_fd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (priv->wake_fd < 0)
    g_message ("ThriftServerHybrid: eventfd: %s; thrift_server_hybrid_interrupt cannot wake "
               "a blocked accept",
               g_strerror (errno));
}
