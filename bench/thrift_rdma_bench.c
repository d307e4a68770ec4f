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
 * thrift-rdma-bench: latency of a Thrift c_glib echo of a binary argument, 4 B to 512 KB,
 * over several transports side by side in one run.
 *
 *   thrift-rdma-bench --server URI [--server URI ...]     serve until SIGINT/SIGTERM
 *   thrift-rdma-bench --client URI [--client URI ...]     measure and print the table
 *
 * tcp:// is stock ThriftSocket in ThriftFramedTransport on both sides (the fair baseline:
 * one write per message; the stock buffered transport stalls on Nagle and delayed ACKs).
 * For ThriftRdma connections the table adds per-RPC counters from ThriftRdmaStats.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <glib-object.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/server/thrift_threaded_server.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>
#include <thrift/c_glib/transport/thrift_rdma.h>

#include "bench_echo.h"
#include "bench_serve.h"
#include "bench_util.h"

/* ---- server ---- */

typedef struct
{
  BenchEchoHandler parent;
} BenchHandler;
typedef struct
{
  BenchEchoHandlerClass parent;
} BenchHandlerClass;
static GType bench_handler_get_type (void);
G_DEFINE_TYPE (BenchHandler, bench_handler, TYPE_BENCH_ECHO_HANDLER)

static gboolean
bench_echo (BenchEchoIf *iface, GByteArray **ret, const GByteArray *data, GError **error)
{
  if (*ret != NULL)
    g_byte_array_unref (*ret);
  *ret = g_byte_array_ref ((GByteArray *) data);
  return TRUE;
}

static void
bench_handler_class_init (BenchHandlerClass *klass)
{
  BENCH_ECHO_HANDLER_CLASS (klass)->echo = bench_echo;
}

static void
bench_handler_init (BenchHandler *self)
{
}

/* ---- client ---- */

typedef struct
{
  guint size;
  guint calls;
  double avg_us, p50_us, p99_us;
  gboolean have_counters;
  double wr, post_send, completions, copied, round_trips;
  gboolean ok;
} Row;

/* Runs the sweep for one URI; fills ROWS (one per size). FALSE if it could not connect or
 * a call failed (the rows measured so far stay). */
static gboolean
measure (const gchar *uri, const guint *sizes, guint n_sizes, guint iterations,
         guint large_iterations, guint warmup, Row *rows)
{
  GError *error = NULL;
  ThriftTransport *t = thrift_transport_new_for_uri (uri, &error);
  ThriftProtocol *p;
  BenchEchoIf *client;
  gboolean ok = TRUE;
  guint s, i;

  if (t == NULL || !thrift_transport_open (t, &error))
  {
    fprintf (stderr, "thrift-rdma-bench: %s: %s\n", uri, error->message);
    g_clear_error (&error);
    g_clear_object (&t);
    return FALSE;
  }
  p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
  client = g_object_new (TYPE_BENCH_ECHO_CLIENT, "input_protocol", p, "output_protocol", p, NULL);

  for (s = 0; s < n_sizes && ok; s++)
  {
    guint size = sizes[s];
    guint calls = size >= 65536 ? large_iterations : iterations;
    GByteArray *data = g_byte_array_sized_new (size);
    double *lat = g_new (double, MAX (calls, 1));
    Row *row = &rows[s];

    g_byte_array_set_size (data, size);
    for (i = 0; i < size; i++)
      data->data[i] = (guint8) (i * 13 + size);
    fprintf (stderr, "  %s: %u B x %u calls ...", uri, size, calls);

    for (i = 0; i < warmup + calls && ok; i++)
    {
      GByteArray *back = NULL;
      double t0;

      if (i == warmup)
      {
        if (THRIFT_IS_RDMA (t))
          thrift_rdma_reset_stats (THRIFT_RDMA (t));
      }
      t0 = bench_now_us ();
      ok = bench_echo_if_echo (client, &back, data, &error);
      if (i >= warmup)
        lat[i - warmup] = bench_now_us () - t0;
      if (ok && (back == NULL || back->len != size || memcmp (back->data, data->data, size) != 0))
      {
        fprintf (stderr, "\nthrift-rdma-bench: %s: the echo of %u bytes came back wrong\n", uri,
                 size);
        ok = FALSE;
      }
      else if (!ok)
      {
        fprintf (stderr, "\nthrift-rdma-bench: %s: echo of %u bytes: %s\n", uri, size,
                 error->message);
        g_clear_error (&error);
      }
      if (back != NULL)
        g_byte_array_unref (back);
    }
    if (ok && calls > 0)
    {
      BenchSummary sum;

      bench_summarize (lat, calls, &sum);
      row->size = size;
      row->calls = calls;
      row->avg_us = sum.mean;
      row->p50_us = sum.p50;
      row->p99_us = sum.p99;
      row->ok = TRUE;
      if (THRIFT_IS_RDMA (t))
      {
        ThriftRdmaStats st;
        thrift_rdma_get_stats (THRIFT_RDMA (t), &st);
        row->have_counters = TRUE;
        row->wr = (double) st.wr_posted / calls;
        row->post_send = (double) st.post_send_calls / calls;
        row->completions = (double) st.completions / calls;
        row->copied = (double) st.bytes_copied / calls;
        row->round_trips = (double) st.round_trips / calls;
      }
      fprintf (stderr, " p50 %.1f us\n", row->p50_us);
    }
    g_free (lat);
    g_byte_array_unref (data);
  }

  thrift_transport_close (t, NULL);
  g_object_unref (client);
  g_object_unref (p);
  g_object_unref (t);
  return ok;
}

static void
print_table (gchar **uris, Row **rows, const guint *sizes, guint n_sizes)
{
  guint n = g_strv_length (uris), u, s;

  printf ("\nEcho of a binary argument: latency per call in microseconds (avg / p50 / p99)\n");
  for (u = 0; u < n; u++)
  {
    g_autoptr (ThriftTransportUri) parsed = thrift_transport_uri_parse (uris[u], FALSE, NULL);
    g_autofree gchar *what = parsed ? thrift_transport_uri_describe (parsed) : g_strdup (uris[u]);
    printf ("  [%u] %s%s\n", u + 1, what,
            parsed && parsed->scheme == THRIFT_TRANSPORT_URI_TCP
                ? "  -- stock Thrift c_glib, the baseline"
                : "");
  }
  printf ("\n%-8s", "size");
  for (u = 0; u < n; u++)
    printf (" | [%u] %-22s", u + 1, "avg / p50 / p99");
  printf ("\n");
  for (s = 0; s < n_sizes; s++)
  {
    g_autofree gchar *st = bench_size_text (sizes[s]);
    printf ("%-8s", st);
    for (u = 0; u < n; u++)
    {
      Row *r = &rows[u][s];
      if (r->ok)
        printf (" | %8.1f %8.1f %8.1f", r->avg_us, r->p50_us, r->p99_us);
      else
        printf (" | %26s", "-");
    }
    printf ("\n");
  }
  for (u = 0; u < n; u++)
  {
    gboolean any = FALSE;
    for (s = 0; s < n_sizes; s++)
      any |= rows[u][s].have_counters;
    if (!any)
      continue;
    printf ("\n[%u] per RPC: work requests posted, ibv_post_send calls, completions, "
            "bytes copied, round trips\n",
            u + 1);
    printf ("%-8s | %8s %8s %8s %12s %8s\n", "size", "WRs", "posts", "CQEs", "copied", "RTTs");
    for (s = 0; s < n_sizes; s++)
    {
      Row *r = &rows[u][s];
      g_autofree gchar *st = bench_size_text (sizes[s]);
      if (r->have_counters)
        printf ("%-8s | %8.2f %8.2f %8.2f %12.0f %8.2f\n", st, r->wr, r->post_send, r->completions,
                r->copied, r->round_trips);
    }
  }
  fflush (stdout);
}

int
main (int argc, char **argv)
{
  gchar **servers = NULL, **clients = NULL;
  gchar *server_mode = NULL;
  gint iterations = 200, large_iterations = 50, warmup = 10;
  gint min_size = 4, max_size = 512 * 1024;
  GOptionEntry entries[] = {
    { "server", 's', 0, G_OPTION_ARG_STRING_ARRAY, &servers,
      "serve the echo service on URI (repeat for several, side by side); until SIGINT", "URI" },
    { "server-mode", 0, 0, G_OPTION_ARG_STRING, &server_mode,
      "ThriftThreadedServer mode of the servers: pool (default) or per-connection", "MODE" },
    { "client", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &clients,
      "measure against URI (repeat: one column each, in order)", "URI" },
    { "iterations", 'n', 0, G_OPTION_ARG_INT, &iterations,
      "measured calls per size below 64 KB (default 200)", "N" },
    { "large-iterations", 'N', 0, G_OPTION_ARG_INT, &large_iterations,
      "measured calls per size from 64 KB (default 50)", "N" },
    { "warmup", 'w', 0, G_OPTION_ARG_INT, &warmup, "unmeasured calls before each size (default 10)",
      "N" },
    { "min-size", 0, 0, G_OPTION_ARG_INT, &min_size, "smallest payload (default 4)", "BYTES" },
    { "max-size", 0, 0, G_OPTION_ARG_INT, &max_size, "largest payload (default 524288)", "BYTES" },
    { NULL }
  };
  static const guint all_sizes[] = { 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 524288 };
  guint sizes[G_N_ELEMENTS (all_sizes)], n_sizes = 0, i;
  GOptionContext *context;
  GError *error = NULL;
  Row **rows;
  int status = 0;

  context = g_option_context_new ("- latency of a Thrift echo, tcp:// against rdma://");
  g_option_context_set_summary (
      context,
      "Payloads 4 B to 512 KB (powers of 4, and 512 KB). Start the servers, then the client:\n"
      "  thrift-rdma-bench --server tcp://:9091 --server rdma://10.77.0.1:9092 &\n"
      "  thrift-rdma-bench --client tcp://10.77.0.1:9091 --client rdma://10.77.0.1:9092\n"
      "tcp:// is stock ThriftSocket with framed transports (the fair baseline). Progress\n"
      "goes to stderr, the table to stdout. bench/run-latency runs it all in the soft-RoCE guest.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
  {
    fprintf (stderr, "thrift-rdma-bench: %s (try --help)\n", error->message);
    return 2;
  }
  g_option_context_free (context);
  if ((servers == NULL) == (clients == NULL))
  {
    fprintf (stderr, "thrift-rdma-bench: give --server URI... or --client URI... (try --help)\n");
    return 2;
  }
  if (iterations < 1 || large_iterations < 1 || warmup < 0 || min_size < 0 || max_size < min_size)
  {
    fprintf (stderr, "thrift-rdma-bench: iterations must be at least 1, warmup at least 0, "
                     "and 0 <= min-size <= max-size\n");
    return 2;
  }
  if (!bench_parse_server_mode (server_mode, &(ThriftThreadedServerMode){ 0 }))
  {
    fprintf (stderr, "thrift-rdma-bench: --server-mode must be pool or per-connection\n");
    return 2;
  }
  signal (SIGPIPE, SIG_IGN);
  if (servers != NULL)
  {
    ThriftThreadedServerMode mode;
    GObject *handler = g_object_new (bench_handler_get_type (), NULL);
    GObject *processor = g_object_new (TYPE_BENCH_ECHO_PROCESSOR, "handler", handler, NULL);

    bench_parse_server_mode (server_mode, &mode);
    status = bench_serve (servers, mode, processor, "thrift-rdma-bench");
    g_object_unref (processor);
    g_object_unref (handler);
    g_free (server_mode);
    g_strfreev (servers);
    return status;
  }

  for (i = 0; i < G_N_ELEMENTS (all_sizes); i++)
    if (all_sizes[i] >= (guint) min_size && all_sizes[i] <= (guint) max_size)
      sizes[n_sizes++] = all_sizes[i];
  if (n_sizes == 0)
  {
    fprintf (stderr, "thrift-rdma-bench: no payload size between %d and %d\n", min_size, max_size);
    return 2;
  }
  rows = g_new0 (Row *, g_strv_length (clients));
  for (i = 0; clients[i] != NULL; i++)
  {
    rows[i] = g_new0 (Row, n_sizes);
    fprintf (stderr, "[%u] %s\n", i + 1, clients[i]);
    if (!measure (clients[i], sizes, n_sizes, (guint) iterations, (guint) large_iterations,
                  (guint) warmup, rows[i]))
      status = 1;
  }
  print_table (clients, rows, sizes, n_sizes);
  for (i = 0; clients[i] != NULL; i++)
    g_free (rows[i]);
  g_free (rows);
  g_strfreev (clients);
  return status;
}
