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
 * suite_throughput.c: throughput with N client threads, each with its own connection, against
 * ThriftThreadedServer: the hint-selected plan (perf_goal = throughput with the payload size,
 * and the concurrency hint that is true for N on this machine), the unhinted function, and
 * tcp:// for reference; and the Hybrid-EagerRNDV baseline: the plan's hints with proto =
 * eager_rndv, whole messages (bulk transfer off).  RPC/s, payload MB/s, latency, and CPU time
 * per RPC of both sides.
 */
#include "config.h"

#include "suite_load.h"
#include "suite_modes.h"

typedef struct
{
  const gchar *label;
  const gchar *uri;
  const gchar *const (*functions)[2]; /* [large][over], or NULL: echo_plain */
} Target;

static const gchar *const plan_functions[2][2] = { { "tput_small_under", "tput_small_over" },
                                                   { "tput_large_under", "tput_large_over" } };
static const gchar *const eager_rndv_functions[2][2] = {
  { "tput_small_under_eager_rndv", "tput_small_over_eager_rndv" },
  { "tput_large_under_eager_rndv", "tput_large_over_eager_rndv" }
};

/* The function a target calls at @size with @clients. */
static const gchar *
target_function (const Target *t, guint64 size, guint clients)
{
  if (t->functions == NULL)
    return "echo_plain";
  return t->functions[size > 4096][!suite_clients_under (clients)];
}

static void
print_row (const gchar *label, const gchar *function, guint clients, const SuiteLoadResult *r,
           guint64 size)
{
  guint64 calls = suite_load_calls (r);
  double d = MAX (calls, 1);

  printf ("%-8s %-27s %4u %9.0f %8.2f %8.1f %8.1f %8.1f %8.1f %5.2f %5.2f", label, function,
          clients, suite_load_rate (r), suite_load_mb_s (r, size), r->latency[0].p50,
          r->latency[0].p99, r->client_cpu_s * 1e6 / d, r->server_cpu_s * 1e6 / d,
          r->server_wakeups / d, r->server_switches / d);
  if (r->have_counters)
  {
    const guint64 *k = r->counters;
    g_autofree gchar *protos = g_strdup_printf (
        "%s/%s%s", r->request_proto[0] ? suite_proto_short (r->request_proto[0]) : "-",
        r->reply_proto[0] ? suite_proto_short (r->reply_proto[0]) : "-",
        r->protocol_changed[0] ? "*" : "");
    printf (" %-16s %5.2f %5.2f %5.2f %5.2f", protos, k[BENCH_C_WR_POSTED] / d,
            k[BENCH_C_POST_SEND] / d, k[BENCH_C_COMPLETIONS] / d, k[BENCH_C_CQ_EVENTS] / d);
  }
  if (!r->ok)
    printf ("  FAILED: %s", r->error);
  printf ("\n");
}

static void
csv_row (FILE *f, const gchar *label, const gchar *function, const gchar *uri, guint64 size,
         guint clients, double duration, const SuiteLoadResult *r)
{
  guint64 calls = suite_load_calls (r);
  double d = MAX (calls, 1);

  fprintf (f,
           "%s,%s,%s,%" G_GUINT64_FORMAT ",%u,%.2f,%.4f,%" G_GUINT64_FORMAT ",%" G_GINT64_FORMAT
           ",%.1f,%.3f,%.2f,%.2f,%.2f,%.4f,%.4f,%.2f,%.2f,%.3f,%.3f,%s,%s,%d",
           label, function, suite_column_transport (label, uri), size, clients, duration,
           r->elapsed_s, calls, r->server_calls, suite_load_rate (r), suite_load_mb_s (r, size),
           r->latency[0].mean, r->latency[0].p50, r->latency[0].p99, r->client_cpu_s,
           r->server_cpu_s, r->client_cpu_s * 1e6 / d, r->server_cpu_s * 1e6 / d,
           r->server_wakeups / d, r->server_switches / d,
           r->request_proto[0] ? r->request_proto[0] : "",
           r->reply_proto[0] ? r->reply_proto[0] : "", r->protocol_changed[0]);
  bench_csv_counters (f, r->have_counters, r->counters);
  fprintf (f, ",%s\n", r->error ? g_strdelimit (r->error, ",\"\n", ';') : "");
  fflush (f);
}

/* Which server a column calls. */
typedef enum
{
  COLUMN_RDMA,       /* --rdma */
  COLUMN_RDMA_WHOLE, /* --rdma, whole messages (bulk transfer off) */
  COLUMN_TCP,        /* --tcp */
  COLUMN_RSOCKET     /* --rsocket */
} ColumnServer;

/* The columns, in the order they run; their labels are what --columns takes (e+r_rndv is
 * suite_proto_short's name of eager_rndv). */
static const struct
{
  const gchar *label;
  ColumnServer server;
  const gchar *const (*functions)[2];
} columns[] = {
  { "plan", COLUMN_RDMA, plan_functions },
  { "plain", COLUMN_RDMA, NULL },
  { "e+r_rndv", COLUMN_RDMA_WHOLE, eager_rndv_functions },
  { "tcp", COLUMN_TCP, NULL },
  { "rsocket", COLUMN_RSOCKET, NULL },
};

gboolean
suite_throughput_column_known (const gchar *label)
{
  for (guint i = 0; i < G_N_ELEMENTS (columns); i++)
    if (g_strcmp0 (label, columns[i].label) == 0)
      return TRUE;
  return FALSE;
}

gchar *
suite_throughput_column_list (void)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (columns); i++)
    g_string_append_printf (s, "%s%s", i > 0 ? ", " : "", columns[i].label);
  return g_string_free (s, FALSE);
}

int
suite_run_throughput (const SuiteOptions *o)
{
  g_autofree gchar *whole = o->rdma_uri ? suite_uri_whole_messages (o->rdma_uri) : NULL;
  const gchar *uri_of[] = {
    [COLUMN_RDMA] = o->rdma_uri,
    [COLUMN_RDMA_WHOLE] = whole,
    [COLUMN_TCP] = o->tcp_uri,
    [COLUMN_RSOCKET] = o->rsocket_uri,
  };
  Target targets[G_N_ELEMENTS (columns)];
  guint n = 0;
  int status = 0;

  /* every column whose server is given, of those --columns names (all without it) */
  for (guint i = 0; i < G_N_ELEMENTS (columns); i++)
    if (uri_of[columns[i].server] != NULL
        && (o->columns == NULL
            || g_strv_contains ((const gchar *const *) o->columns, columns[i].label)))
      targets[n++] = (Target){ columns[i].label, uri_of[columns[i].server], columns[i].functions };
  if (n == 0)
  {
    fprintf (stderr, "thrift-rdma-suite: throughput: no column to measure (give --rdma, --tcp "
                     "or --rsocket, and --columns naming one of theirs)\n");
    return 2;
  }
  if (o->csv)
  {
    bench_csv_header (o->csv, "column,function,transport,size,clients,duration_s,elapsed_s,calls,"
                              "server_calls,rpc_per_s,mb_per_s,mean_us,p50_us,p99_us,client_cpu_s,"
                              "server_cpu_s,client_cpu_us_per_rpc,server_cpu_us_per_rpc,"
                              "server_wakeups_per_rpc,server_switches_per_rpc,"
                              "request_protocol,reply_protocol,protocol_changed");
  }

  for (guint s = 0; s < o->sizes->len; s++)
  {
    guint64 size = g_array_index (o->sizes, guint64, s);
    g_autofree gchar *st = bench_size_text (size);
    double *rates = g_new0 (double, n * o->clients->len);

    printf ("\n== Throughput: %s payload, N clients (a connection each), %.1f s per point in %u "
            "rounds ==\n",
            st, o->duration, o->load_rounds);
    printf ("plan = perf_goal=throughput, payload_size, concurrency 1 or 64 (whichever is true\n"
            "for N here); plain = no hints; e+r_rndv = the plan's hints with proto = eager_rndv\n"
            "(eager up to 4 KiB, read_rndv above: the HatRPC paper's Hybrid-EagerRNDV baseline),\n"
            "whole messages (bulk=0); tcp = stock framed TCP; rsocket = the same over\n"
            "librspreload. The columns of one N take turns, a round each, so the host's load\n"
            "falls on all alike. MB/s = payload one way; CPU = us of CPU time per RPC, client\n"
            "process and server process (getrusage); counters per RPC summed over the client\n"
            "connections (evts = CQ events); wake = the server's dispatcher wake-ups and csw\n"
            "its voluntary context switches (blocking waits), per RPC\n");
    printf ("%-8s %-27s %4s %9s %8s %8s %8s %8s %8s %5s %5s %-16s %5s %5s %5s %5s\n", "column",
            "function", "N", "RPC/s", "MB/s", "p50 us", "p99 us", "cli CPU", "srv CPU", "wake",
            "csw", "request/reply", "WRs", "posts", "CQEs", "evts");
    fflush (stdout);
    for (guint c = 0; c < o->clients->len; c++)
    {
      guint clients = (guint) g_array_index (o->clients, guint64, c);
      SuiteLoadResult *res = g_new (SuiteLoadResult, n);

      for (guint t = 0; t < n; t++)
        suite_load_result_init (&res[t]);
      for (guint round = 0; round < o->load_rounds; round++)
        for (guint i = 0; i < n; i++)
        {
          /* each round starts from another column */
          guint t = (c + round + i) % n;
          SuiteLoadSpec spec = {
            .uri = targets[t].uri,
            .clients = clients,
            .size = size,
            .duration = o->duration / o->load_rounds,
            .warmup = o->warmup,
            .n_functions = 1,
            .functions = { target_function (&targets[t], size, clients) },
          };

          if (!res[t].ok)
            continue;
          fprintf (stderr, "throughput: %s %s, %s, %u clients, round %u/%u ...", targets[t].label,
                   spec.functions[0], st, clients, round + 1, o->load_rounds);
          suite_load_run (&spec, &res[t]);
          fprintf (stderr, " %.0f RPC/s so far%s%s\n", suite_load_rate (&res[t]),
                   res[t].ok ? "" : ", failed: ", res[t].ok ? "" : res[t].error);
        }
      for (guint t = 0; t < n; t++)
      {
        const gchar *function = target_function (&targets[t], size, clients);

        print_row (targets[t].label, function, clients, &res[t], size);
        if (o->csv)
          csv_row (o->csv, targets[t].label, function, targets[t].uri, size, clients, o->duration,
                   &res[t]);
        if (!res[t].ok)
          status = 1;
        else
          rates[t * o->clients->len + c] = suite_load_rate (&res[t]);
        suite_load_result_clear (&res[t]);
      }
      fflush (stdout);
      g_free (res);
    }
    /* the same figures side by side: RPC/s per N and column */
    printf ("\nRPC/s, %s\n%4s", st, "N");
    for (guint t = 0; t < n; t++)
      printf (" %9s", targets[t].label);
    printf ("\n");
    for (guint c = 0; c < o->clients->len; c++)
    {
      printf ("%4u", (guint) g_array_index (o->clients, guint64, c));
      for (guint t = 0; t < n; t++)
        printf (" %9.0f", rates[t * o->clients->len + c]);
      printf ("\n");
    }
    fflush (stdout);
    g_free (rates);
  }
  return status;
}
