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
 * Faults, each a test: a server killed in the middle of a call; bad peers (garbage framing, a
 * message over the max message size, a truncated message, a client that disconnects in the
 * middle of a message, a client that connects and never sends, garbage written into
 * Batched-Write's slots); rendezvous cut short (a client that leaves after its request-to-send
 * was cleared, bad or stray rendezvous messages, a server killed while the client waits for
 * its CTS or DONE).  After each, the server has
 * freed the connection (live QP/CQ/MR counters) and serves the next client.
 *
 * A server that vanishes while a call waits (a black hole on the guest's address): the
 * client's keepalive ends the call.  A server that stops reading (never returns a credit): the client's call that waits for
 * one fails within its call timeout and the connection closes at once.
 *
 * The bad peers are raw engine connections (rdma_conn_connect) that post hand-made SENDs,
 * bypassing ThriftRdma's framing and credits.  The killed server is this program started
 * again with --hang-server: it accepts, reads one request and never answers; with
 * --mute-server it never even looks at its connection (no CTS, no READ).
 *
 * RFP (the client fetches the reply by READ): a server killed while the client's READ of a
 * 16 MiB reply is in flight (this program again, with --rfp-server: it answers one request
 * by RFP and waits to be killed), and the key of a region the server outgrew, which stops
 * working.
 */
#include "config.h"

#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/thrift_configuration.h>
#include <thrift/c_glib/transport/thrift_transport.h>

#include "lib/c_glib/transport/rdma/proto/rdma_proto_rfp.h"
/* a white-box test: it looks inside connections (the engine-internal header) */
#include "lib/c_glib/transport/rdma/rdma_conn_private.h"
#include "lib/c_glib/transport/rdma/rdma_numa.h"
#include "lib/c_glib/transport/rdma/rdma_resources.h"
#include "lib/c_glib/transport/rdma/proto/rdma_rndv.h"
#include "lib/c_glib/transport/rdma/rdma_status.h"
#include "lib/c_glib/transport/rdma/proto/rdma_proto_batched_write.h"
#include "rdma_test_util.h"

#define SERVER_MAX (256u * 1024u)
#define RAW_CONN_RESOURCES 4 /* QP, CQ, two MRs */
#define RFP_REPLY (16u << 20)
#define RFP_MAX (32u << 20)

static RtEchoServer *server;
static gint baseline;
static const gchar *self_path;

/* ---- servers in a child process ---- */

/* Listens, tells the parent the port (stdout) and accepts one client; NULL on failure. */
static ThriftTransport *
child_accept (ThriftServerTransport *s)
{
  GError *error = NULL;
  ThriftTransport *t;

  if (!thrift_server_transport_listen (s, &error))
  {
    g_printerr ("child server: %s\n", error->message);
    return NULL;
  }
  printf ("%u\n", thrift_server_rdma_get_port (THRIFT_SERVER_RDMA (s)));
  fflush (stdout);
  t = thrift_server_transport_accept (s, &error);
  g_clear_error (&error);
  return t;
}

/* The server that hangs. */
static int
hang_server_main (gboolean read_one)
{
  ThriftServerTransport *s = g_object_new (THRIFT_TYPE_SERVER_RDMA, "hostname", rt_server_addr (),
                                           "port", 0, NULL);
  GError *error = NULL;
  ThriftTransport *t = child_accept (s);
  guint8 b;

  if (t == NULL)
    return 1;
  if (read_one && thrift_transport_read (t, &b, 1, &error) != 1)
    return 1;
  for (;;)
    pause (); /* never answers */
}

/* Server-side hints forcing RFP. */
static const ThriftHintSet *
rfp_hints (void)
{
  static ThriftHintSet h;

  h.version = THRIFT_HINT_SET_VERSION;
  h.service = "Test";
  h.function = "echo";
  h.side = THRIFT_HINT_SIDE_SERVER;
  h.set = THRIFT_HINT_HAS_PROTO;
  h.proto = THRIFT_HINT_PROTO_RFP;
  return &h;
}

/* The server that answers one request by RFP (its reply copied, not lent) and waits to be
 * killed. */
static int
rfp_server_main (void)
{
  ThriftConfiguration *conf = g_object_new (THRIFT_TYPE_CONFIGURATION, "max_message_size",
                                            (gint) RFP_MAX, NULL);
  ThriftServerTransport *s = g_object_new (THRIFT_TYPE_SERVER_RDMA, "hostname", rt_server_addr (),
                                           "port", 0, "configuration", conf, "hints", rfp_hints (),
                                           "bulk-threshold", 0, NULL);
  GError *error = NULL;
  ThriftTransport *t = child_accept (s);
  ThriftProtocol *p;
  gpointer in = NULL;
  guint32 in_len = 0;
  guint8 *reply = g_malloc (RFP_REPLY);

  if (t == NULL)
    return 1;
  p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
  memset (reply, 0x5a, RFP_REPLY);
  if (thrift_protocol_read_binary (p, &in, &in_len, &error) < 0
      || !thrift_transport_read_end (t, &error)
      || thrift_protocol_write_binary (p, reply, RFP_REPLY, &error) < 0
      || !thrift_transport_flush (t, &error))
  {
    g_printerr ("rfp server: %s\n", error->message);
    return 1;
  }
  for (;;)
    pause (); /* the reply stays in the region until the client kills us */
}

/* Starts this program as a server of @mode (--hang-server, --mute-server, --rfp-server);
 * returns its port. */
static guint
spawn_server (const gchar *mode, GPid *pid)
{
  const gchar *argv[] = { self_path, mode, NULL };
  GError *error = NULL;
  gchar buf[32] = { 0 };
  gint out_fd;
  ssize_t n;
  guint port;

  g_assert_true (g_spawn_async_with_pipes (NULL, (gchar **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                           NULL, NULL, pid, NULL, &out_fd, NULL, &error));
  g_assert_no_error (error);
  n = read (out_fd, buf, sizeof buf - 1);
  close (out_fd);
  g_assert_cmpint (n, >, 0);
  port = (guint) g_ascii_strtoull (buf, NULL, 10);
  g_assert_cmpuint (port, >, 0);
  return port;
}

static void
test_server_killed (void)
{
  GPid pid;
  GError *error = NULL;
  guint port = spawn_server ("--hang-server", &pid);
  ThriftTransport *t;
  ThriftProtocol *p;
  gpointer in = NULL;
  guint32 in_len = 0;
  gint64 t0;
  int status;

  t = g_object_new (THRIFT_TYPE_RDMA, "hostname", rt_server_addr (), "port", port, "call-timeout",
                    8000, NULL);
  g_assert_true (thrift_transport_open (t, &error));
  g_assert_no_error (error);
  p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
  g_assert_cmpint (thrift_protocol_write_binary (p, "hello", 5, &error), >, 0);
  g_assert_true (thrift_transport_flush (t, &error));
  g_usleep (300 * 1000); /* the server has the request and waits */
  kill (pid, SIGKILL);
  t0 = g_get_monotonic_time ();
  g_assert_cmpint (thrift_protocol_read_binary (p, &in, &in_len, &error), <, 0);
  g_assert_nonnull (error);
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE);
  g_test_message ("server killed: %s (after %.0f ms)", error->message,
                  (g_get_monotonic_time () - t0) / 1000.0);
  /* RECEIVE, as a timeout would be: the status says the peer is gone */
  g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_PEER_GONE);
  g_assert_cmpint (thrift_rdma_get_last_status (THRIFT_RDMA (t)), ==, THRIFT_RDMA_STATUS_PEER_GONE);
  /* within a second of the kill, not the call timeout (8 s): the kernel closes the dead
   * process's connection and the disconnect ends the wait (0.01 to 0.12 s measured) */
  g_assert_cmpint (g_get_monotonic_time () - t0, <, G_USEC_PER_SEC);
  g_clear_error (&error);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);
  g_object_unref (p);

  /* close, and reopen to another server */
  g_assert_true (thrift_transport_close (t, NULL));
  g_object_set (t, "port", rt_echo_server_port (server), NULL);
  g_assert_true (thrift_transport_open (t, &error));
  g_assert_no_error (error);
  g_assert_true (rt_echo (t, 3000, 1, &error));
  g_assert_no_error (error);
  thrift_transport_close (t, NULL);
  g_object_unref (t);
}

/* ---- bad peers ---- */

static RdmaConn *
raw_connect_to (guint port, ThriftRdmaPolling polling)
{
  RdmaConnSettings s;
  GError *error = NULL;
  RdmaConn *c;

  rdma_conn_settings_init (&s, RFP_MAX, polling);
  c = rdma_conn_connect (rt_server_addr (), port, NULL, &s,
                         g_get_monotonic_time () + 5 * G_USEC_PER_SEC, &error);
  g_assert_no_error (error);
  g_assert_nonnull (c);
  return c;
}

static RdmaConn *
raw_connect (void)
{
  return raw_connect_to (rt_echo_server_port (server), THRIFT_RDMA_POLLING_EVENT);
}

/* Posts @len bytes of @bytes as one SEND, outside framing and credits: what fits a send slot
 * from there, the rest gathered from the connection's first transmit buffer (as the engine
 * sends a message's bytes). */
static void
raw_send (RdmaConn *c, const void *bytes, guint32 len)
{
  GError *error = NULL;
  guint32 slot, head = MIN (len, c->send_pool.slot_size);
  RdmaTx *tx = &c->tx[0];

  g_assert_true (rdma_pool_get (&c->send_pool, &slot));
  memcpy (rdma_pool_slot (&c->send_pool, slot), bytes, head);
  if (len > head)
  {
    g_assert_cmpuint (tx->busy, ==, 0);
    g_assert_true (
        rdma_tx_reserve (tx, c->pd, len - head, RDMA_NUMA_NONE, &c->stats.pinned_bytes, &error));
    memcpy (tx->base, (const guint8 *) bytes + head, len - head);
  }
  g_assert_true (rdma_conn_post_send (c, RDMA_PROTO_EAGER, slot, head, len > head ? tx : NULL, 0,
                                      len - head, &error));
  g_assert_no_error (error);
  if (len > head)
  {
    /* the buffer goes once the SEND is done (or flushed: the server may drop us at once), so
     * that the raw connection holds RAW_CONN_RESOURCES */
    gint64 until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

    while (tx->busy > 0 && rdma_conn_progress (c, until, NULL))
      ;
    g_assert_cmpuint (tx->busy, ==, 0);
    rdma_tx_clear (tx, &c->stats.pinned_bytes);
  }
}

/* Posts a rendezvous message of protocol @proto (an RTS or a notice). */
static void
raw_rndv (RdmaConn *c, guint8 proto, guint8 kind, guint32 seq, guint32 len, guint32 rkey,
          guint64 addr)
{
  RdmaRndvMsg m = { .kind = kind, .seq = seq, .len = len, .rkey = rkey, .addr = addr };
  guint8 buf[RDMA_WIRE_HEADER_SIZE + sizeof (RdmaRndvWire)];

  rdma_wire_header_write (buf, proto, RDMA_WIRE_DATA, RDMA_WIRE_FIRST | RDMA_WIRE_LAST, 0,
                          sizeof (RdmaRndvWire), sizeof (RdmaRndvWire));
  rdma_rndv_encode (buf + RDMA_WIRE_HEADER_SIZE, &m);
  raw_send (c, buf, sizeof buf);
}

static void
raw_header (guint8 *buf, guint8 flags, guint32 frag, guint32 msg)
{
  rdma_wire_header_write (buf, RDMA_PROTO_EAGER, RDMA_WIRE_DATA, flags, 0, frag, msg);
  for (guint32 i = 0; i < frag; i++)
    buf[RDMA_WIRE_HEADER_SIZE + i] = (guint8) i;
}

/* Waits until the server has ended @n connections with an error and only @extra verbs
 * resources beyond the baseline are alive. */
static void
wait_server (guint failed, gint extra)
{
  gint64 until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while ((rt_echo_server_failed (server) < failed || rt_live_resources () != baseline + extra)
         && g_get_monotonic_time () < until)
    g_usleep (20 * 1000);
  g_assert_cmpuint (rt_echo_server_failed (server), ==, failed);
  g_assert_cmpint (rt_live_resources (), ==, baseline + extra);
}

/* The server still serves a good client. */
static void
good_client (void)
{
  ThriftTransport *t = rt_client_new (rt_echo_server_port (server), THRIFT_RDMA_POLLING_HYBRID);
  GError *error = NULL;

  g_assert_true (thrift_transport_open (t, &error));
  g_assert_true (rt_echo (t, 10000, 3, &error));
  g_assert_no_error (error);
  thrift_transport_close (t, NULL);
  g_object_unref (t);
}

typedef enum
{
  BAD_GARBAGE,
  BAD_TOO_LARGE,
  BAD_TRUNCATED,
  BAD_BAD_CONTINUATION,
  BAD_DISCONNECT_MID_MESSAGE,
  BAD_RNDV_LEAVE_AFTER_CTS,
  BAD_RNDV_TOO_LARGE,
  BAD_RNDV_OUT_OF_ORDER,
  BAD_RNDV_STRAY_NOTICE,
  BAD_RNDV_BAD_KEY
} BadKind;

static void
test_bad_peer (gconstpointer data)
{
  BadKind kind = GPOINTER_TO_INT (data);
  guint failed = rt_echo_server_failed (server);
  RdmaConn *c = raw_connect ();
  guint8 buf[4096];

  switch (kind)
  {
  case BAD_GARBAGE:
    for (guint i = 0; i < 100; i++)
      buf[i] = (guint8) (i * 37 + 11);
    raw_send (c, buf, 100);
    break;
  case BAD_TOO_LARGE:
    raw_header (buf, RDMA_WIRE_FIRST, 1000, SERVER_MAX + 1);
    raw_send (c, buf, RDMA_WIRE_HEADER_SIZE + 1000);
    break;
  case BAD_TRUNCATED:
    raw_header (buf, RDMA_WIRE_FIRST | RDMA_WIRE_LAST, 100, 100);
    raw_send (c, buf, RDMA_WIRE_HEADER_SIZE + 50);
    break;
  case BAD_BAD_CONTINUATION:
    raw_header (buf, RDMA_WIRE_FIRST, 1000, 3000);
    raw_send (c, buf, RDMA_WIRE_HEADER_SIZE + 1000);
    raw_header (buf, RDMA_WIRE_LAST, 1000, 3000); /* 1000 bytes missing */
    raw_send (c, buf, RDMA_WIRE_HEADER_SIZE + 1000);
    break;
  case BAD_DISCONNECT_MID_MESSAGE:
    raw_header (buf, RDMA_WIRE_FIRST, 1000, 3000);
    raw_send (c, buf, RDMA_WIRE_HEADER_SIZE + 1000);
    g_usleep (100 * 1000);
    rdma_conn_free (c);
    c = NULL;
    /* a peer that leaves is not the server's error: it just frees the connection */
    wait_server (failed, 0);
    good_client ();
    return;
  case BAD_RNDV_LEAVE_AFTER_CTS: {
    gint64 until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;

    /* the server registers a buffer for it and binds a window over it (and sends the CTS),
     * then we leave */
    raw_rndv (c, RDMA_PROTO_WRITE_RNDV, RDMA_RNDV_RTS, 0, 100000, 0, 0);
    while (rt_live_resources () != baseline + 2 * RAW_CONN_RESOURCES + 2
           && g_get_monotonic_time () < until)
      g_usleep (10 * 1000);
    g_assert_cmpint (rt_live_resources (), ==, baseline + 2 * RAW_CONN_RESOURCES + 2);
    rdma_conn_free (c);
    wait_server (failed, 0);
    good_client ();
    return;
  }
  case BAD_RNDV_TOO_LARGE:
    raw_rndv (c, RDMA_PROTO_WRITE_RNDV, RDMA_RNDV_RTS, 0, SERVER_MAX + 1, 0, 0);
    break;
  case BAD_RNDV_OUT_OF_ORDER:
    raw_rndv (c, RDMA_PROTO_READ_RNDV, RDMA_RNDV_RTS, 5, 1000, 1, 4096);
    break;
  case BAD_RNDV_STRAY_NOTICE:
    raw_rndv (c, RDMA_PROTO_WRITE_RNDV, RDMA_RNDV_NOTIFY, 0, 1000, 0, 0);
    break;
  case BAD_RNDV_BAD_KEY:
    /* the server's READ is refused (remote access error) */
    raw_rndv (c, RDMA_PROTO_READ_RNDV, RDMA_RNDV_RTS, 0, 1000, 0x12345, 4096);
    break;
  }
  /* the server drops us while we are still connected */
  wait_server (failed + 1, RAW_CONN_RESOURCES);
  rdma_conn_free (c);
  good_client ();
  wait_server (failed + 1, 0);
}

static gpointer
kill_later (gpointer pid)
{
  g_usleep (300 * 1000);
  kill (GPOINTER_TO_INT (pid), SIGKILL);
  return NULL;
}

/* A client sending by a rendezvous protocol to a server that never answers (no CTS, no READ,
 * no DONE) and is killed meanwhile: the wait for the CTS (Write-RNDV: the first message) or for
 * the DONE that frees a transmit buffer (Read-RNDV: the third message) ends with an error, and
 * closing gives every key and buffer back. */
static void
test_rndv_server_dies (gconstpointer data)
{
  ThriftHintProto proto = GPOINTER_TO_INT (data);
  ThriftHintSet hints = {
    .version = THRIFT_HINT_SET_VERSION,
    .service = "Test",
    .function = "send",
    .side = THRIFT_HINT_SIDE_CLIENT,
    .set = THRIFT_HINT_HAS_PROTO,
    .proto = proto,
  };
  guint8 *payload = g_malloc0 (100000);
  GPid pid;
  guint port = spawn_server ("--mute-server", &pid);
  GError *error = NULL;
  ThriftTransport *t;
  ThriftProtocol *p;
  GThread *killer;
  gint64 t0;
  guint i;
  int status;

  t = g_object_new (THRIFT_TYPE_RDMA, "hostname", rt_server_addr (), "port", port, "call-timeout",
                    8000, "hints", &hints, "bulk-threshold", rt_bulk_threshold (), NULL);
  g_assert_true (thrift_transport_open (t, &error));
  g_assert_no_error (error);
  p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);

  killer = g_thread_new ("killer", kill_later, GINT_TO_POINTER (pid));
  t0 = g_get_monotonic_time ();
  for (i = 0; i < 3; i++)
    if (thrift_protocol_write_binary (p, payload, 100000, &error) < 0
        || !thrift_transport_flush (t, &error))
      break;
  g_assert_nonnull (error);
  g_assert_true (error->domain == THRIFT_TRANSPORT_ERROR);
  g_test_message ("%s: message %u: %s (after %.0f ms)", thrift_hint_proto_to_string (proto), i,
                  error->message, (g_get_monotonic_time () - t0) / 1000.0);
  g_assert_cmpuint (i, ==, proto == THRIFT_HINT_PROTO_WRITE_RNDV ? 0 : 2);
  g_assert_cmpint (g_get_monotonic_time () - t0, <, 9 * G_USEC_PER_SEC);
  g_clear_error (&error);
  g_thread_join (killer);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);

  g_object_unref (p);
  thrift_transport_close (t, NULL);
  g_object_unref (t);
  g_free (payload);
  g_assert_true (rt_resources_at_baseline (baseline));
}

/* Batched-Write: a client that writes garbage into the server's slots (after one good
 * message, so the slots are advertised) is dropped with a protocol error. */
typedef enum
{
  BAD_BW_SEQUENCE,
  BAD_BW_BEYOND_SLOTS,
  BAD_BW_TOO_LARGE
} BadBatched;

static void
test_bad_batched (gconstpointer data)
{
  /* ThriftRdma's envelope byte (plain), then a binary field: echoed */
  static const guint8 hi[] = { 0, 0, 0, 0, 2, 'h', 'i' };
  BadBatched kind = GPOINTER_TO_INT (data);
  guint failed = rt_echo_server_failed (server);
  gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  RdmaConn *c = raw_connect ();
  GError *error = NULL;
  BwHeader h = { .flags = BW_FIRST | BW_LAST, .magic = BW_MAGIC };
  guint32 rkey, seq, frag = 100, trailer;
  guint64 addr;
  guint8 *buf;
  RdmaOp *op;
  struct ibv_sge sge;
  struct ibv_send_wr wr;

  c->tx_proto = &rdma_proto_batched_write_ops;
  g_assert_true (rdma_conn_send (c, hi, sizeof hi, deadline, &error));
  g_assert_nonnull (rdma_conn_wait_message (c, deadline, &error));
  g_assert_true (rdma_conn_release_message (c, &error));
  g_assert_no_error (error);
  g_assert_true (rdma_bw_next_fragment (c, &addr, &rkey, &seq));

  h.seq = GUINT32_TO_LE (kind == BAD_BW_SEQUENCE ? seq + 5 : seq);
  h.frag_len = GUINT32_TO_LE (kind == BAD_BW_BEYOND_SLOTS ? BW_REGION : frag);
  h.msg_len = GUINT32_TO_LE (kind == BAD_BW_TOO_LARGE ? SERVER_MAX + 1 : frag);
  if (kind == BAD_BW_TOO_LARGE)
    h.flags = BW_FIRST;
  /* (from the first transmit buffer: a send slot holds a header and a control message) */
  g_assert_true (rdma_tx_reserve (&c->tx[0], c->pd, BW_HEADER_SIZE + frag + BW_TRAILER_SIZE,
                                  RDMA_NUMA_NONE, &c->stats.pinned_bytes, &error));
  buf = c->tx[0].base;
  memcpy (buf, &h, sizeof h);
  memset (buf + BW_HEADER_SIZE, 0x5a, frag);
  trailer = GUINT32_TO_LE (seq ^ BW_TRAILER_XOR);
  memcpy (buf + BW_HEADER_SIZE + frag, &trailer, sizeof trailer);
  /* one WRITE_WITH_IMM, which wakes the server */
  op = rdma_conn_op_get (c, RDMA_OP_WRITE, RDMA_PROTO_BATCHED_WRITE);
  sge = (struct ibv_sge){
    .addr = (uintptr_t) buf,
    .length = BW_HEADER_SIZE + frag + BW_TRAILER_SIZE,
    .lkey = c->tx[0].mr->lkey,
  };
  wr = (struct ibv_send_wr){
    .wr_id = rdma_op_wr_id (op),
    .sg_list = &sge,
    .num_sge = 1,
    .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
    .send_flags = IBV_SEND_SIGNALED,
    .imm_data = htonl (RDMA_IMM_MAKE (RDMA_PROTO_BATCHED_WRITE, BW_IMM_REST (0, seq))),
    .wr.rdma = { .remote_addr = addr, .rkey = rkey },
  };
  g_assert_true (rdma_credit_take (&c->credits));
  g_assert_true (rdma_conn_post_wr (c, &wr, "WRITE_WITH_IMM", &error));
  g_assert_no_error (error);
  /* dropped: the client holds its QP, CQ, pools, a transmit buffer and its mirror (the
   * server's small reply, without hints, went by Eager-SendRecv: no ring) */
  wait_server (failed + 1, RAW_CONN_RESOURCES + 2);
  rdma_conn_free (c);
  good_client ();
  wait_server (failed + 1, 0);
}

/* A client over the server's max message size learns it before sending (from the hello). */
static void
test_too_large_from_thrift_client (void)
{
  ThriftTransport *t = rt_client_new (rt_echo_server_port (server), THRIFT_RDMA_POLLING_HYBRID);
  GError *error = NULL;

  g_assert_true (thrift_transport_open (t, &error));
  g_assert_false (rt_echo (t, SERVER_MAX + 10, 1, &error));
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_MAX_MESSAGE_SIZE_REACHED);
  g_test_message ("too large: %s", error->message);
  g_clear_error (&error);
  /* nothing was sent: the connection still works */
  g_assert_true (rt_echo (t, 1000, 2, &error));
  g_assert_no_error (error);
  thrift_transport_close (t, NULL);
  g_object_unref (t);
}

/* A client that connects and never sends: the server (idle-timeout 1 s) drops it. */
static void
test_never_sends (void)
{
  guint failed = rt_echo_server_failed (server);
  RdmaConn *c = raw_connect ();

  wait_server (failed + 1, RAW_CONN_RESOURCES);
  rdma_conn_free (c);
  good_client ();
  wait_server (failed + 1, 0);
}

/* ---- peers that vanish or stop reading ---- */

/* A server that stops reading (accepts, then never looks at its connection, so it returns no
 * credit): the client's calls go out while credits last, then the call that waits for one
 * fails with a timeout within the call timeout (not later, never hung), the transport closes
 * at once and its resources are freed. */
#define STOP_READING_TIMEOUT_MS 1500

static void
test_peer_stops_reading (void)
{
  GPid pid;
  guint port = spawn_server ("--mute-server", &pid);
  gint before = rt_live_resources ();
  ThriftTransport *t;
  ThriftProtocol *p;
  GError *error = NULL;
  gint64 call_start = 0, failed_at, closed_in;
  guint sent = 0;
  int status;

  t = g_object_new (THRIFT_TYPE_RDMA, "hostname", rt_server_addr (), "port", port, "call-timeout",
                    STOP_READING_TIMEOUT_MS, NULL);
  g_assert_true (thrift_transport_open (t, &error));
  g_assert_no_error (error);
  p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
  /* bounded: far more messages than any credit window */
  while (sent < 100000)
  {
    call_start = g_get_monotonic_time ();
    if (thrift_protocol_write_binary (p, "stop reading", 12, &error) < 0
        || !thrift_transport_flush (t, &error))
      break;
    sent++;
  }
  failed_at = g_get_monotonic_time ();
  g_assert_nonnull (error);
  g_test_message ("a server that stops reading: %u messages went out, the next call failed "
                  "after %.0f ms (call timeout %d ms): %s",
                  sent, (failed_at - call_start) / 1000.0, STOP_READING_TIMEOUT_MS, error->message);
  g_assert_cmpuint (sent, >, 0);
  g_assert_cmpuint (sent, <, 100000);
  g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_TIMED_OUT);
  g_assert_cmpint (failed_at - call_start, >=, (STOP_READING_TIMEOUT_MS - 50) * 1000);
  g_assert_cmpint (failed_at - call_start, <, (STOP_READING_TIMEOUT_MS + 1000) * 1000);
  g_clear_error (&error);
  closed_in = g_get_monotonic_time ();
  thrift_transport_close (t, NULL);
  closed_in = g_get_monotonic_time () - closed_in;
  g_test_message ("closed in %.1f ms", closed_in / 1000.0);
  g_assert_cmpint (closed_in, <, G_USEC_PER_SEC);
  g_object_unref (p);
  g_object_unref (t);
  g_assert_cmpint (rt_live_resources (), ==, before);
  kill (pid, SIGKILL);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);
}

/* `ip rule ADD_OR_DEL pref 5 DIRECTION ADDR blackhole`; TRUE if ip said yes. */
static gboolean
blackhole (const gchar *add_or_del, const gchar *direction, const gchar *addr)
{
  const gchar *argv[] = {
    "ip", "rule", add_or_del, "pref", "5", direction, addr, "blackhole", NULL
  };
  gint status = -1;

  return g_spawn_sync (NULL, (gchar **) argv, NULL,
                       G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL
                           | G_SPAWN_STDERR_TO_DEV_NULL,
                       NULL, NULL, NULL, NULL, &status, NULL)
         && g_spawn_check_wait_status (status, NULL);
}

/* A server that vanishes without a word while a call waits (every packet to and from its
 * address dropped, as under a network cut: its adapter answers nothing, no disconnect comes):
 * the client's keepalive finds it gone between a half and three quarters of the keepalive
 * after its last sign of life (rdma_keepalive.h), long before the call timeout.  The black
 * hole is the guest's (its 10.77.0.1), taken away before anything is asserted. */
#define VANISH_KEEPALIVE_MS 1200

static void
test_server_vanishes (void)
{
  GPid pid;
  guint port;
  ThriftTransport *t;
  ThriftProtocol *p;
  GError *error = NULL;
  gpointer in = NULL;
  guint32 in_len = 0;
  gboolean holed, read_failed;
  gint64 t0, took;
  int status;

  if (strcmp (rt_server_addr (), "10.77.0.1") != 0 || geteuid () != 0)
  {
    g_test_skip ("needs the soft-RoCE guest's 10.77.0.1 and root (ip rule)");
    return;
  }
  port = spawn_server ("--hang-server", &pid);
  t = g_object_new (THRIFT_TYPE_RDMA, "hostname", rt_server_addr (), "port", port, "call-timeout",
                    20000, "keepalive", VANISH_KEEPALIVE_MS, NULL);
  g_assert_true (thrift_transport_open (t, &error));
  g_assert_no_error (error);
  p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
  g_assert_cmpint (thrift_protocol_write_binary (p, "hello", 5, &error), >, 0);
  g_assert_true (thrift_transport_flush (t, &error));
  g_usleep (200 * 1000); /* the server has the request and waits */
  holed = blackhole ("add", "to", rt_server_addr ());
  holed = blackhole ("add", "from", rt_server_addr ()) && holed;
  /* the last sign of life is at most now */
  t0 = g_get_monotonic_time ();
  read_failed = thrift_protocol_read_binary (p, &in, &in_len, &error) < 0;
  took = g_get_monotonic_time () - t0;
  blackhole ("del", "to", rt_server_addr ());
  blackhole ("del", "from", rt_server_addr ());

  g_assert_true (holed);
  g_assert_true (read_failed);
  g_assert_nonnull (error);
  g_test_message ("server vanished: the call failed after %.0f ms (keepalive %d ms, call "
                  "timeout 20 s): %s",
                  took / 1000.0, VANISH_KEEPALIVE_MS, error->message);
  g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_PEER_GONE);
  g_assert_cmpint (took, <=, VANISH_KEEPALIVE_MS * 1000 * 3 / 4 + 500 * 1000);
  g_clear_error (&error);
  g_object_unref (p);
  thrift_transport_close (t, NULL);
  g_object_unref (t);
  kill (pid, SIGKILL);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);
  good_client ();
}

/* ---- RFP ---- */

/* Sends @len bytes as a Thrift binary (length first), as rt_echo does. */
static void
raw_send_binary (RdmaConn *c, gsize len, guint seed)
{
  guint8 *buf = rt_binary_new (len, seed);
  GError *error = NULL;

  g_assert_true (rdma_conn_send (c, buf, RT_RAW_HEADER + len,
                                 g_get_monotonic_time () + 20 * G_USEC_PER_SEC, &error));
  g_assert_no_error (error);
  g_free (buf);
}

/* An echo on a raw connection; the reply comes by RFP. */
static void
raw_echo (RdmaConn *c, gsize len, guint seed)
{
  GError *error = NULL;
  RdmaMessage *msg;

  raw_send_binary (c, len, seed);
  msg = rdma_conn_wait_message (c, g_get_monotonic_time () + 20 * G_USEC_PER_SEC, &error);
  g_assert_no_error (error);
  g_assert_nonnull (msg);
  g_assert_cmpstr (msg->proto->name, ==, "rfp");
  g_assert_cmpuint (msg->len, ==, RT_RAW_HEADER + len);
  for (gsize i = 0; i < len; i++)
    g_assert_cmpuint (msg->data[RT_RAW_HEADER + i], ==, rt_pattern (seed, i));
  g_assert_true (rdma_conn_release_message (c, &error));
  g_assert_no_error (error);
}

/* The server dies while the client's READ of its 16 MiB reply is in flight: the client gets
 * an error within the call timeout, and what it had is freed. */
static void
test_rfp_server_killed_mid_fetch (void)
{
  GPid pid;
  guint port = spawn_server ("--rfp-server", &pid);
  RdmaConn *c = raw_connect_to (port, THRIFT_RDMA_POLLING_BUSY);
  gint64 until = g_get_monotonic_time () + 30 * G_USEC_PER_SEC, t0;
  GError *error = NULL;
  RdmaRfpInfo info;
  RdmaMessage *msg;
  int status;

  raw_send_binary (c, 5, 1);
  /* wait (polling) until the client READs the body */
  do
  {
    if (!rdma_conn_progress (c, g_get_monotonic_time () + 50000, &error))
    {
      g_assert_error (error, RDMA_ENGINE_ERROR, RDMA_ERR_TIMED_OUT);
      g_clear_error (&error);
    }
    rdma_proto_rfp_info (c, &info);
  } while (!info.fetching_body && g_queue_is_empty (&c->received)
           && g_get_monotonic_time () < until);
  g_assert_true (info.fetching_body);
  g_assert_cmpuint (c->stats.reads, >=, 2);
  kill (pid, SIGKILL);
  t0 = g_get_monotonic_time ();
  msg = rdma_conn_wait_message (c, t0 + 8 * G_USEC_PER_SEC, &error);
  g_assert_null (msg);
  g_assert_nonnull (error);
  g_assert_true (error->domain == RDMA_ENGINE_ERROR);
  g_test_message ("RFP server killed mid-fetch (%" G_GUINT64_FORMAT " READs posted): %s "
                  "(after %.0f ms)",
                  c->stats.reads, error->message, (g_get_monotonic_time () - t0) / 1000.0);
  g_assert_cmpint (g_get_monotonic_time () - t0, <, 8 * G_USEC_PER_SEC);
  g_clear_error (&error);
  rdma_conn_free (c);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);
  g_assert_cmpint (rt_live_resources (), ==, baseline);
}

/* A region the server outgrew is deregistered once the client fetched from the new one: a
 * READ with its key fails (and fails the connection); on close everything is deregistered. */
static void
test_rfp_stale_key (void)
{
  RtEchoServer *srv = rt_echo_server_start_hinted (THRIFT_RDMA_POLLING_BUSY, RFP_MAX, rfp_hints ());
  RdmaConn *c = raw_connect_to (rt_echo_server_port (srv), THRIFT_RDMA_POLLING_BUSY);
  RdmaRfpInfo first, grown;
  GError *error = NULL;
  struct ibv_mr *mr;
  guint8 *landing = g_malloc0 (4096);

  raw_echo (c, 64, 1);
  rdma_proto_rfp_info (c, &first);
  g_assert_true (first.peer_known);
  raw_echo (c, 1u << 20, 2); /* the server's region grows */
  rdma_proto_rfp_info (c, &grown);
  g_assert_cmpuint (grown.peer_size, >, first.peer_size);
  g_assert_true (grown.peer_addr != first.peer_addr || grown.peer_rkey != first.peer_rkey);
  raw_echo (c, 64, 3); /* the server saw the grown one fetched: old one gone */

  mr = rdma_res_mr_reg (c->pd, landing, 4096, IBV_ACCESS_LOCAL_WRITE, &error);
  g_assert_no_error (error);
  {
    RdmaOp *op = rdma_conn_op_get (c, RDMA_OP_READ, RDMA_PROTO_RFP);
    struct ibv_sge sge = { .addr = (uintptr_t) landing, .length = 64, .lkey = mr->lkey };
    struct ibv_send_wr wr = {
      .wr_id = rdma_op_wr_id (op),
      .sg_list = &sge,
      .num_sge = 1,
      .opcode = IBV_WR_RDMA_READ,
      .send_flags = IBV_SEND_SIGNALED,
      .wr.rdma = { .remote_addr = first.peer_addr, .rkey = first.peer_rkey },
    };
    gint64 until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

    g_assert_true (rdma_conn_sq_reserve (c, 1, until, &error));
    g_assert_true (rdma_conn_post_wr (c, &wr, "stale READ", &error));
    g_assert_no_error (error);
    while (c->state == RDMA_CONN_CONNECTED && g_get_monotonic_time () < until)
      if (!rdma_conn_progress (c, until, &error))
        break;
  }
  g_assert_cmpint (c->state, ==, RDMA_CONN_FAILED);
  g_assert_nonnull (error);
  g_test_message ("READ with the outgrown region's key: %s", error->message);
  g_assert_nonnull (strstr (error->message, "stale or wrong key"));
  g_clear_error (&error);
  rdma_res_mr_dereg (&mr); /* before the connection's PD goes */
  rdma_conn_free (c);
  g_free (landing);
  rt_echo_server_stop (srv);
  /* the server's regions and the client's fetch buffer are deregistered */
  g_assert_true (rt_resources_at_baseline (baseline));
}

int
main (int argc, char **argv)
{
  int rc;

  if (argc > 1 && strcmp (argv[1], "--hang-server") == 0)
    return hang_server_main (TRUE);
  if (argc > 1 && strcmp (argv[1], "--mute-server") == 0)
    return hang_server_main (FALSE);
  if (argc > 1 && strcmp (argv[1], "--rfp-server") == 0)
    return rfp_server_main ();
  self_path = argv[0];
  g_test_init (&argc, &argv, NULL);
  /* the raw peers read the echo server's replies as plain messages, and the RFP tests look at
   * how RFP carries a whole large reply: nothing lent (bulk faults: test_bulk_faults) */
  rt_bulk_off ();
  baseline = rt_live_resources ();
  server = rt_echo_server_start (THRIFT_RDMA_POLLING_EVENT, SERVER_MAX, 1000);

  g_test_add_func ("/thrift_rdma/fault/server_killed", test_server_killed);
  g_test_add_func ("/thrift_rdma/fault/peer_stops_reading", test_peer_stops_reading);
  g_test_add_func ("/thrift_rdma/fault/server_vanishes", test_server_vanishes);
  g_test_add_data_func ("/thrift_rdma/fault/garbage_framing", GINT_TO_POINTER (BAD_GARBAGE),
                        test_bad_peer);
  g_test_add_data_func ("/thrift_rdma/fault/over_max_message_size", GINT_TO_POINTER (BAD_TOO_LARGE),
                        test_bad_peer);
  g_test_add_data_func ("/thrift_rdma/fault/truncated", GINT_TO_POINTER (BAD_TRUNCATED),
                        test_bad_peer);
  g_test_add_data_func ("/thrift_rdma/fault/bad_continuation",
                        GINT_TO_POINTER (BAD_BAD_CONTINUATION), test_bad_peer);
  g_test_add_data_func ("/thrift_rdma/fault/disconnect_mid_message",
                        GINT_TO_POINTER (BAD_DISCONNECT_MID_MESSAGE), test_bad_peer);
  g_test_add_data_func ("/thrift_rdma/fault/rndv/leave_after_cts",
                        GINT_TO_POINTER (BAD_RNDV_LEAVE_AFTER_CTS), test_bad_peer);
  g_test_add_data_func ("/thrift_rdma/fault/rndv/over_max_message_size",
                        GINT_TO_POINTER (BAD_RNDV_TOO_LARGE), test_bad_peer);
  g_test_add_data_func ("/thrift_rdma/fault/rndv/out_of_order",
                        GINT_TO_POINTER (BAD_RNDV_OUT_OF_ORDER), test_bad_peer);
  g_test_add_data_func ("/thrift_rdma/fault/rndv/stray_notice",
                        GINT_TO_POINTER (BAD_RNDV_STRAY_NOTICE), test_bad_peer);
  g_test_add_data_func ("/thrift_rdma/fault/rndv/bad_key", GINT_TO_POINTER (BAD_RNDV_BAD_KEY),
                        test_bad_peer);
  g_test_add_data_func ("/thrift_rdma/fault/rndv/server_dies/write_rndv",
                        GINT_TO_POINTER (THRIFT_HINT_PROTO_WRITE_RNDV), test_rndv_server_dies);
  g_test_add_data_func ("/thrift_rdma/fault/rndv/server_dies/read_rndv",
                        GINT_TO_POINTER (THRIFT_HINT_PROTO_READ_RNDV), test_rndv_server_dies);
  g_test_add_data_func ("/thrift_rdma/fault/batched_write/bad_sequence",
                        GINT_TO_POINTER (BAD_BW_SEQUENCE), test_bad_batched);
  g_test_add_data_func ("/thrift_rdma/fault/batched_write/beyond_slots",
                        GINT_TO_POINTER (BAD_BW_BEYOND_SLOTS), test_bad_batched);
  g_test_add_data_func ("/thrift_rdma/fault/batched_write/over_max_message_size",
                        GINT_TO_POINTER (BAD_BW_TOO_LARGE), test_bad_batched);
  g_test_add_func ("/thrift_rdma/fault/too_large_from_client", test_too_large_from_thrift_client);
  g_test_add_func ("/thrift_rdma/fault/never_sends", test_never_sends);
  g_test_add_func ("/thrift_rdma/fault/rfp_server_killed_mid_fetch",
                   test_rfp_server_killed_mid_fetch);
  g_test_add_func ("/thrift_rdma/fault/rfp_stale_key", test_rfp_stale_key);
  rc = g_test_run ();
  rt_echo_server_stop (server);
  if (!rt_resources_at_baseline (baseline))
    rc = 1;
  return rc;
}
