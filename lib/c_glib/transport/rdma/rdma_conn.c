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
 * rdma_conn.c: a connection's life: the state machine, set-up (client connect, server accept,
 * the hello handshake), CM events, and teardown.  Posting is in rdma_conn_post.c, completions
 * in rdma_conn_wc.c, messages for the shells in rdma_conn_msg.c, waiting in
 * rdma_conn_wait.c.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

#include <thrift/c_glib/transport/thrift_rdma_version.h>

#include "rdma_conn_private.h"
#include "rdma_domain.h"
#include "rdma_conn_window.h"
#include "rdma_helper.h"
#include "rdma_numa.h"
#include "rdma_resources.h"
#include "rdma_status.h"
#include "rdma_verbs.h"

#define RDMA_RNR_RETRY_INFINITE 7
/* Send queue entries beyond the send slots: WRITEs and READs of the protocols, and the
 * keepalive probe. */
#define RDMA_SQ_EXTRA 64
/* How long a closing connection waits for protocols to push out what is still queued. */
#define RDMA_CLOSE_FLUSH_US G_USEC_PER_SEC
G_STATIC_ASSERT (THRIFT_RDMA_PAIR_TOKEN_LEN == RDMA_WIRE_PAIR_TOKEN_LEN);

/* Every default of a connection's settings (the shells' properties start from the same
 * numbers: thrift_rdma.h, rdma_bulk.h). */
static const RdmaConnSettings conn_defaults = {
  .slot_size = 4096,
  .credits = 32,
  .spin_us = 50,
  .wire_version = THRIFT_RDMA_WIRE_VERSION,
  .keepalive_ms = THRIFT_RDMA_DEFAULT_KEEPALIVE_MS,
  /* unread bytes a connection may hold before its credits stop: a few messages of the
   * largest size that fits the slots, and never less than one max-size message can need */
  .unread_limit = 4u << 20,
  .ring_size = 512u << 10,
  .ring_idle_ms = 5000,
  .numa_node = RDMA_NUMA_NONE,
  .bulk_chunk = RDMA_BULK_DEFAULT_CHUNK,
  .bulk_depth = RDMA_BULK_DEFAULT_DEPTH,
  .rcache_entries = RDMA_BULK_DEFAULT_RCACHE_ENTRIES,
  .rcache_bytes = RDMA_BULK_DEFAULT_RCACHE_BYTES,
};

static const gchar *const state_names[] = {
  [RDMA_CONN_IDLE] = "idle",
  [RDMA_CONN_RESOLVING] = "resolving",
  [RDMA_CONN_CONNECTING] = "connecting",
  [RDMA_CONN_ACCEPTING] = "accepting",
  [RDMA_CONN_CONNECTED] = "connected",
  [RDMA_CONN_DISCONNECTED] = "disconnected",
  [RDMA_CONN_FAILED] = "failed",
  [RDMA_CONN_CLOSED] = "closed",
};

const gchar *
rdma_conn_state_name (RdmaConnState state)
{
  return (guint) state < G_N_ELEMENTS (state_names) ? state_names[state] : "?";
}

gboolean
rdma_conn_state_allowed (RdmaConnState from, RdmaConnState to)
{
  if (to == RDMA_CONN_CLOSED)
    return TRUE;
  if (to == RDMA_CONN_FAILED)
    return from != RDMA_CONN_CLOSED;
  switch (from)
  {
  case RDMA_CONN_IDLE:
    return to == RDMA_CONN_RESOLVING || to == RDMA_CONN_ACCEPTING;
  case RDMA_CONN_RESOLVING:
    return to == RDMA_CONN_CONNECTING;
  case RDMA_CONN_CONNECTING:
  case RDMA_CONN_ACCEPTING:
    return to == RDMA_CONN_CONNECTED;
  case RDMA_CONN_CONNECTED:
    return to == RDMA_CONN_DISCONNECTED;
  default:
    return FALSE;
  }
}

static void
set_state (RdmaConn *conn, RdmaConnState to)
{
  if (!rdma_conn_state_allowed (conn->state, to))
  {
    g_critical ("RdmaConn: transition %s -> %s is not allowed", rdma_conn_state_name (conn->state),
                rdma_conn_state_name (to));
    return;
  }
  conn->state = to;
}

void
rdma_conn_settings_init (RdmaConnSettings *s, guint32 max_message, ThriftRdmaPolling polling)
{
  *s = conn_defaults;
  s->max_message = max_message;
  s->polling = polling;
  s->rx_protocols = rdma_proto_implemented ();
}

void
rdma_conn_fail (RdmaConn *conn, const GError *cause)
{
  if (conn->state == RDMA_CONN_FAILED || conn->state == RDMA_CONN_CLOSED)
    return;
  conn->failure = g_error_copy (cause);
  set_state (conn, RDMA_CONN_FAILED);
}

gboolean
rdma_conn_check_usable (RdmaConn *conn, GError **error)
{
  switch (conn->state)
  {
  case RDMA_CONN_CONNECTED:
    return TRUE;
  case RDMA_CONN_FAILED:
    if (error != NULL)
      *error = g_error_copy (conn->failure);
    return FALSE;
  case RDMA_CONN_DISCONNECTED:
    rdma_status_set_error (error, RDMA_ERR_PEER_GONE, NULL, 0, -1, "connection closed");
    return FALSE;
  default:
    rdma_status_set_error (error, RDMA_ERR_NOT_OPEN, NULL, 0, -1, "connection %s",
                           rdma_conn_state_name (conn->state));
    return FALSE;
  }
}

static RdmaConn *
conn_new (const RdmaConnSettings *settings, gboolean is_client)
{
  RdmaConn *conn = g_new0 (RdmaConn, 1);
  conn->settings = *settings;
  rdma_conn_poller_init (conn);
  conn->is_client = is_client;
  conn->state = RDMA_CONN_IDLE;
  g_queue_init (&conn->received);
  g_queue_init (&conn->control_out);
  conn->held_slots = g_array_new (FALSE, FALSE, sizeof (guint32));
  conn->windows.supported = -1;
  conn->fatal_op = (RdmaOp){ .kind = RDMA_OP_FATAL, .slot = -1 };
  conn->op_blocks = g_ptr_array_new_with_free_func (g_free);
  conn->tx_proto = &rdma_proto_eager_ops;
  conn->probe_op = (RdmaOp){ .kind = RDMA_OP_PROBE, .slot = -1, .sq_entries = 1 };
  conn->quiet_op = (RdmaOp){ .kind = RDMA_OP_QUIET, .slot = -1 };
  conn->max_rd_atomic = 1;
  return conn;
}


/* ---- CM events ---- */

gint
rdma_conn_handle_cm_events (RdmaConn *conn, GError **error)
{
  struct rdma_cm_event *ev;
  gint n = 0;

  while (rdma_verbs->get_cm_event (conn->cm_channel, &ev) == 0)
  {
    enum rdma_cm_event_type type = ev->event;
    rdma_verbs->ack_cm_event (ev);
    n++;
    if (type == RDMA_CM_EVENT_DISCONNECTED && conn->state == RDMA_CONN_CONNECTED)
    {
      set_state (conn, RDMA_CONN_DISCONNECTED);
    }
    else if (type == RDMA_CM_EVENT_DEVICE_REMOVAL)
    {
      GError *e = NULL;
      rdma_status_set_error (&e, RDMA_ERR_NO_DEVICE, "rdma_get_cm_event", 0, -1,
                             "the RDMA device was removed");
      rdma_conn_fail (conn, e);
      g_error_free (e);
    }
  }
  if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
  {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_SYSTEM, "rdma_get_cm_event", err, -1, NULL);
    return -1;
  }
  return n;
}

/* A reject that names its reason (RdmaWireRefusal, a server's admission): acks @ev and sets
 * @error saying why.  FALSE if the reject carries no reason. */
static gboolean
reject_refused (struct rdma_cm_event *ev, const gchar *what, GError **error)
{
  guint16 code = rdma_wire_refusal_parse (ev->param.conn.private_data,
                                          ev->param.conn.private_data_len);

  if (code == RDMA_WIRE_REFUSE_NONE)
    return FALSE;
  rdma_verbs->ack_cm_event (ev);
  /* not rdma_status_set_error: its text for REFUSED ("is a server listening?") would
   * mislead, the server did answer */
  g_set_error (error, RDMA_ENGINE_ERROR, RDMA_ERR_REFUSED,
               "rdma_connect: %s: the server refused the connection: %s (refusal code %u)", what,
               rdma_wire_refusal_describe (code), code);
  return TRUE;
}

/* Waits for one CM event on the connection's channel during set-up.  Returns it (the caller
 * acks it) if it is @expected; any other outcome is an error that names the cause. */
static struct rdma_cm_event *
wait_cm_event (RdmaConn *conn, enum rdma_cm_event_type expected, const gchar *what,
               gint64 deadline_us, GError **error)
{
  for (;;)
  {
    struct rdma_cm_event *ev = NULL;
    struct pollfd pfd = { .fd = conn->cm_channel->fd, .events = POLLIN };
    gint64 left = deadline_us - g_get_monotonic_time ();
    int r;

    if (rdma_verbs->get_cm_event (conn->cm_channel, &ev) == 0)
    {
      if (ev->event == expected)
        return ev;
      {
        enum rdma_cm_event_type type = ev->event;
        int status = ev->status;
        RdmaStatus st;
        const gchar *hint = "";
        RdmaWireHello peer;
        GError *ignored = NULL;

        switch (type)
        {
        case RDMA_CM_EVENT_ADDR_ERROR:
        case RDMA_CM_EVENT_ROUTE_ERROR:
          st = RDMA_ERR_RESOLVE;
          break;
        case RDMA_CM_EVENT_REJECTED:
          if (reject_refused (ev, what, error))
            return NULL;
          if (ev->param.conn.private_data != NULL
              && !rdma_wire_hello_parse (ev->param.conn.private_data,
                                         ev->param.conn.private_data_len, &peer, &ignored)
              && peer.magic == RDMA_WIRE_HELLO_MAGIC)
          {
            rdma_verbs->ack_cm_event (ev);
            rdma_status_set_error (error, RDMA_ERR_VERSION, "rdma_connect", 0, -1,
                                   "%s: the server refused the connection: %s", what,
                                   ignored->message);
            g_error_free (ignored);
            return NULL;
          }
          g_clear_error (&ignored);
          st = RDMA_ERR_REFUSED;
          hint = " (no listener on that port, or the server refused the connection)";
          break;
        case RDMA_CM_EVENT_UNREACHABLE:
        case RDMA_CM_EVENT_CONNECT_ERROR:
          st = RDMA_ERR_UNREACHABLE;
          break;
        case RDMA_CM_EVENT_DISCONNECTED:
          st = RDMA_ERR_PEER_GONE;
          break;
        default:
          st = RDMA_ERR_PROTOCOL;
          break;
        }
        rdma_verbs->ack_cm_event (ev);
        rdma_status_set_error (error, st, "rdma_get_cm_event", status < 0 ? -status : 0, -1,
                               "%s: got %s (status %d) instead of %s%s", what,
                               rdma_event_str (type), status, rdma_event_str (expected), hint);
        return NULL;
      }
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    {
      int err = errno;
      rdma_status_set_error (error, RDMA_ERR_SYSTEM, "rdma_get_cm_event", err, -1, "%s", what);
      return NULL;
    }
    if (left <= 0)
    {
      rdma_status_set_error (error, RDMA_ERR_TIMED_OUT, NULL, 0, -1,
                             "%s: no %s within the connect timeout", what,
                             rdma_event_str (expected));
      return NULL;
    }
    r = poll (&pfd, 1, (int) ((left + 999) / 1000));
    if (r < 0 && errno != EINTR)
    {
      int err = errno;
      rdma_status_set_error (error, RDMA_ERR_SYSTEM, "poll", err, -1, "%s", what);
      return NULL;
    }
  }
}

/* The device reported our QP failed (rdma_domain.h, on its event thread): a zero-byte WRITE
 * posted to a QP in the error state completes flushed, which wakes and fails the connection
 * as a flushed receive of its own would have. */
static void
qp_failed (gpointer data, enum ibv_event_type what)
{
  RdmaConn *conn = data;
  struct ibv_send_wr wr = {
    .wr_id = rdma_op_wr_id (&conn->fatal_op),
    .opcode = IBV_WR_RDMA_WRITE,
    .send_flags = IBV_SEND_SIGNALED,
  };
  struct ibv_send_wr *bad = NULL;

  /* the first says why (QP_LAST_WQE_REACHED follows any failure of an SRQ's QP) */
  (void) g_atomic_int_compare_and_exchange (&conn->device_event, 0, (gint) what + 1);
  /* an idle connection may wait for solicited events only, which a flush is not */
  (void) rdma_verbs->req_notify_cq (conn->poller.cq, 0);
  if (rdma_verbs->post_send (conn->id->qp, &wr, &bad) != 0)
    g_debug ("ThriftRdma: the failed QP takes no notice: %s", g_strerror (errno));
}

/* The verbs resources of a connection whose id has a device: PD, CQ with its channel, QP,
 * the two slot pools, the posted receives and each protocol's own set-up.  Fills @hello. */
static gboolean
setup_resources (RdmaConn *conn, RdmaWireHello *hello, GError **error)
{
  guint32 n_recv = conn->settings.credits + RDMA_CREDIT_CONTROL_SLOTS;
  guint32 n_send = conn->settings.credits + RDMA_CREDIT_CONTROL_SLOTS;
  guint32 *slots;
  gboolean ok;

  /* the device's, shared with the process's other connections (rdma_domain.h) */
  conn->pd = rdma_domain_acquire (conn->id->verbs, error);
  if (conn->pd == NULL)
    return FALSE;
  conn->sq_depth = n_send + RDMA_SQ_EXTRA;
  if (!rdma_res_cq_create (conn->id->verbs, (gint) (n_recv + conn->sq_depth),
                           &conn->poller.comp_channel, &conn->poller.cq, error))
    return FALSE;
  /* receive slots: the device's shared queue (rdma_srq.h), else a pool of our own */
  conn->srq = rdma_domain_srq (conn->pd, conn->settings.slot_size, conn->settings.numa_node);
  if (!rdma_res_qp_create (conn->id, conn->pd, conn->poller.cq,
                           conn->srq != NULL ? rdma_srq_verbs (conn->srq) : NULL, conn->sq_depth,
                           n_recv, error))
    return FALSE;
  if (conn->srq != NULL)
    rdma_domain_watch (conn->pd, conn->id->qp, qp_failed, conn);
  conn->send_ops = g_new0 (RdmaOp, n_send);
  if (!rdma_pool_init (&conn->send_pool, conn->pd, n_send, RDMA_SEND_SLOT_SIZE, 0,
                       conn->settings.numa_node, error))
    return FALSE;
  if (conn->srq == NULL)
  {
    conn->recv_ops = g_new0 (RdmaOp, n_recv);
    if (!rdma_pool_init (&conn->recv_pool, conn->pd, n_recv, conn->settings.slot_size,
                         IBV_ACCESS_LOCAL_WRITE, conn->settings.numa_node, error))
      return FALSE;
    slots = g_new (guint32, n_recv);
    for (guint32 i = 0; i < n_recv; i++)
      slots[i] = i;
    conn->recv_pool.n_free = 0; /* all posted */
    ok = rdma_conn_post_recv_list (conn, slots, n_recv, error);
    g_free (slots);
    if (!ok)
      return FALSE;
  }
  conn->stats.pinned_bytes = conn->recv_pool.len + conn->send_pool.len;

  rdma_wire_hello_init (hello, conn->settings.wire_version);
  hello->credits = GUINT32_TO_LE (conn->settings.credits);
  hello->slot_size = GUINT32_TO_LE (conn->settings.slot_size);
  hello->max_message = GUINT32_TO_LE (conn->settings.max_message);
  /* always Eager-SendRecv: every peer must be able to fall back to it */
  conn->settings.rx_protocols |= 1u << RDMA_PROTO_EAGER;
  conn->settings.rx_protocols &= rdma_proto_implemented ();
  hello->protocols = GUINT16_TO_LE (conn->settings.rx_protocols);
  hello->flags = GUINT32_TO_LE (RDMA_WIRE_HELLO_SOLICITED | RDMA_WIRE_HELLO_RFP_NOTIFY
                                | RDMA_WIRE_HELLO_RING_GROW);
  return TRUE;
}

/* The client's connection request: @req's hello (setup_resources made it), then the pairing
 * token if the settings have one.  Returns the length of the private data to send. */
static guint8
request_finish (RdmaConn *conn, RdmaWireRequest *req)
{
  static const guint8 none[RDMA_WIRE_PAIR_TOKEN_LEN];

  memcpy (req->pair_token, conn->settings.pair_token, sizeof req->pair_token);
  /* without a token, the hello alone: what a peer from before pairing sends and expects */
  return memcmp (req->pair_token, none, sizeof none) == 0 ? sizeof req->hello : sizeof *req;
}

static gboolean take_peer_hello (RdmaConn *conn, const void *data, gsize len, GError **error);

/* The server's side of a connection request's private data: the hello and the token. */
static gboolean
take_request (RdmaConn *conn, const void *data, gsize len, GError **error)
{
  conn->has_peer_pair_token = rdma_wire_pair_token_parse (data, len, conn->peer_pair_token);
  return take_peer_hello (conn, data, len, error);
}

static gboolean
take_peer_hello (RdmaConn *conn, const void *data, gsize len, GError **error)
{
  if (!rdma_wire_hello_parse (data, len, &conn->peer, error))
    return FALSE;
  if (conn->peer.slot_size != conn->settings.slot_size)
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "handshake", 0, -1,
                           "the peer uses %u-byte slots, this side %u", conn->peer.slot_size,
                           conn->settings.slot_size);
    return FALSE;
  }
  if ((conn->peer.protocols & (1u << RDMA_PROTO_EAGER)) == 0)
  {
    rdma_status_set_error (error, RDMA_ERR_VERSION, "handshake", 0, -1,
                           "the peer does not receive Eager-SendRecv messages");
    return FALSE;
  }
  rdma_credit_init (&conn->credits, conn->settings.credits, conn->peer.credits);
  for (guint i = 0; i < RDMA_PROTO_COUNT; i++)
  {
    const RdmaProtoOps *ops = rdma_proto_registry[i];
    if (ops != NULL && ops->setup != NULL && !ops->setup (conn, error))
      return FALSE;
  }
  return TRUE;
}

/* Our QPs' ACK timeout: 4.096 us * 2^17 = 0.54 s per try, so retries fail within seconds
 * when the peer vanished, which is what the keepalive relies on (rdma_keepalive.h).  Older
 * kernels lack the option: their default timeout applies then. */
#define RDMA_ACK_TIMEOUT 17

/* The RNR NAK timer our QPs answer with when no receive is posted for a SEND (the shared
 * receive queue short for a moment, rdma_srq.h: its refill is on the way): 12 = 0.64 ms (IB
 * encoding).  The CM leaves it at 0 (ibv_query_qp after connect and accept, in the guest),
 * which means 655 ms: a sender would wait that long for a refill that takes microseconds. */
#define RDMA_MIN_RNR_TIMER 12

/* Once the QP is in RTS (the CM moved it there). */
static void
set_rnr_timer (RdmaConn *conn)
{
  static gsize said;
  struct ibv_qp_attr attr = { .min_rnr_timer = RDMA_MIN_RNR_TIMER };
  int rc;

  if (conn->id == NULL || conn->id->qp == NULL)
    return;
  rc = rdma_verbs->modify_qp (conn->id->qp, &attr, IBV_QP_MIN_RNR_TIMER);
  if (rc != 0 && g_once_init_enter (&said))
  {
    g_message ("ThriftRdma: the RNR NAK timer cannot be set (ibv_modify_qp: %s): a receive "
               "queue short for a moment costs its sender the device's timer",
               g_strerror (rc));
    g_once_init_leave (&said, 1);
  }
}

/* The connection is up: in RTS, its helpers started. */
static void
connected (RdmaConn *conn)
{
  set_rnr_timer (conn);
  set_state (conn, RDMA_CONN_CONNECTED);
  rdma_helpers_connected (conn, g_get_monotonic_time ());
}

static void
set_ack_timeout (RdmaConn *conn)
{
  guint8 timeout = RDMA_ACK_TIMEOUT;

  if (rdma_set_option (conn->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout,
                       sizeof timeout)
      != 0)
    g_debug ("RdmaConn: rdma_set_option (ACK_TIMEOUT): %s", g_strerror (errno));
}

static struct rdma_addrinfo *
resolve (const gchar *host, guint port, gboolean passive, GError **error)
{
  struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
  struct rdma_addrinfo *res = NULL;
  gchar service[16];
  int rc;

  if (passive)
    hints.ai_flags = RAI_PASSIVE;
  g_snprintf (service, sizeof service, "%u", port);
  rc = rdma_getaddrinfo (host, port ? service : NULL, &hints, &res);
  if (rc != 0 || res == NULL || (res->ai_dst_addr == NULL && !passive))
  {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_RESOLVE, "rdma_getaddrinfo", rc == 0 ? 0 : err, -1,
                           "cannot resolve '%s' port %u", host ? host : "(any)", port);
    if (res != NULL)
      rdma_freeaddrinfo (res);
    return NULL;
  }
  return res;
}

/* READs one side may have outstanding at the other (pipelined rendezvous and bulk READs):
 * RDMA_RD_ATOMIC_DEPTH, or less if the device takes fewer.  Both sides ask the same of
 * their devices, so the numbers agree whenever the devices allow it. */
#define RDMA_RD_ATOMIC_DEPTH 4u
static guint
rd_atomic_depth (struct ibv_context *verbs)
{
  struct ibv_device_attr attr;

  if (verbs == NULL || ibv_query_device (verbs, &attr) != 0)
    return 1;
  return MAX (
      1u, MIN (RDMA_RD_ATOMIC_DEPTH, (guint) MIN (attr.max_qp_rd_atom, attr.max_qp_init_rd_atom)));
}

RdmaConn *
rdma_conn_connect (const gchar *host, guint port, const gchar *source,
                   const RdmaConnSettings *settings, gint64 deadline_us, GError **error)
{
  RdmaConn *conn = conn_new (settings, TRUE);
  struct rdma_addrinfo *dst = NULL, *src = NULL;
  struct rdma_cm_event *ev;
  struct rdma_conn_param param = { 0 };
  RdmaWireRequest request;
  gchar *what = g_strdup_printf ("connecting to %s:%u", host, port);
  int rc, timeout_ms;

  conn->cm_channel = rdma_res_channel_create (error);
  if (conn->cm_channel == NULL)
    goto fail;
  conn->poller.cm_fd = conn->cm_channel->fd;
  conn->id = rdma_res_id_create (conn->cm_channel, conn, error);
  if (conn->id == NULL)
    goto fail;
  set_state (conn, RDMA_CONN_RESOLVING);

  dst = resolve (host, port, FALSE, error);
  if (dst == NULL)
    goto fail;
  if (source != NULL && (src = resolve (source, 0, TRUE, error)) == NULL)
    goto fail;
  timeout_ms = (int) CLAMP ((deadline_us - g_get_monotonic_time ()) / 1000, 1, 60000);
  if (rdma_resolve_addr (conn->id, src ? src->ai_src_addr : NULL, dst->ai_dst_addr, timeout_ms)
      != 0)
  {
    int err = errno;
    rdma_status_set_error (error, err == ENODEV ? RDMA_ERR_NO_DEVICE : RDMA_ERR_RESOLVE,
                           "rdma_resolve_addr", err, -1, "%s", what);
    goto fail;
  }
  if ((ev = wait_cm_event (conn, RDMA_CM_EVENT_ADDR_RESOLVED, what, deadline_us, error)) == NULL)
    goto fail;
  rdma_verbs->ack_cm_event (ev);
  timeout_ms = (int) CLAMP ((deadline_us - g_get_monotonic_time ()) / 1000, 1, 60000);
  if (rdma_resolve_route (conn->id, timeout_ms) != 0)
  {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_RESOLVE, "rdma_resolve_route", err, -1, "%s", what);
    goto fail;
  }
  if ((ev = wait_cm_event (conn, RDMA_CM_EVENT_ROUTE_RESOLVED, what, deadline_us, error)) == NULL)
    goto fail;
  rdma_verbs->ack_cm_event (ev);

  if (!setup_resources (conn, &request.hello, error))
    goto fail;
  set_ack_timeout (conn);
  set_state (conn, RDMA_CONN_CONNECTING);
  param.private_data = &request;
  param.private_data_len = request_finish (conn, &request);
  conn->max_rd_atomic = rd_atomic_depth (conn->id->verbs);
  param.responder_resources = (guint8) conn->max_rd_atomic;
  param.initiator_depth = (guint8) conn->max_rd_atomic;
  param.retry_count = 7;
  param.rnr_retry_count = RDMA_RNR_RETRY_INFINITE;
  rc = rdma_connect (conn->id, &param);
  if (rc != 0)
  {
    int err = errno;
    rdma_status_set_error (error, rdma_status_from_errno (err), "rdma_connect", err, -1, "%s",
                           what);
    goto fail;
  }
  if ((ev = wait_cm_event (conn, RDMA_CM_EVENT_ESTABLISHED, what, deadline_us, error)) == NULL)
    goto fail;
  {
    gboolean ok = take_peer_hello (conn, ev->param.conn.private_data,
                                   ev->param.conn.private_data_len, error);
    rdma_verbs->ack_cm_event (ev);
    if (!ok)
      goto fail;
  }
  connected (conn);
  if (src)
    rdma_freeaddrinfo (src);
  rdma_freeaddrinfo (dst);
  g_free (what);
  return conn;

fail:
  if (src)
    rdma_freeaddrinfo (src);
  if (dst)
    rdma_freeaddrinfo (dst);
  g_free (what);
  rdma_conn_free (conn);
  return NULL;
}

RdmaConn *
rdma_conn_accept_start (struct rdma_cm_id *id, const void *private_data, gsize len,
                        const RdmaConnSettings *settings, GError **error)
{
  RdmaConn *conn = conn_new (settings, FALSE);
  struct rdma_conn_param param = { 0 };
  RdmaWireHello hello;

  conn->id = id;
  rdma_res_id_adopt (id);
  id->context = conn;
  set_state (conn, RDMA_CONN_ACCEPTING);
  if (!setup_resources (conn, &hello, error))
    goto reject;
  if (!take_request (conn, private_data, len, error))
    goto reject;
  set_ack_timeout (conn);
  param.private_data = &hello;
  param.private_data_len = sizeof hello;
  conn->max_rd_atomic = rd_atomic_depth (conn->id->verbs);
  param.responder_resources = (guint8) conn->max_rd_atomic;
  param.initiator_depth = (guint8) conn->max_rd_atomic;
  param.rnr_retry_count = RDMA_RNR_RETRY_INFINITE;
  if (rdma_accept (id, &param) != 0)
  {
    int err = errno;
    rdma_status_set_error (error, rdma_status_from_errno (err), "rdma_accept", err, -1, NULL);
    goto fail;
  }
  return conn;

reject:
  /* Tell the client why: our hello carries our version. */
  rdma_wire_hello_init (&hello, conn->settings.wire_version);
  rdma_reject (id, &hello, sizeof hello);
fail:
  rdma_conn_free (conn);
  return NULL;
}

/* The connection's own CM event channel, which its id's events move to. */
static gboolean
own_cm_channel (RdmaConn *conn, GError **error)
{
  conn->cm_channel = rdma_res_channel_create (error);
  if (conn->cm_channel == NULL)
    return FALSE;
  conn->poller.cm_fd = conn->cm_channel->fd;
  if (rdma_verbs->migrate_id (conn->id, conn->cm_channel) != 0)
  {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_SYSTEM, "rdma_migrate_id", err, -1, NULL);
    return FALSE;
  }
  return TRUE;
}

gboolean
rdma_conn_accept_finish (RdmaConn *conn, GError **error)
{
  if (!own_cm_channel (conn, error))
    return FALSE;
  connected (conn);
  return TRUE;
}

gboolean
rdma_conn_pair (struct rdma_cm_id *client_id, struct rdma_cm_id *server_id,
                const RdmaConnSettings *client_settings, const RdmaConnSettings *server_settings,
                RdmaConn **client, RdmaConn **server, GError **error)
{
  RdmaConn *c = conn_new (client_settings, TRUE), *s = conn_new (server_settings, FALSE);
  RdmaWireRequest c_req;
  RdmaWireHello s_hello;
  gboolean ok;

  *client = *server = NULL;
  c->id = client_id;
  s->id = server_id;
  rdma_res_id_adopt (client_id);
  rdma_res_id_adopt (server_id);
  client_id->context = c;
  server_id->context = s;
  /* as rdma_conn_connect once the route is resolved, and rdma_conn_accept_start on the
   * connection request; the server's hello comes back as the client's ESTABLISHED would */
  set_state (c, RDMA_CONN_RESOLVING);
  set_state (s, RDMA_CONN_ACCEPTING);
  ok = setup_resources (c, &c_req.hello, error);
  if (ok)
  {
    guint8 c_len = request_finish (c, &c_req);

    set_state (c, RDMA_CONN_CONNECTING);
    ok = setup_resources (s, &s_hello, error) && take_request (s, &c_req, c_len, error)
         && take_peer_hello (c, &s_hello, sizeof s_hello, error) && own_cm_channel (c, error)
         && own_cm_channel (s, error);
  }
  if (!ok)
  {
    rdma_conn_free (c);
    rdma_conn_free (s);
    return FALSE;
  }
  connected (c);
  connected (s);
  *client = c;
  *server = s;
  return TRUE;
}

/* Receives completed into the shared queue's slots and not yet polled go back to it: the
 * QP no longer receives (disconnected), and a destroyed QP's completions are dropped. */
static void
give_back_receives (RdmaConn *conn)
{
  struct ibv_wc wc[16];
  gint n;

  if (conn->srq == NULL || conn->poller.cq == NULL)
    return;
  while ((n = rdma_verbs->poll_cq (conn->poller.cq, G_N_ELEMENTS (wc), wc)) > 0)
    for (gint i = 0; i < n; i++)
    {
      RdmaOp *op = rdma_op_from_wr_id (wc[i].wr_id);

      if (op->kind == RDMA_OP_RECV && op->data == conn->srq)
      {
        rdma_srq_taken (conn->srq);
        rdma_conn_drop_slot (conn, (guint32) op->slot);
      }
    }
}

void
rdma_conn_free (RdmaConn *conn)
{
  RdmaMessage *msg;

  if (conn == NULL)
    return;
  /* before anything it watches goes */
  rdma_conn_block_forget (conn);
  if (conn->state == RDMA_CONN_CONNECTED)
  {
    gint64 deadline = g_get_monotonic_time () + RDMA_CLOSE_FLUSH_US;
    for (guint i = 0; i < RDMA_PROTO_COUNT; i++)
    {
      const RdmaProtoOps *ops = rdma_proto_registry[i];
      if (ops != NULL && ops->flush != NULL)
        ops->flush (conn, TRUE, deadline, NULL);
    }
    /* What was sent goes out before the disconnect, as close (2) delivers a socket's queued
     * bytes: control messages still held (a bulk DONE among them) and the WRs in flight,
     * which rdma_disconnect would flush unsent (a peer waiting for that DONE then saw us
     * vanish: test_bulk_faults, once in 20 runs). */
    conn->closing = TRUE;
    rdma_conn_flush_sent (conn, deadline);
  }
  if (conn->id != NULL
      && (conn->state == RDMA_CONN_CONNECTED || conn->state == RDMA_CONN_DISCONNECTED
          || conn->state == RDMA_CONN_FAILED))
    rdma_verbs->disconnect (conn->id);
  while ((msg = g_queue_pop_head (&conn->received)) != NULL)
  {
    if (msg->owner == RDMA_MSG_ON_HEAP)
      g_free (msg->data);
    else if (msg->owner == RDMA_MSG_IN_SLOT)
      rdma_conn_drop_slot (conn, (guint32) msg->slot);
    g_free (msg);
  }
  give_back_receives (conn);
  /* the windows first (a QP a type-2 window is bound to is held by it), then the QP: no WR
   * can touch protocol memory once it is deregistered */
  rdma_window_revoke_all (conn);
  if (conn->srq != NULL && conn->id != NULL && conn->id->qp != NULL)
    rdma_domain_unwatch (conn->pd, conn->id->qp);
  rdma_res_qp_destroy (conn->id);
  for (guint i = 0; i < RDMA_PROTO_COUNT; i++)
  {
    const RdmaProtoOps *ops = rdma_proto_registry[i];
    if (ops != NULL && ops->teardown != NULL)
      ops->teardown (conn);
  }
  rdma_helpers_free (conn);
  rdma_window_clear (conn);
  rdma_tx_clear (&conn->tx[0], &conn->stats.pinned_bytes);
  rdma_tx_clear (&conn->tx[1], &conn->stats.pinned_bytes);
  g_queue_clear_full (&conn->control_out, g_free);
  g_clear_pointer (&conn->recv_ops, g_free);
  g_clear_pointer (&conn->send_ops, g_free);
  g_ptr_array_unref (conn->op_blocks);
  rdma_pool_clear (&conn->send_pool);
  rdma_pool_clear (&conn->recv_pool);
  rdma_res_cq_destroy (&conn->poller.cq, &conn->poller.comp_channel, &conn->poller.unacked_events);
  rdma_domain_release (&conn->pd);
  rdma_res_id_destroy (&conn->id);
  rdma_res_channel_destroy (&conn->cm_channel);
  conn->state = RDMA_CONN_CLOSED;
  g_array_unref (conn->held_slots);
  g_clear_error (&conn->failure);
  g_free (conn);
}
