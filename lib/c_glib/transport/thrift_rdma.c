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
 * thrift_rdma.c: ThriftRdma, the GObject shell over one RdmaConn (see thrift_rdma.h).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <thrift/c_glib/thrift_configuration.h>
#include <thrift/c_glib/transport/thrift_hints.h>
#include <thrift/c_glib/transport/thrift_idle_watch.h>
#include <thrift/c_glib/transport/thrift_interruptible.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_rdma_explain.h>

#include "rdma/rdma_budget.h"
#include "rdma/rdma_bulk_msg.h"
#include "rdma/rdma_call_policy.h"
#include "rdma/rdma_conn.h"
#include "rdma/rdma_device.h"
#include "rdma/rdma_gobject.h"
#include "rdma/rdma_keepalive.h"
#include "rdma/rdma_machine.h"
#include "rdma/rdma_numa.h"
#include "rdma/rdma_signal.h"
#include "rdma/rdma_status.h"
#include "rdma/rdma_transport.h"

enum
{
  PROP_0,
  PROP_HOSTNAME,
  PROP_PORT,
  PROP_CONFIGURATION, /* these three consecutive: rdma_size_props_* */
  PROP_REMAINING_MESSAGE_SIZE,
  PROP_KNOW_MESSAGE_SIZE,
  PROP_HINTS,
  PROP_POLLING,
  PROP_CONNECT_TIMEOUT,
  PROP_CALL_TIMEOUT,
  PROP_SOURCE_ADDRESS,
  PROP_IDLE_TIMEOUT,
  PROP_KEEPALIVE,
  PROP_PAIR_TOKEN,
  PROP_NUMA_NODE,
  PROP_MAX_PINNED_BYTES,
  PROP_BULK_THRESHOLD /* RDMA_BULK_PROPS_N from here: rdma_bulk_props_* */
};

typedef struct
{
  gchar *hostname; /* (owned) */
  guint port;
  gchar *source_address; /* (owned) (nullable) */
  GBytes *pair_token;    /* (owned) (nullable): "pair-token" */
  guint connect_timeout_ms;
  guint call_timeout_ms;
  guint idle_timeout_ms;
  guint keepalive_ms;
  guint64 max_pinned_bytes; /* asked of the process's budget at open (0: default) */
  RdmaCallPolicy policy;    /* the hints, polling, numa-node and bulk-* properties,
                                         and what they decide for each message */
  gint64 idle_deadline_us;  /* idle in a server's poll set until then (0: not idle) */

  RdmaConn *conn;              /* (owned) (nullable): NULL while closed */
  gsize wlen;                  /* bytes of the message being written (0: none yet) */
  RdmaBulkWriter writer;       /* the message being written: its lent fields */
  RdmaBulkReader reader;       /* the head received message, being read */
  gboolean reading;            /* the head message is being read */
  ThriftRdmaPolling last_wait; /* the mode of the last wait */
  const gchar *proto_name;     /* (unowned): a protocol's static name */
  ThriftRdmaStats saved;       /* counters of the last closed connection */
  gint last_status;            /* (atomic) ThriftRdmaStatus of the last failure */

  /* thrift_rdma_interrupt: the flag (atomic) and an eventfd the blocking poll watches; both
   * live as long as the object, so an interrupt never races with a connection's close */
  gint interrupted;
  int wake_fd;
} ThriftRdmaPrivate;

static void thrift_rdma_hint_receiver_init (ThriftHintReceiverInterface *iface);
static void thrift_rdma_idle_watch_init (ThriftIdleWatchInterface *iface);
static void thrift_rdma_interruptible_init (ThriftInterruptibleInterface *iface);

G_DEFINE_TYPE_WITH_CODE (
    ThriftRdma, thrift_rdma, THRIFT_TYPE_TRANSPORT,
    G_ADD_PRIVATE (ThriftRdma)
        G_IMPLEMENT_INTERFACE (THRIFT_TYPE_HINT_RECEIVER, thrift_rdma_hint_receiver_init)
            G_IMPLEMENT_INTERFACE (THRIFT_TYPE_IDLE_WATCH, thrift_rdma_idle_watch_init)
                G_IMPLEMENT_INTERFACE (THRIFT_TYPE_INTERRUPTIBLE, thrift_rdma_interruptible_init))

/* Unchecked: every caller is one of the class's own vfuncs, or a public function that
 * checked the type first; a checked cast per call is a measurable share of a small RPC
 * (Thrift reads and writes a message field by field). */
#define PRIV(obj) ((ThriftRdmaPrivate *) thrift_rdma_get_instance_private ((ThriftRdma *) (obj)))

GType
thrift_rdma_polling_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    { THRIFT_RDMA_POLLING_BUSY, "THRIFT_RDMA_POLLING_BUSY", "busy" },
    { THRIFT_RDMA_POLLING_EVENT, "THRIFT_RDMA_POLLING_EVENT", "event" },
    { THRIFT_RDMA_POLLING_HYBRID, "THRIFT_RDMA_POLLING_HYBRID", "hybrid" },
    { 0, NULL, NULL }
  };
  if (g_once_init_enter (&type))
  {
    GType t = g_enum_register_static ("ThriftRdmaPolling", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

static gint64
deadline_after (guint ms)
{
  return ms == 0 ? 0 : g_get_monotonic_time () + (gint64) ms * 1000;
}

/* A server-side connection waiting for the start of its next request waits by the idle
 * timeout; every other wait is part of a call. */
static gint64
wait_deadline (ThriftRdmaPrivate *priv, gboolean next_message)
{
  if (next_message && priv->conn != NULL && !rdma_conn_is_client (priv->conn))
    return deadline_after (priv->idle_timeout_ms);
  return deadline_after (priv->call_timeout_ms);
}

static guint32
max_message_of (ThriftConfiguration *configuration)
{
  if (configuration != NULL && configuration->maxMessageSize_ > 0)
    return (guint32) configuration->maxMessageSize_;
  return DEFAULT_MAX_MESSAGE_SIZE;
}

void
thrift_rdma_settings_for (ThriftConfiguration *configuration, ThriftRdmaPolling polling,
                          RdmaConnSettings *out)
{
  /* the engine carries the framing too (rdma_bulk_msg.h); the reader checks the message
   * Thrift wrote against the configuration's size */
  rdma_conn_settings_init (out, max_message_of (configuration) + RDMA_BULK_FRAMING_MAX, polling);
}

static void
not_open (GError **error)
{
  rdma_status_set_error (error, RDMA_ERR_NOT_OPEN, NULL, 0, -1, "ThriftRdma");
}

static gboolean
interrupted (ThriftRdmaPrivate *priv, GError **error)
{
  if (!g_atomic_int_get (&priv->interrupted))
    return FALSE;
  rdma_status_set_error (error, RDMA_ERR_INTERRUPTED, NULL, 0, -1,
                         "ThriftRdma: thrift_rdma_interrupt was called");
  return TRUE;
}

/* The way out of every call: @e (taken) leaves the engine as a THRIFT_TRANSPORT_ERROR and its
 * status stays behind (thrift_rdma_get_last_status).  Returns FALSE. */
static gboolean
fail (ThriftRdmaPrivate *priv, GError *e, GError **error)
{
  rdma_bulk_writer_forget (&priv->writer, priv->conn);
  g_atomic_int_set (&priv->last_status, rdma_error_to_thrift (&e));
  if (e != NULL)
    g_propagate_error (error, e);
  return FALSE;
}

/* A cause that peek reports as FALSE, not as an error: only its status stays behind. */
static gboolean
peek_ended (ThriftRdmaPrivate *priv, GError *e)
{
  g_atomic_int_set (&priv->last_status, rdma_error_to_thrift (&e));
  g_error_free (e);
  return FALSE;
}

/* Lets @conn's waits see the interrupt (rdma_poll.c). */
static void
attach_wake (ThriftRdmaPrivate *priv, RdmaConn *conn)
{
  rdma_conn_set_wake (conn, priv->wake_fd, &priv->interrupted);
}

/* Whether bytes of the message being read are left to read. */
static inline gboolean
unread_rest (ThriftRdmaPrivate *priv)
{
  return priv->reading && priv->conn != NULL && priv->reader.left > 0;
}

/* Gives the message being read back (its slot to the peer, its lent fields to the lender). */
static gboolean
release_current (ThriftRdmaPrivate *priv, GError **error)
{
  gboolean ok = TRUE;

  if (priv->conn != NULL && priv->reading)
  {
    ok = rdma_bulk_reader_finish (&priv->reader, priv->conn, error);
    ok = rdma_conn_release_message (priv->conn, ok ? error : NULL) && ok;
    if (ok)
      rdma_bulk_writer_call_over (&priv->writer, priv->conn); /* the reply is read */
  }
  priv->reading = FALSE;
  return ok;
}

/* A wait that failed in the middle of a call (call timeout, a signal, an interrupt) leaves
 * a message that may still arrive: fail the connection, as a socket transport would be after
 * its read failed, so a late reply can never answer a later call. */
static void
fail_call (ThriftRdmaPrivate *priv, const GError *cause)
{
  GError *e;

  if (priv->conn == NULL || rdma_conn_get_state (priv->conn) != RDMA_CONN_CONNECTED
      || cause == NULL)
    return;
  e = g_error_new (cause->domain, cause->code,
                   "%s; the connection was closed, so that a late reply cannot answer a later "
                   "call: close and open the transport again",
                   cause->message);
  rdma_conn_fail (priv->conn, e);
  g_error_free (e);
}

/* implements thrift_transport_is_open */
static gboolean
thrift_rdma_is_open (ThriftTransport *transport)
{
  ThriftRdmaPrivate *priv = PRIV (transport);
  return priv->conn != NULL
         && (rdma_conn_get_state (priv->conn) == RDMA_CONN_CONNECTED
             || rdma_conn_head_message (priv->conn) != NULL);
}

/* The "pair-token" into @settings: FALSE with @error if it cannot be sent. */
static gboolean
take_pair_token (ThriftRdmaPrivate *priv, RdmaConnSettings *settings, GError **error)
{
  static const guint8 none[THRIFT_RDMA_PAIR_TOKEN_LEN];
  gsize len;
  const guint8 *t;

  if (priv->pair_token == NULL)
    return TRUE;
  t = g_bytes_get_data (priv->pair_token, &len);
  if (len != THRIFT_RDMA_PAIR_TOKEN_LEN || memcmp (t, none, len) == 0)
  {
    /* all zero is how the wire says "no token": it could never pair */
    g_set_error (
        error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET,
        "ThriftRdma: the pair-token must be %d bytes, not all zero (it has %" G_GSIZE_FORMAT
        " bytes%s)",
        THRIFT_RDMA_PAIR_TOKEN_LEN, len, len == THRIFT_RDMA_PAIR_TOKEN_LEN ? ", all zero" : "");
    return FALSE;
  }
  memcpy (settings->pair_token, t, len);
  return TRUE;
}

void
thrift_rdma_settings_of (ThriftRdma *self, RdmaConnSettings *out)
{
  ThriftRdmaPrivate *priv = PRIV (self);

  thrift_rdma_settings_for (THRIFT_TRANSPORT (self)->configuration, priv->policy.effective, out);
  out->keepalive_ms = priv->keepalive_ms;
  rdma_bulk_props_to_settings (&priv->policy.bulk, out);
}

/* implements thrift_transport_open */
static gboolean
thrift_rdma_open (ThriftTransport *transport, GError **error)
{
  ThriftRdmaPrivate *priv = PRIV (transport);
  RdmaConnSettings settings;
  const RdmaMachine *machine = rdma_machine_get ();
  GError *e = NULL;

  if (priv->conn != NULL)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET,
                 "ThriftRdma to %s:%u is already open", priv->hostname, priv->port);
    return FALSE;
  }
  /* what the caller set wrong, before anything is tried */
  rdma_call_policy_use (&priv->policy, NULL, NULL);
  thrift_rdma_settings_of (THRIFT_RDMA (transport), &settings);
  if (!take_pair_token (priv, &settings, error))
    return FALSE;
  if (!rdma_numa_check_property (priv->policy.numa_node, machine, "ThriftRdma", &e))
    return fail (priv, e, error);
  if (rdma_device_probe (&e) == 0)
    return fail (priv, e, error);
  rdma_budget_request (priv->max_pinned_bytes, "ThriftRdma");
  /* the buffers are mapped at connect: the service's set (the "hints" property) or the
   * property places them; a function's set comes too late for them (plan_numa) */
  settings.numa_node = rdma_call_policy_buffer_node (priv->policy.hints, priv->policy.numa_node);
  rdma_numa_warn_ignored (priv->policy.hints, machine);
  priv->conn = rdma_conn_connect (priv->hostname, priv->port, priv->source_address, &settings,
                                  deadline_after (priv->connect_timeout_ms), &e);
  if (priv->conn == NULL)
    return fail (priv, e, error);
  g_atomic_int_set (&priv->last_status, THRIFT_RDMA_STATUS_OK);
  attach_wake (priv, priv->conn);
  rdma_signal_snapshot ();
  rdma_call_policy_connected (&priv->policy, priv->conn, settings.numa_node);
  priv->reading = FALSE;
  priv->wlen = 0;
  return TRUE;
}

/* implements thrift_transport_close */
static gboolean
thrift_rdma_close (ThriftTransport *transport, GError **error)
{
  ThriftRdmaPrivate *priv = PRIV (transport);

  rdma_bulk_writer_forget (&priv->writer, priv->conn); /* (while its device's book is) */
  if (priv->conn != NULL)
  {
    rdma_bulk_update_stats (priv->conn);
    priv->saved = *rdma_conn_stats (priv->conn);
    /* gauges: nothing is registered once the connection is gone */
    priv->saved.pinned_bytes = priv->saved.rcache_entries = priv->saved.rcache_bytes = 0;
    rdma_conn_free (priv->conn);
    priv->conn = NULL;
  }
  rdma_call_policy_closed (&priv->policy);
  priv->reading = FALSE;
  priv->wlen = 0;
  /* the interrupt holds until close: clear the flag, then empty the eventfd (the interrupt
   * writes it before setting the flag, so a readable eventfd never outlives a clear flag) */
  g_atomic_int_set (&priv->interrupted, 0);
  if (priv->wake_fd >= 0)
  {
    guint64 count;
    if (read (priv->wake_fd, &count, sizeof count) < 0)
    {
      /* EAGAIN: not interrupted */
    }
  }
  return TRUE;
}

/* implements thrift_transport_peek */
static gboolean
thrift_rdma_peek (ThriftTransport *transport, GError **error)
{
  ThriftRdmaPrivate *priv = PRIV (transport);
  RdmaMessage *msg;
  GError *e = NULL;

  if (priv->conn == NULL)
  {
    not_open (&e);
    return peek_ended (priv, e);
  }
  if (interrupted (priv, &e))
    return peek_ended (priv, e);
  if (unread_rest (priv))
    return TRUE;
  if (priv->reading)
  {
    /* used up, but read_end never came (ThriftBufferedTransport does not pass it on) */
    if (!release_current (priv, &e))
      return fail (priv, e, error);
  }
  priv->last_wait = rdma_call_policy_wait (&priv->policy, priv->conn);
  msg = rdma_conn_wait_message (priv->conn, wait_deadline (priv, TRUE), &e);
  if (msg != NULL)
    return TRUE;
  /* the peer closed the connection, or thrift_rdma_interrupt: no more data, not an error */
  if (rdma_conn_get_state (priv->conn) == RDMA_CONN_DISCONNECTED
      || g_atomic_int_get (&priv->interrupted))
    return peek_ended (priv, e);
  return fail (priv, e, error);
}

/* Takes the head message for reading: a malformed one (its framing or its lent fields) is the
 * peer's protocol error and ends the connection. */
static gboolean
start_reading (ThriftRdmaPrivate *priv, ThriftTransport *transport, RdmaMessage *msg,
               GError **error)
{
  GError *e = NULL;

  if (!rdma_bulk_reader_start (&priv->reader, rdma_message_data (msg), rdma_message_len (msg),
                               max_message_of (transport->configuration), &e))
  {
    rdma_conn_fail (priv->conn, e);
    return fail (priv, e, error);
  }
  priv->reading = TRUE;
  priv->proto_name = rdma_message_proto (msg)->name;
  return TRUE;
}

/* Reads up to @len bytes of the message being read, from where the reader is: inline bytes
 * are copied, a lent field is pulled straight into @buf. */
static gint32
take (ThriftRdmaPrivate *priv, gpointer buf, guint32 len, GError **error)
{
  GError *e = NULL;
  gsize n;

  if (G_LIKELY (rdma_bulk_reader_inline (&priv->reader) > 0))
  {
    n = rdma_bulk_reader_copy (&priv->reader, buf, len);
    rdma_conn_stats (priv->conn)->bytes_copied += n;
    return (gint32) n;
  }
  if (priv->reader.left == 0)
    return 0;
  rdma_call_policy_follow_numa (&priv->policy);
  n = rdma_bulk_reader_pull (&priv->reader, priv->conn, buf, len,
                             deadline_after (priv->call_timeout_ms), &e);
  if (n == 0)
  {
    fail_call (priv, e);
    fail (priv, e, error);
    return -1;
  }
  return (gint32) n;
}

/* implements thrift_transport_read */
static gint32
thrift_rdma_read (ThriftTransport *transport, gpointer buf, guint32 len, GError **error)
{
  ThriftRdmaPrivate *priv = PRIV (transport);
  RdmaMessage *msg;
  GError *e = NULL;

  /* Thrift reads a message field by field: the rest of the message being read is copied
   * without a wait, a deadline or a clock read */
  if (G_LIKELY (unread_rest (priv) && !g_atomic_int_get (&priv->interrupted)))
    return take (priv, buf, len, error);
  if (priv->conn == NULL)
  {
    not_open (&e);
    fail (priv, e, error);
    return -1;
  }
  if (len == 0)
    return 0;
  if (interrupted (priv, &e))
  {
    fail (priv, e, error);
    return -1;
  }
  if (priv->reading && !release_current (priv, &e))
  {
    fail (priv, e, error);
    return -1;
  }
  priv->last_wait = rdma_call_policy_wait (&priv->policy, priv->conn);
  /* a failed wait fails the connection (fail_call): it may block in the read alone */
  msg = rdma_conn_wait_reply (priv->conn, wait_deadline (priv, TRUE), &e);
  if (msg == NULL)
  {
    fail_call (priv, e);
    fail (priv, e, error);
    return -1;
  }
  if (!start_reading (priv, transport, msg, error))
    return -1;
  return take (priv, buf, len, error);
}

/* implements thrift_transport_read_all */
static gint32
thrift_rdma_read_all (ThriftTransport *transport, gpointer buf, guint32 len, GError **error)
{
  guint32 have = 0;

  while (have < len)
  {
    gint32 r = thrift_rdma_read (transport, (guint8 *) buf + have, len - have, error);
    if (r < 0)
      return -1;
    have += (guint32) r;
  }
  return (gint32) have;
}

/* implements thrift_transport_checkReadBytesAvailable: a message arrives whole, so the bytes
 * left in the one being read are known exactly; a length field that announces more is
 * refused before the protocol allocates it. */
static gboolean
thrift_rdma_check_read_bytes_available (ThriftTransport *transport, glong n, GError **error)
{
  ThriftRdmaPrivate *priv = PRIV (transport);
  RdmaMessage *msg;

  if (priv->conn != NULL && priv->reading && (msg = rdma_conn_head_message (priv->conn)) != NULL)
  {
    gsize left = priv->reader.left;
    if (n < 0 || (gsize) n > left)
    {
      GError *e = g_error_new (RDMA_ENGINE_ERROR, RDMA_ERR_TOO_LARGE,
                               "ThriftRdma: %ld bytes announced, %" G_GSIZE_FORMAT " left in "
                               "the %" G_GSIZE_FORMAT "-byte message",
                               n, left, priv->reader.tab.total);
      return fail (priv, e, error);
    }
    return TRUE;
  }
  return THRIFT_TRANSPORT_CLASS (thrift_rdma_parent_class)
      ->checkReadBytesAvailable (transport, n, error);
}

/* implements thrift_transport_read_end */
static gboolean
thrift_rdma_read_end (ThriftTransport *transport, GError **error)
{
  ThriftRdmaPrivate *priv = PRIV (transport);
  GError *e = NULL;
  gboolean ok = release_current (priv, &e);

  rdma_call_policy_message_read (&priv->policy, priv->conn);
  return ok || fail (priv, e, error);
}

/* implements thrift_transport_write */
static gboolean
thrift_rdma_write (ThriftTransport *transport, const gpointer buf, const guint32 len,
                   GError **error)
{
  ThriftRdmaPrivate *priv = PRIV (transport);
  GError *e = NULL;

  if (priv->conn == NULL)
  {
    not_open (&e);
    return fail (priv, e, error);
  }
  if (priv->wlen + (gsize) len > max_message_of (transport->configuration))
  {
    e = g_error_new (RDMA_ENGINE_ERROR, RDMA_ERR_TOO_LARGE,
                     "ThriftRdma: the message being written exceeds the max message size %u",
                     max_message_of (transport->configuration));
    return fail (priv, e, error);
  }
  if (priv->wlen == 0)
  {
    rdma_call_policy_follow_numa (&priv->policy);
    if (rdma_conn_tx_begin (priv->conn, deadline_after (priv->call_timeout_ms), &e) == NULL)
    {
      fail_call (priv, e);
      return fail (priv, e, error);
    }
    if (!rdma_bulk_writer_begin (&priv->writer, priv->conn, &e))
      return fail (priv, e, error);
  }
  /* straight into registered memory, the only copy on the way out; a large field is not
   * copied at all but lent (rdma_bulk_msg.h) */
  if (!rdma_bulk_writer_write (
          &priv->writer, priv->conn, buf, len, rdma_call_policy_bulk_threshold (&priv->policy),
          rdma_call_policy_bulk_way (&priv->policy),
          len >= RDMA_BULK_MIN_THRESHOLD ? deadline_after (priv->call_timeout_ms) : 0, &e))
    return fail (priv, e, error);
  priv->wlen += len;
  return TRUE;
}

/* implements thrift_transport_write_end */
static gboolean
thrift_rdma_write_end (ThriftTransport *transport, GError **error)
{
  return TRUE;
}

/* Whether the message written fits the peer's max message size.  The engine's own check
 * cannot tell: the peer's hello counts its framing in (thrift_rdma_settings_for), so compare
 * what Thrift wrote with the rest, before anything is sent (the connection stays usable). */
static gboolean
fits_peer (ThriftRdmaPrivate *priv, GError **error)
{
  guint32 peer_max = rdma_conn_peer_max_message (priv->conn);

  peer_max -= MIN (peer_max, RDMA_BULK_FRAMING_MAX);
  if (priv->wlen <= peer_max)
    return TRUE;
  g_set_error (error, RDMA_ENGINE_ERROR, RDMA_ERR_TOO_LARGE,
               "ThriftRdma: a %" G_GSIZE_FORMAT "-byte message; the peer accepts at most %u",
               priv->wlen, peer_max);
  return FALSE;
}

/* implements thrift_transport_flush */
static gboolean
thrift_rdma_flush (ThriftTransport *transport, GError **error)
{
  ThriftRdmaPrivate *priv = PRIV (transport);
  GError *e = NULL;
  gint64 deadline;
  gboolean ok, sent;

  if (priv->conn == NULL)
  {
    not_open (&e);
    return fail (priv, e, error);
  }
  if (priv->wlen == 0)
    return TRUE;
  rdma_call_policy_send (&priv->policy, priv->conn, priv->wlen);
  deadline = deadline_after (priv->call_timeout_ms);
  /* a message that lends fields returns when the reader has them: then no key of ours
   * reaches the caller's memory any more, and the caller may change or free it */
  ok = fits_peer (priv, &e) && rdma_bulk_writer_seal (&priv->writer, priv->conn, deadline, &e);
  sent = ok && rdma_conn_tx_send (priv->conn, deadline, &e);
  ok = rdma_bulk_writer_finish (&priv->writer, priv->conn, sent, deadline, sent ? &e : NULL)
       && sent;
  if (ok)
    priv->proto_name = rdma_conn_last_tx_proto (priv->conn)->name;
  if (!ok)
  {
    /* part of the message may be out: the stream is no longer in step (a message refused
     * for its size was not sent at all) */
    if (!g_error_matches (e, RDMA_ENGINE_ERROR, RDMA_ERR_TOO_LARGE))
      fail_call (priv, e);
    fail (priv, e, error);
  }
  priv->wlen = 0;
  rdma_call_policy_sent (&priv->policy);
  return ok;
}

static void
thrift_rdma_set_hints (ThriftHintReceiver *receiver, const ThriftHintSet *hints)
{
  ThriftRdmaPrivate *priv = PRIV (receiver);
  priv->policy.msg_hints = hints;
}

static void
thrift_rdma_hint_receiver_init (ThriftHintReceiverInterface *iface)
{
  iface->set_hints = thrift_rdma_set_hints;
}

/* ---- ThriftIdleWatch: a server's idle connection in its poll set ---- */

static ThriftIdleState
idle_answer (ThriftRdmaPrivate *priv, RdmaIdle st, GError *e, GPollFD *fds, guint max_fds,
             guint *n_fds, gint64 *deadline_us)
{
  gint64 now, due;
  int cq_fd, cm_fd;

  *n_fds = 0;
  *deadline_us = 0;
  if (st == RDMA_IDLE_READY)
  {
    priv->idle_deadline_us = 0;
    return THRIFT_IDLE_READY;
  }
  if (st == RDMA_IDLE_GONE)
  {
    if (e != NULL)
    {
      g_message ("ThriftRdma: an idle connection ended: %s", e->message);
      peek_ended (priv, e);
    }
    return THRIFT_IDLE_GONE;
  }
  now = g_get_monotonic_time ();
  if (priv->idle_timeout_ms > 0)
  {
    if (priv->idle_deadline_us == 0)
    {
      priv->idle_deadline_us = now + (gint64) priv->idle_timeout_ms * 1000;
    }
    else if (now >= priv->idle_deadline_us)
    {
      g_message ("ThriftRdma: no request for %u ms (idle-timeout): connection closed",
                 priv->idle_timeout_ms);
      return THRIFT_IDLE_GONE;
    }
  }
  g_return_val_if_fail (max_fds >= 2, THRIFT_IDLE_UNSUPPORTED);
  rdma_conn_get_fds (priv->conn, &cq_fd, &cm_fd);
  fds[0] = (GPollFD){ .fd = cq_fd, .events = G_IO_IN };
  fds[1] = (GPollFD){ .fd = cm_fd, .events = G_IO_IN };
  *n_fds = 2;
  due = rdma_conn_timer_due (priv->conn);
  *deadline_us = priv->idle_deadline_us;
  if (due != 0 && (*deadline_us == 0 || due < *deadline_us))
    *deadline_us = due;
  return THRIFT_IDLE_WAIT;
}

static ThriftIdleState
thrift_rdma_idle_prepare (ThriftIdleWatch *watch, GPollFD *fds, guint max_fds, guint *n_fds,
                          gint64 *deadline_us)
{
  ThriftRdmaPrivate *priv = PRIV (watch);
  GError *e = NULL;
  RdmaIdle st;

  if (priv->conn == NULL)
    return THRIFT_IDLE_GONE;
  if (unread_rest (priv))
    return THRIFT_IDLE_READY;
  if (priv->reading && !release_current (priv, &e))
    return idle_answer (priv, RDMA_IDLE_GONE, e, fds, max_fds, n_fds, deadline_us);
  rdma_conn_set_polling (priv->conn, THRIFT_RDMA_POLLING_EVENT, RDMA_MEASURE_NONE);
  st = rdma_conn_idle_prepare (priv->conn, &e);
  return idle_answer (priv, st, e, fds, max_fds, n_fds, deadline_us);
}

/* check (@polled: fds' revents say which channel fired) and look (not polled) */
static ThriftIdleState
idle_after (ThriftIdleWatch *watch, gboolean polled, GPollFD *fds, guint max_fds, guint *n_fds,
            gint64 *deadline_us)
{
  ThriftRdmaPrivate *priv = PRIV (watch);
  GError *e = NULL;
  gint64 now = g_get_monotonic_time ();
  RdmaIdle st;

  if (priv->conn == NULL)
    return THRIFT_IDLE_GONE;
  /* (the call first: the error it sets is an argument too) */
  st = polled ? rdma_conn_idle_check (priv->conn, *n_fds >= 1 && fds[0].revents != 0,
                                      *n_fds >= 2 && fds[1].revents != 0, now, &e)
              : rdma_conn_idle_look (priv->conn, now, &e);
  return idle_answer (priv, st, e, fds, max_fds, n_fds, deadline_us);
}

static ThriftIdleState
thrift_rdma_idle_check (ThriftIdleWatch *watch, GPollFD *fds, guint max_fds, guint *n_fds,
                        gint64 *deadline_us)
{
  return idle_after (watch, TRUE, fds, max_fds, n_fds, deadline_us);
}

static ThriftIdleState
thrift_rdma_idle_look (ThriftIdleWatch *watch, GPollFD *fds, guint max_fds, guint *n_fds,
                       gint64 *deadline_us)
{
  return idle_after (watch, FALSE, fds, max_fds, n_fds, deadline_us);
}

static gboolean
thrift_rdma_idle_linger (ThriftIdleWatch *watch, gint64 max_us)
{
  ThriftRdmaPrivate *priv = PRIV (watch);
  GError *e = NULL;
  gboolean there;

  if (priv->conn == NULL)
    return TRUE;
  if (unread_rest (priv))
    return TRUE; /* the rest of the message is the next request */
  if (priv->reading && !release_current (priv, &e))
  {
    g_message ("ThriftRdma: a connection ended: %s", e->message);
    peek_ended (priv, e);
    return TRUE;
  }
  /* by the connection's own polling mode (rdma_call_policy_use): a latency hint spins */
  rdma_call_policy_wait (&priv->policy, priv->conn);
  there = rdma_conn_wait_message (priv->conn, g_get_monotonic_time () + max_us, &e) != NULL
          || !g_error_matches (e, RDMA_ENGINE_ERROR, RDMA_ERR_TIMED_OUT);
  g_clear_error (&e);
  return there;
}

static void
thrift_rdma_idle_watch_init (ThriftIdleWatchInterface *iface)
{
  iface->prepare = thrift_rdma_idle_prepare;
  iface->check = thrift_rdma_idle_check;
  iface->look = thrift_rdma_idle_look;
  iface->linger = thrift_rdma_idle_linger;
}

static void
thrift_rdma_get_property (GObject *object, guint property_id, GValue *value, GParamSpec *pspec)
{
  ThriftRdmaPrivate *priv = PRIV (object);
  ThriftTransport *tt = THRIFT_TRANSPORT (object);

  switch (property_id)
  {
  case PROP_HOSTNAME:
    g_value_set_string (value, priv->hostname);
    break;
  case PROP_PORT:
    g_value_set_uint (value, priv->port);
    break;
  case PROP_HINTS:
    g_value_set_pointer (value, (gpointer) priv->policy.hints);
    break;
  case PROP_POLLING:
    g_value_set_enum (value, priv->policy.polling);
    break;
  case PROP_CONNECT_TIMEOUT:
    g_value_set_uint (value, priv->connect_timeout_ms);
    break;
  case PROP_CALL_TIMEOUT:
    g_value_set_uint (value, priv->call_timeout_ms);
    break;
  case PROP_SOURCE_ADDRESS:
    g_value_set_string (value, priv->source_address);
    break;
  case PROP_IDLE_TIMEOUT:
    g_value_set_uint (value, priv->idle_timeout_ms);
    break;
  case PROP_KEEPALIVE:
    g_value_set_uint (value, priv->keepalive_ms);
    break;
  case PROP_PAIR_TOKEN:
    g_value_set_boxed (value, priv->pair_token);
    break;
  case PROP_NUMA_NODE:
    g_value_set_int (value, priv->policy.numa_node);
    break;
  case PROP_MAX_PINNED_BYTES:
    g_value_set_uint64 (value, priv->max_pinned_bytes);
    break;
  default:
    if (!rdma_size_props_get (property_id, PROP_CONFIGURATION, tt->configuration,
                              tt->remainingMessageSize_, tt->knowMessageSize_, value)
        && !rdma_bulk_props_get (property_id, PROP_BULK_THRESHOLD, &priv->policy.bulk, value))
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, property_id, pspec);
    break;
  }
}

static void
thrift_rdma_set_property (GObject *object, guint property_id, const GValue *value,
                          GParamSpec *pspec)
{
  ThriftRdmaPrivate *priv = PRIV (object);
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
  case PROP_HINTS:
    priv->policy.hints = g_value_get_pointer (value);
    break;
  case PROP_POLLING:
    rdma_call_policy_set_polling (&priv->policy, g_value_get_enum (value));
    priv->last_wait = priv->policy.polling;
    break;
  case PROP_CONNECT_TIMEOUT:
    priv->connect_timeout_ms = g_value_get_uint (value);
    break;
  case PROP_CALL_TIMEOUT:
    priv->call_timeout_ms = g_value_get_uint (value);
    break;
  case PROP_SOURCE_ADDRESS:
    g_free (priv->source_address);
    priv->source_address = g_value_dup_string (value);
    break;
  case PROP_IDLE_TIMEOUT:
    priv->idle_timeout_ms = g_value_get_uint (value);
    break;
  case PROP_KEEPALIVE:
    priv->keepalive_ms = g_value_get_uint (value);
    if (priv->conn != NULL)
      rdma_keepalive_set (priv->conn, priv->keepalive_ms, g_get_monotonic_time ());
    break;
  case PROP_PAIR_TOKEN:
    g_clear_pointer (&priv->pair_token, g_bytes_unref);
    priv->pair_token = g_value_dup_boxed (value);
    break;
  case PROP_NUMA_NODE:
    /* checked at open, where a bad node is an error rather than a GObject warning */
    rdma_call_policy_set_numa_node (&priv->policy, g_value_get_int (value));
    break;
  case PROP_MAX_PINNED_BYTES:
    priv->max_pinned_bytes = g_value_get_uint64 (value);
    break;
  default:
    if (rdma_bulk_props_set (property_id, PROP_BULK_THRESHOLD, &priv->policy.bulk, value))
    {
      if (priv->conn != NULL)
      {
        RdmaConnSettings bulk;
        rdma_bulk_props_to_settings (&priv->policy.bulk, &bulk);
        rdma_conn_set_bulk (priv->conn, &bulk);
      }
    }
    else if (!rdma_size_props_set (property_id, PROP_CONFIGURATION, &tt->configuration,
                                   &tt->remainingMessageSize_, &tt->knowMessageSize_, value))
    {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, property_id, pspec);
    }
    break;
  }
}

static void
thrift_rdma_finalize (GObject *object)
{
  ThriftRdmaPrivate *priv = PRIV (object);
  ThriftTransport *tt = THRIFT_TRANSPORT (object);

  rdma_conn_free (priv->conn);
  priv->conn = NULL;
  rdma_call_policy_clear (&priv->policy);
  if (priv->wake_fd >= 0)
    close (priv->wake_fd);
  g_free (priv->hostname);
  g_free (priv->source_address);
  g_clear_pointer (&priv->pair_token, g_bytes_unref);
  g_clear_object (&tt->configuration);
  G_OBJECT_CLASS (thrift_rdma_parent_class)->finalize (object);
}

static void
thrift_rdma_class_init (ThriftRdmaClass *cls)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (cls);
  ThriftTransportClass *ttc = THRIFT_TRANSPORT_CLASS (cls);
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;

  gobject_class->get_property = thrift_rdma_get_property;
  gobject_class->set_property = thrift_rdma_set_property;
  gobject_class->finalize = thrift_rdma_finalize;

  g_object_class_install_property (gobject_class, PROP_HOSTNAME,
                                   g_param_spec_string ("hostname", "hostname",
                                                        "Server address or name", "localhost",
                                                        rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_PORT,
      g_param_spec_uint ("port", "port", "Server port", 1, 65535, 9090, rw | G_PARAM_CONSTRUCT));
  rdma_size_props_install (gobject_class, PROP_CONFIGURATION);
  g_object_class_install_property (
      gobject_class, PROP_HINTS,
      g_param_spec_pointer ("hints", "hints", "Default hint set (const ThriftHintSet *) or NULL",
                            rw));
  g_object_class_install_property (
      gobject_class, PROP_POLLING,
      g_param_spec_enum ("polling", "polling", "How completions are waited for",
                         THRIFT_TYPE_RDMA_POLLING, THRIFT_RDMA_DEFAULT_POLLING,
                         rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_CONNECT_TIMEOUT,
      g_param_spec_uint ("connect-timeout", "connect-timeout",
                         "Milliseconds to resolve and connect", 1, G_MAXUINT,
                         THRIFT_RDMA_DEFAULT_CONNECT_TIMEOUT_MS, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_CALL_TIMEOUT,
      g_param_spec_uint ("call-timeout", "call-timeout",
                         "Milliseconds a read waits for a message (0: forever)", 0, G_MAXUINT,
                         THRIFT_RDMA_DEFAULT_CALL_TIMEOUT_MS, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_SOURCE_ADDRESS,
      g_param_spec_string ("source-address", "source-address",
                           "Local address to connect from (NULL: chosen by the route)", NULL,
                           rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_IDLE_TIMEOUT,
      g_param_spec_uint ("idle-timeout", "idle-timeout",
                         "Milliseconds a server-side connection waits for its next request "
                         "(0: forever)",
                         0, G_MAXUINT, 0, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_KEEPALIVE,
      g_param_spec_uint ("keepalive", "keepalive",
                         "Milliseconds after which a peer that stopped answering is declared "
                         "dead (0: never)",
                         0, G_MAXUINT, THRIFT_RDMA_DEFAULT_KEEPALIVE_MS, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      gobject_class, PROP_PAIR_TOKEN,
      g_param_spec_boxed ("pair-token", "pair-token",
                          "Pairing token sent in the connection request (GBytes of "
                          "THRIFT_RDMA_PAIR_TOKEN_LEN bytes, or NULL: none)",
                          G_TYPE_BYTES, rw));
  g_object_class_install_property (
      gobject_class, PROP_NUMA_NODE,
      g_param_spec_int ("numa-node", "numa-node",
                        "NUMA node of the connection's buffers and polling thread (-1: none); "
                        "a numa hint beats it; checked at open",
                        G_MININT, G_MAXINT, THRIFT_RDMA_DEFAULT_NUMA_NODE, rw | G_PARAM_CONSTRUCT));
  rdma_budget_prop_install (gobject_class, PROP_MAX_PINNED_BYTES);
  rdma_bulk_props_install (gobject_class, PROP_BULK_THRESHOLD, FALSE);

  ttc->is_open = thrift_rdma_is_open;
  ttc->peek = thrift_rdma_peek;
  ttc->open = thrift_rdma_open;
  ttc->close = thrift_rdma_close;
  ttc->read = thrift_rdma_read;
  ttc->read_end = thrift_rdma_read_end;
  ttc->write = thrift_rdma_write;
  ttc->write_end = thrift_rdma_write_end;
  ttc->flush = thrift_rdma_flush;
  ttc->read_all = thrift_rdma_read_all;
  ttc->checkReadBytesAvailable = thrift_rdma_check_read_bytes_available;
}

static void
thrift_rdma_init (ThriftRdma *self)
{
  ThriftRdmaPrivate *priv = PRIV (self);

  rdma_call_policy_init (&priv->policy);
  priv->proto_name = rdma_proto_eager_ops.name;
  /* without the eventfd (out of descriptors) an interrupt still sets the flag: spinning
   * and the next wait see it, a thread blocked in poll(2) only at its call timeout */
  priv->wake_fd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (priv->wake_fd < 0)
    g_message ("ThriftRdma: eventfd: %s; thrift_rdma_interrupt cannot wake a blocked wait",
               g_strerror (errno));
}

ThriftTransport *
thrift_rdma_new (const gchar *hostname, guint port)
{
  return g_object_new (THRIFT_TYPE_RDMA, "hostname", hostname, "port", port, NULL);
}

ThriftRdma *
thrift_rdma_new_accepted (RdmaConn *conn, ThriftConfiguration *configuration, gpointer hints,
                          ThriftRdmaPolling polling, guint call_timeout_ms, guint idle_timeout_ms,
                          guint keepalive_ms)
{
  ThriftRdma *self = g_object_new (THRIFT_TYPE_RDMA, "configuration", configuration, "hints", hints,
                                   "polling", polling, "call-timeout", call_timeout_ms,
                                   "idle-timeout", idle_timeout_ms, "keepalive", keepalive_ms,
                                   NULL);
  ThriftRdmaPrivate *priv = PRIV (self);

  priv->conn = conn;
  rdma_call_policy_accepted (&priv->policy, conn);
  attach_wake (priv, conn);
  rdma_signal_snapshot ();
  return self;
}

void
thrift_rdma_serve_defaults (ThriftRdma *self)
{
  /* the threshold a server leaves unset: its replies' fields staged (rdma_bulk_stage.h) */
  rdma_bulk_props_init (&PRIV (self)->policy.bulk, TRUE);
}

void
thrift_rdma_get_stats (ThriftRdma *self, ThriftRdmaStats *out)
{
  ThriftRdmaPrivate *priv;

  g_return_if_fail (THRIFT_IS_RDMA (self) && out != NULL);
  priv = PRIV (self);
  if (priv->conn != NULL)
    rdma_bulk_update_stats (priv->conn);
  *out = priv->conn != NULL ? *rdma_conn_stats (priv->conn) : priv->saved;
}

void
thrift_rdma_reset_stats (ThriftRdma *self)
{
  ThriftRdmaPrivate *priv;
  ThriftRdmaStats *s, saved;

  g_return_if_fail (THRIFT_IS_RDMA (self));
  priv = PRIV (self);
  if (priv->conn != NULL)
    rdma_bulk_update_stats (priv->conn); /* what the cache counted so far is reset too */
  s = priv->conn != NULL ? rdma_conn_stats (priv->conn) : &priv->saved;
  saved = *s;
  memset (s, 0, sizeof *s);
  /* the gauges are not counters */
  s->pinned_bytes = saved.pinned_bytes;
  s->rcache_entries = saved.rcache_entries;
  s->rcache_bytes = saved.rcache_bytes;
}

const gchar *
thrift_rdma_get_protocol_name (ThriftRdma *self)
{
  g_return_val_if_fail (THRIFT_IS_RDMA (self), NULL);
  return PRIV (self)->proto_name;
}

gchar *
thrift_rdma_explain_connection (ThriftRdma *self, const ThriftHintSet *hints)
{
  ThriftRdmaPrivate *priv;

  g_return_val_if_fail (THRIFT_IS_RDMA (self), NULL);
  priv = PRIV (self);
  if (priv->conn == NULL)
    return NULL;
  return rdma_call_policy_explain (&priv->policy, priv->conn, hints);
}

void
thrift_rdma_interrupt (ThriftRdma *self)
{
  ThriftRdmaPrivate *priv;
  guint64 one = 1;

  g_return_if_fail (THRIFT_IS_RDMA (self));
  priv = thrift_rdma_get_instance_private (self);
  if (priv->wake_fd >= 0 && write (priv->wake_fd, &one, sizeof one) < 0)
  {
    /* EAGAIN: the counter is already non-zero, the poll wakes anyway */
  }
  g_atomic_int_set (&priv->interrupted, 1);
}

/* ThriftInterruptible: how a stopping server wakes a thread blocked on it */
static void
thrift_rdma_interruptible_interrupt (ThriftInterruptible *self)
{
  thrift_rdma_interrupt (THRIFT_RDMA (self));
}

static void
thrift_rdma_interruptible_init (ThriftInterruptibleInterface *iface)
{
  iface->interrupt = thrift_rdma_interruptible_interrupt;
}

const guint8 *
thrift_rdma_get_peer_pair_token (ThriftRdma *self)
{
  ThriftRdmaPrivate *priv;

  g_return_val_if_fail (THRIFT_IS_RDMA (self), NULL);
  priv = PRIV (self);
  return priv->conn != NULL ? rdma_conn_peer_pair_token (priv->conn) : NULL;
}

ThriftRdmaStatus
thrift_rdma_get_last_status (ThriftRdma *self)
{
  g_return_val_if_fail (THRIFT_IS_RDMA (self), THRIFT_RDMA_STATUS_OK);
  return (ThriftRdmaStatus) g_atomic_int_get (&PRIV (self)->last_status);
}

ThriftRdmaPolling
thrift_rdma_get_effective_polling (ThriftRdma *self)
{
  g_return_val_if_fail (THRIFT_IS_RDMA (self), THRIFT_RDMA_DEFAULT_POLLING);
  return PRIV (self)->last_wait;
}
