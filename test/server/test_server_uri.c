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
 * test_server_uri: servers from URIs (thrift_server_uri.h) over tcp:// on 127.0.0.1.
 *
 *   /server_uri/new_for_uri    the server's transport, factories and mode
 *   /server_uri/bad_uri        a wrong URI is an error, nothing served
 *   /server_uri/sigterm        Gate served, a call, SIGTERM to the process: status 0, no
 *                              thread or descriptor left, the signals' actions as before
 *   /server_uri/stop_one       two URIs; thrift_server_stop on one stops both
 *   /server_uri/listen_fails   two servers on one port: one cannot listen, both stop
 *
 * rdma:// needs an RDMA device: the guest runs the programs built on this (the bench's and
 * HatKV's servers, test_mix, test_hybrid_rdma).
 */
#include "config.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib-object.h>
#include <glib-unix.h>

#include <thrift/c_glib/protocol/thrift_checked_binary_protocol.h>
#include <thrift/c_glib/server/thrift_server_uri.h>
#include <thrift/c_glib/transport/thrift_checked_framed_transport.h>
#include <thrift/c_glib/transport/thrift_server_socket.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "gate.h"
#include "gate_client.h"
#include "gate_handler.h"
#include "serve_thread.h"

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

static GObject *
gate_processor (void)
{
  GObject *handler = g_object_new (test_gate_get_type (), NULL);
  GObject *processor = g_object_new (TYPE_GATE_PROCESSOR, "handler", handler, NULL);

  g_object_unref (handler);
  return processor;
}

/* thrift_server_serve_uris in a thread, and what its listening callback saw */
typedef struct
{
  gchar **uris;
  GObject **processors;
  ThriftServeOptions options;
  GThread *thread;
  ThriftServeStatus status;
  GError *error;
  GMutex lock;
  GCond cond;
  GPtrArray *listening; /* the servers that listened (references) */
} Run;

static void
on_listening (ThriftThreadedServer *server, const gchar *uri, gpointer data)
{
  Run *r = data;

  g_assert_true (g_strv_contains ((const gchar *const *) r->uris, uri));
  g_mutex_lock (&r->lock);
  g_ptr_array_add (r->listening, g_object_ref (server));
  g_cond_broadcast (&r->cond);
  g_mutex_unlock (&r->lock);
}

static gpointer
run_main (gpointer data)
{
  Run *r = data;

  r->status = thrift_server_serve_uris (r->uris, r->processors, THRIFT_THREADED_SERVER_POOL,
                                        &r->options, &r->error);
  return NULL;
}

/* Serves Gate on @n_uris tcp:// URIs of 127.0.0.1 (@ports: each one's port) in a thread. */
static void
run_start (Run *r, const guint *ports, guint n_uris)
{
  memset (r, 0, sizeof *r);
  g_mutex_init (&r->lock);
  g_cond_init (&r->cond);
  r->listening = g_ptr_array_new_with_free_func (g_object_unref);
  r->uris = g_new0 (gchar *, n_uris + 1);
  r->processors = g_new0 (GObject *, n_uris);
  for (guint i = 0; i < n_uris; i++)
  {
    r->uris[i] = g_strdup_printf ("tcp://127.0.0.1:%u", ports[i]);
    r->processors[i] = gate_processor ();
  }
  r->options.listening = on_listening;
  r->options.user_data = r;
  r->options.max_connections = 8;
  r->thread = g_thread_new ("test-serve-uris", run_main, r);
}

/* Waits (5 s at most) until @n servers listen. */
static gboolean
run_wait_listening (Run *r, guint n)
{
  gint64 until = g_get_monotonic_time () + 5 * G_TIME_SPAN_SECOND;
  gboolean ok;

  g_mutex_lock (&r->lock);
  while (r->listening->len < n && g_cond_wait_until (&r->cond, &r->lock, until))
    ;
  ok = r->listening->len >= n;
  g_mutex_unlock (&r->lock);
  return ok;
}

static void
run_join (Run *r)
{
  g_thread_join (r->thread);
  for (guint i = 0; r->uris[i] != NULL; i++)
    g_object_unref (r->processors[i]);
  g_free (r->processors);
  g_strfreev (r->uris);
  g_ptr_array_unref (r->listening);
  g_mutex_clear (&r->lock);
  g_cond_clear (&r->cond);
}

/* A Gate call on @port: ping (x) returns x + 1. */
static void
assert_ping (guint port, gint32 x)
{
  g_autofree gchar *uri = g_strdup_printf ("tcp://127.0.0.1:%u", port);
  GateTestClient c;
  GError *error = NULL;
  gint32 r = 0;

  gate_test_client_init (&c, thrift_transport_new_for_uri (uri, &error));
  g_assert_no_error (error);
  g_assert_true (thrift_transport_open (c.transport, &error));
  g_assert_no_error (error);
  g_assert_true (gate_if_ping (c.client, &r, x, &error));
  g_assert_no_error (error);
  g_assert_cmpint (r, ==, x + 1);
  gate_test_client_clear (&c);
}

static gpointer
signal_handler_of (gint signum)
{
  struct sigaction sa;

  g_assert_cmpint (sigaction (signum, NULL, &sa), ==, 0);
  return (gpointer) sa.sa_handler;
}

static void
test_new_for_uri (void)
{
  GObject *processor = gate_processor ();
  ThriftThreadedServer *server;
  ThriftServer *s;
  ThriftThreadedServerMode mode;
  GError *error = NULL;

  server = thrift_server_new_for_uri ("tcp://:9999", processor,
                                      THRIFT_THREADED_SERVER_PER_CONNECTION, &error);
  g_assert_no_error (error);
  g_assert_true (THRIFT_IS_THREADED_SERVER (server));
  s = THRIFT_SERVER (server);
  g_assert_true (s->processor == THRIFT_PROCESSOR (processor));
  g_assert_true (THRIFT_IS_SERVER_SOCKET (s->server_transport));
  g_assert_true (THRIFT_IS_CHECKED_FRAMED_TRANSPORT_FACTORY (s->input_transport_factory));
  g_assert_true (THRIFT_IS_CHECKED_FRAMED_TRANSPORT_FACTORY (s->output_transport_factory));
  g_assert_true (THRIFT_IS_CHECKED_BINARY_PROTOCOL_FACTORY (s->input_protocol_factory));
  g_assert_true (THRIFT_IS_CHECKED_BINARY_PROTOCOL_FACTORY (s->output_protocol_factory));
  g_object_get (server, "mode", &mode, NULL);
  g_assert_cmpint (mode, ==, THRIFT_THREADED_SERVER_PER_CONNECTION);
  g_object_unref (server);
  g_object_unref (processor);
}

static void
test_bad_uri (void)
{
  GObject *processor = gate_processor ();
  gchar *uris[] = { "tcp://127.0.0.1:9999", "tcp://127.0.0.1", NULL };
  GObject *processors[] = { processor, processor };
  guint threads = count_threads ();
  GError *error = NULL;

  g_assert_null (thrift_server_new_for_uri ("ftp://127.0.0.1:9999", processor,
                                            THRIFT_THREADED_SERVER_POOL, &error));
  g_assert_error (error, THRIFT_TRANSPORT_URI_ERROR, THRIFT_TRANSPORT_URI_ERROR_SCHEME);
  g_clear_error (&error);

  g_assert_cmpint (
      thrift_server_serve_uris (uris, processors, THRIFT_THREADED_SERVER_POOL, NULL, &error), ==,
      THRIFT_SERVE_BAD_URI);
  g_assert_error (error, THRIFT_TRANSPORT_URI_ERROR, THRIFT_TRANSPORT_URI_ERROR_PORT);
  g_clear_error (&error);
  g_assert_cmpuint (count_threads (), ==, threads);
  g_object_unref (processor);
}

static void
test_sigterm (void)
{
  guint port = test_free_port ();
  gpointer int_before = signal_handler_of (SIGINT), term_before = signal_handler_of (SIGTERM);
  gpointer pipe_before = signal_handler_of (SIGPIPE);
  guint threads = count_threads (), fds = count_fds ();
  Run r;

  run_start (&r, &port, 1);
  g_assert_true (run_wait_listening (&r, 1));
  g_assert_true (signal_handler_of (SIGPIPE) == (gpointer) SIG_IGN);
  assert_ping (port, 42);
  g_assert_cmpint (kill (getpid (), SIGTERM), ==, 0);
  run_join (&r);
  g_assert_no_error (r.error);
  g_assert_cmpint (r.status, ==, THRIFT_SERVE_STOPPED);
  g_assert_cmpuint (count_threads (), ==, threads);
  g_assert_cmpuint (count_fds (), ==, fds);
  g_assert_true (signal_handler_of (SIGINT) == int_before);
  g_assert_true (signal_handler_of (SIGTERM) == term_before);
  g_assert_true (signal_handler_of (SIGPIPE) == pipe_before);
}

static void
test_stop_one (void)
{
  guint ports[2] = { test_free_port (), 0 }, threads = count_threads ();
  Run r;

  do
    ports[1] = test_free_port ();
  while (ports[1] == ports[0]);
  run_start (&r, ports, 2);
  g_assert_true (run_wait_listening (&r, 2));
  assert_ping (ports[0], 1);
  assert_ping (ports[1], 2);
  thrift_server_stop (THRIFT_SERVER (g_ptr_array_index (r.listening, 1)));
  run_join (&r);
  g_assert_no_error (r.error);
  g_assert_cmpint (r.status, ==, THRIFT_SERVE_STOPPED);
  g_assert_cmpuint (count_threads (), ==, threads);
}

static void
test_listen_fails (void)
{
  guint ports[2], threads = count_threads ();
  Run r;

  ports[0] = ports[1] = test_free_port ();
  run_start (&r, ports, 2);
  run_join (&r);
  g_assert_nonnull (r.error);
  g_assert_cmpint (r.status, ==, THRIFT_SERVE_FAILED);
  g_test_message ("%s", r.error->message);
  g_clear_error (&r.error);
  g_assert_cmpuint (count_threads (), ==, threads);
}

static gboolean
never (gpointer data)
{
  return G_SOURCE_REMOVE;
}

int
main (int argc, char **argv)
{
  guint id;

  g_test_init (&argc, &argv, NULL);
  alarm (120); /* a server that does not stop fails the test instead of hanging it */
  /* GLib's signal handling runs in its worker thread, started once for the process and
   * never ended: start it before the tests count threads */
  id = g_unix_signal_add (SIGUSR2, never, NULL);
  g_source_remove (id);

  g_test_add_func ("/server_uri/new_for_uri", test_new_for_uri);
  g_test_add_func ("/server_uri/bad_uri", test_bad_uri);
  g_test_add_func ("/server_uri/sigterm", test_sigterm);
  g_test_add_func ("/server_uri/stop_one", test_stop_one);
  g_test_add_func ("/server_uri/listen_fails", test_listen_fails);
  return g_test_run ();
}
