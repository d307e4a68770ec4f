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

/* thrift_hybrid.c: ThriftHybrid, TCP and RDMA legs to one server (thrift_hybrid.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thrift/c_glib/transport/thrift_buffered_transport.h>
#include <thrift/c_glib/transport/thrift_checked_framed_transport.h>
#include <thrift/c_glib/transport/thrift_socket.h>
#include <thrift/c_glib/transport/thrift_hints.h>
#include <thrift/c_glib/transport/thrift_hybrid.h>
#include <thrift/c_glib/transport/thrift_idle_watch.h>
#include <thrift/c_glib/transport/thrift_interruptible.h>
#include <thrift/c_glib/transport/thrift_rdma_version.h>

#include "hybrid/hybrid_transport.h"
#include "hybrid/hybrid_wire.h"
#include "rdma/rdma_gobject.h"
#include "rdma/rdma_signal.h"

enum
{
  PROP_0,
  PROP_HOSTNAME,
  PROP_PORT,
  PROP_CONFIGURATION, /* these three consecutive: rdma_size_props_* */
  PROP_REMAINING_MESSAGE_SIZE,
  PROP_KNOW_MESSAGE_SIZE,
  PROP_FALLBACK,
  PROP_USE_TRANSPORT_HINTS,
  PROP_HINTS,
  PROP_POLLING,
  PROP_CONNECT_TIMEOUT,
  PROP_CALL_TIMEOUT,
  PROP_KEEPALIVE,
  PROP_NUMA_NODE,
  PROP_MAX_PINNED_BYTES,
  PROP_BULK_THRESHOLD /* RDMA_BULK_PROPS_N from here: rdma_bulk_props_* */
};

typedef struct
{
  /* client settings */
  gchar *hostname; /* (owned) */
  guint port;
  gboolean fallback;
  gboolean use_transport_hints;
  gpointer hints; /* (unowned) (nullable): the caller's (property) */
  ThriftRdmaPolling polling;
  guint connect_timeout_ms, call_timeout_ms, keepalive_ms;
  gint numa_node;
  guint64 max_pinned_bytes; /* handed to the RDMA leg */
  RdmaBulkProps bulk;       /* the RDMA leg's bulk-* and rcache-* */

  gboolean accepted;      /* the server's side of a pair */
  ThriftSocket *socket;   /* (owned) (nullable): the TCP leg's socket */
  ThriftTransport *tcp;   /* (owned) (nullable): framed (a stock client's may be
                                    buffered), over @socket (which it borrows); NULL when
                                    closed */
  ThriftRdma *rdma;       /* (owned) (nullable): the RDMA leg; NULL when closed or TCP
                                    alone */
  gchar *fallback_reason; /* (owned) (nullable) */

  ThriftHybridLeg next_leg;  /* client: the leg the hints of the next call name */
  ThriftHybridLeg write_leg; /* the leg of the message being written */
  gboolean write_flushed;    /* ...which is out: the next write starts another */
  ThriftHybridLeg read_leg;  /* server: the leg of the request being read */
  ThriftHybridLeg reply_leg; /* client: the leg of the last call; server: of the request */
  ThriftHybridLeg last_leg;
  gboolean tcp_first;           /* server: which leg to look at first when both have data */
  guint idle_n_rdma;            /* idle watch: how many of the descriptors are the RDMA leg's */
  gboolean tcp_over, rdma_over; /* server: a leg that ended (the other is served a while) */
  gint64 half_gone_us;          /* when the first leg ended */
  GError *over_error;           /* (owned) (nullable): why it ended, if it failed */
} ThriftHybridPrivate;

static void thrift_hybrid_hint_receiver_init (ThriftHintReceiverInterface *iface);
static void thrift_hybrid_idle_watch_init (ThriftIdleWatchInterface *iface);
static void thrift_hybrid_interruptible_init (ThriftInterruptibleInterface *iface);

G_DEFINE_TYPE_WITH_CODE (
    ThriftHybrid, thrift_hybrid, THRIFT_TYPE_TRANSPORT,
    G_ADD_PRIVATE (ThriftHybrid)
        G_IMPLEMENT_INTERFACE (THRIFT_TYPE_HINT_RECEIVER, thrift_hybrid_hint_receiver_init)
            G_IMPLEMENT_INTERFACE (THRIFT_TYPE_IDLE_WATCH, thrift_hybrid_idle_watch_init)
                G_IMPLEMENT_INTERFACE (THRIFT_TYPE_INTERRUPTIBLE, thrift_hybrid_interruptible_init))

/* Unchecked: every caller is one of the class's own vfuncs, or a public function that
 * checked the type first; a checked cast per call is a measurable share of a small RPC. */
#define PRIV(obj) \
  ((ThriftHybridPrivate *) thrift_hybrid_get_instance_private ((ThriftHybrid *) (obj)))

static ThriftTransport *
leg (ThriftHybridPrivate *priv, ThriftHybridLeg which)
{
  return which == THRIFT_HYBRID_LEG_RDMA ? (ThriftTransport *) priv->rdma : priv->tcp;
}

static gboolean
not_open (GError **error)
{
  g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SEND,
               "ThriftHybrid is not open");
  return FALSE;
}

/* Both legs closed and dropped: a connection with one leg gone is over. */
static void
drop_legs (ThriftHybridPrivate *priv)
{
  if (priv->rdma != NULL)
  {
    thrift_transport_close (THRIFT_TRANSPORT (priv->rdma), NULL);
    g_clear_object (&priv->rdma);
  }
  if (priv->tcp != NULL)
  {
    if (priv->socket->sd != THRIFT_INVALID_SOCKET)
      thrift_transport_close (THRIFT_TRANSPORT (priv->socket), NULL);
    g_clear_object (&priv->tcp);
  }
  g_clear_object (&priv->socket);
  priv->write_leg = priv->read_leg = priv->reply_leg = THRIFT_HYBRID_LEG_NONE;
  priv->tcp_over = priv->rdma_over = FALSE;
  priv->half_gone_us = 0;
  g_clear_error (&priv->over_error);
}

/* A leg failed: the connection is over (say why on the error). */
static void
leg_failed (ThriftHybridPrivate *priv, ThriftHybridLeg which, GError **error)
{
  if (error != NULL && *error != NULL)
    g_prefix_error (error, "hybrid, %s leg: ", thrift_hybrid_leg_name (which));
  drop_legs (priv);
}

static ThriftTransport *
new_tcp_leg (ThriftSocket *socket, gboolean framed, ThriftConfiguration *configuration)
{
  return g_object_new (
      framed ? THRIFT_TYPE_CHECKED_FRAMED_TRANSPORT : THRIFT_TYPE_BUFFERED_TRANSPORT, "transport",
      socket, configuration != NULL ? "configuration" : NULL, configuration, NULL);
}

/* ---- the client's handshake on the TCP leg ---- */

/* Sends or receives exactly @len bytes on @fd by @deadline_us. */
static gboolean
exchange (int fd, gboolean send_it, guint8 *buf, gsize len, gint64 deadline_us, const gchar *what,
          GError **error)
{
  gsize done = 0;

  while (done < len)
  {
    struct pollfd pfd = { .fd = fd, .events = send_it ? POLLOUT : POLLIN };
    gint64 left = deadline_us - g_get_monotonic_time ();
    ssize_t n;
    int r;

    if (left <= 0)
    {
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_CONNECT,
                   "hybrid handshake: no %s from the server within the connect-timeout", what);
      return FALSE;
    }
    r = poll (&pfd, 1, (int) MIN ((left + 999) / 1000, G_MAXINT));
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
    {
      int err = errno;
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET,
                   "hybrid handshake: poll: %s", g_strerror (err));
      return FALSE;
    }
    if (r == 0)
      continue;
    n = send_it ? send (fd, buf + done, len - done, MSG_NOSIGNAL)
                : recv (fd, buf + done, len - done, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n <= 0)
    {
      int err = n < 0 ? errno : 0;
      g_set_error (error, THRIFT_TRANSPORT_ERROR,
                   send_it ? THRIFT_TRANSPORT_ERROR_SEND : THRIFT_TRANSPORT_ERROR_RECEIVE,
                   "hybrid handshake: %s: %s", what,
                   err != 0 ? g_strerror (err)
                            : "the server closed the connection (is it a "
                              "hybrid:// server?)");
      return FALSE;
    }
    done += (gsize) n;
  }
  return TRUE;
}

/* The TCP leg's socket, connected to any address of @host (IPv4 or IPv6: Thrift 0.17's
 * ThriftSocket resolves IPv4 names only) by @deadline_us, blocking; -1 with @error. */
static int
connect_tcp (const gchar *host, guint port, gint64 deadline_us, GError **error)
{
  struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
  struct addrinfo *list = NULL;
  gchar service[8];
  int rc, err = 0;

  g_snprintf (service, sizeof service, "%u", port);
  rc = getaddrinfo (host, service, &hints, &list);
  if (rc != 0)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_HOST,
                 "hybrid, tcp leg: cannot resolve %s: %s", host, gai_strerror (rc));
    return -1;
  }
  for (struct addrinfo *a = list; a != NULL; a = a->ai_next)
  {
    int fd = socket (a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    struct pollfd pfd = { .fd = fd, .events = POLLOUT };
    socklen_t len = sizeof err;
    gint64 left;

    if (fd < 0)
    {
      err = errno;
      continue;
    }
    if (connect (fd, a->ai_addr, a->ai_addrlen) == 0)
      err = 0;
    else if (errno != EINPROGRESS)
      err = errno;
    else if ((left = deadline_us - g_get_monotonic_time ()) <= 0
             || poll (&pfd, 1, (int) MIN ((left + 999) / 1000, G_MAXINT)) <= 0)
      err = ETIMEDOUT;
    else if (getsockopt (fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
      err = errno;
    if (err == 0 && fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) & ~O_NONBLOCK) == 0)
    {
      freeaddrinfo (list);
      return fd;
    }
    close (fd);
  }
  freeaddrinfo (list);
  g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_CONNECT,
               "hybrid, tcp leg: cannot connect to %s:%u: %s", host, port, g_strerror (err));
  return -1;
}

/* The RDMA leg, presenting @token; NULL with @error if it cannot be made. */
static ThriftRdma *
open_rdma_leg (ThriftHybridPrivate *priv, ThriftConfiguration *configuration, const guint8 *token,
               GError **error)
{
  g_autoptr (GBytes) pair = g_bytes_new (token, HYBRID_TOKEN_LEN);
  ThriftRdma *rdma = g_object_new (
      THRIFT_TYPE_RDMA, "hostname", priv->hostname, "port", priv->port, "configuration",
      configuration, "hints", priv->hints, "polling", priv->polling, "connect-timeout",
      priv->connect_timeout_ms, "call-timeout", priv->call_timeout_ms, "keepalive",
      priv->keepalive_ms, "numa-node", priv->numa_node, "max-pinned-bytes", priv->max_pinned_bytes,
      "pair-token", pair, NULL);

  rdma_bulk_props_apply (&priv->bulk, rdma);
  if (!thrift_transport_open (THRIFT_TRANSPORT (rdma), error))
  {
    g_object_unref (rdma);
    return NULL;
  }
  return rdma;
}

static gboolean
client_open (ThriftTransport *transport, GError **error)
{
  ThriftHybridPrivate *priv = PRIV (transport);
  gint64 deadline = g_get_monotonic_time () + (gint64) priv->connect_timeout_ms * 1000;
  guint8 out[HYBRID_WELCOME_LEN];
  HybridMessage welcome;
  GError *rdma_error = NULL;
  gboolean rdma_here;
  int fd;

  fd = connect_tcp (priv->hostname, priv->port, deadline, error);
  if (fd < 0)
    return FALSE;
  priv->socket = g_object_new (THRIFT_TYPE_SOCKET, "hostname", priv->hostname, "port", priv->port,
                               NULL);
  priv->socket->sd = fd;
  rdma_here = thrift_rdma_device_available (NULL);
  hybrid_wire_hello (out, rdma_here ? HYBRID_WANT_RDMA : 0);
  if (!exchange (fd, TRUE, out, HYBRID_HELLO_LEN, deadline, "hello", error)
      || !exchange (fd, FALSE, out, HYBRID_WELCOME_LEN, deadline, "welcome", error)
      || !hybrid_wire_parse_welcome (out, HYBRID_WELCOME_LEN, &welcome, error))
    goto failed;
  if (welcome.status != HYBRID_STATUS_OK)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_CONNECT,
                 "hybrid: the server refused the connection: %s",
                 hybrid_wire_status_text (welcome.status));
    goto failed;
  }

  /* the RDMA leg, or why there is none */
  g_clear_pointer (&priv->fallback_reason, g_free);
  if (!rdma_here)
    priv->fallback_reason = g_strdup ("this host has no RDMA device");
  else if (!(welcome.flags & HYBRID_HAS_RDMA))
    priv->fallback_reason = g_strdup ("the server has no RDMA leg (it runs over TCP alone)");
  else if ((priv->rdma = open_rdma_leg (priv, transport->configuration, welcome.token, &rdma_error))
           == NULL)
    priv->fallback_reason = g_strdup (rdma_error->message);
  if (priv->rdma == NULL && !priv->fallback)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_CONNECT,
                 "hybrid://%s:%u: no RDMA leg: %s (add fallback=tcp to run over TCP alone)",
                 priv->hostname, priv->port, priv->fallback_reason);
    g_clear_error (&rdma_error);
    goto failed;
  }
  g_clear_error (&rdma_error);
  if (priv->rdma == NULL)
    g_warning ("hybrid://%s:%u: no RDMA leg, every call goes by TCP (fallback): %s", priv->hostname,
               priv->port, priv->fallback_reason);
  hybrid_wire_commit (out, priv->rdma != NULL ? HYBRID_COMMIT_RDMA : HYBRID_COMMIT_TCP_ONLY);
  if (!exchange (fd, TRUE, out, HYBRID_COMMIT_LEN, deadline, "commit", error))
    goto failed;
  priv->tcp = new_tcp_leg (priv->socket, TRUE, transport->configuration);
  priv->next_leg = THRIFT_HYBRID_LEG_RDMA;
  return TRUE;

failed:
  drop_legs (priv);
  return FALSE;
}

/* ---- ThriftTransport ---- */

static gboolean
thrift_hybrid_is_open (ThriftTransport *transport)
{
  ThriftHybridPrivate *priv = PRIV (transport);

  return priv->tcp != NULL && priv->socket->sd != THRIFT_INVALID_SOCKET
         && (priv->rdma == NULL || thrift_transport_is_open (THRIFT_TRANSPORT (priv->rdma)));
}

static gboolean
thrift_hybrid_open (ThriftTransport *transport, GError **error)
{
  ThriftHybridPrivate *priv = PRIV (transport);

  if (priv->accepted)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_CONNECT,
                 "an accepted ThriftHybrid cannot be opened again");
    return FALSE;
  }
  if (priv->tcp != NULL)
    drop_legs (priv);
  return client_open (transport, error);
}

static gboolean
thrift_hybrid_close (ThriftTransport *transport, GError **error)
{
  drop_legs (PRIV (transport));
  return TRUE;
}

/* The leg a message starting now goes by. */
static ThriftHybridLeg
choose_write_leg (ThriftHybridPrivate *priv)
{
  if (priv->accepted)
    return priv->reply_leg != THRIFT_HYBRID_LEG_NONE ? priv->reply_leg : THRIFT_HYBRID_LEG_TCP;
  return priv->next_leg == THRIFT_HYBRID_LEG_RDMA && priv->rdma != NULL ? THRIFT_HYBRID_LEG_RDMA
                                                                        : THRIFT_HYBRID_LEG_TCP;
}

static gboolean
thrift_hybrid_write (ThriftTransport *transport, const gpointer buf, const guint32 len,
                     GError **error)
{
  ThriftHybridPrivate *priv = PRIV (transport);

  if (priv->tcp == NULL)
    return not_open (error);
  /* the leg is chosen at a message's first write (the hints came before it) and kept until
   * the message is flushed and ended, in whichever order the caller does the two */
  if (priv->write_leg == THRIFT_HYBRID_LEG_NONE || priv->write_flushed)
  {
    priv->write_leg = choose_write_leg (priv);
    priv->write_flushed = FALSE;
  }
  if (!thrift_transport_write (leg (priv, priv->write_leg), buf, len, error))
  {
    leg_failed (priv, priv->write_leg, error);
    return FALSE;
  }
  return TRUE;
}

static gboolean
thrift_hybrid_write_end (ThriftTransport *transport, GError **error)
{
  ThriftHybridPrivate *priv = PRIV (transport);
  ThriftHybridLeg which = priv->write_leg;

  if (priv->tcp == NULL)
    return not_open (error);
  if (which != THRIFT_HYBRID_LEG_NONE && !thrift_transport_write_end (leg (priv, which), error))
  {
    leg_failed (priv, which, error);
    return FALSE;
  }
  return TRUE;
}

static gboolean
thrift_hybrid_flush (ThriftTransport *transport, GError **error)
{
  ThriftHybridPrivate *priv = PRIV (transport);
  ThriftHybridLeg which = priv->write_leg;

  if (priv->tcp == NULL)
    return not_open (error);
  if (which == THRIFT_HYBRID_LEG_NONE || priv->write_flushed)
    return TRUE;
  if (!thrift_transport_flush (leg (priv, which), error))
  {
    leg_failed (priv, which, error);
    return FALSE;
  }
  priv->write_flushed = TRUE;
  if (!priv->accepted)
  {
    /* the reply to this call comes back on its leg */
    priv->reply_leg = which;
    priv->last_leg = which;
  }
  return TRUE;
}

/* ---- reading: a client reads its reply's leg, a server the leg a request is on ---- */

typedef struct
{
  GPollFD fds[2 * THRIFT_IDLE_WATCH_MAX_FDS];
  guint n_rdma, n_tcp; /* fds[0, n_rdma) the RDMA leg's, then the TCP leg's */
  gint64 deadline_us;
} Watch;

/* How long a connection goes on with one leg after the other ended: a client that closes
 * both may end one before what it sent last on the other has arrived. */
#define HALF_GONE_GRACE_US (500 * 1000)

/* Marks @tcp's leg ended (keeping the first error that says why). */
static void
leg_over (ThriftHybridPrivate *priv, gboolean tcp, GError *e)
{
  if (tcp)
    priv->tcp_over = TRUE;
  else
    priv->rdma_over = TRUE;
  if (e != NULL && priv->over_error == NULL)
    priv->over_error = e;
  else if (e != NULL)
    g_error_free (e);
}

/* One look at both legs (after a poll when @after_poll): the leg with a request, NONE if
 * neither has one yet, or -1 when the connection is over (@error says why, if anything
 * failed).  Requests already sent are served before a leg's end ends the connection. */
static gint
look (ThriftHybridPrivate *priv, Watch *w, gboolean after_poll, GError **error)
{
  ThriftIdleState state[2] = { THRIFT_IDLE_WAIT, THRIFT_IDLE_WAIT }; /* tcp, rdma */
  GPollFD fds[2][THRIFT_IDLE_WATCH_MAX_FDS];
  guint n[2] = { w->n_tcp, w->n_rdma };
  gint64 due[2] = { 0, 0 }, now;
  gboolean has_rdma = priv->rdma != NULL;

  g_assert (n[0] <= THRIFT_IDLE_WATCH_MAX_FDS && n[1] <= THRIFT_IDLE_WATCH_MAX_FDS);
  memcpy (fds[1], w->fds, n[1] * sizeof (GPollFD));
  memcpy (fds[0], w->fds + n[1], n[0] * sizeof (GPollFD));
  for (guint k = 0; k < 2; k++)
  {
    gboolean is_tcp = k == 0;
    ThriftTransport *t = is_tcp ? priv->tcp : THRIFT_TRANSPORT (priv->rdma);

    if (is_tcp ? priv->tcp_over : (!has_rdma || priv->rdma_over))
    {
      n[k] = 0;
      continue;
    }
    state[k] = (after_poll ? thrift_idle_watch_check : thrift_idle_watch_prepare) (t, fds[k], &n[k],
                                                                                   &due[k]);
    if (state[k] == THRIFT_IDLE_UNSUPPORTED)
      return -1;
  }
  for (guint i = 0; i < 2; i++)
  {
    gboolean is_tcp = (i == 0) == priv->tcp_first;
    guint k = is_tcp ? 0 : 1;
    GError *e = NULL;

    if (state[k] == THRIFT_IDLE_GONE)
    {
      leg_over (priv, is_tcp, NULL);
      n[k] = 0;
      continue;
    }
    if (state[k] != THRIFT_IDLE_READY)
      continue;
    /* readable may be the end of the stream: peek tells (and does not block now) */
    if (thrift_transport_peek (is_tcp ? priv->tcp : THRIFT_TRANSPORT (priv->rdma), &e))
    {
      priv->tcp_first = !is_tcp;
      return is_tcp ? THRIFT_HYBRID_LEG_TCP : THRIFT_HYBRID_LEG_RDMA;
    }
    if (e != NULL)
      g_prefix_error (&e, "hybrid, %s leg: ", is_tcp ? "tcp" : "rdma");
    leg_over (priv, is_tcp, e);
    n[k] = 0;
  }
  now = g_get_monotonic_time ();
  if (priv->tcp_over || priv->rdma_over)
  {
    if (priv->half_gone_us == 0)
      priv->half_gone_us = now;
    if ((priv->tcp_over && (!has_rdma || priv->rdma_over))
        || now >= priv->half_gone_us + HALF_GONE_GRACE_US)
    {
      if (priv->over_error != NULL)
        g_propagate_error (error, g_steal_pointer (&priv->over_error));
      return -1;
    }
  }
  memcpy (w->fds, fds[1], n[1] * sizeof (GPollFD));
  memcpy (w->fds + n[1], fds[0], n[0] * sizeof (GPollFD));
  w->n_rdma = n[1];
  w->n_tcp = n[0];
  w->deadline_us = due[1] != 0 && (due[0] == 0 || due[1] < due[0]) ? due[1] : due[0];
  if (priv->half_gone_us != 0
      && (w->deadline_us == 0 || priv->half_gone_us + HALF_GONE_GRACE_US < w->deadline_us))
    w->deadline_us = priv->half_gone_us + HALF_GONE_GRACE_US;
  return THRIFT_HYBRID_LEG_NONE;
}

/* Waits until a request is on a leg, or until @end_us (0: no end): the leg, NONE at @end_us,
 * or -1 when the connection is over (@error says why, if something failed). */
static gint
wait_leg (ThriftHybridPrivate *priv, gint64 end_us, GError **error)
{
  Watch w = { .n_rdma = 0 };

  for (gboolean after_poll = FALSE;; after_poll = TRUE)
  {
    gint got = look (priv, &w, after_poll, error);
    gint64 now, until = w.deadline_us;
    int timeout;

    if (got != THRIFT_HYBRID_LEG_NONE)
      return got;
    now = g_get_monotonic_time ();
    if (end_us != 0 && now >= end_us)
      return THRIFT_HYBRID_LEG_NONE;
    if (end_us != 0 && (until == 0 || end_us < until))
      until = end_us;
    timeout = until == 0 ? -1 : (int) CLAMP ((until - now + 999) / 1000, 0, G_MAXINT);
    if (g_poll (w.fds, w.n_rdma + w.n_tcp, timeout) < 0)
    {
      int err = errno;
      /* as recv (2) in ThriftSocket (rdma/rdma_signal.h) */
      if (err == EINTR && !rdma_signal_interrupts_waits ())
        continue;
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE, "hybrid: %s",
                   err == EINTR ? "wait interrupted by a signal (a handler "
                                  "without SA_RESTART)"
                                : g_strerror (err));
      return -1;
    }
  }
}

/* Waits until a request is on a leg: its leg, or NONE when the connection is over (both
 * legs dropped; @error set if something failed rather than ended). */
static ThriftHybridLeg
wait_request (ThriftHybridPrivate *priv, GError **error)
{
  gint got = wait_leg (priv, 0, error);

  if (got < 0)
  {
    drop_legs (priv);
    return THRIFT_HYBRID_LEG_NONE;
  }
  return (ThriftHybridLeg) got;
}

/* The leg to read from now; NONE with @error (or none: the peer is gone) when there is no
 * message to come. */
static ThriftHybridLeg
read_leg (ThriftHybridPrivate *priv, GError **error)
{
  if (priv->tcp == NULL)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                 "ThriftHybrid is not open");
    return THRIFT_HYBRID_LEG_NONE;
  }
  if (!priv->accepted)
    return priv->reply_leg != THRIFT_HYBRID_LEG_NONE ? priv->reply_leg
           : priv->rdma != NULL                      ? THRIFT_HYBRID_LEG_RDMA
                                                     : THRIFT_HYBRID_LEG_TCP;
  if (priv->read_leg == THRIFT_HYBRID_LEG_NONE)
  {
    priv->read_leg = wait_request (priv, error);
    if (priv->read_leg == THRIFT_HYBRID_LEG_NONE && error != NULL && *error == NULL)
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                   "hybrid: the client is gone");
  }
  return priv->read_leg;
}

static gboolean
thrift_hybrid_peek (ThriftTransport *transport, GError **error)
{
  ThriftHybridPrivate *priv = PRIV (transport);

  if (priv->tcp == NULL)
    return FALSE;
  if (!priv->accepted)
  {
    ThriftHybridLeg which = read_leg (priv, error);
    return which != THRIFT_HYBRID_LEG_NONE && thrift_transport_peek (leg (priv, which), error);
  }
  if (priv->read_leg == THRIFT_HYBRID_LEG_NONE)
    priv->read_leg = wait_request (priv, error);
  return priv->read_leg != THRIFT_HYBRID_LEG_NONE;
}

/* A read of the leg the message is on, by @read_fn (its read or read_all). */
static gint32
read_from_leg (ThriftTransport *transport,
               gint32 (*read_fn) (ThriftTransport *, gpointer, guint32, GError **), gpointer buf,
               guint32 len, GError **error)
{
  ThriftHybridPrivate *priv = PRIV (transport);
  ThriftHybridLeg which = read_leg (priv, error);
  gint32 n;

  if (which == THRIFT_HYBRID_LEG_NONE)
    return -1;
  n = read_fn (leg (priv, which), buf, len, error);
  if (n < 0)
    leg_failed (priv, which, error);
  return n;
}

static gint32
thrift_hybrid_read (ThriftTransport *transport, gpointer buf, guint32 len, GError **error)
{
  return read_from_leg (transport, thrift_transport_read, buf, len, error);
}

static gint32
thrift_hybrid_read_all (ThriftTransport *transport, gpointer buf, guint32 len, GError **error)
{
  return read_from_leg (transport, thrift_transport_read_all, buf, len, error);
}

static gboolean
thrift_hybrid_read_end (ThriftTransport *transport, GError **error)
{
  ThriftHybridPrivate *priv = PRIV (transport);
  ThriftHybridLeg which;

  if (priv->tcp == NULL)
    return not_open (error);
  which = priv->accepted ? priv->read_leg : priv->reply_leg;
  if (which == THRIFT_HYBRID_LEG_NONE)
    return TRUE;
  if (!thrift_transport_read_end (leg (priv, which), error))
  {
    leg_failed (priv, which, error);
    return FALSE;
  }
  if (priv->accepted)
  {
    /* the reply goes back by the request's leg */
    priv->reply_leg = which;
    priv->last_leg = which;
    priv->read_leg = THRIFT_HYBRID_LEG_NONE;
  }
  return TRUE;
}

static gboolean
thrift_hybrid_check_read_bytes_available (ThriftTransport *transport, glong n, GError **error)
{
  ThriftHybridPrivate *priv = PRIV (transport);
  ThriftHybridLeg which = priv->accepted ? priv->read_leg : priv->reply_leg;
  ThriftTransport *t;

  if (priv->tcp == NULL || which == THRIFT_HYBRID_LEG_NONE)
    return TRUE;
  t = leg (priv, which);
  return THRIFT_TRANSPORT_GET_CLASS (t)->checkReadBytesAvailable (t, n, error);
}

/* ---- ThriftHintReceiver: a client's call goes by the leg its hints name ---- */

static void
thrift_hybrid_set_hints (ThriftHintReceiver *receiver, const ThriftHintSet *hints)
{
  ThriftHybridPrivate *priv = PRIV (receiver);
  ThriftHybridLeg which = THRIFT_HYBRID_LEG_RDMA;

  if (priv->use_transport_hints && hints != NULL && (hints->set & THRIFT_HINT_HAS_TRANSPORT)
      && hints->transport == THRIFT_HINT_TRANSPORT_TCP)
    which = THRIFT_HYBRID_LEG_TCP;
  if (!priv->accepted)
    priv->next_leg = which;
  /* the RDMA leg picks its protocol and polling from the same set, when it carries the
   * message (a server's reply goes by the request's leg whatever its hints say) */
  if (priv->rdma != NULL && (priv->accepted ? priv->reply_leg : which) == THRIFT_HYBRID_LEG_RDMA)
    thrift_hint_receiver_set_hints (THRIFT_HINT_RECEIVER (priv->rdma), hints);
}

static void
thrift_hybrid_hint_receiver_init (ThriftHintReceiverInterface *iface)
{
  iface->set_hints = thrift_hybrid_set_hints;
}

/* ---- ThriftIdleWatch: a server's idle connection in its poll set, by both legs ---- */

static ThriftIdleState
idle_answer (ThriftHybridPrivate *priv, Watch *w, gboolean after_poll, GPollFD *fds, guint max_fds,
             guint *n_fds, gint64 *deadline_us)
{
  GError *e = NULL;
  gint got = look (priv, w, after_poll, &e);

  *n_fds = 0;
  *deadline_us = 0;
  if (got < 0)
  {
    if (e != NULL)
    {
      g_message ("ThriftHybrid: an idle connection ended: %s", e->message);
      g_error_free (e);
    }
    drop_legs (priv);
    return THRIFT_IDLE_GONE;
  }
  if (got != THRIFT_HYBRID_LEG_NONE)
  {
    priv->read_leg = (ThriftHybridLeg) got;
    return THRIFT_IDLE_READY;
  }
  g_return_val_if_fail (w->n_rdma + w->n_tcp <= max_fds, THRIFT_IDLE_UNSUPPORTED);
  memcpy (fds, w->fds, (w->n_rdma + w->n_tcp) * sizeof *fds);
  *n_fds = w->n_rdma + w->n_tcp;
  priv->idle_n_rdma = w->n_rdma;
  *deadline_us = w->deadline_us;
  return THRIFT_IDLE_WAIT;
}

static ThriftIdleState
thrift_hybrid_idle_prepare (ThriftIdleWatch *watch, GPollFD *fds, guint max_fds, guint *n_fds,
                            gint64 *deadline_us)
{
  ThriftHybridPrivate *priv = PRIV (watch);
  Watch w = { .n_rdma = 0 };

  if (priv->tcp == NULL)
    return THRIFT_IDLE_GONE;
  if (priv->read_leg != THRIFT_HYBRID_LEG_NONE)
    return THRIFT_IDLE_READY;
  return idle_answer (priv, &w, FALSE, fds, max_fds, n_fds, deadline_us);
}

static ThriftIdleState
thrift_hybrid_idle_check (ThriftIdleWatch *watch, GPollFD *fds, guint max_fds, guint *n_fds,
                          gint64 *deadline_us)
{
  ThriftHybridPrivate *priv = PRIV (watch);
  Watch w = { .n_rdma = MIN (priv->idle_n_rdma, *n_fds) };

  if (priv->tcp == NULL)
    return THRIFT_IDLE_GONE;
  /* prepare put the RDMA leg's descriptors first */
  w.n_tcp = *n_fds - w.n_rdma;
  memcpy (w.fds, fds, *n_fds * sizeof *fds);
  return idle_answer (priv, &w, TRUE, fds, max_fds, n_fds, deadline_us);
}

/* Slices of the RDMA leg's own linger between looks at the TCP socket. */
#define LINGER_SLICE_US 100

/* Waits up to @max_us for the next request, as the last request's leg would: after an RDMA
 * request by the RDMA leg's own linger (a latency hint spins there, with no wake-up), in
 * slices, looking at the TCP socket between them (one poll (2) each); after a TCP request
 * by a poll on both legs. */
static gboolean
thrift_hybrid_idle_linger (ThriftIdleWatch *watch, gint64 max_us)
{
  ThriftHybridPrivate *priv = PRIV (watch);
  gint64 end = g_get_monotonic_time () + max_us;

  if (priv->tcp == NULL || priv->read_leg != THRIFT_HYBRID_LEG_NONE)
    return TRUE;
  if (priv->rdma != NULL && priv->reply_leg == THRIFT_HYBRID_LEG_RDMA)
  {
    ThriftIdleWatch *rdma = THRIFT_IDLE_WATCH (priv->rdma);

    for (;;)
    {
      gint64 left = end - g_get_monotonic_time ();
      struct pollfd tcp = { .fd = priv->socket->sd, .events = POLLIN };

      if (THRIFT_IDLE_WATCH_GET_INTERFACE (rdma)->linger (rdma, MIN (left, LINGER_SLICE_US)))
        return TRUE;
      if (poll (&tcp, 1, 0) != 0)
        return TRUE;
      if (left <= LINGER_SLICE_US)
        return FALSE;
    }
  }
  /* a request, or the end, which the next look tells */
  return wait_leg (priv, end, NULL) != THRIFT_HYBRID_LEG_NONE;
}

static void
thrift_hybrid_idle_watch_init (ThriftIdleWatchInterface *iface)
{
  iface->prepare = thrift_hybrid_idle_prepare;
  iface->check = thrift_hybrid_idle_check;
  iface->linger = thrift_hybrid_idle_linger;
}

/* ---- GObject ---- */

static void
thrift_hybrid_get_property (GObject *object, guint property_id, GValue *value, GParamSpec *pspec)
{
  ThriftHybridPrivate *priv = PRIV (object);
  ThriftTransport *tt = THRIFT_TRANSPORT (object);

  switch (property_id)
  {
  case PROP_HOSTNAME:
    g_value_set_string (value, priv->hostname);
    break;
  case PROP_PORT:
    g_value_set_uint (value, priv->port);
    break;
  case PROP_FALLBACK:
    g_value_set_boolean (value, priv->fallback);
    break;
  case PROP_USE_TRANSPORT_HINTS:
    g_value_set_boolean (value, priv->use_transport_hints);
    break;
  case PROP_HINTS:
    g_value_set_pointer (value, priv->hints);
    break;
  case PROP_POLLING:
    g_value_set_enum (value, priv->polling);
    break;
  case PROP_CONNECT_TIMEOUT:
    g_value_set_uint (value, priv->connect_timeout_ms);
    break;
  case PROP_CALL_TIMEOUT:
    g_value_set_uint (value, priv->call_timeout_ms);
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
    if (!rdma_size_props_get (property_id, PROP_CONFIGURATION, tt->configuration,
                              tt->remainingMessageSize_, tt->knowMessageSize_, value)
        && !rdma_bulk_props_get (property_id, PROP_BULK_THRESHOLD, &priv->bulk, value))
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, property_id, pspec);
  }
}

static void
thrift_hybrid_set_property (GObject *object, guint property_id, const GValue *value,
                            GParamSpec *pspec)
{
  ThriftHybridPrivate *priv = PRIV (object);
  ThriftTransport *tt = THRIFT_TRANSPORT (object);

  switch (property_id)
  {
  case PROP_HOSTNAME:
    g_free (priv->hostname);
    priv->hostname = g_value_dup_string (value);
    break;
  case PROP_PORT:
    priv->port = g_value_get_uint (value);
    break;
  case PROP_FALLBACK:
    priv->fallback = g_value_get_boolean (value);
    break;
  case PROP_USE_TRANSPORT_HINTS:
    priv->use_transport_hints = g_value_get_boolean (value);
    break;
  case PROP_HINTS:
    priv->hints = g_value_get_pointer (value);
    break;
  case PROP_POLLING:
    priv->polling = g_value_get_enum (value);
    break;
  case PROP_CONNECT_TIMEOUT:
    priv->connect_timeout_ms = g_value_get_uint (value);
    break;
  case PROP_CALL_TIMEOUT:
    priv->call_timeout_ms = g_value_get_uint (value);
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
    if (!rdma_size_props_set (property_id, PROP_CONFIGURATION, &tt->configuration,
                              &tt->remainingMessageSize_, &tt->knowMessageSize_, value)
        && !rdma_bulk_props_set (property_id, PROP_BULK_THRESHOLD, &priv->bulk, value))
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, property_id, pspec);
  }
}

static void
thrift_hybrid_finalize (GObject *object)
{
  ThriftHybridPrivate *priv = PRIV (object);
  ThriftTransport *tt = THRIFT_TRANSPORT (object);

  drop_legs (priv);
  g_free (priv->hostname);
  g_free (priv->fallback_reason);
  g_clear_object (&tt->configuration);
  G_OBJECT_CLASS (thrift_hybrid_parent_class)->finalize (object);
}

static void
thrift_hybrid_class_init (ThriftHybridClass *cls)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (cls);
  ThriftTransportClass *ttc = THRIFT_TRANSPORT_CLASS (cls);
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;

  gobject_class->get_property = thrift_hybrid_get_property;
  gobject_class->set_property = thrift_hybrid_set_property;
  gobject_class->finalize = thrift_hybrid_finalize;

  g_object_class_install_property (gobject_class, PROP_HOSTNAME,
                                   g_param_spec_string ("hostname", "hostname",
                                                        "Server address or name", "localhost",
                                                        rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (gobject_class, PROP_PORT,
                                   g_param_spec_uint ("port", "port", "Server port (TCP and RDMA)",
                                                      1, 65535, 9090, rw | G_PARAM_CONSTRUCT));
  rdma_size_props_install (gobject_class, PROP_CONFIGURATION);
  g_object_class_install_property (
      gobject_class, PROP_FALLBACK,
      g_param_spec_boolean ("fallback", "fallback",
                            "Run over TCP alone, with a warning, when RDMA cannot be had", FALSE,
                            rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_USE_TRANSPORT_HINTS,
      g_param_spec_boolean ("use-transport-hints", "use-transport-hints",
                            "Send each call by the leg its transport hint names (FALSE: every "
                            "call by RDMA while there is an RDMA leg)",
                            TRUE, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_HINTS,
      g_param_spec_pointer ("hints", "hints", "Default hint set (const ThriftHintSet *) or NULL",
                            rw));
  g_object_class_install_property (
      gobject_class, PROP_POLLING,
      g_param_spec_enum ("polling", "polling", "How the RDMA leg waits for completions",
                         THRIFT_TYPE_RDMA_POLLING, THRIFT_RDMA_DEFAULT_POLLING,
                         rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_CONNECT_TIMEOUT,
      g_param_spec_uint ("connect-timeout", "connect-timeout", "Milliseconds to connect both legs",
                         1, G_MAXUINT, THRIFT_RDMA_DEFAULT_CONNECT_TIMEOUT_MS,
                         rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_CALL_TIMEOUT,
      g_param_spec_uint ("call-timeout", "call-timeout",
                         "Milliseconds a read on the RDMA leg waits for a message (0: forever)", 0,
                         G_MAXUINT, THRIFT_RDMA_DEFAULT_CALL_TIMEOUT_MS, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_KEEPALIVE,
      g_param_spec_uint ("keepalive", "keepalive",
                         "Milliseconds after which a silent RDMA peer is declared dead (0: never)",
                         0, G_MAXUINT, THRIFT_RDMA_DEFAULT_KEEPALIVE_MS, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_NUMA_NODE,
      g_param_spec_int ("numa-node", "numa-node",
                        "NUMA node of the RDMA leg's buffers and polling thread (-1: none)",
                        G_MININT, G_MAXINT, THRIFT_RDMA_DEFAULT_NUMA_NODE, rw | G_PARAM_CONSTRUCT));
  /* handed to the RDMA leg at open (set before it) */
  rdma_budget_prop_install (gobject_class, PROP_MAX_PINNED_BYTES);
  rdma_bulk_props_install (gobject_class, PROP_BULK_THRESHOLD, FALSE);

  ttc->is_open = thrift_hybrid_is_open;
  ttc->peek = thrift_hybrid_peek;
  ttc->open = thrift_hybrid_open;
  ttc->close = thrift_hybrid_close;
  ttc->read = thrift_hybrid_read;
  ttc->read_end = thrift_hybrid_read_end;
  ttc->write = thrift_hybrid_write;
  ttc->write_end = thrift_hybrid_write_end;
  ttc->flush = thrift_hybrid_flush;
  ttc->read_all = thrift_hybrid_read_all;
  ttc->checkReadBytesAvailable = thrift_hybrid_check_read_bytes_available;
}

static void
thrift_hybrid_init (ThriftHybrid *self)
{
  ThriftHybridPrivate *priv = PRIV (self);

  priv->next_leg = THRIFT_HYBRID_LEG_RDMA;
  priv->tcp_first = TRUE;
  rdma_bulk_props_init (&priv->bulk, FALSE);
}

ThriftHybrid *
hybrid_transport_new_accepted (ThriftSocket *socket, ThriftRdma *rdma, gboolean framed,
                               ThriftConfiguration *configuration)
{
  ThriftHybrid *self = g_object_new (THRIFT_TYPE_HYBRID, "configuration", configuration, NULL);
  ThriftHybridPrivate *priv = PRIV (self);

  rdma_signal_snapshot ();
  priv->accepted = TRUE;
  priv->socket = socket;
  priv->rdma = rdma;
  priv->tcp = new_tcp_leg (socket, framed, configuration);
  return self;
}

ThriftHybridLeg
thrift_hybrid_get_last_leg (ThriftHybrid *hybrid)
{
  g_return_val_if_fail (THRIFT_IS_HYBRID (hybrid), THRIFT_HYBRID_LEG_NONE);
  return PRIV (hybrid)->last_leg;
}

const gchar *
thrift_hybrid_leg_name (ThriftHybridLeg which)
{
  switch (which)
  {
  case THRIFT_HYBRID_LEG_TCP:
    return "tcp";
  case THRIFT_HYBRID_LEG_RDMA:
    return "rdma";
  default:
    return "none";
  }
}

ThriftRdma *
thrift_hybrid_get_rdma (ThriftHybrid *hybrid)
{
  g_return_val_if_fail (THRIFT_IS_HYBRID (hybrid), NULL);
  return PRIV (hybrid)->rdma;
}

ThriftSocket *
thrift_hybrid_get_socket (ThriftHybrid *hybrid)
{
  g_return_val_if_fail (THRIFT_IS_HYBRID (hybrid), NULL);
  return PRIV (hybrid)->socket;
}

const gchar *
thrift_hybrid_get_fallback_reason (ThriftHybrid *hybrid)
{
  g_return_val_if_fail (THRIFT_IS_HYBRID (hybrid), NULL);
  return PRIV (hybrid)->fallback_reason;
}

void
thrift_hybrid_interrupt (ThriftHybrid *hybrid)
{
  ThriftHybridPrivate *priv;

  g_return_if_fail (THRIFT_IS_HYBRID (hybrid));
  priv = PRIV (hybrid);
  /* (only what is safe from another thread: no leg is dropped here) */
  if (priv->socket != NULL && priv->socket->sd != THRIFT_INVALID_SOCKET)
    shutdown (priv->socket->sd, SHUT_RDWR);
  if (priv->rdma != NULL)
    thrift_rdma_interrupt (priv->rdma);
}

/* ThriftInterruptible: how a stopping server wakes a thread blocked on it */
static void
thrift_hybrid_interruptible_interrupt (ThriftInterruptible *self)
{
  thrift_hybrid_interrupt (THRIFT_HYBRID (self));
}

static void
thrift_hybrid_interruptible_init (ThriftInterruptibleInterface *iface)
{
  iface->interrupt = thrift_hybrid_interruptible_interrupt;
}
