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
 * thrift_server_rdma.c: ThriftServerRdma, listening with librdmacm (see thrift_server_rdma.h).
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <thrift/c_glib/thrift_configuration.h>
#include <thrift/c_glib/transport/thrift_interruptible.h>
#include <thrift/c_glib/transport/thrift_server_rdma.h>

#include "rdma/rdma_budget.h"
#include "rdma/rdma_admit.h"
#include "rdma/rdma_call_policy.h"
#include "rdma/rdma_conn.h"
#include "rdma/rdma_device.h"
#include "rdma/rdma_gobject.h"
#include "rdma/rdma_machine.h"
#include "rdma/rdma_numa.h"
#include "rdma/rdma_resources.h"
#include "rdma/rdma_signal.h"
#include "rdma/rdma_status.h"
#include "rdma/rdma_transport.h"
#include "rdma/rdma_wire.h"

enum
{
  PROP_0,
  PROP_HOSTNAME,
  PROP_PORT,
  PROP_BACKLOG,
  PROP_HINTS,
  PROP_POLLING,
  PROP_CONFIGURATION, /* these three consecutive: rdma_size_props_* */
  PROP_REMAINING_MESSAGE_SIZE,
  PROP_KNOW_MESSAGE_SIZE,
  PROP_CALL_TIMEOUT,
  PROP_IDLE_TIMEOUT,
  PROP_KEEPALIVE,
  PROP_NUMA_NODE,
  PROP_MAX_PINNED_BYTES,
  PROP_BULK_THRESHOLD /* RDMA_BULK_PROPS_N from here: rdma_bulk_props_* */
};

/* How long a connection request may take to complete its handshake. */
#define HANDSHAKE_MS 5000

/* A connection request accepted (rdma_accept sent) whose ESTABLISHED has not come yet. */
typedef struct
{
  RdmaConn *conn; /* (owned) ACCEPTING; its id still on the listener's channel */
  gint64 deadline_us;
} Pending;

typedef struct
{
  gchar *hostname; /* (owned) (nullable): NULL binds any address */
  guint port;      /* as set; the bound port after listen */
  gint backlog;
  gpointer hints; /* (unowned) (nullable): the caller's (property) */
  ThriftRdmaPolling polling;
  guint call_timeout_ms;
  guint idle_timeout_ms;
  guint keepalive_ms;
  gint numa_node;           /* of accepted connections (-1: none); checked at listen */
  guint64 max_pinned_bytes; /* asked of the process's budget at listen (0: default) */
  RdmaBulkProps bulk;       /* of accepted connections (thrift_rdma.h) */

  struct rdma_event_channel *channel; /* (owned) (nullable): NULL when not listening */
  struct rdma_cm_id *listener;        /* (owned) (nullable): NULL when not listening */
  int wake_fd;                        /* eventfd: thrift_server_rdma_interrupt */
  int epoll_fd; /* the CM channel and wake_fd in one (thrift_server_rdma_get_fd) */
  ThriftServerRdmaAdmitFunc admit;
  gpointer admit_data; /* (unowned) (nullable): the caller's, with admit */
  GList *pending;      /* (owned) (nullable): Pending * (owned), handshakes in progress,
                            side by side */
  GQueue established;  /* RdmaConn * (owned), CONNECTED, not yet returned by accept */
  gint last_status;    /* (atomic) ThriftRdmaStatus of the last error listen/accept set */
} ThriftServerRdmaPrivate;

static void thrift_server_rdma_interruptible_init (ThriftInterruptibleInterface *iface);

G_DEFINE_TYPE_WITH_CODE (ThriftServerRdma, thrift_server_rdma, THRIFT_TYPE_SERVER_TRANSPORT,
                         G_ADD_PRIVATE (ThriftServerRdma)
                             G_IMPLEMENT_INTERFACE (THRIFT_TYPE_INTERRUPTIBLE,
                                                    thrift_server_rdma_interruptible_init))

#define PRIV(obj) \
  ((ThriftServerRdmaPrivate *) thrift_server_rdma_get_instance_private (THRIFT_SERVER_RDMA (obj)))

static void
drop_handshakes (ThriftServerRdmaPrivate *priv)
{
  RdmaConn *conn;

  for (GList *l = priv->pending; l != NULL; l = l->next)
  {
    rdma_conn_free (((Pending *) l->data)->conn);
    g_free (l->data);
  }
  g_list_free (priv->pending);
  priv->pending = NULL;
  while ((conn = g_queue_pop_head (&priv->established)) != NULL)
    rdma_conn_free (conn);
}

static void
close_listener (ThriftServerRdmaPrivate *priv)
{
  /* connections still on the listener's channel go before it */
  drop_handshakes (priv);
  rdma_res_id_destroy (&priv->listener);
  rdma_res_channel_destroy (&priv->channel);
  if (priv->wake_fd >= 0)
  {
    close (priv->wake_fd);
    priv->wake_fd = -1;
  }
  if (priv->epoll_fd >= 0)
  {
    close (priv->epoll_fd);
    priv->epoll_fd = -1;
  }
}

/* One descriptor readable when the CM channel or the interrupt's eventfd is, so a caller
 * that waits on several listeners watches one per server (and accept waits on it too). */
static gboolean
make_epoll (ThriftServerRdmaPrivate *priv, GError **error)
{
  int fds[2] = { priv->channel->fd, priv->wake_fd };

  priv->epoll_fd = epoll_create1 (EPOLL_CLOEXEC);
  if (priv->epoll_fd < 0)
  {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_SYSTEM, "epoll_create1", err, -1, NULL);
    return FALSE;
  }
  for (guint i = 0; i < G_N_ELEMENTS (fds); i++)
  {
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[i] };
    if (epoll_ctl (priv->epoll_fd, EPOLL_CTL_ADD, fds[i], &ev) != 0)
    {
      int err = errno;
      rdma_status_set_error (error, RDMA_ERR_SYSTEM, "epoll_ctl", err, -1, NULL);
      return FALSE;
    }
  }
  return TRUE;
}

/* TRUE if @addr can be bound with a port the system picks. */
static gboolean
address_usable (ThriftServerRdmaPrivate *priv, const struct sockaddr *addr)
{
  struct sockaddr_storage any_port;
  struct rdma_cm_id *probe = NULL;
  gboolean ok;

  if (addr->sa_family == AF_INET)
    memcpy (&any_port, addr, sizeof (struct sockaddr_in));
  else if (addr->sa_family == AF_INET6)
    memcpy (&any_port, addr, sizeof (struct sockaddr_in6));
  else
    return FALSE;
  if (addr->sa_family == AF_INET)
    ((struct sockaddr_in *) &any_port)->sin_port = 0;
  else
    ((struct sockaddr_in6 *) &any_port)->sin6_port = 0;
  if (rdma_create_id (priv->channel, &probe, NULL, RDMA_PS_TCP) != 0)
    return FALSE;
  ok = rdma_bind_addr (probe, (struct sockaddr *) &any_port) == 0;
  rdma_destroy_id (probe);
  return ok;
}

/* The way out of listen and accept: @e (taken) leaves the engine as a THRIFT_TRANSPORT_ERROR
 * and its status stays behind (thrift_server_rdma_get_last_status). */
static void
fail (ThriftServerRdmaPrivate *priv, GError *e, GError **error)
{
  g_atomic_int_set (&priv->last_status, rdma_error_to_thrift (&e));
  if (e != NULL)
    g_propagate_error (error, e);
}

/* Binds and listens; errors in the engine's domain (the caller maps them). */
static gboolean
listen_on (ThriftServerTransport *transport, GError **error)
{
  ThriftServerRdmaPrivate *priv = PRIV (transport);
  struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
  struct rdma_addrinfo *res = NULL;
  struct sockaddr_in any = { .sin_family = AF_INET };
  struct sockaddr *addr = (struct sockaddr *) &any;
  gchar service[16];

  if (priv->listener != NULL)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET,
                 "ThriftServerRdma is already listening on port %u", priv->port);
    return FALSE;
  }
  {
    const RdmaMachine *machine = rdma_machine_get ();

    /* at startup, not at the first connection: a bad node is the server's own error */
    if (!rdma_numa_check_property (priv->numa_node, machine, "ThriftServerRdma", error))
      return FALSE;
    rdma_numa_warn_ignored (priv->hints, machine);
  }
  if (rdma_device_probe (error) == 0)
    return FALSE;
  priv->wake_fd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (priv->wake_fd < 0)
  {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_SYSTEM, "eventfd", err, -1, NULL);
    return FALSE;
  }
  priv->channel = rdma_res_channel_create (error);
  if (priv->channel == NULL)
    goto fail;
  priv->listener = rdma_res_id_create (priv->channel, transport, error);
  if (priv->listener == NULL)
    goto fail;
  if (!make_epoll (priv, error))
    goto fail;
  g_snprintf (service, sizeof service, "%u", priv->port);
  if (priv->hostname != NULL)
  {
    if (rdma_getaddrinfo (priv->hostname, service, &hints, &res) != 0 || res == NULL)
    {
      int err = errno;
      rdma_status_set_error (error, RDMA_ERR_RESOLVE, "rdma_getaddrinfo", err, -1,
                             "cannot resolve the bind address '%s'", priv->hostname);
      goto fail;
    }
    addr = res->ai_src_addr;
  }
  else
  {
    any.sin_port = htons ((guint16) priv->port);
  }
  if (rdma_bind_addr (priv->listener, addr) != 0)
  {
    int err = errno;
    /* RDMA CM says EADDRNOTAVAIL both for a taken port and for an address that is not on
     * an RDMA interface: the same address with any port tells them apart */
    gboolean taken = err == EADDRINUSE
                     || (err == EADDRNOTAVAIL && priv->port != 0 && address_usable (priv, addr));
    rdma_status_set_error (error, taken ? RDMA_ERR_ADDR_IN_USE : rdma_status_from_errno (err),
                           "rdma_bind_addr", taken ? 0 : err, -1, "binding %s port %u%s",
                           priv->hostname ? priv->hostname : "(any)", priv->port,
                           taken                  ? ""
                           : err == EADDRNOTAVAIL ? " (is the address on an RDMA interface?)"
                                                  : "");
    goto fail;
  }
  if (res != NULL)
  {
    rdma_freeaddrinfo (res);
    res = NULL;
  }
  if (rdma_listen (priv->listener, priv->backlog) != 0)
  {
    int err = errno;
    rdma_status_set_error (error, rdma_status_from_errno (err), "rdma_listen", err, -1, NULL);
    goto fail;
  }
  priv->port = ntohs (rdma_get_src_port (priv->listener));
  return TRUE;

fail:
  if (res != NULL)
    rdma_freeaddrinfo (res);
  close_listener (priv);
  return FALSE;
}

void
thrift_server_rdma_settings_of (ThriftServerRdma *self, RdmaConnSettings *settings)
{
  ThriftServerTransport *transport = THRIFT_SERVER_TRANSPORT (self);
  ThriftServerRdmaPrivate *priv = PRIV (transport);

  thrift_rdma_settings_for (transport->configuration, priv->polling, settings);
  settings->keepalive_ms = priv->keepalive_ms;
  rdma_bulk_props_to_settings (&priv->bulk, settings);
  /* the service's set (the "hints" property), else the property, places the buffers that
   * accept maps; the accepted ThriftRdma binds the threads that serve it */
  settings->numa_node = rdma_call_policy_buffer_node (priv->hints, priv->numa_node);
}

ThriftRdma *
thrift_server_rdma_wrap_accepted (ThriftServerRdma *self, RdmaConn *conn)
{
  ThriftServerRdmaPrivate *priv = PRIV (self);
  ThriftRdma *t = thrift_rdma_new_accepted (conn, THRIFT_SERVER_TRANSPORT (self)->configuration,
                                            priv->hints, priv->polling, priv->call_timeout_ms,
                                            priv->idle_timeout_ms, priv->keepalive_ms);

  thrift_rdma_serve_defaults (t);
  rdma_bulk_props_apply (&priv->bulk, t);
  return t;
}

/* The admission of a request (rdma_admit.h): TRUE if it goes on; a refused one is rejected
 * with the refusal's code, which the client reports, and its id destroyed.  A request with a
 * bad hello goes on: rdma_conn_accept_start rejects it, saying which version we speak. */
static gboolean
admitted (ThriftServerRdmaPrivate *priv, struct rdma_cm_id *id, const guint8 *pdata, gsize len,
          const RdmaConnSettings *settings)
{
  RdmaWireHello hello;
  RdmaWireRefusal refusal;
  gchar *reason = NULL;
  guint16 code;

  if (!rdma_wire_hello_parse (pdata, len, &hello, NULL))
    return TRUE;
  code = rdma_admit_request (pdata, len, priv->admit, priv->admit_data, &reason);
  if (code == RDMA_WIRE_REFUSE_NONE)
    return TRUE;
  {
    struct sockaddr *peer = rdma_get_peer_addr (id);
    gchar host[NI_MAXHOST] = "?";

    getnameinfo (peer,
                 peer->sa_family == AF_INET6 ? sizeof (struct sockaddr_in6)
                                             : sizeof (struct sockaddr_in),
                 host, sizeof host, NULL, 0, NI_NUMERICHOST);
    g_message ("ThriftServerRdma: refused a connection request from %s: %s", host, reason);
  }
  g_free (reason);
  rdma_wire_refusal_init (&refusal, settings->wire_version, code);
  rdma_reject (id, &refusal, sizeof refusal);
  rdma_destroy_id (id);
  return FALSE;
}

/* A connection request: set up and accepted at once (rdma_accept does not wait), then it
 * waits for its ESTABLISHED among the others, with its own deadline. */
static void
start_handshake (ThriftServerTransport *transport, struct rdma_cm_event *ev)
{
  ThriftServerRdmaPrivate *priv = PRIV (transport);
  struct rdma_cm_id *id = ev->id;
  guint8 pdata[256];
  gsize len = MIN (ev->param.conn.private_data_len, sizeof pdata);
  RdmaConnSettings settings;
  GError *e = NULL;
  Pending *p;
  RdmaConn *conn;

  if (ev->param.conn.private_data != NULL)
    memcpy (pdata, ev->param.conn.private_data, len);
  else
    len = 0;
  /* the event must be acked before the id can be destroyed or moved */
  rdma_ack_cm_event (ev);
  if (g_list_length (priv->pending) >= (guint) priv->backlog)
  {
    g_message ("ThriftServerRdma: %d handshakes in progress (the backlog): a connection "
               "request was refused",
               priv->backlog);
    rdma_reject (id, NULL, 0);
    rdma_destroy_id (id);
    return;
  }
  thrift_server_rdma_settings_of (THRIFT_SERVER_RDMA (transport), &settings);
  if (!admitted (priv, id, pdata, len, &settings))
    return;
  conn = rdma_conn_accept_start (id, pdata, len, &settings, &e);
  if (conn == NULL)
  {
    /* one bad client must not stop the server */
    g_message ("ThriftServerRdma: a connection request failed: %s", e->message);
    g_error_free (e);
    return;
  }
  p = g_new (Pending, 1);
  p->conn = conn;
  p->deadline_us = g_get_monotonic_time () + (gint64) HANDSHAKE_MS * 1000;
  priv->pending = g_list_append (priv->pending, p);
}

static GList *
find_pending (ThriftServerRdmaPrivate *priv, struct rdma_cm_id *id)
{
  for (GList *l = priv->pending; l != NULL; l = l->next)
    if (rdma_conn_cm_id (((Pending *) l->data)->conn) == id)
      return l;
  return NULL;
}

/* An event of a pending handshake: ESTABLISHED completes it, anything else ends it. */
static void
handshake_event (ThriftServerRdmaPrivate *priv, struct rdma_cm_event *ev)
{
  GList *l = find_pending (priv, ev->id);
  enum rdma_cm_event_type type = ev->event;
  int status = ev->status;
  Pending *p;
  GError *e = NULL;

  rdma_ack_cm_event (ev);
  if (l == NULL)
    return;
  p = l->data;
  priv->pending = g_list_delete_link (priv->pending, l);
  if (type == RDMA_CM_EVENT_ESTABLISHED && rdma_conn_accept_finish (p->conn, &e))
  {
    g_queue_push_tail (&priv->established, p->conn);
  }
  else
  {
    if (e != NULL)
    {
      g_message ("ThriftServerRdma: a connection failed: %s", e->message);
      g_error_free (e);
    }
    else
    {
      g_message ("ThriftServerRdma: a connection request ended with %s (status %d) before "
                 "it was established",
                 rdma_event_str (type), status);
    }
    rdma_conn_free (p->conn);
  }
  g_free (p);
}

/* Drops the handshakes past their deadline; returns the earliest deadline left (0: none). */
static gint64
expire_handshakes (ThriftServerRdmaPrivate *priv, gint64 now)
{
  gint64 next = 0;
  GList *l = priv->pending;

  while (l != NULL)
  {
    GList *following = l->next;
    Pending *p = l->data;

    if (now >= p->deadline_us)
    {
      g_message ("ThriftServerRdma: a connection request did not complete its handshake "
                 "within %d ms: dropped",
                 HANDSHAKE_MS);
      rdma_conn_free (p->conn);
      g_free (p);
      priv->pending = g_list_delete_link (priv->pending, l);
    }
    else if (next == 0 || p->deadline_us < next)
    {
      next = p->deadline_us;
    }
    l = following;
  }
  return next;
}

/* implements thrift_server_transport_listen */
static gboolean
thrift_server_rdma_listen (ThriftServerTransport *transport, GError **error)
{
  ThriftServerRdmaPrivate *priv = PRIV (transport);
  GError *e = NULL;

  if (!listen_on (transport, &e))
  {
    fail (priv, e, error);
    return FALSE;
  }
  rdma_budget_request (priv->max_pinned_bytes, "ThriftServerRdma");
  g_atomic_int_set (&priv->last_status, THRIFT_RDMA_STATUS_OK);
  return TRUE;
}

/* Set by thrift_server_rdma_interrupt until close (its eventfd is never read). */
static gboolean
interrupt_pending (ThriftServerRdmaPrivate *priv)
{
  struct pollfd pfd = { .fd = priv->wake_fd, .events = POLLIN };
  return poll (&pfd, 1, 0) > 0 && (pfd.revents & POLLIN) != 0;
}

/* One step of accept, never blocking: takes the listener's CM events, drops the handshakes
 * past their deadline, and returns an established connection, or NULL with *@next_us the
 * earliest handshake deadline (0: none); errors in the engine's domain (the caller maps
 * them). */
static ThriftTransport *
accept_step (ThriftServerTransport *transport, gint64 *next_us, GError **error)
{
  ThriftServerRdmaPrivate *priv = PRIV (transport);
  struct rdma_cm_event *ev = NULL;
  RdmaConn *conn;

  *next_us = 0;
  if (priv->listener == NULL)
  {
    rdma_status_set_error (error, RDMA_ERR_NOT_OPEN, "accept", 0, -1,
                           "ThriftServerRdma is not listening");
    return NULL;
  }
  if (interrupt_pending (priv))
  {
    rdma_status_set_error (error, RDMA_ERR_INTERRUPTED, "accept", 0, -1,
                           "thrift_server_rdma_interrupt was called");
    return NULL;
  }
  while (rdma_get_cm_event (priv->channel, &ev) == 0)
  {
    if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
      start_handshake (transport, ev);
    else if (ev->id != priv->listener)
      handshake_event (priv, ev);
    else
      rdma_ack_cm_event (ev);
  }
  if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
  {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_SYSTEM, "rdma_get_cm_event", err, -1, "accept");
    return NULL;
  }
  *next_us = expire_handshakes (priv, g_get_monotonic_time ());
  conn = g_queue_pop_head (&priv->established);
  if (conn == NULL)
    return NULL;
  *next_us = 0;
  return THRIFT_TRANSPORT (thrift_server_rdma_wrap_accepted (THRIFT_SERVER_RDMA (transport), conn));
}

/* Waits for the next established connection: accept_step, and a wait on the epoll fd until
 * something arrives or a handshake's deadline; errors in the engine's domain. */
static ThriftTransport *
accept_next (ThriftServerTransport *transport, GError **error)
{
  ThriftServerRdmaPrivate *priv = PRIV (transport);

  rdma_signal_snapshot ();
  for (;;)
  {
    GError *e = NULL;
    gint64 next;
    ThriftTransport *t = accept_step (transport, &next, &e);
    struct pollfd pfd = { .fd = priv->epoll_fd, .events = POLLIN };
    int timeout;

    if (t != NULL || e != NULL)
    {
      if (e != NULL)
        g_propagate_error (error, e);
      return t;
    }
    timeout = next == 0 ? -1
                        : (int) CLAMP ((next - g_get_monotonic_time () + 999) / 1000, 0, G_MAXINT);
    if (poll (&pfd, 1, timeout) < 0)
    {
      int err = errno;
      if (err == EINTR && !rdma_signal_interrupts_waits ())
        continue;
      if (err == EINTR)
      {
        /* as accept (2) under a handler without SA_RESTART: the server's loop decides */
        rdma_status_set_error (error, RDMA_ERR_INTERRUPTED, "accept", EINTR, -1,
                               "a signal interrupted the wait for a connection");
        return NULL;
      }
      rdma_status_set_error (error, RDMA_ERR_SYSTEM, "poll", err, -1, "accept");
      return NULL;
    }
  }
}

/* implements thrift_server_transport_accept */
static ThriftTransport *
thrift_server_rdma_accept (ThriftServerTransport *transport, GError **error)
{
  GError *e = NULL;
  ThriftTransport *t = accept_next (transport, &e);

  if (t == NULL)
    fail (PRIV (transport), e, error);
  return t;
}

/* implements thrift_server_transport_close */
static gboolean
thrift_server_rdma_close (ThriftServerTransport *transport, GError **error)
{
  close_listener (PRIV (transport));
  return TRUE;
}

void
thrift_server_rdma_interrupt (ThriftServerRdma *self)
{
  ThriftServerRdmaPrivate *priv;
  guint64 one = 1;

  g_return_if_fail (THRIFT_IS_SERVER_RDMA (self));
  priv = PRIV (self);
  if (priv->wake_fd >= 0 && write (priv->wake_fd, &one, sizeof one) < 0)
  {
    /* EAGAIN: the counter is already non-zero, accept wakes anyway */
  }
}

/* ThriftInterruptible: how a stopping server wakes a thread blocked on it */
static void
thrift_server_rdma_interruptible_interrupt (ThriftInterruptible *self)
{
  thrift_server_rdma_interrupt (THRIFT_SERVER_RDMA (self));
}

static void
thrift_server_rdma_interruptible_init (ThriftInterruptibleInterface *iface)
{
  iface->interrupt = thrift_server_rdma_interruptible_interrupt;
}

void
thrift_server_rdma_set_admission (ThriftServerRdma *self, ThriftServerRdmaAdmitFunc func,
                                  gpointer user_data)
{
  g_return_if_fail (THRIFT_IS_SERVER_RDMA (self));
  PRIV (self)->admit = func;
  PRIV (self)->admit_data = user_data;
}

gint
thrift_server_rdma_get_fd (ThriftServerRdma *self)
{
  g_return_val_if_fail (THRIFT_IS_SERVER_RDMA (self), -1);
  return PRIV (self)->listener != NULL ? PRIV (self)->epoll_fd : -1;
}

ThriftTransport *
thrift_server_rdma_accept_ready (ThriftServerRdma *self, gint64 *next_deadline_us, GError **error)
{
  GError *e = NULL;
  gint64 next = 0;
  ThriftTransport *t;

  g_return_val_if_fail (THRIFT_IS_SERVER_RDMA (self), NULL);
  t = accept_step (THRIFT_SERVER_TRANSPORT (self), &next, &e);
  if (e != NULL)
    fail (PRIV (self), e, error);
  if (next_deadline_us != NULL)
    *next_deadline_us = next;
  return t;
}

ThriftRdmaStatus
thrift_server_rdma_get_last_status (ThriftServerRdma *self)
{
  g_return_val_if_fail (THRIFT_IS_SERVER_RDMA (self), THRIFT_RDMA_STATUS_OK);
  return (ThriftRdmaStatus) g_atomic_int_get (&PRIV (self)->last_status);
}

guint
thrift_server_rdma_get_port (ThriftServerRdma *self)
{
  g_return_val_if_fail (THRIFT_IS_SERVER_RDMA (self), 0);
  return PRIV (self)->listener != NULL ? PRIV (self)->port : 0;
}

static void
thrift_server_rdma_get_property (GObject *object, guint property_id, GValue *value,
                                 GParamSpec *pspec)
{
  ThriftServerRdmaPrivate *priv = PRIV (object);
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
    break;
  }
}

static void
thrift_server_rdma_set_property (GObject *object, guint property_id, const GValue *value,
                                 GParamSpec *pspec)
{
  ThriftServerRdmaPrivate *priv = PRIV (object);
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
    /* checked at listen, where a bad node is an error rather than a GObject warning */
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
    break;
  }
}

static void
thrift_server_rdma_finalize (GObject *object)
{
  ThriftServerRdmaPrivate *priv = PRIV (object);

  close_listener (priv);
  g_free (priv->hostname);
  g_clear_object (&THRIFT_SERVER_TRANSPORT (object)->configuration);
  G_OBJECT_CLASS (thrift_server_rdma_parent_class)->finalize (object);
}

static void
thrift_server_rdma_class_init (ThriftServerRdmaClass *cls)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (cls);
  ThriftServerTransportClass *stc = THRIFT_SERVER_TRANSPORT_CLASS (cls);
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;

  gobject_class->get_property = thrift_server_rdma_get_property;
  gobject_class->set_property = thrift_server_rdma_set_property;
  gobject_class->finalize = thrift_server_rdma_finalize;

  g_object_class_install_property (gobject_class, PROP_HOSTNAME,
                                   g_param_spec_string ("hostname", "hostname",
                                                        "Address to bind (NULL: any)", NULL,
                                                        rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_PORT,
      g_param_spec_uint ("port", "port", "Port to bind (0: any; the bound one after listen)", 0,
                         65535, 9090, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (gobject_class, PROP_BACKLOG,
                                   g_param_spec_int ("backlog", "backlog", "Listen backlog", 1,
                                                     G_MAXINT, THRIFT_SERVER_RDMA_DEFAULT_BACKLOG,
                                                     rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_HINTS,
      g_param_spec_pointer ("hints", "hints", "Default hint set of accepted connections, or NULL",
                            rw));
  g_object_class_install_property (
      gobject_class, PROP_POLLING,
      g_param_spec_enum ("polling", "polling", "Polling mode of accepted connections",
                         THRIFT_TYPE_RDMA_POLLING, THRIFT_RDMA_DEFAULT_POLLING,
                         rw | G_PARAM_CONSTRUCT));
  rdma_size_props_install (gobject_class, PROP_CONFIGURATION);
  g_object_class_install_property (
      gobject_class, PROP_CALL_TIMEOUT,
      g_param_spec_uint ("call-timeout", "call-timeout",
                         "Milliseconds an accepted connection waits within a call, e.g. for "
                         "credits to send a reply (0: forever)",
                         0, G_MAXUINT, THRIFT_RDMA_DEFAULT_CALL_TIMEOUT_MS,
                         rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_IDLE_TIMEOUT,
      g_param_spec_uint ("idle-timeout", "idle-timeout",
                         "Milliseconds an accepted connection waits for its next request "
                         "before it is closed (0: forever)",
                         0, G_MAXUINT, 0, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_KEEPALIVE,
      g_param_spec_uint ("keepalive", "keepalive",
                         "Milliseconds after which a silent, unresponsive client is considered "
                         "dead and its connection freed (probes start at a quarter of it; "
                         "0: never)",
                         0, G_MAXUINT, THRIFT_RDMA_DEFAULT_KEEPALIVE_MS, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_NUMA_NODE,
      g_param_spec_int ("numa-node", "numa-node",
                        "NUMA node of accepted connections' buffers and serving threads (-1: "
                        "none); a numa hint beats it; checked at listen",
                        G_MININT, G_MAXINT, THRIFT_RDMA_DEFAULT_NUMA_NODE, rw | G_PARAM_CONSTRUCT));
  rdma_budget_prop_install (gobject_class, PROP_MAX_PINNED_BYTES);
  rdma_bulk_props_install (gobject_class, PROP_BULK_THRESHOLD, TRUE);

  stc->listen = thrift_server_rdma_listen;
  stc->accept = thrift_server_rdma_accept;
  stc->close = thrift_server_rdma_close;
}

static void
thrift_server_rdma_init (ThriftServerRdma *self)
{
  ThriftServerRdmaPrivate *priv = PRIV (self);
  priv->wake_fd = -1;
  priv->epoll_fd = -1;
  rdma_bulk_props_init (&priv->bulk, TRUE);
  g_queue_init (&priv->established);
  priv->backlog = THRIFT_SERVER_RDMA_DEFAULT_BACKLOG;
  priv->polling = THRIFT_RDMA_DEFAULT_POLLING;
  priv->numa_node = THRIFT_RDMA_DEFAULT_NUMA_NODE;
}
