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
 * ThriftThreadedServer over ThriftServerRdma, with code generated from test/server/gate.thrift:
 * 8 RDMA clients served at once, the connection bound, stopping while idle and while RDMA
 * clients are connected (serve returns promptly, workers joined, verbs resources freed), and
 * thrift_rdma_interrupt on a client blocked in peek, in each polling mode.
 */
#include "config.h"

#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <glib.h>
#include <glib-object.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol_factory.h>
#include <thrift/c_glib/server/thrift_threaded_server.h>
#include <thrift/c_glib/transport/thrift_buffered_transport_factory.h>

#include "lib/c_glib/transport/rdma/rdma_block.h"
#include "lib/c_glib/transport/rdma/rdma_domain.h"
#include "gate.h"
#include "gate_client.h"
#include "gate_handler.h"
#include "rdma_test_util.h"
#include "serve_thread.h"

/* A stop must end serve well within the connections' 30 s call timeout. */
#define STOP_LIMIT_US (5 * G_USEC_PER_SEC)

/* ---- the server ---- */

static guint
count_threads (void)
{
  return test_count_entries ("/proc/self/task");
}

/* The thread count once it settles at @expected (2 s at most): a joined thread can still be
 * listed for a moment while the kernel finishes its exit. */
static guint
threads_settled (guint expected)
{
  gint64 until = g_get_monotonic_time () + 2 * G_USEC_PER_SEC;
  guint n;

  while ((n = count_threads ()) != expected && g_get_monotonic_time () < until)
    g_usleep (10 * 1000);
  return n;
}

/* The thread count to compare with later, once the previous test's threads are gone: the
 * same count twice, 100 ms apart (2 s at most).  A count taken while one still exits would
 * wait for a thread that is not coming back. */
static guint
threads_baseline (void)
{
  gint64 until = g_get_monotonic_time () + 2 * G_USEC_PER_SEC;
  guint before = count_threads (), n;

  for (;;)
  {
    g_usleep (100 * 1000);
    n = count_threads ();
    if (n == before || g_get_monotonic_time () >= until)
      return n;
    before = n;
  }
}

typedef struct
{
  ThriftServer *server;
  ThriftServerRdma *transport;
  ServeThread serve;
} Fixture;

/* A threaded server on rdma://SERVER_ADDR:0, buffered transports (the factory wraps each
 * ThriftRdma, as a user would with ThriftServerSocket), not serving yet. */
static void
fixture_make (Fixture *f, guint max_connections)
{
  GObject *handler, *processor, *tf, *pf;

  memset (f, 0, sizeof *f);
  serve_thread_init (&f->serve);
  f->transport = g_object_new (THRIFT_TYPE_SERVER_RDMA, "hostname", rt_server_addr (), "port", 0,
                               NULL);
  handler = g_object_new (test_gate_get_type (), NULL);
  processor = g_object_new (TYPE_GATE_PROCESSOR, "handler", handler, NULL);
  tf = g_object_new (THRIFT_TYPE_BUFFERED_TRANSPORT_FACTORY, NULL);
  pf = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL_FACTORY, NULL);
  f->server = g_object_new (THRIFT_TYPE_THREADED_SERVER, "processor", processor, "server_transport",
                            f->transport, "input_transport_factory", tf, "output_transport_factory",
                            tf, "input_protocol_factory", pf, "output_protocol_factory", pf,
                            "max-connections", max_connections, NULL);
  g_object_unref (handler);
  g_object_unref (processor);
  g_object_unref (tf);
  g_object_unref (pf);
}

/* Starts serving and waits (5 s at most) until the server listens; returns its port. */
static guint
fixture_start (Fixture *f)
{
  gint64 until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  gboolean listening = FALSE;

  serve_thread_start (&f->serve, f->server);
  while (g_get_monotonic_time () < until)
  {
    g_object_get (f->server, "listening", &listening, NULL);
    if (listening)
      break;
    g_usleep (5000);
  }
  g_assert_true (listening);
  g_assert_cmpuint (thrift_server_rdma_get_port (f->transport), >, 0);
  return thrift_server_rdma_get_port (f->transport);
}

/* Stops the server and waits (10 s at most) for serve to return; asserts it took less than
 * STOP_LIMIT_US and returned TRUE. */
static void
fixture_stop (Fixture *f)
{
  gint64 start = g_get_monotonic_time ();
  gboolean result;

  thrift_server_stop (f->server);
  result = serve_thread_join (&f->serve, 10 * G_USEC_PER_SEC);
  g_test_message ("stop took %" G_GINT64_FORMAT " ms", (g_get_monotonic_time () - start) / 1000);
  g_assert_cmpint (g_get_monotonic_time () - start, <, STOP_LIMIT_US);
  g_assert_no_error (f->serve.error);
  g_assert_true (result);
}

static void
fixture_free (Fixture *f)
{
  g_clear_object (&f->server);
  g_clear_object (&f->transport);
  serve_thread_clear (&f->serve);
}

/* ---- clients ---- */

typedef GateTestClient Client;

static gboolean
client_open (Client *c, guint port, ThriftRdmaPolling polling, GError **error)
{
  gate_test_client_init (c, rt_client_new (port, polling));
  return thrift_transport_open (c->transport, error);
}

typedef struct
{
  guint port;
  gint id;
  gint n;
  gint timeout_ms;
  gint result;
  gint pong;
  gboolean ok;
  gint done; /* atomic: the calls returned */
} GatherJob;

/* Connects, gathers, then pings (its own reply: id + 1) on the same connection. */
static gpointer
gather_client (gpointer data)
{
  GatherJob *job = data;
  Client c = { 0 };
  GError *error = NULL;

  job->ok = client_open (&c, job->port, THRIFT_RDMA_POLLING_EVENT, &error)
            && gate_if_gather (c.client, &job->result, job->n, job->timeout_ms, &error)
            && gate_if_ping (c.client, &job->pong, job->id, &error);
  if (error != NULL)
    g_printerr ("# gather client %d: %s\n", job->id, error->message);
  g_clear_error (&error);
  gate_test_client_clear (&c);
  g_atomic_int_set (&job->done, 1);
  return NULL;
}

/* Runs @count gather clients at once; returns after all are joined. */
static void
run_gather (guint port, GatherJob *jobs, guint count, gint n, gint timeout_ms)
{
  GThread *threads[16];
  guint i;

  g_assert_cmpuint (count, <=, G_N_ELEMENTS (threads));
  test_gate_reset_peak ();
  for (i = 0; i < count; i++)
  {
    jobs[i] = (GatherJob){ .port = port, .id = (gint) i * 10, .n = n, .timeout_ms = timeout_ms };
    threads[i] = g_thread_new ("client", gather_client, &jobs[i]);
  }
  for (i = 0; i < count; i++)
    g_thread_join (threads[i]);
  for (i = 0; i < count; i++)
  {
    g_assert_true (jobs[i].ok);
    g_assert_cmpint (jobs[i].pong, ==, jobs[i].id + 1);
  }
}

/* ---- tests ---- */

/* 8 RDMA clients at once: each gather returns only when all 8 are inside the handler. */
static void
test_concurrent (void)
{
  Fixture f;
  GatherJob jobs[8];
  guint64 accepted = 0;
  guint port, i;
  gint baseline = rt_live_resources ();
  guint threads0 = threads_baseline ();

  fixture_make (&f, 16);
  port = fixture_start (&f);
  run_gather (port, jobs, 8, 8, 15000);
  for (i = 0; i < 8; i++)
    g_assert_cmpint (jobs[i].result, ==, 8);
  g_assert_cmpint (test_gate_peak (), ==, 8);
  g_object_get (f.server, "connections-accepted", &accepted, NULL);
  g_assert_cmpuint (accepted, ==, 8);
  fixture_stop (&f);
  g_assert_cmpuint (threads_settled (threads0), ==, threads0);
  fixture_free (&f);
  g_assert_true (rt_resources_at_baseline (baseline));
}

#define HANDOVER_CLIENTS 63
#define HANDOVER_PINGS 5

typedef struct
{
  guint port;
  gint id;
  gint64 slowest_us; /* the slowest of its pings */
  gboolean ok;
} PingJob;

static gpointer
ping_client (gpointer data)
{
  PingJob *job = data;
  Client c = { 0 };
  GError *error = NULL;
  gint r = 0;

  job->ok = client_open (&c, job->port, THRIFT_RDMA_POLLING_EVENT, &error);
  for (gint i = 0; job->ok && i < HANDOVER_PINGS; i++)
  {
    gint64 t0 = g_get_monotonic_time ();
    job->ok = gate_if_ping (c.client, &r, job->id + i, &error) && r == job->id + i + 1;
    job->slowest_us = MAX (job->slowest_us, g_get_monotonic_time () - t0);
  }
  if (error != NULL)
    g_printerr ("# ping client %d: %s\n", job->id, error->message);
  g_clear_error (&error);
  gate_test_client_clear (&c);
  return NULL;
}

/* 64 RDMA clients of the default POOL server (a dispatcher per core): one call holds its
 * dispatcher for 5 s (a gather that never fills), and the other 63 clients connect and are
 * served meanwhile, each call long before the held one returns; the held dispatcher is
 * handed over (thrift_server_dispatch.h). */
static void
test_handover (void)
{
  static PingJob jobs[HANDOVER_CLIENTS];
  GThread *threads[HANDOVER_CLIENTS], *held;
  GatherJob held_job;
  guint64 handovers = 0;
  gint64 slowest = 0;
  gint baseline = rt_live_resources ();
  guint port;
  Fixture f;

  fixture_make (&f, 128);
  port = fixture_start (&f);
  test_gate_reset_peak ();
  held_job = (GatherJob){ .port = port, .id = 1000, .n = 100, .timeout_ms = 5000 };
  held = g_thread_new ("held", gather_client, &held_job);
  while (test_gate_peak () < 1)
    g_usleep (1000);

  for (guint i = 0; i < HANDOVER_CLIENTS; i++)
  {
    jobs[i] = (PingJob){ .port = port, .id = (gint) i * 100 };
    threads[i] = g_thread_new ("client", ping_client, &jobs[i]);
  }
  for (guint i = 0; i < HANDOVER_CLIENTS; i++)
  {
    g_thread_join (threads[i]);
    g_assert_true (jobs[i].ok);
    slowest = MAX (slowest, jobs[i].slowest_us);
  }
  g_test_message (
      "63 clients served while a call held its dispatcher; slowest call %" G_GINT64_FORMAT " ms",
      slowest / 1000);
  /* all served while the held call still runs */
  g_assert_false (g_atomic_int_get (&held_job.done));
  g_object_get (f.server, "handovers", &handovers, NULL);
  g_assert_cmpuint (handovers, >=, 1);

  g_thread_join (held);
  g_assert_true (held_job.ok);
  g_assert_cmpint (held_job.result, ==, 1);
  g_assert_cmpint (held_job.pong, ==, held_job.id + 1);
  fixture_stop (&f);
  fixture_free (&f);
  g_assert_true (rt_resources_at_baseline (baseline));
}

/* One dispatcher, and a client whose next requests are always there (pipelined: they wait
 * in its connection's receive queue): another connection's request is served after at
 * most a few of them, not after all.  (Before, the dispatcher served a connection for as
 * long as its next request was there when it looked: a client spinning for its replies
 * kept it, and at 16 clients of two dispatchers 14 waited out whole benchmark rounds.) */
static void
test_pool_fair (void)
{
  enum
  {
    PIPELINED = 16,
    SLEEP_MS = 5
  }; /* each call well inside the handover bound */
  Client a = { 0 }, b = { 0 };
  GError *error = NULL;
  gint r = 0, before, served_before_b;
  gint baseline = rt_live_resources ();
  guint port;
  Fixture f;

  fixture_make (&f, 4);
  g_object_set (f.server, "workers", 1, NULL);
  port = fixture_start (&f);
  g_assert_true (client_open (&b, port, THRIFT_RDMA_POLLING_EVENT, &error));
  g_assert_no_error (error);
  g_assert_true (gate_if_ping (b.client, &r, 1, &error));
  g_assert_cmpint (r, ==, 2);
  g_assert_true (client_open (&a, port, THRIFT_RDMA_POLLING_EVENT, &error));
  g_assert_no_error (error);

  before = test_gate_pings ();
  for (gint i = 0; i < PIPELINED; i++)
    g_assert_true (gate_client_send_ping (a.client, -SLEEP_MS, &error));
  g_assert_no_error (error);
  while (test_gate_pings () < before + 1)
    g_usleep (500);
  g_assert_true (gate_if_ping (b.client, &r, 7, &error));
  g_assert_no_error (error);
  g_assert_cmpint (r, ==, 8);
  served_before_b = test_gate_pings () - before - 1;
  g_test_message ("%d of the %d pipelined calls were served before the other connection's",
                  served_before_b, PIPELINED);
  g_assert_cmpint (served_before_b, <, PIPELINED / 2);

  for (gint i = 0; i < PIPELINED; i++)
  {
    g_assert_true (gate_client_recv_ping (a.client, &r, &error));
    g_assert_no_error (error);
    g_assert_cmpint (r, ==, -SLEEP_MS + 1);
  }
  gate_test_client_clear (&a);
  gate_test_client_clear (&b);
  fixture_stop (&f);
  fixture_free (&f);
  g_assert_true (rt_resources_at_baseline (baseline));
}

/* max-connections=2 and 3 RDMA clients: never more than 2 served at once, and the third is
 * served (its connection request waits in the backlog) once one of the first two leaves. */
static void
test_bound (void)
{
  Fixture f;
  GatherJob jobs[3];
  guint64 accepted = 0;
  guint port, i;
  gint baseline = rt_live_resources ();

  fixture_make (&f, 2);
  port = fixture_start (&f);
  run_gather (port, jobs, 3, 3, 1500);
  for (i = 0; i < 3; i++)
    g_assert_cmpint (jobs[i].result, <=, 2);
  g_assert_cmpint (test_gate_peak (), ==, 2);
  g_object_get (f.server, "connections-accepted", &accepted, NULL);
  g_assert_cmpuint (accepted, ==, 3);
  fixture_stop (&f);
  fixture_free (&f);
  g_assert_true (rt_resources_at_baseline (baseline));
}

/* Stop while 4 RDMA clients are connected and idle between calls: each worker blocks in
 * peek on its ThriftRdma (call timeout 30 s) and must be woken by the stop.  serve returns
 * at once, every worker is joined, the server's connections are freed, and the clients see
 * the connection end. */
static void
test_stop_connected (gconstpointer data)
{
  gboolean pool = g_str_equal (data, "pool");
  guint n_clients = pool ? 12 : 4;
  Fixture f;
  Client c[12] = { { 0 } };
  guint threads0 = threads_baseline (), active = 0, port, i, expected;
  gint baseline = rt_live_resources (), with_clients;
  GError *error = NULL;
  gint32 r = 0;

  fixture_make (&f, 16);
  g_object_set (f.server, "mode",
                pool ? THRIFT_THREADED_SERVER_POOL : THRIFT_THREADED_SERVER_PER_CONNECTION,
                "workers", 2, NULL);
  port = fixture_start (&f);
  for (i = 0; i < n_clients; i++)
  {
    g_assert_true (client_open (&c[i], port, THRIFT_RDMA_POLLING_EVENT, &error));
    g_assert_no_error (error);
    g_assert_true (gate_if_ping (c[i].client, &r, (gint32) i, &error));
    g_assert_no_error (error);
    g_assert_cmpint (r, ==, (gint32) i + 1);
  }
  g_object_get (f.server, "active-connections", &active, NULL);
  g_assert_cmpuint (active, ==, n_clients);
  /* POOL: serve, acceptor, watchdog, 2 dispatchers, whatever the connections; PER_CONNECTION:
   * serve, acceptor, one worker per connection; and the engine's thread per device with a
   * shared receive queue (the clients' and the server's, rdma_domain.h), and the watcher of
   * the clients' blocked waits (rdma_block.h) */
  expected = (pool ? threads0 + 3 + 2 : threads0 + 2 + n_clients) + rdma_domain_threads ()
             + rdma_block_threads ();
  g_assert_cmpuint (threads_settled (expected), ==, expected);
  for (i = n_clients; i-- > 0;)
  {
    g_assert_true (gate_if_ping (c[i].client, &r, 100 + (gint32) i, &error));
    g_assert_no_error (error);
    g_assert_cmpint (r, ==, 101 + (gint32) i);
  }
  with_clients = rt_live_resources ();

  fixture_stop (&f);
  /* (the clients' device keeps its thread while they hold connections, so does the watcher) */
  expected = threads0 + rdma_domain_threads () + rdma_block_threads ();
  g_assert_cmpuint (threads_settled (expected), ==, expected);
  g_object_get (f.server, "active-connections", &active, NULL);
  g_assert_cmpuint (active, ==, 0);
  /* the server's half is gone while the clients still hold theirs */
  g_assert_cmpint (rt_live_resources (), <, with_clients);
  g_assert_cmpint (rt_live_resources (), >, baseline);

  for (i = 0; i < n_clients; i++)
  {
    g_assert_false (gate_if_ping (c[i].client, &r, 1, &error));
    g_assert_nonnull (error);
    g_clear_error (&error);
    gate_test_client_clear (&c[i]);
  }
  fixture_free (&f);
  g_assert_true (rt_resources_at_baseline (baseline));
}

/* Stop while idle, twice on the same server: nothing left behind either time. */
static void
test_stop_idle (void)
{
  Fixture f;
  guint threads0 = threads_baseline ();
  gint baseline = rt_live_resources ();
  gint round;

  fixture_make (&f, 4);
  for (round = 0; round < 2; round++)
  {
    Client c = { 0 };
    GError *error = NULL;
    gint32 r = 0;
    guint port = fixture_start (&f);

    /* a served call proves the server was up before it is stopped */
    g_assert_true (client_open (&c, port, THRIFT_RDMA_POLLING_EVENT, &error));
    g_assert_no_error (error);
    g_assert_true (gate_if_ping (c.client, &r, 41, &error));
    g_assert_no_error (error);
    g_assert_cmpint (r, ==, 42);
    gate_test_client_clear (&c);
    fixture_stop (&f);
    g_assert_cmpuint (threads_settled (threads0), ==, threads0);
    g_assert_true (rt_resources_at_baseline (baseline));
  }
  fixture_free (&f);
}

/* thrift_rdma_interrupt wakes a client blocked in peek (nothing is coming: the server only
 * answers calls); after it, peek is FALSE and read fails "interrupted" until close; a
 * reopened transport works again. */
typedef struct
{
  ThriftTransport *transport;
  gboolean peeked;
  GError *error;
  gint64 returned_at;
} PeekJob;

static gpointer
peek_main (gpointer data)
{
  PeekJob *job = data;
  job->peeked = thrift_transport_peek (job->transport, &job->error);
  job->returned_at = g_get_monotonic_time ();
  return NULL;
}

static void
test_interrupt (gconstpointer data)
{
  ThriftRdmaPolling polling = GPOINTER_TO_INT (data);
  Fixture f;
  Client c = { 0 };
  PeekJob job = { 0 };
  GThread *t;
  GError *error = NULL;
  gint64 interrupted_at;
  guint8 byte;
  gint32 r = 0;
  guint port;
  gint baseline = rt_live_resources ();

  fixture_make (&f, 4);
  port = fixture_start (&f);
  g_assert_true (client_open (&c, port, polling, &error));
  g_assert_no_error (error);

  job.transport = c.transport;
  t = g_thread_new ("peek", peek_main, &job);
  g_usleep (300 * 1000); /* let it block */
  g_assert_cmpint (job.returned_at, ==, 0);
  interrupted_at = g_get_monotonic_time ();
  thrift_rdma_interrupt (THRIFT_RDMA (c.transport));
  g_thread_join (t);
  g_assert_false (job.peeked);
  g_assert_no_error (job.error);
  /* not an error, but the transport says why */
  g_assert_cmpint (thrift_rdma_get_last_status (THRIFT_RDMA (c.transport)), ==,
                   THRIFT_RDMA_STATUS_INTERRUPTED);
  /* the client's call timeout is 20 s: only the interrupt ends it this soon */
  g_assert_cmpint (job.returned_at - interrupted_at, <, 2 * G_USEC_PER_SEC);

  /* sticky until close */
  g_assert_false (thrift_transport_peek (c.transport, &error));
  g_assert_no_error (error);
  g_assert_cmpint (thrift_transport_read (c.transport, &byte, 1, &error), ==, -1);
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET);
  g_assert_nonnull (strstr (error->message, "interrupted"));
  g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_INTERRUPTED);
  g_clear_error (&error);
  g_assert_false (gate_if_ping (c.client, &r, 1, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);

  /* close clears it: the same object opens and calls again */
  thrift_transport_close (c.transport, NULL);
  g_assert_true (thrift_transport_open (c.transport, &error));
  g_assert_no_error (error);
  g_assert_true (gate_if_ping (c.client, &r, 6, &error));
  g_assert_no_error (error);
  g_assert_cmpint (r, ==, 7);

  gate_test_client_clear (&c);
  fixture_stop (&f);
  fixture_free (&f);
  g_assert_true (rt_resources_at_baseline (baseline));
}

/* ---- the pool's poll set ---- */

static gdouble
cpu_seconds (void)
{
  struct rusage ru;

  g_assert_cmpint (getrusage (RUSAGE_SELF, &ru), ==, 0);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec
         + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Idle connections in the poll set cost no CPU, also after their requests were served with
 * busy polling (whose waits never take the completion channel's event: the poller must). */
static void
test_pool_idle_cpu (void)
{
  Fixture f;
  Client c[4] = { { 0 } };
  GError *error = NULL;
  guint port, i;
  gint32 r = 0;
  gdouble cpu0, cpu;

  fixture_make (&f, 16);
  g_object_set (f.transport, "polling", THRIFT_RDMA_POLLING_BUSY, NULL);
  port = fixture_start (&f);
  for (i = 0; i < G_N_ELEMENTS (c); i++)
  {
    g_assert_true (client_open (&c[i], port, THRIFT_RDMA_POLLING_EVENT, &error));
    for (gint k = 0; k < 3; k++)
    { /* requests the poll set hands over, then lingers */
      g_assert_true (gate_if_ping (c[i].client, &r, (gint32) i, &error));
      g_assert_no_error (error);
      g_usleep (10 * 1000);
    }
  }
  g_usleep (200 * 1000); /* the lingers are over: every connection is in the poll set */
  cpu0 = cpu_seconds ();
  g_usleep (1500 * 1000);
  cpu = cpu_seconds () - cpu0;
  g_test_message ("CPU of the process in 1.5 s with 4 idle connections: %.3f s", cpu);
  g_assert_cmpfloat (cpu, <, 0.3);
  for (i = 0; i < G_N_ELEMENTS (c); i++)
  {
    g_assert_true (gate_if_ping (c[i].client, &r, 10 + (gint32) i, &error));
    g_assert_no_error (error);
    g_assert_cmpint (r, ==, 11 + (gint32) i);
    gate_test_client_clear (&c[i]);
  }
  fixture_stop (&f);
  fixture_free (&f);
}

/* A large reply leaves more completions in the CQ than one poll takes: the next request,
 * behind them, must still be seen (the CQ is armed only once it is empty). */
static void
test_pool_large_then_small (void)
{
  Fixture f;
  Client c = { 0 };
  GError *error = NULL;
  GByteArray *in = g_byte_array_new ();
  guint port, i;
  gint32 r = 0;

  fixture_make (&f, 16);
  g_object_set (f.transport, "polling", THRIFT_RDMA_POLLING_EVENT, NULL);
  port = fixture_start (&f);
  g_assert_true (client_open (&c, port, THRIFT_RDMA_POLLING_EVENT, &error));
  g_object_set (c.transport, "call-timeout", 3000, NULL);
  for (i = 0; i < 200 * 1024; i++)
  {
    guint8 b = (guint8) (i * 31);
    g_byte_array_append (in, &b, 1);
  }
  for (i = 0; i < 10; i++)
  {
    GByteArray *out = NULL;
    g_assert_true (gate_if_echo (c.client, &out, in, &error));
    g_assert_no_error (error);
    g_assert_cmpmem (out->data, out->len, in->data, in->len);
    g_byte_array_unref (out);
    g_assert_true (gate_if_ping (c.client, &r, (gint32) i, &error));
    g_assert_no_error (error);
    g_assert_cmpint (r, ==, (gint32) i + 1);
  }
  g_byte_array_unref (in);
  gate_test_client_clear (&c);
  fixture_stop (&f);
  fixture_free (&f);
}

int
main (int argc, char **argv)
{
  gint baseline;
  int rc;

  g_test_init (&argc, &argv, NULL);
  alarm (120); /* a hung stop must fail the run, not stall it */
  baseline = rt_live_resources ();

  g_test_add_func ("/thrift_rdma/threaded_server/concurrent/8", test_concurrent);
  g_test_add_func ("/thrift_rdma/threaded_server/max-connections", test_bound);
  g_test_add_func ("/thrift_rdma/threaded_server/pool/handover-64", test_handover);
  g_test_add_func ("/thrift_rdma/threaded_server/pool/fair", test_pool_fair);
  g_test_add_data_func ("/thrift_rdma/threaded_server/stop/connected/pool", "pool",
                        test_stop_connected);
  g_test_add_data_func ("/thrift_rdma/threaded_server/stop/connected/per-connection",
                        "per-connection", test_stop_connected);
  g_test_add_func ("/thrift_rdma/threaded_server/stop/idle-twice", test_stop_idle);
  g_test_add_func ("/thrift_rdma/threaded_server/pool/idle-cpu", test_pool_idle_cpu);
  g_test_add_func ("/thrift_rdma/threaded_server/pool/large-then-small",
                   test_pool_large_then_small);
  g_test_add_data_func ("/thrift_rdma/interrupt/event", GINT_TO_POINTER (THRIFT_RDMA_POLLING_EVENT),
                        test_interrupt);
  g_test_add_data_func ("/thrift_rdma/interrupt/busy", GINT_TO_POINTER (THRIFT_RDMA_POLLING_BUSY),
                        test_interrupt);
  g_test_add_data_func ("/thrift_rdma/interrupt/hybrid",
                        GINT_TO_POINTER (THRIFT_RDMA_POLLING_HYBRID), test_interrupt);
  rc = g_test_run ();
  if (!rt_resources_at_baseline (baseline))
    rc = 1;
  return rc;
}
