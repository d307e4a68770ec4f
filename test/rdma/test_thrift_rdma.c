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
 * ThriftRdma and ThriftServerRdma end to end in the soft-RoCE guest: echo of every size class
 * (one slot, slot boundaries, fragmented, 16 MiB), 10,000 calls on one connection, each
 * polling mode, close and reopen, counters, and that a closed connection leaves no verbs
 * resources behind.
 */
#include "config.h"

#include <string.h>

#include <thrift/c_glib/transport/thrift_transport.h>

#include "rdma_test_util.h"

static RtEchoServer *server;
static gint baseline;

static ThriftTransport *
open_client (ThriftRdmaPolling polling)
{
  GError *error = NULL;
  ThriftTransport *t = rt_client_new (rt_echo_server_port (server), polling);

  g_assert_true (thrift_transport_open (t, &error));
  g_assert_no_error (error);
  g_assert_true (thrift_transport_is_open (t));
  return t;
}

static void
close_client (ThriftTransport *t)
{
  g_assert_true (thrift_transport_close (t, NULL));
  g_assert_false (thrift_transport_is_open (t));
  g_object_unref (t);
}

static void
test_echo (gconstpointer data)
{
  gsize len = GPOINTER_TO_SIZE (data);
  ThriftTransport *t = open_client (THRIFT_RDMA_POLLING_HYBRID);
  GError *error = NULL;
  gint64 t0 = g_get_monotonic_time ();

  g_assert_true (rt_echo (t, len, (guint) len, &error));
  g_assert_no_error (error);
  g_test_message ("echo of %" G_GSIZE_FORMAT " bytes: %.3f ms", len,
                  (g_get_monotonic_time () - t0) / 1000.0);
  /* twice on the same connection: the slots and credits came back */
  g_assert_true (rt_echo (t, len, (guint) len + 1, &error));
  g_assert_no_error (error);
  close_client (t);
}

static void
test_sequential (void)
{
  ThriftTransport *t = open_client (THRIFT_RDMA_POLLING_HYBRID);
  GError *error = NULL;
  ThriftRdmaStats st;
#ifdef RDMA_TEST_SHORT
  const guint n = 500;
#else
  const guint n = 10000;
#endif
  gint64 t0 = g_get_monotonic_time ();

  thrift_rdma_reset_stats (THRIFT_RDMA (t));
  for (guint i = 0; i < n; i++)
  {
    if (!rt_echo (t, 64, i, &error))
      g_error ("call %u: %s", i, error->message);
  }
  thrift_rdma_get_stats (THRIFT_RDMA (t), &st);
  g_test_message ("%u calls of 64 B: %.1f us per call", n,
                  (g_get_monotonic_time () - t0) / (double) n);
  g_assert_cmpuint (st.round_trips, ==, n);
  g_assert_cmpuint (st.messages_sent, ==, n);
  g_assert_cmpuint (st.messages_received, ==, n);
  close_client (t);
}

static void
test_stats (void)
{
  ThriftTransport *t = open_client (THRIFT_RDMA_POLLING_EVENT);
  GError *error = NULL;
  ThriftRdmaStats st;
  const guint calls = 8;

  g_assert_true (rt_echo (t, 16, 0, &error)); /* warm up */
  thrift_rdma_reset_stats (THRIFT_RDMA (t));
  for (guint i = 0; i < calls; i++)
    g_assert_true (rt_echo (t, 16, i, &error));
  g_assert_no_error (error);
  thrift_rdma_get_stats (THRIFT_RDMA (t), &st);
  g_test_message ("per RPC (16 B echo): wr_posted %.2f post_send %.2f post_recv %.2f "
                  "completions %.2f bytes_copied %.1f cq_events %.2f; pinned %" G_GUINT64_FORMAT,
                  st.wr_posted / (double) calls, st.post_send_calls / (double) calls,
                  st.post_recv_calls / (double) calls, st.completions / (double) calls,
                  st.bytes_copied / (double) calls, st.cq_events / (double) calls, st.pinned_bytes);
  g_assert_cmpuint (st.round_trips, ==, calls);
  g_assert_cmpuint (st.messages_sent, ==, calls);
  g_assert_cmpuint (st.messages_received, ==, calls);
  /* code without hints sends a small message by Eager-SendRecv (docs/protocols.md): one SEND and one
   * reposted receive per call, no ring, no credit message in a request/response */
  g_assert_cmpuint (st.sends, ==, calls);
  g_assert_cmpuint (st.write_imms + st.writes + st.reads, ==, 0);
  g_assert_cmpuint (st.post_send_calls, ==, calls);
  g_assert_cmpuint (st.post_recv_calls, ==, calls);
  g_assert_cmpuint (st.wr_posted, ==, 2 * calls);
  g_assert_cmpuint (st.credit_messages, ==, 0);
  /* the write's and the receive's completion */
  g_assert_cmpuint (st.completions, ==, 2 * calls);
  g_assert_cmpuint (st.pinned_bytes, >, 0);
  g_assert_cmpstr (thrift_rdma_get_protocol_name (THRIFT_RDMA (t)), ==, "eager");
  close_client (t);
}

static void
test_polling (gconstpointer data)
{
  ThriftRdmaPolling mode = GPOINTER_TO_INT (data);
  ThriftTransport *t = open_client (mode);
  GError *error = NULL;
  ThriftRdmaStats st;

  g_assert_cmpint (thrift_rdma_get_effective_polling (THRIFT_RDMA (t)), ==, mode);
  for (guint i = 0; i < 50; i++)
    g_assert_true (rt_echo (t, 1000 + i * 100, i, &error));
  g_assert_no_error (error);
  thrift_rdma_get_stats (THRIFT_RDMA (t), &st);
  if (mode == THRIFT_RDMA_POLLING_BUSY)
    g_assert_cmpuint (st.cq_events, ==, 0); /* never blocked in the kernel */
  else if (mode == THRIFT_RDMA_POLLING_EVENT)
    g_assert_cmpuint (st.cq_events, >, 0); /* did block */
  close_client (t);
}

static void
test_reopen (void)
{
  ThriftTransport *t = rt_client_new (rt_echo_server_port (server), THRIFT_RDMA_POLLING_HYBRID);
  GError *error = NULL;

  for (guint round = 0; round < 3; round++)
  {
    g_assert_true (thrift_transport_open (t, &error));
    g_assert_no_error (error);
    g_assert_true (rt_echo (t, 5000, round, &error));
    g_assert_no_error (error);
    g_assert_true (thrift_transport_close (t, &error));
    g_assert_false (thrift_transport_is_open (t));
    /* a closed transport reports, not crashes */
    g_assert_false (rt_echo (t, 10, 0, &error));
    g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET);
    g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_NOT_OPEN);
    g_clear_error (&error);
  }
  g_object_unref (t);
}

static void
test_source_address (void)
{
  ThriftTransport *t = g_object_new (
      THRIFT_TYPE_RDMA, "hostname", rt_server_addr (), "port", rt_echo_server_port (server),
      "source-address", rt_client_addr (), "bulk-threshold", rt_bulk_threshold (), NULL);
  GError *error = NULL;

  g_assert_true (thrift_transport_open (t, &error));
  g_assert_no_error (error);
  g_assert_true (rt_echo (t, 100, 7, &error));
  g_assert_no_error (error);
  close_client (t);
}

static void
test_no_listener (void)
{
  ThriftTransport *t = g_object_new (THRIFT_TYPE_RDMA, "hostname", rt_server_addr (), "port",
                                     rt_echo_server_port (server) + 1, "connect-timeout", 3000,
                                     NULL);
  GError *error = NULL;
  gint64 t0 = g_get_monotonic_time ();

  g_assert_false (thrift_transport_open (t, &error));
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_CONNECT);
  g_test_message ("no listener: %s", error->message);
  g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_REFUSED);
  g_assert_cmpint (thrift_rdma_get_last_status (THRIFT_RDMA (t)), ==, THRIFT_RDMA_STATUS_REFUSED);
  g_assert_cmpint (g_get_monotonic_time () - t0, <, 3000 * 1000 + 500 * 1000);
  g_assert_false (thrift_transport_is_open (t));
  g_clear_error (&error);
  g_object_unref (t);
}

/* A one-way stream: the server only reads, so credits cannot ride on replies; it must send
 * explicit credit messages or the client stalls after one window. */
#define STREAM_MESSAGES 200

typedef struct
{
  ThriftServerTransport *server;
  ThriftRdmaStats stats;
  guint received;
  ThriftRdmaStatus peek_status;
} StreamServer;

static gpointer
stream_server (gpointer data)
{
  StreamServer *ss = data;
  GError *error = NULL;
  ThriftTransport *t = thrift_server_transport_accept (ss->server, &error);
  guint8 buf[600];

  g_assert_no_error (error);
  for (guint i = 0; i < STREAM_MESSAGES; i++)
  {
    g_assert_cmpint (thrift_transport_read_all (t, buf, sizeof buf, &error), ==, sizeof buf);
    g_assert_no_error (error);
    g_assert_cmpuint (buf[0], ==, (guint8) i);
    g_assert_true (thrift_transport_read_end (t, &error));
    ss->received++;
  }
  g_assert_true (thrift_transport_write (t, buf, 1, &error));
  g_assert_true (thrift_transport_flush (t, &error));
  thrift_rdma_get_stats (THRIFT_RDMA (t), &ss->stats);
  /* wait for the client to leave: not an error, but the transport says why */
  g_assert_false (thrift_transport_peek (t, &error));
  g_assert_no_error (error);
  ss->peek_status = thrift_rdma_get_last_status (THRIFT_RDMA (t));
  thrift_transport_close (t, NULL);
  g_object_unref (t);
  return NULL;
}

static void
test_one_way_stream (void)
{
  StreamServer ss = { 0 };
  GThread *th;
  ThriftTransport *t;
  GError *error = NULL;
  guint8 buf[600];

  ss.server = g_object_new (THRIFT_TYPE_SERVER_RDMA, "hostname", rt_server_addr (), "port", 0,
                            "polling", THRIFT_RDMA_POLLING_EVENT, "bulk-threshold",
                            rt_bulk_threshold (), NULL);
  g_assert_true (thrift_server_transport_listen (ss.server, &error));
  th = g_thread_new ("stream", stream_server, &ss);
  t = rt_client_new (thrift_server_rdma_get_port (THRIFT_SERVER_RDMA (ss.server)),
                     THRIFT_RDMA_POLLING_EVENT);
  g_assert_true (thrift_transport_open (t, &error));
  g_assert_no_error (error);
  memset (buf, 0x33, sizeof buf);
  for (guint i = 0; i < STREAM_MESSAGES; i++)
  {
    buf[0] = (guint8) i;
    g_assert_true (thrift_transport_write (t, buf, sizeof buf, &error));
    g_assert_true (thrift_transport_flush (t, &error));
    g_assert_no_error (error);
  }
  g_assert_cmpint (thrift_transport_read_all (t, buf, 1, &error), ==, 1);
  g_assert_no_error (error);
  thrift_transport_close (t, NULL);
  g_thread_join (th);
  g_assert_cmpuint (ss.received, ==, STREAM_MESSAGES);
  g_assert_cmpint (ss.peek_status, ==, THRIFT_RDMA_STATUS_PEER_GONE);
  g_test_message ("one-way stream of %u messages: the server sent %" G_GUINT64_FORMAT
                  " credit messages",
                  STREAM_MESSAGES, ss.stats.credit_messages);
  /* more messages than one window went through, so credits came back explicitly */
  g_assert_cmpuint (ss.stats.credit_messages, >, 0);
  g_object_unref (t);
  thrift_server_transport_close (ss.server, NULL);
  g_object_unref (ss.server);
}

/* A quiet connection to a live peer: the keepalive probes it (zero-byte RDMA WRITEs that the
 * peer's adapter acknowledges) and the connection stays usable. */
static void
test_keepalive_alive (void)
{
  ThriftTransport *t = rt_client_new (rt_echo_server_port (server), THRIFT_RDMA_POLLING_EVENT);
  GError *error = NULL;
  ThriftRdmaStats st;

  g_object_set (t, "keepalive", 800, "call-timeout", 2500, NULL);
  g_assert_true (thrift_transport_open (t, &error));
  g_assert_no_error (error);
  g_assert_true (rt_echo (t, 64, 1, &error));
  thrift_rdma_reset_stats (THRIFT_RDMA (t));
  /* nothing comes for 2.5 s: the wait wakes for the keepalive's ticks meanwhile */
  g_assert_false (thrift_transport_peek (t, &error));
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE);
  /* RECEIVE, as a dead peer would be: the status says the peer is alive, time ran out */
  g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_TIMED_OUT);
  g_clear_error (&error);
  thrift_rdma_get_stats (THRIFT_RDMA (t), &st);
  g_test_message ("%" G_GUINT64_FORMAT " keepalive probes in 2.5 s (keepalive 800 ms)",
                  st.keepalive_probes);
  g_assert_cmpuint (st.keepalive_probes, >=, 3);
  g_assert_cmpuint (st.keepalive_probes, <=, 13);
  g_assert_true (thrift_transport_is_open (t));
  g_assert_true (rt_echo (t, 5000, 2, &error));
  g_assert_no_error (error);
  close_client (t);
}

/* A client that did not wait for much longer than the keepalive (an idle application, a slow
 * caller) is not declared dead for it: only an unanswered probe proves a peer gone. */
static void
test_keepalive_after_silence (void)
{
  ThriftTransport *t = rt_client_new (rt_echo_server_port (server), THRIFT_RDMA_POLLING_EVENT);
  GError *error = NULL;

  g_object_set (t, "keepalive", 400, NULL);
  g_assert_true (thrift_transport_open (t, &error));
  g_assert_no_error (error);
  g_assert_true (rt_echo (t, 64, 1, &error));
  /* a quiet wait: its ticks take the signs of life (the probes' answers) as they come */
  g_object_set (t, "call-timeout", 350, NULL);
  g_assert_false (thrift_transport_peek (t, &error));
  g_clear_error (&error);
  g_object_set (t, "call-timeout", 20000, NULL);
  g_usleep (1500 * 1000); /* no wait, so no tick, for almost four keepalives */
  for (guint i = 0; i < 20; i++)
  {
    g_assert_true (rt_echo (t, 64 + i, i, &error));
    g_assert_no_error (error);
  }
  close_client (t);
}

/* Runs last: everything every test opened is gone again, on both sides. */
static void
test_resources_back (void)
{
  gint64 until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;

  while (rt_live_resources () != baseline && g_get_monotonic_time () < until)
    g_usleep (10000);
  g_assert_cmpint (rt_live_resources (), ==, baseline);
  g_assert_cmpuint (rt_echo_server_failed (server), ==, 0);
}

int
main (int argc, char **argv)
{
#ifdef RDMA_TEST_SHORT
  /* the sanitizer build: a short run */
  static const gsize sizes[] = { 0, 1, 4097, 65536, 1 << 20 };
  static const gchar *const size_names[] = { "0", "1", "4097", "65536", "1MiB" };
#else
  static const gsize sizes[] = { 0, 1, 4095, 4096, 4097, 65536, 1 << 20, 16 << 20 };
  static const gchar *const size_names[] = { "0",    "1",     "4095", "4096",
                                             "4097", "65536", "1MiB", "16MiB" };
#endif
  int rc;

  g_test_init (&argc, &argv, NULL);
  /* whole large messages through each protocol, as without bulk transfer */
  rt_bulk_off ();
  baseline = rt_live_resources ();
  server = rt_echo_server_start (THRIFT_RDMA_POLLING_HYBRID, 100 << 20, 0);
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
  {
    gchar *path = g_strdup_printf ("/thrift_rdma/echo/%s", size_names[i]);
    g_test_add_data_func (path, GSIZE_TO_POINTER (sizes[i]), test_echo);
    g_free (path);
  }
  g_test_add_func ("/thrift_rdma/stats/small_echo", test_stats);
  g_test_add_data_func ("/thrift_rdma/polling/busy", GINT_TO_POINTER (THRIFT_RDMA_POLLING_BUSY),
                        test_polling);
  g_test_add_data_func ("/thrift_rdma/polling/event", GINT_TO_POINTER (THRIFT_RDMA_POLLING_EVENT),
                        test_polling);
  g_test_add_data_func ("/thrift_rdma/polling/hybrid", GINT_TO_POINTER (THRIFT_RDMA_POLLING_HYBRID),
                        test_polling);
  g_test_add_func ("/thrift_rdma/reopen/three_times", test_reopen);
  g_test_add_func ("/thrift_rdma/connect/source_address", test_source_address);
  g_test_add_func ("/thrift_rdma/sequential/many", test_sequential);
  g_test_add_func ("/thrift_rdma/credits/one_way_stream", test_one_way_stream);
  g_test_add_func ("/thrift_rdma/fault/no_listener", test_no_listener);
  g_test_add_func ("/thrift_rdma/keepalive/alive_peer", test_keepalive_alive);
  g_test_add_func ("/thrift_rdma/keepalive/after_silence", test_keepalive_after_silence);
  g_test_add_func ("/thrift_rdma/resources/back", test_resources_back);
  rc = g_test_run ();
  rt_echo_server_stop (server);
  if (!rt_resources_at_baseline (baseline))
    rc = 1;
  return rc;
}
