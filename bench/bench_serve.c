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

/* bench_serve.c: threaded servers on several URIs at once (see bench_serve.h). */
#include "config.h"

#include <signal.h>
#include <stdio.h>

#include <thrift/c_glib/protocol/thrift_binary_protocol_factory.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "bench_serve.h"

typedef struct
{
  ThriftServer *server;
  const gchar *prog;
} Serving;

/* the servers of bench_serve_each, for bench_serve_wakeups */
G_LOCK_DEFINE_STATIC (running);
static GPtrArray *running;

guint64
bench_serve_wakeups (void)
{
  guint64 sum = 0;

  G_LOCK (running);
  for (guint i = 0; running != NULL && i < running->len; i++)
  {
    guint64 n = 0;

    g_object_get (g_ptr_array_index (running, i), "wakeups", &n, NULL);
    sum += n;
  }
  G_UNLOCK (running);
  return sum;
}

static gpointer
serve_thread (gpointer data)
{
  Serving *s = data;
  GError *error = NULL;
  gboolean ok = thrift_server_serve (s->server, &error);

  if (!ok)
    fprintf (stderr, "%s: server: %s\n", s->prog, error->message);
  g_clear_error (&error);
  return GINT_TO_POINTER (ok);
}

static void
on_listening (GObject *server, GParamSpec *pspec, gpointer uri)
{
  gboolean listening = FALSE;
  g_object_get (server, "listening", &listening, NULL);
  if (listening)
  {
    printf ("listening on %s\n", (const gchar *) uri);
    fflush (stdout);
  }
}

gboolean
bench_parse_server_mode (const gchar *text, ThriftThreadedServerMode *mode)
{
  if (text == NULL || g_strcmp0 (text, "pool") == 0)
    *mode = THRIFT_THREADED_SERVER_POOL;
  else if (g_strcmp0 (text, "per-connection") == 0)
    *mode = THRIFT_THREADED_SERVER_PER_CONNECTION;
  else
    return FALSE;
  return TRUE;
}

int
bench_serve (gchar **uris, ThriftThreadedServerMode mode, GObject *processor, const gchar *prog)
{
  guint n = g_strv_length (uris);
  GObject **processors = g_new (GObject *, n);
  int status;

  for (guint i = 0; i < n; i++)
    processors[i] = processor;
  status = bench_serve_each (uris, processors, mode, prog);
  g_free (processors);
  return status;
}

int
bench_serve_each (gchar **uris, GObject **processors, ThriftThreadedServerMode mode,
                  const gchar *prog)
{
  guint n = g_strv_length (uris), i;
  Serving *serving = g_new0 (Serving, n);
  GThread **threads = g_new0 (GThread *, n);
  ThriftProtocolFactory *pf = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL_FACTORY, NULL);
  int status = 0;

  for (i = 0; i < n; i++)
  {
    ThriftTransportFactory *in_f = NULL, *out_f = NULL;
    GError *error = NULL;
    ThriftServerTransport *st =
      thrift_server_transport_new_for_uri (uris[i], &in_f, &out_f, &error);
    ThriftThreadedServer *ts;

    if (st == NULL)
    {
      fprintf (stderr, "%s: %s\n", prog, error->message);
      g_clear_error (&error);
      status = 2;
      break;
    }
    serving[i].prog = prog;
    serving[i].server = g_object_new (THRIFT_TYPE_THREADED_SERVER,
                                      "processor", processors[i], "server_transport", st,
                                      "input_transport_factory", in_f,
                                      "output_transport_factory", out_f,
                                      "input_protocol_factory", pf,
                                      "output_protocol_factory", pf, "mode", mode, NULL);
    g_object_unref (st);
    g_object_unref (in_f);
    g_object_unref (out_f);
    ts = THRIFT_THREADED_SERVER (serving[i].server);
    thrift_threaded_server_stop_on_signal (ts, SIGINT, NULL);
    thrift_threaded_server_stop_on_signal (ts, SIGTERM, NULL);
    g_signal_connect (ts, "notify::listening", G_CALLBACK (on_listening), uris[i]);
  }
  if (status == 0)
  {
    G_LOCK (running);
    if (running == NULL)
      running = g_ptr_array_new ();
    for (i = 0; i < n; i++)
      g_ptr_array_add (running, serving[i].server);
    G_UNLOCK (running);
    for (i = 0; i < n; i++)
      threads[i] = g_thread_new ("bench-serve", serve_thread, &serving[i]);
    for (i = 0; i < n; i++)
      if (!GPOINTER_TO_INT (g_thread_join (threads[i])))
      {
        status = 1;
        /* one server failed (e.g. could not listen): stop the others too */
        for (guint j = 0; j < n; j++)
          thrift_server_stop (serving[j].server);
      }
    if (status == 0)
      printf ("servers stopped\n");
    G_LOCK (running);
    for (i = 0; i < n; i++)
      g_ptr_array_remove (running, serving[i].server);
    G_UNLOCK (running);
  }
  for (i = 0; i < n; i++)
    g_clear_object (&serving[i].server);
  g_free (serving);
  g_free (threads);
  g_object_unref (pf);
  return status;
}
