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
 * test_stop_signal: upstream's way of stopping a server stops every server transport under
 * both servers.  Upstream Thrift's test/c_glib/src/test_server.c installs a SIGINT handler
 * with SA_RESETHAND (no SA_RESTART) that calls thrift_server_stop; the signal is sent to the
 * process, as a user's Ctrl-C would be.  Each case is a server process of its own (this
 * program run with --serve), stopped while it waits in accept (idle) or in a connection's
 * peek (a client connected), and must return from serve within 5 s.
 *
 * On the host: tcp:// and hybrid:// (falling back to TCP alone); where an RDMA device is
 * (the soft-RoCE guest): rdma:// and hybrid:// with both legs.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib-object.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol_factory.h>
#include <thrift/c_glib/server/thrift_simple_server.h>
#include <thrift/c_glib/server/thrift_threaded_server.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "gate.h"
#include "gate_client.h"
#include "gate_handler.h"
#include "serve_thread.h"

#define STOP_WITHIN_US (5 * G_USEC_PER_SEC)

/* ---- the server process ---- */

static ThriftServer *child_server;

static void
on_sigint (int signum)
{
  /* as upstream's test_server.c does */
  thrift_server_stop (child_server);
}

/* Serves Gate on URI with a ThriftSimpleServer ("simple") or a ThriftThreadedServer, under
 * upstream's SIGINT handler; exits 0 once serve returned. */
static int
serve_child (const gchar *kind, const gchar *uri)
{
  ThriftTransportFactory *in_f = NULL, *out_f = NULL;
  ThriftServerTransport *st;
  ThriftProtocolFactory *pf;
  GObject *handler, *processor;
  GError *error = NULL;
  struct sigaction sa;

  alarm (120); /* never outlives a test that went wrong */
  st = thrift_server_transport_new_for_uri (uri, &in_f, &out_f, &error);
  if (st == NULL)
  {
    g_printerr ("%s\n", error->message);
    return 2;
  }
  handler = g_object_new (test_gate_get_type (), NULL);
  processor = g_object_new (TYPE_GATE_PROCESSOR, "handler", handler, NULL);
  pf = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL_FACTORY, NULL);
  child_server = g_object_new (strcmp (kind, "simple") == 0 ? THRIFT_TYPE_SIMPLE_SERVER
                                                            : THRIFT_TYPE_THREADED_SERVER,
                               "processor", processor, "server_transport", st,
                               "input_transport_factory", in_f, "output_transport_factory", out_f,
                               "input_protocol_factory", pf, "output_protocol_factory", pf, NULL);
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGINT, &sa, NULL);

  thrift_server_serve (child_server, &error);
  g_clear_error (&error);
  printf ("serve returned\n");
  fflush (stdout);
  g_object_unref (child_server);
  g_object_unref (handler);
  g_object_unref (processor);
  g_object_unref (st);
  g_object_unref (in_f);
  g_object_unref (out_f);
  g_object_unref (pf);
  return 0;
}

/* ---- the test ---- */

typedef struct
{
  const gchar *server; /* "simple" or "threaded" */
  gchar *server_uri;   /* with %u for the port */
  gchar *client_uri;
  gboolean connected; /* a client stays connected when SIGINT comes */
} Case;

static gboolean
rdma_device_present (void)
{
  g_autoptr (GDir) dir = g_dir_open ("/sys/class/infiniband", 0, NULL);

  return dir != NULL && g_dir_read_name (dir) != NULL;
}

/* Opens a client and makes a call, retrying while the server starts (at most 30 s). */
static void
client_call (GateTestClient *c, const gchar *uri)
{
  gint64 until = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  for (;;)
  {
    GError *error = NULL;
    gint32 r = 0;

    gate_test_client_init (c, thrift_transport_new_for_uri (uri, &error));
    g_assert_no_error (error);
    if (thrift_transport_open (c->transport, &error) && gate_if_ping (c->client, &r, 41, &error))
    {
      g_assert_cmpint (r, ==, 42);
      return;
    }
    g_assert_cmpint (g_get_monotonic_time (), <, until);
    g_clear_error (&error);
    gate_test_client_clear (c);
    g_usleep (50 * 1000);
  }
}

static void
test_stop (gconstpointer data)
{
  const Case *k = data;
  guint port = test_free_port ();
  g_autofree gchar *server_uri = g_strdup_printf (k->server_uri, port);
  g_autofree gchar *client_uri = g_strdup_printf (k->client_uri, port);
  gchar *argv[] = { (gchar *) "/proc/self/exe", (gchar *) "--serve", (gchar *) k->server,
                    server_uri, NULL };
  GateTestClient c = { 0 };
  GError *error = NULL;
  GPid pid;
  gint out_fd, status = -1;
  gint64 sent, until;
  gboolean exited = FALSE;
  gchar buf[256] = "";
  ssize_t n;

  g_assert_true (g_spawn_async_with_pipes (NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                           &pid, NULL, &out_fd, NULL, &error));
  g_assert_no_error (error);
  client_call (&c, client_uri);
  if (!k->connected)
  {
    gate_test_client_clear (&c);
    g_usleep (300 * 1000); /* back in accept by now */
  }
  else
    g_usleep (300 * 1000); /* in peek for the next request by now */

  g_assert_cmpint (kill (pid, SIGINT), ==, 0);
  sent = g_get_monotonic_time ();
  until = sent + STOP_WITHIN_US;
  while (g_get_monotonic_time () < until)
  {
    if (waitpid (pid, &status, WNOHANG) == pid)
    {
      exited = TRUE;
      break;
    }
    g_usleep (10 * 1000);
  }
  if (!exited)
  {
    kill (pid, SIGKILL);
    waitpid (pid, &status, 0);
  }
  gate_test_client_clear (&c);
  n = read (out_fd, buf, sizeof buf - 1);
  buf[MAX (n, 0)] = '\0';
  close (out_fd);
  g_spawn_close_pid (pid);
  g_test_message ("%s server on %s: %s after %.2f s; said '%s'", k->server, server_uri,
                  exited ? "exited" : "still running", (g_get_monotonic_time () - sent) / 1e6,
                  g_strstrip (buf));
  g_assert_true (exited);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  g_assert_cmpstr (buf, ==, "serve returned");
}

static void
add_cases (const gchar *scheme, const gchar *server_uri, const gchar *client_uri)
{
  static const gchar *const servers[] = { "simple", "threaded" };

  for (guint s = 0; s < G_N_ELEMENTS (servers); s++)
    for (guint connected = 0; connected < 2; connected++)
    {
      Case *k = g_new0 (Case, 1); /* lives as long as the test run */
      g_autofree gchar *path = g_strdup_printf ("/stop-signal/%s/%s/%s", servers[s], scheme,
                                                connected ? "connected" : "idle");

      k->server = servers[s];
      k->server_uri = g_strdup (server_uri);
      k->client_uri = g_strdup (client_uri);
      k->connected = connected;
      g_test_add_data_func (path, k, test_stop);
    }
}

int
main (int argc, char **argv)
{
  if (argc == 4 && strcmp (argv[1], "--serve") == 0)
    return serve_child (argv[2], argv[3]);
  g_test_init (&argc, &argv, NULL);
  /* hybrid:// on the host warns that it falls back to TCP: expected here */
  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  if (rdma_device_present ())
  {
    const gchar *addr = g_getenv ("THRIFT_RDMA_TEST_SERVER_ADDR");
    g_autofree gchar *server = g_strdup_printf ("%%s://%s:%%%%u", addr ? addr : "10.77.0.1");
    g_autofree gchar *rdma = g_strdup_printf (server, "rdma");
    g_autofree gchar *hybrid = g_strdup_printf (server, "hybrid");

    add_cases ("rdma", rdma, rdma);
    add_cases ("hybrid", hybrid, hybrid);
  }
  else
  {
    add_cases ("tcp", "tcp://127.0.0.1:%u", "tcp://127.0.0.1:%u");
    add_cases ("hybrid", "hybrid://127.0.0.1:%u?fallback=tcp",
               "hybrid://127.0.0.1:%u?fallback=tcp");
  }
  return g_test_run ();
}
