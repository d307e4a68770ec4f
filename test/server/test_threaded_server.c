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
 * ThriftThreadedServer over ThriftServerSocket on 127.0.0.1, with code generated from
 * gate.thrift: concurrency, the connection bound, stopping (idle, with clients, by SIGINT)
 * without leaked threads or descriptors, and a listen failure; stopping a server over a
 * transport the server does not know, through ThriftInterruptible.
 */
#include "config.h"

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>
#include <glib-object.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/transport/thrift_framed_transport.h>
#include <thrift/c_glib/transport/thrift_hybrid.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_server_hybrid.h>
#include <thrift/c_glib/transport/thrift_server_rdma.h>
#include <thrift/c_glib/transport/thrift_framed_transport_factory.h>
#include <thrift/c_glib/transport/thrift_interruptible.h>
#include <thrift/c_glib/transport/thrift_memory_buffer.h>
#include <thrift/c_glib/transport/thrift_server_socket.h>
#include <thrift/c_glib/transport/thrift_socket.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol_factory.h>
#include <thrift/c_glib/protocol/thrift_checked_binary_protocol.h>
#include <thrift/c_glib/server/thrift_simple_server.h>
#include <thrift/c_glib/server/thrift_threaded_server.h>
#include <thrift/c_glib/transport/thrift_memory_buffer.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "lib/c_glib/server/thrift_server_interrupt.h"

#include "gate.h"
#include "gate_client.h"
#include "gate_handler.h"
#include "serve_thread.h"

/* ---- helpers ---- */

static guint
count_threads (void)
{
  return test_count_entries ("/proc/self/task");
}
static guint
count_fds (void)
{
  return test_count_entries ("/proc/self/fd");
}

typedef struct
{
  ThriftServer *server;
  guint port;
  ServeThread serve;
} Fixture;

/* Makes a server for tcp://:PORT (framing as in OPTIONS) without serving yet. */
/* The server of a tcp:// URI; @framing (nullable) in place of the URI's transport factory. */
static void
fixture_make_with (Fixture *f, guint max_connections, const gchar *options,
                   ThriftTransportFactory *framing)
{
  g_autofree gchar *uri = NULL;
  ThriftTransportFactory *in_f = NULL, *out_f = NULL;
  ThriftServerTransport *st;
  ThriftProtocolFactory *pf;
  GObject *handler, *processor;
  GError *error = NULL;

  memset (f, 0, sizeof *f);
  serve_thread_init (&f->serve);
  f->port = test_free_port ();
  uri = g_strdup_printf ("tcp://:%u%s", f->port, options ? options : "");
  st = thrift_server_transport_new_for_uri (uri, &in_f, &out_f, &error);
  g_assert_no_error (error);
  handler = g_object_new (test_gate_get_type (), NULL);
  processor = g_object_new (TYPE_GATE_PROCESSOR, "handler", handler, NULL);
  pf = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL_FACTORY, NULL);
  f->server = g_object_new (THRIFT_TYPE_THREADED_SERVER, "processor", processor, "server_transport",
                            st, "input_transport_factory", framing != NULL ? framing : in_f,
                            "output_transport_factory", framing != NULL ? framing : out_f,
                            "input_protocol_factory", pf, "output_protocol_factory", pf,
                            "max-connections", max_connections, NULL);
  g_object_unref (handler);
  g_object_unref (processor);
  g_object_unref (st);
  g_object_unref (in_f);
  g_object_unref (out_f);
  g_object_unref (pf);
}

static void
fixture_make (Fixture *f, guint max_connections, const gchar *options)
{
  fixture_make_with (f, max_connections, options, NULL);
}

static void
fixture_start (Fixture *f)
{
  serve_thread_start (&f->serve, f->server);
}

/* Waits for serve to return (at most 10 s) and joins its thread. */
static gboolean
fixture_wait (Fixture *f)
{
  return serve_thread_join (&f->serve, 10 * G_TIME_SPAN_SECOND);
}

static void
fixture_free (Fixture *f)
{
  g_clear_object (&f->server);
  serve_thread_clear (&f->serve);
}

typedef GateTestClient Client;

/* Connects to the fixture, retrying while the server is not listening yet (2 s). */
static gboolean
client_open (Client *c, guint port, const gchar *options, GError **error)
{
  g_autofree gchar *uri = g_strdup_printf ("tcp://127.0.0.1:%u%s", port, options ? options : "");
  gint tries;

  gate_test_client_init (c, thrift_transport_new_for_uri (uri, error));
  g_assert_nonnull (c->transport);
  for (tries = 0;; tries++)
  {
    GError *e = NULL;
    if (thrift_transport_open (c->transport, &e))
      break;
    if (tries == 200)
    {
      g_propagate_error (error, e);
      gate_test_client_clear (c);
      return FALSE;
    }
    g_clear_error (&e);
    g_usleep (10 * 1000);
  }
  return TRUE;
}

/* ---- tests ---- */

typedef struct
{
  guint port;
  gint n;
  gint timeout_ms;
  gint result;
  gboolean ok;
  gint done; /* atomic: the call returned */
} GatherJob;

static gpointer
gather_client (gpointer data)
{
  GatherJob *job = data;
  Client c = { 0 };
  GError *error = NULL;

  job->ok = client_open (&c, job->port, NULL, &error)
            && gate_if_gather (c.client, &job->result, job->n, job->timeout_ms, &error);
  if (error != NULL)
    g_printerr ("# gather client: %s\n", error->message);
  g_clear_error (&error);
  gate_test_client_clear (&c);
  g_atomic_int_set (&job->done, 1);
  return NULL;
}

/* 8 clients at once: each call returns only when all 8 are inside the handler together. */
static void
test_concurrent (void)
{
  Fixture f;
  GatherJob jobs[8];
  GThread *threads[8];
  guint i;

  fixture_make (&f, 16, NULL);
  fixture_start (&f);
  test_gate_reset_peak ();
  for (i = 0; i < 8; i++)
  {
    jobs[i] = (GatherJob){ .port = f.port, .n = 8, .timeout_ms = 5000 };
    threads[i] = g_thread_new ("client", gather_client, &jobs[i]);
  }
  for (i = 0; i < 8; i++)
    g_thread_join (threads[i]);
  for (i = 0; i < 8; i++)
  {
    g_assert_true (jobs[i].ok);
    g_assert_cmpint (jobs[i].result, ==, 8);
  }
  g_assert_cmpint (test_gate_peak (), ==, 8);
  thrift_server_stop (f.server);
  g_assert_true (fixture_wait (&f));
  g_assert_no_error (f.serve.error);
  fixture_free (&f);
}

/* POOL with one dispatcher: a call that waits 3 s holds it, and the calls of another
 * connection are still served meanwhile (a new dispatcher takes the held one's place); the
 * held one ends once its call returns, and the threads are those of one dispatcher again. */
static void
test_handover (void)
{
  Fixture f;
  GatherJob job;
  GThread *held;
  Client c = { 0 };
  GError *error = NULL;
  guint64 handovers = 0;
  guint threads0 = count_threads (), expected;
  gint r = 0;

  fixture_make (&f, 4, NULL);
  g_object_set (f.server, "workers", 1, NULL);
  fixture_start (&f);
  test_gate_reset_peak ();
  job = (GatherJob){ .port = f.port, .n = 100, .timeout_ms = 3000 };
  held = g_thread_new ("held", gather_client, &job);
  while (test_gate_peak () < 1)
    g_usleep (1000);

  g_assert_true (client_open (&c, f.port, NULL, &error));
  g_assert_no_error (error);
  for (gint i = 0; i < 20; i++)
  {
    g_assert_true (gate_if_ping (c.client, &r, i, &error));
    g_assert_no_error (error);
    g_assert_cmpint (r, ==, i + 1);
  }
  /* served while the long call still holds the first dispatcher */
  g_assert_false (g_atomic_int_get (&job.done));
  g_object_get (f.server, "handovers", &handovers, NULL);
  g_assert_cmpuint (handovers, ==, 1);

  g_thread_join (held);
  g_assert_true (job.ok);
  g_assert_cmpint (job.result, ==, 1);
  /* serve, acceptor, the watchdog and one dispatcher: the held one has ended */
  expected = threads0 + 4;
  for (guint tries = 0; tries < 200 && count_threads () != expected; tries++)
    g_usleep (10000);
  g_assert_cmpuint (count_threads (), ==, expected);
  g_assert_true (gate_if_ping (c.client, &r, 7, &error));
  g_assert_no_error (error);
  gate_test_client_clear (&c);

  thrift_server_stop (f.server);
  g_assert_true (fixture_wait (&f));
  g_assert_no_error (f.serve.error);
  g_object_get (f.server, "handovers", &handovers, NULL);
  g_assert_cmpuint (handovers, ==, 1);
  fixture_free (&f);
  g_assert_cmpuint (count_threads (), ==, threads0);
}

/* POOL: a connection that waits between its calls is armed again after each, and its
 * descriptor is registered once, not at every arming: one epoll_ctl per wake-up (the
 * connection's set in the shared one), where there were two. */
static void
test_watch_updates (void)
{
  Fixture f;
  Client c = { 0 };
  GError *error = NULL;
  guint64 wakeups = 0, updates = 0;
  gint r = 0;

  fixture_make (&f, 4, NULL);
  /* one dispatcher: none is free to linger for the next call, so each is a wake-up */
  g_object_set (f.server, "workers", 1, NULL);
  fixture_start (&f);
  g_assert_true (client_open (&c, f.port, NULL, &error));
  g_assert_no_error (error);
  for (gint i = 0; i < 50; i++)
  {
    g_usleep (1000); /* the connection goes back to the set */
    g_assert_true (gate_if_ping (c.client, &r, i, &error));
    g_assert_no_error (error);
    g_assert_cmpint (r, ==, i + 1);
  }
  g_object_get (f.server, "wakeups", &wakeups, "watch-updates", &updates, NULL);
  g_test_message ("50 calls: %" G_GUINT64_FORMAT " wake-ups, %" G_GUINT64_FORMAT " epoll_ctl",
                  wakeups, updates);
  g_assert_cmpuint (wakeups, >=, 40);
  /* the connection's first arming adds its socket and its set: one more */
  g_assert_cmpuint (updates, <=, wakeups + 2);
  gate_test_client_clear (&c);

  thrift_server_stop (f.server);
  g_assert_true (fixture_wait (&f));
  g_assert_no_error (f.serve.error);
  fixture_free (&f);
}

/* max-connections=2 and 3 clients: never more than 2 served at once, and the third is
 * served (not refused) once one of the first two leaves. */
static void
test_bound (void)
{
  Fixture f;
  GatherJob jobs[3];
  GThread *threads[3];
  guint64 accepted = 0;
  guint i;

  fixture_make (&f, 2, NULL);
  fixture_start (&f);
  test_gate_reset_peak ();
  for (i = 0; i < 3; i++)
  {
    jobs[i] = (GatherJob){ .port = f.port, .n = 3, .timeout_ms = 1500 };
    threads[i] = g_thread_new ("client", gather_client, &jobs[i]);
  }
  for (i = 0; i < 3; i++)
    g_thread_join (threads[i]);
  for (i = 0; i < 3; i++)
  {
    g_assert_true (jobs[i].ok);
    g_assert_cmpint (jobs[i].result, <=, 2);
  }
  g_assert_cmpint (test_gate_peak (), ==, 2);
  g_object_get (f.server, "connections-accepted", &accepted, NULL);
  g_assert_cmpuint (accepted, ==, 3);
  thrift_server_stop (f.server);
  g_assert_true (fixture_wait (&f));
  fixture_free (&f);
}

/* Stop while clients are connected and idle between calls: serve returns, every thread is
 * joined, every server-side descriptor closed; the clients see the connection end.  In
 * PER_CONNECTION mode each connection holds a thread; in POOL mode (2 workers here) 12 idle
 * connections hold none: serve, acceptor, the watchdog and the dispatchers are all there is. */
static void
test_stop_connected (gconstpointer data)
{
  gboolean pool = g_str_equal (data, "pool");
  guint n_clients = pool ? 12 : 4;
  Fixture f;
  Client c[12] = { { 0 } };
  guint threads0, fds0, active = 0;
  GError *error = NULL;
  gint32 r = 0;
  guint i;

  threads0 = count_threads ();
  fds0 = count_fds ();
  fixture_make (&f, 16, NULL);
  g_object_set (f.server, "mode",
                pool ? THRIFT_THREADED_SERVER_POOL : THRIFT_THREADED_SERVER_PER_CONNECTION,
                "workers", 2, NULL);
  fixture_start (&f);
  for (i = 0; i < n_clients; i++)
  {
    g_assert_true (client_open (&c[i], f.port, NULL, &error));
    g_assert_no_error (error);
    g_assert_true (gate_if_ping (c[i].client, &r, (gint32) i, &error));
    g_assert_no_error (error);
    g_assert_cmpint (r, ==, (gint32) i + 1);
  }
  g_object_get (f.server, "active-connections", &active, NULL);
  g_assert_cmpuint (active, ==, n_clients);
  {
    gboolean listening = FALSE;
    g_object_get (f.server, "listening", &listening, NULL);
    g_assert_true (listening);
  }
  if (pool) /* serve, acceptor, the dispatchers' watchdog, 2 dispatchers */
    g_assert_cmpuint (count_threads (), ==, threads0 + 3 + 2);
  else /* serve, acceptor, one worker per connection */
    g_assert_cmpuint (count_threads (), ==, threads0 + 2 + n_clients);

  /* every connection is still served, in any order */
  for (i = n_clients; i-- > 0;)
  {
    g_assert_true (gate_if_ping (c[i].client, &r, 100 + (gint32) i, &error));
    g_assert_no_error (error);
    g_assert_cmpint (r, ==, 101 + (gint32) i);
  }

  thrift_server_stop (f.server);
  g_assert_true (fixture_wait (&f));
  g_assert_no_error (f.serve.error);
  g_assert_cmpuint (count_threads (), ==, threads0);
  g_object_get (f.server, "active-connections", &active, NULL);
  g_assert_cmpuint (active, ==, 0);

  for (i = 0; i < n_clients; i++)
  {
    g_assert_false (gate_if_ping (c[i].client, &r, 1, &error));
    g_assert_nonnull (error);
    g_clear_error (&error);
    gate_test_client_clear (&c[i]);
  }
  fixture_free (&f);
  g_assert_cmpuint (count_fds (), ==, fds0);
}

/* A hang fails the test that has it, not the whole run. */
static gpointer
watchdog_main (gpointer data)
{
  gint *done = data;

  for (guint i = 0; i < 600 && !g_atomic_int_get (done); i++)
    g_usleep (100000);
  if (!g_atomic_int_get (done))
    g_error ("still running after 60 s");
  return NULL;
}

#define MANY_IDLE 300

/* POOL with many idle connections in its epoll set (2 workers): a call on each in turn, all
 * the others idle, again after each was re-armed; half the clients leave while idle and the
 * server sees each go (its descriptor's event); the rest are still served; nothing is left
 * behind. */
static void
test_many_idle (void)
{
  static Client c[MANY_IDLE];
  Fixture f;
  GError *error = NULL;
  GThread *watchdog;
  gint done = 0, r;
  guint threads0, fds0, active = 0;

  threads0 = count_threads ();
  fds0 = count_fds ();
  watchdog = g_thread_new ("watchdog", watchdog_main, &done);
  fixture_make (&f, 2 * MANY_IDLE, NULL);
  g_object_set (f.server, "workers", 2, NULL);
  fixture_start (&f);
  memset (c, 0, sizeof c);
  for (guint i = 0; i < MANY_IDLE; i++)
  {
    g_assert_true (client_open (&c[i], f.port, NULL, &error));
    g_assert_no_error (error);
  }
  for (guint round = 0; round < 2; round++)
    for (guint i = 0; i < MANY_IDLE; i++)
    {
      guint k = round == 0 ? i : MANY_IDLE - 1 - i;

      g_assert_true (gate_if_ping (c[k].client, &r, (gint32) (k + round), &error));
      g_assert_no_error (error);
      g_assert_cmpint (r, ==, (gint32) (k + round) + 1);
    }
  for (guint i = 0; i < MANY_IDLE; i += 2)
    gate_test_client_clear (&c[i]);
  for (guint tries = 0; tries < 500; tries++)
  {
    g_object_get (f.server, "active-connections", &active, NULL);
    if (active == MANY_IDLE / 2)
      break;
    g_usleep (10000);
  }
  g_assert_cmpuint (active, ==, MANY_IDLE / 2);
  for (guint i = 1; i < MANY_IDLE; i += 2)
  {
    g_assert_true (gate_if_ping (c[i].client, &r, 7, &error));
    g_assert_no_error (error);
    g_assert_cmpint (r, ==, 8);
  }
  thrift_server_stop (f.server);
  g_assert_true (fixture_wait (&f));
  g_assert_no_error (f.serve.error);
  for (guint i = 1; i < MANY_IDLE; i += 2)
    gate_test_client_clear (&c[i]);
  fixture_free (&f);
  g_atomic_int_set (&done, 1);
  g_thread_join (watchdog);
  g_assert_cmpuint (count_threads (), ==, threads0);
  g_assert_cmpuint (count_fds (), ==, fds0);
}

/* Stop while idle, twice on the same server: no thread or descriptor left behind. */
static void
test_stop_idle (void)
{
  Fixture f;
  guint threads0, fds0;
  Client c = { 0 };
  GError *error = NULL;
  gint32 r = 0;
  gint round;

  threads0 = count_threads ();
  fds0 = count_fds ();
  fixture_make (&f, 4, NULL);
  for (round = 0; round < 2; round++)
  {
    fixture_start (&f);
    /* a served call proves the server was up before it is stopped */
    g_assert_true (client_open (&c, f.port, NULL, &error));
    g_assert_true (gate_if_ping (c.client, &r, 41, &error));
    g_assert_no_error (error);
    g_assert_cmpint (r, ==, 42);
    gate_test_client_clear (&c);
    thrift_server_stop (f.server);
    g_assert_true (fixture_wait (&f));
    g_assert_no_error (f.serve.error);
    g_assert_cmpuint (count_threads (), ==, threads0);
  }
  fixture_free (&f);
  g_assert_cmpuint (count_fds (), ==, fds0);
}

/* A stop asked before serve runs makes serve return at once. */
static void
test_stop_before_serve (void)
{
  Fixture f;

  fixture_make (&f, 4, NULL);
  thrift_server_stop (f.server);
  fixture_start (&f);
  g_assert_true (fixture_wait (&f));
  fixture_free (&f);
}

/* SIGINT stops a server that registered for it; serve returns TRUE. */
static void
test_sigint (void)
{
  Fixture f;
  Client c = { 0 };
  GError *error = NULL;
  gint32 r = 0;

  fixture_make (&f, 4, NULL);
  g_assert_true (
      thrift_threaded_server_stop_on_signal (THRIFT_THREADED_SERVER (f.server), SIGINT, &error));
  g_assert_no_error (error);
  fixture_start (&f);
  g_assert_true (client_open (&c, f.port, NULL, &error));
  g_assert_true (gate_if_ping (c.client, &r, 1, &error));
  g_assert_no_error (error);
  g_assert_cmpint (kill (getpid (), SIGINT), ==, 0);
  g_assert_true (fixture_wait (&f));
  g_assert_no_error (f.serve.error);
  gate_test_client_clear (&c);
  fixture_free (&f);
}

static void
test_bad_signal (void)
{
  Fixture f;
  GError *error = NULL;

  fixture_make (&f, 4, NULL);
  g_assert_false (
      thrift_threaded_server_stop_on_signal (THRIFT_THREADED_SERVER (f.server), SIGKILL, &error));
  g_assert_error (error, THRIFT_THREADED_SERVER_ERROR, THRIFT_THREADED_SERVER_ERROR_SIGNAL);
  g_assert_nonnull (strstr (error->message, "SIGINT"));
  g_clear_error (&error);
  fixture_free (&f);
}

/* The port is taken: serve returns FALSE with the listen error, and leaves no thread. */
static void
test_listen_fails (void)
{
  Fixture f;
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_ANY) };
  guint threads0;
  int s;

  fixture_make (&f, 4, NULL);
  s = socket (AF_INET, SOCK_STREAM, 0);
  a.sin_port = htons (f.port);
  g_assert_cmpint (bind (s, (struct sockaddr *) &a, sizeof a), ==, 0);
  g_assert_cmpint (listen (s, 1), ==, 0);
  threads0 = count_threads ();
  fixture_start (&f);
  g_assert_false (fixture_wait (&f));
  g_assert_nonnull (f.serve.error);
  {
    gboolean listening = TRUE;
    g_object_get (f.server, "listening", &listening, NULL);
    g_assert_false (listening);
  }
  g_assert_nonnull (strstr (f.serve.error->message, "bind"));
  g_assert_cmpuint (count_threads (), ==, threads0);
  close (s);
  fixture_free (&f);
}

/* echo of 0 B to 256 KB with each framing of tcp:// (client and server agree). */
static void
test_echo (gconstpointer data)
{
  const gchar *options = data;
  Fixture f;
  Client c = { 0 };
  GError *error = NULL;
  static const guint sizes[] = { 0, 1, 4096, 100000, 262144 };
  guint i, j;

  fixture_make (&f, 4, options);
  fixture_start (&f);
  g_assert_true (client_open (&c, f.port, options, &error));
  for (i = 0; i < G_N_ELEMENTS (sizes); i++)
  {
    GByteArray *in = g_byte_array_sized_new (sizes[i]);
    GByteArray *out = NULL;
    for (j = 0; j < sizes[i]; j++)
    {
      guint8 b = (guint8) (j * 7 + i);
      g_byte_array_append (in, &b, 1);
    }
    g_assert_true (gate_if_echo (c.client, &out, in, &error));
    g_assert_no_error (error);
    g_assert_nonnull (out);
    g_assert_cmpmem (out->data, out->len, in->data, in->len);
    g_byte_array_unref (in);
    g_byte_array_unref (out);
  }
  gate_test_client_clear (&c);
  thrift_server_stop (f.server);
  g_assert_true (fixture_wait (&f));
  fixture_free (&f);
}

/* ---- nesting without end (hostile input) ---- */

/* A request whose containers nest without end, each level a few bytes: Thrift 0.17's
 * thrift_protocol_skip and generated readers recurse once per level, so one request could
 * take the reading thread's whole stack. */
#define DEEP_LEVELS 100000

static void
put_be32 (GByteArray *b, guint32 v)
{
  guint32 be = htonl (v);

  g_byte_array_append (b, (const guint8 *) &be, 4);
}

static void
put_u8 (GByteArray *b, guint8 v)
{
  g_byte_array_append (b, &v, 1);
}

/* A framed call of Gate.ping whose field 9, which ping's arguments do not have (generated
 * code skips it), holds @levels containers of @kind ("list", "set", "map", "struct") each in
 * the one before, then the field x = @x. */
static GByteArray *
nested_call (const gchar *kind, guint levels, gint32 x)
{
  static const guint8 head[] = {
    0x80, 0x01, 0x00, 0x01,                     /* strict binary, T_CALL */
    0,    0,    0,    4,    'p', 'i', 'n', 'g', /* method name */
    0,    0,    0,    1,                        /* seqid */
  };
  GByteArray *b = g_byte_array_new ();
  guint8 type = g_str_equal (kind, "list")  ? T_LIST
                : g_str_equal (kind, "set") ? T_SET
                : g_str_equal (kind, "map") ? T_MAP
                                            : T_STRUCT;

  put_be32 (b, 0); /* the frame's length, below */
  g_byte_array_append (b, head, sizeof head);
  put_u8 (b, type);
  put_u8 (b, 0);
  put_u8 (b, 9);
  for (guint i = 0; i < levels; i++)
  {
    gboolean last = i + 1 == levels;

    if (type == T_STRUCT)
    { /* field 1 of the struct holds the next one */
      if (!last)
      {
        put_u8 (b, T_STRUCT);
        put_u8 (b, 0);
        put_u8 (b, 1);
      }
    }
    else if (type == T_MAP)
    { /* one i32 key, its value the next map */
      put_u8 (b, T_I32);
      put_u8 (b, last ? T_I32 : T_MAP);
      put_be32 (b, last ? 0 : 1);
      if (!last)
        put_be32 (b, i);
    }
    else
    { /* one element, the next list or set */
      put_u8 (b, last ? T_I32 : type);
      put_be32 (b, last ? 0 : 1);
    }
  }
  if (type == T_STRUCT)
    for (guint i = 0; i < levels; i++)
      put_u8 (b, T_STOP);
  put_u8 (b, T_I32); /* x */
  put_u8 (b, 0);
  put_u8 (b, 1);
  put_be32 (b, (guint32) x);
  put_u8 (b, T_STOP);
  *(guint32 *) b->data = htonl (b->len - 4);
  return b;
}

typedef struct
{
  ThriftProtocol *protocol;
  gint32 x; /* the argument read, or -1 */
  GError *error;
} DeepRead;

/* Reads a call as ThriftDispatchProcessor and Gate's generated processor do. */
static gpointer
deep_read (gpointer data)
{
  DeepRead *r = data;
  GatePingArgs *args = g_object_new (TYPE_GATE_PING_ARGS, NULL);
  ThriftMessageType type;
  gchar *name = NULL;
  gint32 seqid;

  r->x = -1;
  if (thrift_protocol_read_message_begin (r->protocol, &name, &type, &seqid, &r->error) >= 0
      && thrift_struct_read (THRIFT_STRUCT (args), r->protocol, &r->error) >= 0
      && thrift_protocol_read_message_end (r->protocol, &r->error) >= 0)
    r->x = args->x;
  g_free (name);
  g_object_unref (args);
  return NULL;
}

/* deep_read of @call on a thread of a 256 KiB stack (a server's worker may have less than a
 * main thread's 8 MiB): the depth a crash takes does not depend on the machine. */
static gint32
deep_read_call (ThriftProtocol *protocol, GByteArray *call, GError **error)
{
  DeepRead r = { .protocol = protocol };
  pthread_attr_t attr;
  pthread_t thread;
  gboolean written = thrift_transport_write (protocol->transport, call->data + 4, call->len - 4,
                                             NULL);

  g_assert_true (written);
  g_assert_cmpint (pthread_attr_init (&attr), ==, 0);
  g_assert_cmpint (pthread_attr_setstacksize (&attr, 256 << 10), ==, 0);
  g_assert_cmpint (pthread_create (&thread, &attr, deep_read, &r), ==, 0);
  g_assert_cmpint (pthread_join (thread, NULL), ==, 0);
  pthread_attr_destroy (&attr);
  if (r.error != NULL)
    g_propagate_error (error, r.error);
  return r.x;
}

/* ThriftCheckedBinaryProtocol reads containers nested 64 deep (the arguments' struct the
 * first), refuses one more with THRIFT_PROTOCOL_ERROR_DEPTH_LIMIT and DEEP_LEVELS without
 * running out of stack, and reads the next request from depth 0 again. */
static void
test_deep_protocol (gconstpointer data)
{
  const gchar *kind = data;
  ThriftTransport *buffer = g_object_new (THRIFT_TYPE_MEMORY_BUFFER, "buf_size", 16 * DEEP_LEVELS,
                                          NULL);
  ThriftProtocol *protocol = g_object_new (THRIFT_TYPE_CHECKED_BINARY_PROTOCOL, "transport", buffer,
                                           NULL);
  static const guint levels[] = { 1, 63, 64, 65, 1000, DEEP_LEVELS };
  GError *error = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (levels); i++)
  {
    g_autoptr (GByteArray) deep = nested_call (kind, levels[i], 7);
    g_autoptr (GByteArray) flat = nested_call (kind, 1, 8);
    gint32 x = deep_read_call (protocol, deep, &error);

    if (levels[i] <= 63)
    {
      g_assert_no_error (error);
      g_assert_cmpint (x, ==, 7);
    }
    else
    {
      g_assert_error (error, THRIFT_PROTOCOL_ERROR, THRIFT_PROTOCOL_ERROR_DEPTH_LIMIT);
      g_assert_nonnull (strstr (error->message, "nested 65 deep, more than the limit of 64"));
      g_assert_cmpint (x, ==, -1);
      g_clear_error (&error);
      /* what the failed read left in the buffer */
      g_byte_array_set_size (THRIFT_MEMORY_BUFFER (buffer)->buf, 0);
    }
    /* the next request starts at depth 0 */
    g_assert_cmpint (deep_read_call (protocol, flat, &error), ==, 8);
    g_assert_no_error (error);
  }
  g_object_unref (protocol);
  g_object_unref (buffer);
}

/* A transport's ThriftConfiguration recursion_limit is the limit. */
static void
test_deep_configured (void)
{
  ThriftConfiguration *conf = g_object_new (THRIFT_TYPE_CONFIGURATION, "recursion_limit", 8, NULL);
  ThriftTransport *buffer = g_object_new (THRIFT_TYPE_MEMORY_BUFFER, "configuration", conf, NULL);
  ThriftProtocol *protocol = g_object_new (THRIFT_TYPE_CHECKED_BINARY_PROTOCOL, "transport", buffer,
                                           NULL);
  g_autoptr (GByteArray) seven = nested_call ("list", 7, 7);
  g_autoptr (GByteArray) eight = nested_call ("list", 8, 8);
  GError *error = NULL;

  g_assert_cmpint (deep_read_call (protocol, seven, &error), ==, 7);
  g_assert_no_error (error);
  g_assert_cmpint (deep_read_call (protocol, eight, &error), ==, -1);
  g_assert_error (error, THRIFT_PROTOCOL_ERROR, THRIFT_PROTOCOL_ERROR_DEPTH_LIMIT);
  g_assert_nonnull (strstr (error->message, "a list nested 9 deep, more than the limit of 8"));
  g_clear_error (&error);
  g_object_unref (protocol);
  g_object_unref (buffer);
  g_object_unref (conf);
}

/* ---- hostile requests (issue 7, item 2) ---- */

/* Sends @len raw bytes to the server and waits (5 s at most) for it to close the connection;
 * TRUE if it did. */
static gboolean
raw_send_expect_close (guint port, const guint8 *bytes, gsize len)
{
  struct sockaddr_in a = { .sin_family = AF_INET,
                           .sin_addr.s_addr = htonl (INADDR_LOOPBACK),
                           .sin_port = htons (port) };
  struct timeval tv = { .tv_sec = 5 };
  guint8 buf[64];
  gssize r;
  int s = socket (AF_INET, SOCK_STREAM, 0);

  g_assert_cmpint (s, >=, 0);
  g_assert_cmpint (connect (s, (struct sockaddr *) &a, sizeof a), ==, 0);
  g_assert_cmpint (setsockopt (s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), ==, 0);
  g_assert_cmpint (send (s, bytes, len, 0), ==, (gssize) len);
  r = recv (s, buf, sizeof buf, 0);
  close (s);
  return r == 0 || (r < 0 && errno == ECONNRESET);
}

/* This process's virtual size, from /proc/self/status. */
static gsize
vm_size (void)
{
  g_autofree gchar *status = NULL;
  const gchar *p;

  g_assert_true (g_file_get_contents ("/proc/self/status", &status, NULL, NULL));
  p = strstr (status, "VmSize:");
  g_assert_nonnull (p);
  return (gsize) g_ascii_strtoull (p + 7, NULL, 10) * 1024;
}

/* One ~30-byte framed call of Gate.echo whose binary argument announces 0x7ffffff0 bytes,
 * and a frame of length 0: Thrift 0.17's binary protocol would g_new the 2 GiB (abort when
 * the allocation fails: the address space is limited here so that it does on any machine),
 * and its framed transport fails the empty frame without an error that the dispatch
 * processor then dereferences; and a call nesting DEEP_LEVELS containers ("deep-KIND"), which
 * would take the worker's stack.  The server closes the connection and serves the next. */
static void
test_hostile (gconstpointer data)
{
  static const guint8 big[] = {
    0,    0,    0,    23,                       /* frame length */
    0x80, 0x01, 0x00, 0x01,                     /* strict binary, T_CALL */
    0,    0,    0,    4,    'e', 'c', 'h', 'o', /* method name */
    0,    0,    0,    1,                        /* seqid */
    11,   0,    1,                              /* field 1, T_STRING (binary) */
    0x7f, 0xff, 0xff, 0xf0,                     /* its announced length */
  };
  static const guint8 zero[] = { 0, 0, 0, 0 };
  gboolean is_big = g_str_equal (data, "big-binary");
  g_autoptr (GByteArray) deep = g_str_has_prefix (data, "deep-")
                                    ? nested_call ((const gchar *) data + 5, DEEP_LEVELS, 7)
                                    : NULL;
  Fixture f;
  Client c = { 0 };
  GError *error = NULL;
  struct rlimit saved, limited;
  gint32 r = 0;

  fixture_make (&f, 4, NULL);
  fixture_start (&f);
  g_assert_true (client_open (&c, f.port, NULL, &error));
  g_assert_true (gate_if_ping (c.client, &r, 1, &error));
  g_assert_no_error (error);

  g_assert_cmpint (getrlimit (RLIMIT_AS, &saved), ==, 0);
  limited = saved;
  limited.rlim_cur = vm_size () + (1u << 30);
  g_assert_cmpint (setrlimit (RLIMIT_AS, &limited), ==, 0);
  /* upstream's dispatch processor logs what the protocol now reports */
  if (!is_big && deep == NULL)
    g_test_expect_message (NULL, G_LOG_LEVEL_WARNING,
                           "error reading start of message: *"
                           "frame of length 0*");
  g_assert_true (deep != NULL ? raw_send_expect_close (f.port, deep->data, deep->len)
                 : is_big     ? raw_send_expect_close (f.port, big, sizeof big)
                              : raw_send_expect_close (f.port, zero, sizeof zero));
  g_assert_cmpint (setrlimit (RLIMIT_AS, &saved), ==, 0);
  g_test_assert_expected_messages ();

  /* the server lives and serves, the connection of before and a new one */
  g_assert_true (gate_if_ping (c.client, &r, 2, &error));
  g_assert_no_error (error);
  g_assert_cmpint (r, ==, 3);
  gate_test_client_clear (&c);
  g_assert_true (client_open (&c, f.port, NULL, &error));
  g_assert_true (gate_if_ping (c.client, &r, 41, &error));
  g_assert_cmpint (r, ==, 42);
  gate_test_client_clear (&c);
  thrift_server_stop (f.server);
  g_assert_true (fixture_wait (&f));
  fixture_free (&f);
}

/* Gate.echo of 100 bytes sent in two frames, the first ending 16 bytes into the binary, to a
 * server given Thrift's own ThriftFramedTransportFactory: the reply holds the 100 bytes.
 * That factory's transports copy the first frame's tail from their GByteArray's header
 * (THRIFT-6094); ThriftThreadedServer puts checked ones in their place
 * (thrift_checked_framed_transport.h). */
static void
test_split_frame (void)
{
  static const guint8 head[] = {
    0x80, 0x01, 0x00, 0x01,                     /* strict binary, T_CALL */
    0,    0,    0,    4,    'e', 'c', 'h', 'o', /* method name */
    0,    0,    0,    1,                        /* seqid */
    11,   0,    1,                              /* field 1, T_STRING (binary) */
    0,    0,    0,    100,                      /* its length */
  };
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  struct timeval tv = { .tv_sec = 5 };
  ThriftTransportFactory *plain = g_object_new (THRIFT_TYPE_FRAMED_TRANSPORT_FACTORY, NULL);
  guint8 payload[100], frame[256], reply[512];
  gsize got = 0;
  guint32 be;
  Fixture f;
  int s;

  for (guint i = 0; i < sizeof payload; i++)
    payload[i] = (guint8) (i * 37 + 11);
  fixture_make_with (&f, 4, NULL, plain);
  g_object_unref (plain);
  fixture_start (&f);

  a.sin_port = htons (f.port);
  /* the server listens once its thread runs */
  for (guint tries = 0;; tries++)
  {
    s = socket (AF_INET, SOCK_STREAM, 0);
    if (connect (s, (struct sockaddr *) &a, sizeof a) == 0)
      break;
    close (s);
    g_assert_cmpuint (tries, <, 500);
    g_usleep (10 * 1000);
  }
  g_assert_cmpint (setsockopt (s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), ==, 0);
  be = htonl (sizeof head + 16);
  memcpy (frame, &be, 4);
  memcpy (frame + 4, head, sizeof head);
  memcpy (frame + 4 + sizeof head, payload, 16);
  g_assert_cmpint (send (s, frame, 4 + sizeof head + 16, 0), ==, (gssize) (4 + sizeof head + 16));
  be = htonl (sizeof payload - 16 + 1);
  memcpy (frame, &be, 4);
  memcpy (frame + 4, payload + 16, sizeof payload - 16);
  frame[4 + sizeof payload - 16] = 0; /* T_STOP */
  g_assert_cmpint (send (s, frame, 4 + sizeof payload - 16 + 1, 0), ==,
                   (gssize) (4 + sizeof payload - 16 + 1));
  while (got < sizeof reply)
  {
    gssize r = recv (s, reply + got, sizeof reply - got, 0);

    if (r <= 0)
      break;
    got += (gsize) r;
    if (memmem (reply, got, payload, sizeof payload) != NULL)
      break;
  }
  close (s);
  g_assert_nonnull (memmem (reply, got, payload, sizeof payload));
  thrift_server_stop (f.server);
  g_assert_true (fixture_wait (&f));
  fixture_free (&f);
}

/* ---- ThriftSimpleServer with the URI helpers' factories (issue 7, item 8) ---- */

static gpointer
simple_serve (gpointer data)
{
  GError *error = NULL;

  thrift_server_serve (THRIFT_SERVER (data), &error);
  g_clear_error (&error);
  return NULL;
}

/* ThriftSimpleServer unrefs what the transport factories return and then the connection:
 * a pass-through factory must hand out a reference of its own (g_test makes the
 * "G_IS_OBJECT" criticals of a borrowed one fatal). */
static void
test_simple_server_factories (void)
{
  g_autofree gchar *uri = NULL;
  ThriftTransportFactory *in_f = NULL, *out_f = NULL;
  ThriftServerTransport *st;
  ThriftProtocolFactory *pf;
  GObject *handler, *processor;
  ThriftServer *server;
  GThread *thread;
  GError *error = NULL;
  guint port = test_free_port ();
  gint32 r = 0;
  int i;

  uri = g_strdup_printf ("tcp://:%u?framing=none", port);
  st = thrift_server_transport_new_for_uri (uri, &in_f, &out_f, &error);
  g_assert_no_error (error);
  handler = g_object_new (test_gate_get_type (), NULL);
  processor = g_object_new (TYPE_GATE_PROCESSOR, "handler", handler, NULL);
  pf = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL_FACTORY, NULL);
  server = g_object_new (THRIFT_TYPE_SIMPLE_SERVER, "processor", processor, "server_transport", st,
                         "input_transport_factory", in_f, "output_transport_factory", out_f,
                         "input_protocol_factory", pf, "output_protocol_factory", pf, NULL);
  thread = g_thread_new ("simple-server", simple_serve, server);
  for (i = 0; i < 3; i++)
  {
    Client c = { 0 };
    g_assert_true (client_open (&c, port, "?framing=none", &error));
    g_assert_true (gate_if_ping (c.client, &r, i, &error));
    g_assert_no_error (error);
    g_assert_cmpint (r, ==, i + 1);
    gate_test_client_clear (&c);
  }
  /* stop: the flag, then one more connection wakes accept.  The server may see the flag
   * before it goes back to accept (it is still finishing the last client) and close its
   * socket: then that connection is refused, and nothing needs waking. */
  thrift_server_stop (server);
  {
    Client c = { 0 };
    if (!client_open (&c, port, "?framing=none", &error))
      g_clear_error (&error);
    gate_test_client_clear (&c);
  }
  g_thread_join (thread);
  g_object_unref (server);
  g_object_unref (handler);
  g_object_unref (processor);
  g_object_unref (st);
  g_object_unref (in_f);
  g_object_unref (out_f);
  g_object_unref (pf);
}

/* ---- a transport the server does not know, woken through ThriftInterruptible ---- */

/* Blocks a caller until interrupted (at most 10 s, so a missed wake-up fails, not hangs). */
typedef struct
{
  GMutex lock;
  GCond cond;
  gint waiting; /* callers blocked now */
  gint interrupts;
  gint closes;
} Waker;

static void
waker_init (Waker *w)
{
  g_mutex_init (&w->lock);
  g_cond_init (&w->cond);
}

static void
waker_clear (Waker *w)
{
  g_mutex_clear (&w->lock);
  g_cond_clear (&w->cond);
}

static void
waker_wait (Waker *w)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;

  g_mutex_lock (&w->lock);
  w->waiting++;
  g_cond_broadcast (&w->cond);
  while (w->interrupts == 0 && g_cond_wait_until (&w->cond, &w->lock, deadline))
    ;
  w->waiting--;
  g_mutex_unlock (&w->lock);
}

/* Counts an interrupt (@add_interrupts) or a close, and wakes the callers. */
static void
waker_count (Waker *w, gboolean add_interrupts)
{
  g_mutex_lock (&w->lock);
  if (add_interrupts)
    w->interrupts++;
  else
    w->closes++;
  g_cond_broadcast (&w->cond);
  g_mutex_unlock (&w->lock);
}

/* Waits until a caller blocks in @w (at most 5 s). */
static gboolean
waker_await_caller (Waker *w)
{
  gint64 deadline = g_get_monotonic_time () + 5 * G_TIME_SPAN_SECOND;
  gboolean there;

  g_mutex_lock (&w->lock);
  while (w->waiting == 0 && g_cond_wait_until (&w->cond, &w->lock, deadline))
    ;
  there = w->waiting > 0;
  g_mutex_unlock (&w->lock);
  return there;
}

static gint
waker_get (Waker *w, const gint *field)
{
  gint v;

  g_mutex_lock (&w->lock);
  v = *field;
  g_mutex_unlock (&w->lock);
  return v;
}

/* TestWake: a connection whose peek and read block until it is interrupted. */
typedef struct
{
  ThriftTransport parent;
  Waker w;
} TestWake;

typedef struct
{
  ThriftTransportClass parent;
} TestWakeClass;

/* TestWakeListener: hands out one TestWake, then blocks in accept until interrupted. */
typedef struct
{
  ThriftServerTransport parent;
  Waker w;
  TestWake *connection; /* the one handed out (a reference of the test's) */
} TestWakeListener;

typedef struct
{
  ThriftServerTransportClass parent;
} TestWakeListenerClass;

#define TEST_WAKE(obj) ((TestWake *) (obj))
#define TEST_WAKE_LISTENER(obj) ((TestWakeListener *) (obj))

/* The Waker of a TestWake or TestWakeListener. */
static Waker *
waker_of (gpointer object)
{
  return THRIFT_IS_TRANSPORT (object) ? &TEST_WAKE (object)->w : &TEST_WAKE_LISTENER (object)->w;
}

/* ThriftInterruptible, for both */
static void
waker_interruptible_interrupt (ThriftInterruptible *self)
{
  waker_count (waker_of (self), TRUE);
}

static void
waker_interruptible_init (ThriftInterruptibleInterface *iface)
{
  iface->interrupt = waker_interruptible_interrupt;
}

GType test_wake_get_type (void);
GType test_wake_listener_get_type (void);

G_DEFINE_TYPE_WITH_CODE (TestWake, test_wake, THRIFT_TYPE_TRANSPORT,
                         G_IMPLEMENT_INTERFACE (THRIFT_TYPE_INTERRUPTIBLE,
                                                waker_interruptible_init))
G_DEFINE_TYPE_WITH_CODE (TestWakeListener, test_wake_listener, THRIFT_TYPE_SERVER_TRANSPORT,
                         G_IMPLEMENT_INTERFACE (THRIFT_TYPE_INTERRUPTIBLE,
                                                waker_interruptible_init))

static gboolean
test_wake_is_open (ThriftTransport *t)
{
  return waker_get (&TEST_WAKE (t)->w, &TEST_WAKE (t)->w.closes) == 0;
}

static gboolean
test_wake_peek (ThriftTransport *t, GError **error)
{
  waker_wait (&TEST_WAKE (t)->w);
  return FALSE;
}

static gint32
test_wake_read (ThriftTransport *t, gpointer buf, guint32 len, GError **error)
{
  waker_wait (&TEST_WAKE (t)->w);
  g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE, "interrupted");
  return -1;
}

static gboolean
test_wake_true (ThriftTransport *t, GError **error)
{
  return TRUE;
}

static gboolean
test_wake_close (ThriftTransport *t, GError **error)
{
  waker_count (&TEST_WAKE (t)->w, FALSE);
  return TRUE;
}

static void
test_wake_finalize (GObject *object)
{
  waker_clear (&TEST_WAKE (object)->w);
  G_OBJECT_CLASS (test_wake_parent_class)->finalize (object);
}

static void
test_wake_init (TestWake *self)
{
  waker_init (&self->w);
}

static void
test_wake_class_init (TestWakeClass *klass)
{
  ThriftTransportClass *tc = THRIFT_TRANSPORT_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = test_wake_finalize;
  tc->is_open = test_wake_is_open;
  tc->peek = test_wake_peek;
  tc->open = test_wake_true;
  tc->close = test_wake_close;
  tc->read = test_wake_read;
  tc->read_end = test_wake_true;
  tc->write_end = test_wake_true;
  tc->flush = test_wake_true;
}

static gboolean
test_wake_listener_listen (ThriftServerTransport *st, GError **error)
{
  return TRUE;
}

static ThriftTransport *
test_wake_listener_accept (ThriftServerTransport *st, GError **error)
{
  TestWakeListener *self = TEST_WAKE_LISTENER (st);

  if (self->connection == NULL)
  {
    self->connection = g_object_new (test_wake_get_type (), NULL);
    return g_object_ref (THRIFT_TRANSPORT (self->connection));
  }
  waker_wait (&self->w);
  g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET, "interrupted");
  return NULL;
}

static gboolean
test_wake_listener_close (ThriftServerTransport *st, GError **error)
{
  waker_count (&TEST_WAKE_LISTENER (st)->w, FALSE);
  return TRUE;
}

static void
test_wake_listener_finalize (GObject *object)
{
  TestWakeListener *self = TEST_WAKE_LISTENER (object);

  g_clear_object (&self->connection);
  waker_clear (&self->w);
  G_OBJECT_CLASS (test_wake_listener_parent_class)->finalize (object);
}

static void
test_wake_listener_init (TestWakeListener *self)
{
  waker_init (&self->w);
}

static void
test_wake_listener_class_init (TestWakeListenerClass *klass)
{
  ThriftServerTransportClass *sc = THRIFT_SERVER_TRANSPORT_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = test_wake_listener_finalize;
  sc->listen = test_wake_listener_listen;
  sc->accept = test_wake_listener_accept;
  sc->close = test_wake_listener_close;
}

/* The server's helpers wake a ThriftInterruptible, also under a framed transport a factory
 * added, and close nothing they woke. */
static void
test_interrupt_interface (void)
{
  TestWake *wake = g_object_new (test_wake_get_type (), NULL);
  TestWakeListener *listener = g_object_new (test_wake_listener_get_type (), NULL);
  ThriftTransport *framed = g_object_new (THRIFT_TYPE_FRAMED_TRANSPORT, "transport", wake, NULL);

  thrift_server_interrupt_connection (framed);
  g_assert_cmpint (wake->w.interrupts, ==, 1);
  g_assert_cmpint (wake->w.closes, ==, 0);
  thrift_server_interrupt_connection (THRIFT_TRANSPORT (wake));
  g_assert_cmpint (wake->w.interrupts, ==, 2);
  g_assert_false (thrift_server_interrupt_accept (THRIFT_SERVER_TRANSPORT (listener)));
  g_assert_cmpint (listener->w.interrupts, ==, 1);
  g_assert_cmpint (listener->w.closes, ==, 0);

  /* a transport without a way to be woken is left to the caller, who closes it */
  {
    ThriftTransport *buffer = g_object_new (THRIFT_TYPE_MEMORY_BUFFER, NULL);
    g_assert_false (thrift_interruptible_interrupt (G_OBJECT (buffer)));
    g_object_unref (buffer);
  }
  g_object_unref (framed);
  g_object_unref (wake);
  g_object_unref (listener);

  /* and so are this library's own (over RDMA: test/rdma/test_threaded_server_rdma) */
  g_assert_true (g_type_is_a (THRIFT_TYPE_RDMA, THRIFT_TYPE_INTERRUPTIBLE));
  g_assert_true (g_type_is_a (THRIFT_TYPE_HYBRID, THRIFT_TYPE_INTERRUPTIBLE));
  g_assert_true (g_type_is_a (THRIFT_TYPE_SERVER_RDMA, THRIFT_TYPE_INTERRUPTIBLE));
  g_assert_true (g_type_is_a (THRIFT_TYPE_SERVER_HYBRID, THRIFT_TYPE_INTERRUPTIBLE));
}

/* ThriftThreadedServer over a transport of the test's own stops: its acceptor blocked in
 * accept and its worker in peek are woken through the interface. */
static void
test_interrupt_serve (void)
{
  TestWakeListener *listener = g_object_new (test_wake_listener_get_type (), NULL);
  GObject *handler = g_object_new (test_gate_get_type (), NULL);
  GObject *processor = g_object_new (TYPE_GATE_PROCESSOR, "handler", handler, NULL);
  ThriftServer *server;
  ServeThread serve;
  guint threads0 = count_threads ();

  server = g_object_new (THRIFT_TYPE_THREADED_SERVER, "processor", processor, "server_transport",
                         listener, "mode", THRIFT_THREADED_SERVER_PER_CONNECTION, NULL);
  serve_thread_init (&serve);
  serve_thread_start (&serve, server);
  g_assert_true (waker_await_caller (&listener->w));
  g_assert_nonnull (listener->connection);
  g_assert_true (waker_await_caller (&listener->connection->w));

  thrift_server_stop (server);
  g_assert_true (serve_thread_join (&serve, 5 * G_TIME_SPAN_SECOND));
  g_assert_no_error (serve.error);
  g_assert_cmpint (waker_get (&listener->w, &listener->w.interrupts), ==, 1);
  g_assert_cmpint (waker_get (&listener->w, &listener->w.closes), ==, 1);
  g_assert_cmpint (waker_get (&listener->connection->w, &listener->connection->w.interrupts), ==,
                   1);
  /* its worker, not the interrupt, closed it */
  g_assert_cmpint (waker_get (&listener->connection->w, &listener->connection->w.closes), >=, 1);
  g_assert_cmpuint (count_threads (), ==, threads0);
  serve_thread_clear (&serve);
  g_object_unref (server);
  g_object_unref (processor);
  g_object_unref (handler);
  g_object_unref (listener);
}

static gpointer
read_one (gpointer data)
{
  guint8 byte;
  GError *error = NULL;
  gint32 n = thrift_transport_read (THRIFT_TRANSPORT (data), &byte, 1, &error);

  g_clear_error (&error);
  return GINT_TO_POINTER (n);
}

static gpointer
accept_one (gpointer data)
{
  GError *error = NULL;
  ThriftTransport *t = thrift_server_transport_accept (THRIFT_SERVER_TRANSPORT (data), &error);

  g_clear_error (&error);
  return t;
}

/* Stock sockets, which cannot implement the interface, are shut down instead: a read blocked
 * under a framed transport ends and an accept fails, and both keep their descriptors for
 * their owners to close. */
static void
test_interrupt_socket (void)
{
  guint port = test_free_port ();
  ThriftServerTransport *st = g_object_new (THRIFT_TYPE_SERVER_SOCKET, "port", port, NULL);
  ThriftTransport *client = g_object_new (THRIFT_TYPE_SOCKET, "hostname", "127.0.0.1", "port", port,
                                          NULL);
  ThriftTransport *conn, *framed;
  GThread *thread;
  GError *error = NULL;

  g_assert_true (thrift_server_transport_listen (st, &error));
  g_assert_no_error (error);
  g_assert_true (thrift_transport_open (client, &error));
  g_assert_no_error (error);
  conn = thrift_server_transport_accept (st, &error);
  g_assert_no_error (error);
  framed = g_object_new (THRIFT_TYPE_FRAMED_TRANSPORT, "transport", conn, NULL);

  thread = g_thread_new ("read", read_one, framed);
  g_usleep (50 * 1000); /* into recv, most likely; a later shutdown ends it just the same */
  thrift_server_interrupt_connection (framed);
  g_assert_cmpint (GPOINTER_TO_INT (g_thread_join (thread)), <=, 0);
  g_assert_cmpint (THRIFT_SOCKET (conn)->sd, !=, THRIFT_INVALID_SOCKET);

  thread = g_thread_new ("accept", accept_one, st);
  g_usleep (50 * 1000);
  g_assert_false (thrift_server_interrupt_accept (st));
  g_assert_null (g_thread_join (thread));
  g_assert_cmpint (THRIFT_SERVER_SOCKET (st)->sd, !=, THRIFT_INVALID_SOCKET);

  thrift_transport_close (framed, NULL);
  thrift_transport_close (client, NULL);
  thrift_server_transport_close (st, NULL);
  g_object_unref (framed);
  g_object_unref (conn);
  g_object_unref (client);
  g_object_unref (st);
}

int
main (int argc, char **argv)
{
  static const gchar *const deep[] = { "deep-list", "deep-set", "deep-map", "deep-struct" };

  g_test_init (&argc, &argv, NULL);
  signal (SIGPIPE, SIG_IGN);
  alarm (120); /* a hung stop must fail the run, not stall it */

  g_test_add_func ("/threaded_server/concurrent/8", test_concurrent);
  g_test_add_func ("/threaded_server/max-connections", test_bound);
  g_test_add_func ("/threaded_server/pool/handover", test_handover);
  g_test_add_func ("/threaded_server/pool/many-idle", test_many_idle);
  g_test_add_func ("/threaded_server/pool/watch-updates", test_watch_updates);
  g_test_add_data_func ("/threaded_server/stop/connected/pool", "pool", test_stop_connected);
  g_test_add_data_func ("/threaded_server/stop/connected/per-connection", "per-connection",
                        test_stop_connected);
  g_test_add_func ("/threaded_server/stop/idle-twice", test_stop_idle);
  g_test_add_func ("/threaded_server/stop/before-serve", test_stop_before_serve);
  g_test_add_func ("/threaded_server/listen-fails", test_listen_fails);
  g_test_add_data_func ("/threaded_server/echo/framed", "", test_echo);
  g_test_add_data_func ("/threaded_server/echo/buffered", "?framing=buffered", test_echo);
  g_test_add_data_func ("/threaded_server/echo/unframed", "?framing=none", test_echo);
  g_test_add_func ("/threaded_server/signal/bad", test_bad_signal);
  g_test_add_func ("/threaded_server/signal/sigint", test_sigint);
  g_test_add_data_func ("/threaded_server/hostile/big-binary", "big-binary", test_hostile);
  g_test_add_data_func ("/threaded_server/hostile/zero-frame", "zero-frame", test_hostile);
  g_test_add_func ("/threaded_server/hostile/split-frame", test_split_frame);
  g_test_add_func ("/checked_binary/deep/configured", test_deep_configured);
  for (guint i = 0; i < G_N_ELEMENTS (deep); i++)
  {
    g_autofree gchar *protocol = g_strdup_printf ("/checked_binary/deep/%s", deep[i] + 5);
    g_autofree gchar *server = g_strdup_printf ("/threaded_server/hostile/%s", deep[i]);

    g_test_add_data_func (protocol, deep[i] + 5, test_deep_protocol);
    g_test_add_data_func (server, deep[i], test_hostile);
  }
  g_test_add_func ("/simple_server/uri-factories", test_simple_server_factories);
  g_test_add_func ("/threaded_server/interrupt/interface", test_interrupt_interface);
  g_test_add_func ("/threaded_server/interrupt/serve", test_interrupt_serve);
  g_test_add_func ("/threaded_server/interrupt/socket", test_interrupt_socket);
  return g_test_run ();
}
