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
 * thrift_server_uri.c: servers from URIs (see thrift_server_uri.h).
 *
 * thrift_server_serve_uris runs each server's thrift_server_serve in a thread of its own;
 * the calling thread waits in a private GMainContext for SIGINT, SIGTERM or a server that
 * returned, then stops them all and joins their threads.  The signals are watched there
 * before any server starts, so one that comes as soon as a server listens stops it rather
 * than the process.
 */
#include "config.h"

#include <signal.h>
#include <string.h>

#include <glib-unix.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/processor/thrift_processor.h>
#include <thrift/c_glib/protocol/thrift_checked_binary_protocol.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>
#include <thrift/c_glib/server/thrift_server_uri.h>

ThriftThreadedServer *
thrift_server_new_for_uri (const gchar *uri, GObject *processor, ThriftThreadedServerMode mode,
                           GError **error)
{
  ThriftTransportFactory *in_f = NULL, *out_f = NULL;
  ThriftServerTransport *st;
  ThriftProtocolFactory *pf;
  ThriftThreadedServer *server;

  g_return_val_if_fail (uri != NULL, NULL);
  g_return_val_if_fail (THRIFT_IS_PROCESSOR (processor), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  st = thrift_server_transport_new_for_uri (uri, &in_f, &out_f, error);
  if (st == NULL)
    return NULL;
  pf = g_object_new (THRIFT_TYPE_CHECKED_BINARY_PROTOCOL_FACTORY, NULL);
  server = g_object_new (THRIFT_TYPE_THREADED_SERVER, "processor", processor, "server_transport",
                         st, "input_transport_factory", in_f, "output_transport_factory", out_f,
                         "input_protocol_factory", pf, "output_protocol_factory", pf, "mode", mode,
                         NULL);
  g_object_unref (pf);
  g_object_unref (in_f);
  g_object_unref (out_f);
  g_object_unref (st);
  return server;
}

typedef struct
{
  GMainContext *context; /* the caller's wait (not owned) */
  gint *returned;        /* servers whose serve returned, atomic (not owned) */
  ThriftThreadedServer *server;
  const gchar *uri;
  const ThriftServeOptions *options;
  GThread *thread;
  gboolean ok;
  GError *error;
} Serving;

static void
on_listening (GObject *server, GParamSpec *pspec, gpointer data)
{
  Serving *s = data;
  gboolean listening = FALSE;

  g_object_get (server, "listening", &listening, NULL);
  if (listening)
    s->options->listening (s->server, s->uri, s->options->user_data);
}

static gpointer
serve_thread (gpointer data)
{
  Serving *s = data;

  s->ok = thrift_server_serve (THRIFT_SERVER (s->server), &s->error);
  g_atomic_int_inc (s->returned);
  g_main_context_wakeup (s->context);
  return NULL;
}

static gboolean
on_stop_signal (gpointer data)
{
  g_atomic_int_set ((gint *) data, 1);
  return G_SOURCE_CONTINUE;
}

static const ThriftServeOptions no_options;

ThriftServeStatus
thrift_server_serve_uris (gchar **uris, GObject **processors, ThriftThreadedServerMode mode,
                          const ThriftServeOptions *options, GError **error)
{
  static const gint watched[] = { SIGINT, SIGTERM };
  struct sigaction before[G_N_ELEMENTS (watched)], pipe_before, ignore;
  GSource *sources[G_N_ELEMENTS (watched)];
  ThriftServeStatus status = THRIFT_SERVE_STOPPED;
  GMainContext *context;
  Serving *serving;
  gint returned = 0, signalled = 0;
  guint n, i;

  g_return_val_if_fail (uris != NULL && uris[0] != NULL, THRIFT_SERVE_BAD_URI);
  g_return_val_if_fail (processors != NULL, THRIFT_SERVE_BAD_URI);
  g_return_val_if_fail (error == NULL || *error == NULL, THRIFT_SERVE_BAD_URI);
  if (options == NULL)
    options = &no_options;
  g_return_val_if_fail (options->max_connections <= 65535, THRIFT_SERVE_BAD_URI);
  g_return_val_if_fail (options->workers <= 4096, THRIFT_SERVE_BAD_URI);

  n = g_strv_length (uris);
  for (i = 0; i < n; i++)
    g_return_val_if_fail (THRIFT_IS_PROCESSOR (processors[i]), THRIFT_SERVE_BAD_URI);
  serving = g_new0 (Serving, n);
  for (i = 0; i < n; i++)
  {
    serving[i].server = thrift_server_new_for_uri (uris[i], processors[i], mode, error);
    if (serving[i].server == NULL)
    {
      status = THRIFT_SERVE_BAD_URI;
      break;
    }
    if (options->max_connections > 0)
      g_object_set (serving[i].server, "max-connections", options->max_connections, NULL);
    if (options->workers > 0)
      g_object_set (serving[i].server, "workers", options->workers, NULL);
  }
  if (status != THRIFT_SERVE_STOPPED)
  {
    for (i = 0; i < n; i++)
      g_clear_object (&serving[i].server);
    g_free (serving);
    return status;
  }

  /* the signals are watched from here on (GLib replaces their actions), and put back as they
   * were at the end */
  context = g_main_context_new ();
  for (i = 0; i < G_N_ELEMENTS (watched); i++)
  {
    sigaction (watched[i], NULL, &before[i]);
    sources[i] = g_unix_signal_source_new (watched[i]);
    g_source_set_callback (sources[i], on_stop_signal, &signalled, NULL);
    g_source_attach (sources[i], context);
  }
  memset (&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  sigemptyset (&ignore.sa_mask);
  sigaction (SIGPIPE, &ignore, &pipe_before);

  for (i = 0; i < n; i++)
  {
    serving[i].context = context;
    serving[i].returned = &returned;
    serving[i].uri = uris[i];
    serving[i].options = options;
    if (options->listening != NULL)
      g_signal_connect (serving[i].server, "notify::listening", G_CALLBACK (on_listening),
                        &serving[i]);
    serving[i].thread = g_thread_new ("thrift-serve-uri", serve_thread, &serving[i]);
  }

  /* until a signal, or a server returned: stopped by its owner, or it failed */
  while (!g_atomic_int_get (&signalled) && g_atomic_int_get (&returned) == 0)
    g_main_context_iteration (context, TRUE);

  for (i = 0; i < n; i++)
    thrift_server_stop (THRIFT_SERVER (serving[i].server));
  for (i = 0; i < n; i++)
  {
    g_thread_join (serving[i].thread);
    if (!serving[i].ok && status == THRIFT_SERVE_STOPPED)
    {
      status = THRIFT_SERVE_FAILED;
      g_propagate_error (error, serving[i].error);
      serving[i].error = NULL;
    }
    g_clear_error (&serving[i].error);
    g_clear_object (&serving[i].server);
  }
  g_free (serving);

  for (i = 0; i < G_N_ELEMENTS (watched); i++)
  {
    g_source_destroy (sources[i]);
    g_source_unref (sources[i]);
    sigaction (watched[i], &before[i], NULL);
  }
  sigaction (SIGPIPE, &pipe_before, NULL);
  g_main_context_unref (context);
  return status;
}
