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

/* bench_serve.c: the benchmarks' servers, on thrift_server_serve_uris (see bench_serve.h). */
#include "config.h"

#include <stdio.h>

#include <thrift/c_glib/server/thrift_server_uri.h>

#include "bench_serve.h"

/* the servers of bench_serve_each that listen, for bench_serve_wakeups (references) */
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

static void
on_listening (ThriftThreadedServer *server, const gchar *uri, gpointer data)
{
  G_LOCK (running);
  g_ptr_array_add (running, g_object_ref (server));
  G_UNLOCK (running);
  printf ("listening on %s\n", uri);
  fflush (stdout);
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
  ThriftServeOptions options = { .listening = on_listening };
  GError *error = NULL;
  ThriftServeStatus status;

  G_LOCK (running);
  if (running == NULL)
    running = g_ptr_array_new_with_free_func (g_object_unref);
  G_UNLOCK (running);
  status = thrift_server_serve_uris (uris, processors, mode, &options, &error);
  if (status == THRIFT_SERVE_STOPPED)
    printf ("servers stopped\n");
  else if (status == THRIFT_SERVE_FAILED)
    fprintf (stderr, "%s: server: %s\n", prog, error->message);
  else
    fprintf (stderr, "%s: %s\n", prog, error->message);
  g_clear_error (&error);
  /* they stopped: their counts no longer grow, and the next bench_serve_each counts its own */
  G_LOCK (running);
  g_ptr_array_set_size (running, 0);
  G_UNLOCK (running);
  return status;
}
