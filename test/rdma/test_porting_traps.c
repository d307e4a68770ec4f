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
 * What a user porting a c_glib program to RDMA runs into (issue 7), over soft-RoCE with code
 * generated from test/server/gate.thrift:
 *
 *   - a call that timed out fails its connection: the late reply never answers the next call;
 *   - the server's idle-timeout (a URI option) closes a quiet connection and no other;
 *   - ThriftSimpleServer with the factories of thrift_server_transport_new_for_uri
 *     ("rdma://...") serves connection after connection without reference-count criticals;
 *   - upstream's SIGINT pattern (a SA_RESETHAND handler that calls thrift_server_stop) stops
 *     ThriftSimpleServer over RDMA, idle in accept and with a client connected, as it does
 *     over ThriftServerSocket;
 *   - a server whose port is taken says so (RDMA CM reports it as EADDRNOTAVAIL);
 *   - the compact protocol, and a ThriftBufferedTransport over ThriftRdma, work.
 */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib-object.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol_factory.h>
#include <thrift/c_glib/protocol/thrift_compact_protocol.h>
#include <thrift/c_glib/protocol/thrift_compact_protocol_factory.h>
#include <thrift/c_glib/transport/thrift_buffered_transport.h>
#include <thrift/c_glib/server/thrift_simple_server.h>
#include <thrift/c_glib/server/thrift_threaded_server.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "gate.h"
#include "gate_client.h"
#include "gate_handler.h"
#include "rdma_test_util.h"
#include "serve_thread.h"

typedef GateTestClient Client;

static gboolean
client_open (Client *c, guint port, guint call_timeout_ms, GError **error)
{
  gate_test_client_init (c, g_object_new (THRIFT_TYPE_RDMA, "hostname", rt_server_addr (), "port",
                                          port, "call-timeout", call_timeout_ms, NULL));
  return thrift_transport_open (c->transport, error);
}

/* A server (ThriftThreadedServer or ThriftSimpleServer) of Gate on rdma://SERVER_ADDR:PORT
 * built the way docs/porting.md shows: the URI helper's transport and factories. */
static ThriftServer *
server_new_query (GType type, guint port, GType protocol_factory, const gchar *query)
{
  g_autofree gchar *uri = g_strdup_printf ("rdma://%s:%u%s", rt_server_addr (), port, query);
  ThriftTransportFactory *in_f = NULL, *out_f = NULL;
  ThriftServerTransport *st;
  GObject *handler, *processor, *pf;
  ThriftServer *server;
  GError *error = NULL;

  st = thrift_server_transport_new_for_uri (uri, &in_f, &out_f, &error);
  g_assert_no_error (error);
  handler = g_object_new (test_gate_get_type (), NULL);
  processor = g_object_new (TYPE_GATE_PROCESSOR, "handler", handler, NULL);
  pf = g_object_new (protocol_factory, NULL);
  server = g_object_new (type, "processor", processor, "server_transport", st,
                         "input_transport_factory", in_f, "output_transport_factory", out_f,
                         "input_protocol_factory", pf, "output_protocol_factory", pf, NULL);
  g_object_unref (handler);
  g_object_unref (processor);
  g_object_unref (pf);
  g_object_unref (st);
  g_object_unref (in_f);
  g_object_unref (out_f);
  return server;
}

static ThriftServer *
server_new_with (GType type, guint port, GType protocol_factory)
{
  return server_new_query (type, port, protocol_factory, "");
}

static ThriftServer *
server_new (GType type, guint port)
{
  return server_new_with (type, port, THRIFT_TYPE_BINARY_PROTOCOL_FACTORY);
}

static guint
random_port (void)
{
  return (guint) g_random_int_range (20000, 40000);
}

/* Opens a client, retrying while the server is not listening yet (15 s). */
static void
client_open_retry (Client *c, guint port, guint call_timeout_ms)
{
  gint64 until = g_get_monotonic_time () + 15 * G_USEC_PER_SEC;

  for (;;)
  {
    GError *error = NULL;
    if (client_open (c, port, call_timeout_ms, &error))
      return;
    gate_test_client_clear (c);
    if (g_get_monotonic_time () >= until)
      g_error ("no server on port %u: %s", port, error->message);
    g_clear_error (&error);
    g_usleep (50 * 1000);
  }
}

/* ---- item 1: no stale reply after a timeout ---- */

static void
test_no_stale_reply (void)
{
  ThriftServer *server;
  ServeThread serve;
  Client c = { 0 };
  GError *error = NULL;
  guint port = random_port ();
  gint32 r = -1;

  server = server_new (THRIFT_TYPE_THREADED_SERVER, port);
  serve_thread_init (&serve);
  serve_thread_start (&serve, server);
  client_open_retry (&c, port, 500);
  g_assert_true (gate_if_ping (c.client, &r, 1, &error));
  g_assert_no_error (error);

  /* gather (2, 1500) answers after 1.5 s (nobody else comes): the call gives up at 0.5 s */
  g_assert_false (gate_if_gather (c.client, &r, 2, 1500, &error));
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE);
  g_test_message ("timed out: %s", error->message);
  /* through the generated client and the protocol, the cause is still known */
  g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_TIMED_OUT);
  g_assert_cmpint (thrift_rdma_get_last_status (THRIFT_RDMA (c.transport)), ==,
                   THRIFT_RDMA_STATUS_TIMED_OUT);
  g_clear_error (&error);
  g_assert_false (thrift_transport_is_open (c.transport));
  g_usleep (1500 * 1000); /* the late reply has arrived by now */

  /* the same method on the same connection: an error, never the stale answer */
  r = -1;
  g_assert_false (gate_if_gather (c.client, &r, 1, 0, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "late reply"));
  g_assert_cmpint (r, ==, -1);
  /* the connection's failure, copied for this call, keeps its cause and Thrift's domain */
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE);
  g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_TIMED_OUT);
  g_clear_error (&error);
  g_assert_false (gate_if_ping (c.client, &r, 5, &error));
  g_clear_error (&error);

  /* reopened, the transport works again */
  thrift_transport_close (c.transport, NULL);
  g_assert_true (thrift_transport_open (c.transport, &error));
  g_assert_no_error (error);
  g_assert_cmpint (thrift_rdma_get_last_status (THRIFT_RDMA (c.transport)), ==,
                   THRIFT_RDMA_STATUS_OK);
  g_assert_true (gate_if_ping (c.client, &r, 5, &error));
  g_assert_no_error (error);
  g_assert_cmpint (r, ==, 6);
  gate_test_client_clear (&c);

  thrift_server_stop (server);
  g_assert_true (serve_thread_join (&serve, 10 * G_USEC_PER_SEC));
  serve_thread_clear (&serve);
  g_object_unref (server);
}

/* ---- item 5: the server's idle timeout, from the URI ---- */

/* rdma://...?idle-timeout=800 on the pool server: a client quiet for longer is closed (its
 * next call fails), one that keeps calling is not, and the count of open connections says
 * so. */
static void
test_idle_timeout (void)
{
  ThriftServer *server;
  ServeThread serve;
  Client quiet = { 0 }, busy = { 0 };
  GError *error = NULL;
  guint port = random_port (), active = 0;
  gint32 r = 0;
  gint i;

  server = server_new_query (THRIFT_TYPE_THREADED_SERVER, port, THRIFT_TYPE_BINARY_PROTOCOL_FACTORY,
                             "?idle-timeout=800");
  serve_thread_init (&serve);
  serve_thread_start (&serve, server);
  client_open_retry (&quiet, port, 5000);
  client_open_retry (&busy, port, 5000);
  g_assert_true (gate_if_ping (quiet.client, &r, 1, &error));
  g_assert_no_error (error);
  for (i = 0; i < 10; i++)
  { /* 2 s of calls every 200 ms */
    g_assert_true (gate_if_ping (busy.client, &r, i, &error));
    g_assert_no_error (error);
    g_usleep (200 * 1000);
  }
  g_object_get (server, "active-connections", &active, NULL);
  g_assert_cmpuint (active, ==, 1);
  g_assert_false (gate_if_ping (quiet.client, &r, 2, &error));
  g_test_message ("the quiet client: %s", error->message);
  g_clear_error (&error);
  g_assert_true (gate_if_ping (busy.client, &r, 7, &error));
  g_assert_no_error (error);
  g_assert_cmpint (r, ==, 8);
  gate_test_client_clear (&quiet);
  gate_test_client_clear (&busy);
  thrift_server_stop (server);
  g_assert_true (serve_thread_join (&serve, 10 * G_USEC_PER_SEC));
  serve_thread_clear (&serve);
  g_object_unref (server);
}

/* ---- items 7 and 8: ThriftSimpleServer over rdma:// ---- */

typedef struct
{
  ThriftServer *server;
  pthread_t thread;
  gint returned; /* atomic */
} SimpleRun;

static SimpleRun *sigint_target;

/* upstream's tutorial/c_glib/c_glib_server.c pattern */
static void
on_sigint (int signum)
{
  thrift_server_stop (sigint_target->server);
}

static void *
simple_main (void *data)
{
  SimpleRun *run = data;
  GError *error = NULL;

  thrift_server_serve (run->server, &error);
  if (error != NULL)
    g_test_message ("serve: %s", error->message);
  g_clear_error (&error);
  g_atomic_int_set (&run->returned, 1);
  return NULL;
}

static gboolean
wait_returned (SimpleRun *run, gint64 timeout_us)
{
  gint64 until = g_get_monotonic_time () + timeout_us;

  while (!g_atomic_int_get (&run->returned) && g_get_monotonic_time () < until)
    g_usleep (10 * 1000);
  return g_atomic_int_get (&run->returned);
}

/* Connection after connection through the URI helper's pass-through factories (g_test makes
 * the g_object_unref criticals of borrowed references fatal), then a stop. */
static void
test_simple_server_factories (void)
{
  SimpleRun run = { 0 };
  guint port = random_port ();
  gint i;

  run.server = server_new (THRIFT_TYPE_SIMPLE_SERVER, port);
  g_assert_cmpint (pthread_create (&run.thread, NULL, simple_main, &run), ==, 0);
  for (i = 0; i < 3; i++)
  {
    Client c = { 0 };
    GError *error = NULL;
    gint32 r = 0;

    client_open_retry (&c, port, 5000);
    g_assert_true (gate_if_ping (c.client, &r, i, &error));
    g_assert_no_error (error);
    g_assert_cmpint (r, ==, i + 1);
    gate_test_client_clear (&c);
  }
  thrift_server_stop (run.server);
  {
    /* wakes accept; the server drops it at once, so it may as well fail */
    Client c = { 0 };
    GError *error = NULL;
    client_open (&c, port, 5000, &error);
    g_clear_error (&error);
    gate_test_client_clear (&c);
  }
  g_assert_true (wait_returned (&run, 10 * G_USEC_PER_SEC));
  pthread_join (run.thread, NULL);
  g_object_unref (run.server);
}

/* SIGINT with a SA_RESETHAND handler (no SA_RESTART), delivered to the serving thread while
 * it waits in accept (@data NULL) or in peek with a client connected: serve returns. */
static void
test_simple_server_sigint (gconstpointer data)
{
  gboolean connected = data != NULL;
  struct sigaction sa, old;
  SimpleRun run = { 0 };
  Client c = { 0 };
  guint port = random_port ();

  run.server = server_new (THRIFT_TYPE_SIMPLE_SERVER, port);
  sigint_target = &run;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sa.sa_flags = SA_RESETHAND;
  g_assert_cmpint (sigaction (SIGINT, &sa, &old), ==, 0);
  g_assert_cmpint (pthread_create (&run.thread, NULL, simple_main, &run), ==, 0);

  if (connected)
  {
    GError *error = NULL;
    gint32 r = 0;
    client_open_retry (&c, port, 5000);
    g_assert_true (gate_if_ping (c.client, &r, 1, &error));
    g_assert_no_error (error);
  }
  else
  {
    ThriftServerRdma *st = NULL;
    gint64 until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
    g_object_get (run.server, "server_transport", &st, NULL);
    while (thrift_server_rdma_get_port (st) == 0 && g_get_monotonic_time () < until)
      g_usleep (10 * 1000);
    g_assert_cmpuint (thrift_server_rdma_get_port (st), ==, port);
    g_object_unref (st);
  }
  g_usleep (300 * 1000); /* blocked in poll by now */
  g_assert_cmpint (pthread_kill (run.thread, SIGINT), ==, 0);
  g_assert_true (wait_returned (&run, 5 * G_USEC_PER_SEC));
  pthread_join (run.thread, NULL);
  gate_test_client_clear (&c);
  g_assert_cmpint (sigaction (SIGINT, &old, NULL), ==, 0);
  g_object_unref (run.server);
}

/* ---- the compact protocol and a buffered wrapper over ThriftRdma ---- */

static void
test_compact_buffered (void)
{
  ThriftServer *server;
  ServeThread serve;
  ThriftTransport *rdma, *buffered;
  ThriftProtocol *protocol;
  GateIf *client;
  GError *error = NULL;
  guint port = random_port ();
  gint64 until = g_get_monotonic_time () + 15 * G_USEC_PER_SEC;
  GByteArray *in = g_byte_array_new (), *out = NULL;
  gint32 r = 0;

  server = server_new_with (THRIFT_TYPE_THREADED_SERVER, port,
                            THRIFT_TYPE_COMPACT_PROTOCOL_FACTORY);
  serve_thread_init (&serve);
  serve_thread_start (&serve, server);
  rdma = g_object_new (THRIFT_TYPE_RDMA, "hostname", rt_server_addr (), "port", port, NULL);
  buffered = g_object_new (THRIFT_TYPE_BUFFERED_TRANSPORT, "transport", rdma, NULL);
  protocol = g_object_new (THRIFT_TYPE_COMPACT_PROTOCOL, "transport", buffered, NULL);
  client = g_object_new (TYPE_GATE_CLIENT, "input_protocol", protocol, "output_protocol", protocol,
                         NULL);
  while (!thrift_transport_open (buffered, &error))
  {
    g_assert_cmpint (g_get_monotonic_time (), <, until);
    g_clear_error (&error);
    g_usleep (50 * 1000);
  }
  g_assert_true (gate_if_ping (client, &r, 9, &error));
  g_assert_no_error (error);
  g_assert_cmpint (r, ==, 10);
  for (guint i = 0; i < 70000; i++)
  {
    guint8 b = (guint8) (i * 13);
    g_byte_array_append (in, &b, 1);
  }
  g_assert_true (gate_if_echo (client, &out, in, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (out->data, out->len, in->data, in->len);
  g_byte_array_unref (in);
  g_byte_array_unref (out);
  thrift_transport_close (buffered, NULL);
  g_object_unref (client);
  g_object_unref (protocol);
  g_object_unref (buffered);
  g_object_unref (rdma);
  thrift_server_stop (server);
  g_assert_true (serve_thread_join (&serve, 10 * G_USEC_PER_SEC));
  serve_thread_clear (&serve);
  g_object_unref (server);
}

/* ---- item 10: a taken port is called a taken port ---- */

static void
test_port_in_use (void)
{
  ThriftServerTransport *a, *b, *c;
  GError *error = NULL;
  guint port;

  a = g_object_new (THRIFT_TYPE_SERVER_RDMA, "port", 0, NULL);
  g_assert_true (thrift_server_transport_listen (a, &error));
  g_assert_no_error (error);
  port = thrift_server_rdma_get_port (THRIFT_SERVER_RDMA (a));
  /* every address, on the taken port */
  b = g_object_new (THRIFT_TYPE_SERVER_RDMA, "port", port, NULL);
  g_assert_false (thrift_server_transport_listen (b, &error));
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "the port is in use"));
  g_assert_null (strstr (error->message, "RDMA interface"));
  g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_ADDR_IN_USE);
  g_clear_error (&error);
  /* an address that is on no interface (TEST-NET-1) still says so */
  c = g_object_new (THRIFT_TYPE_SERVER_RDMA, "hostname", "192.0.2.1", "port", port + 1, NULL);
  g_assert_false (thrift_server_transport_listen (c, &error));
  g_test_message ("%s", error->message);
  g_assert_null (strstr (error->message, "in use"));
  g_assert_cmpint (thrift_rdma_error_status (error), !=, THRIFT_RDMA_STATUS_ADDR_IN_USE);
  g_assert_cmpint (thrift_server_rdma_get_last_status (THRIFT_SERVER_RDMA (c)), ==,
                   thrift_rdma_error_status (error));
  g_clear_error (&error);
  g_object_unref (c);
  g_object_unref (b);
  thrift_server_transport_close (a, NULL);
  g_object_unref (a);
}

int
main (int argc, char **argv)
{
  gint baseline, rc;

  g_test_init (&argc, &argv, NULL);
  /* generated code without hints registers types lazily: do it before threads race */
  g_type_ensure (TYPE_GATE_CLIENT);
  g_type_ensure (TYPE_GATE_PROCESSOR);
  baseline = rt_live_resources ();
  g_test_add_func ("/porting/call-timeout/no-stale-reply", test_no_stale_reply);
  g_test_add_func ("/porting/idle-timeout/pool", test_idle_timeout);
  g_test_add_func ("/porting/simple-server/uri-factories", test_simple_server_factories);
  g_test_add_data_func ("/porting/simple-server/sigint/idle", NULL, test_simple_server_sigint);
  g_test_add_data_func ("/porting/simple-server/sigint/connected", "", test_simple_server_sigint);
  g_test_add_func ("/porting/listen/port-in-use", test_port_in_use);
  g_test_add_func ("/porting/compact-protocol/buffered", test_compact_buffered);
  rc = g_test_run ();
  if (!rt_resources_at_baseline (baseline))
    rc = 1;
  return rc;
}
