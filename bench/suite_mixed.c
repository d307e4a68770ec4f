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
 * suite_mixed.c: the mixed benchmark of the HatRPC paper (Sec. 5.3, Fig. 13 and 14): clients
 * call a latency function and a throughput function of one service, chosen at random by a
 * ratio (50/50 by default); the server computes a checksum of each payload before it echoes
 * it.  Both functions' latency and the total throughput, for the hint-selected plan (each
 * function labelled with its goal, the payload size and the concurrency that is true for the
 * number of clients), each protocol forced on both functions (and the pair eager_rndv, the
 * Hybrid-EagerRNDV baseline, with whole messages: bulk transfer off), stock tcp:// and
 * rsocket, at each number of clients of --mixed-clients (the x axis of the paper's figures).
 */
#include "config.h"

#include "suite_load.h"
#include "suite_modes.h"

typedef struct
{
  gchar *label;
  gchar *uri;
  gchar *functions[2]; /* latency, throughput */
} Target;

static void
print_row (const Target *t, guint clients, const SuiteLoadResult *r, guint64 size)
{
  guint64 calls = suite_load_calls (r);
  double d = MAX (calls, 1);
  g_autofree gchar *protos =
      r->have_counters
          ? g_strdup_printf ("%s/%s%s %s/%s%s",
                             r->request_proto[0] ? suite_proto_short (r->request_proto[0]) : "-",
                             r->reply_proto[0] ? suite_proto_short (r->reply_proto[0]) : "-",
                             r->protocol_changed[0] ? "*" : "",
                             r->request_proto[1] ? suite_proto_short (r->request_proto[1]) : "-",
                             r->reply_proto[1] ? suite_proto_short (r->reply_proto[1]) : "-",
                             r->protocol_changed[1] ? "*" : "")
          : g_strdup (suite_column_transport (t->label, t->uri));

  printf ("%-8s %4u %8.1f %8.1f %8.1f | %8.1f %8.1f %8.1f | %8.0f %8.0f %8.2f | %7.1f %7.1f | %s",
          t->label, clients, r->latency[0].p50, r->latency[0].p99, r->latency[0].mean,
          r->latency[1].p50, r->latency[1].p99, r->latency[1].mean, suite_load_rate (r),
          r->elapsed_s > 0 ? r->calls[1] / r->elapsed_s : 0, suite_load_mb_s (r, size),
          r->client_cpu_s * 1e6 / d, r->server_cpu_s * 1e6 / d, protos);
  if (!r->ok)
    printf ("  FAILED: %s", r->error);
  printf ("\n");
  fflush (stdout);
}

static void
csv_row (FILE *f, const Target *t, const SuiteOptions *o, guint64 size, guint clients,
         const SuiteLoadResult *r)
{
  guint64 calls = suite_load_calls (r);
  double d = MAX (calls, 1);

  fprintf (f,
           "%s,%s,%s,%s,%" G_GUINT64_FORMAT ",%u,%u,%.2f,%.4f,%" G_GUINT64_FORMAT
           ",%" G_GUINT64_FORMAT ",%" G_GINT64_FORMAT ",%.1f,%.1f,%.1f,%.3f",
           t->label, t->functions[0], t->functions[1], suite_column_transport (t->label, t->uri),
           size, clients, o->ratio, o->duration, r->elapsed_s, r->calls[0], r->calls[1],
           r->server_calls, suite_load_rate (r), r->elapsed_s > 0 ? r->calls[0] / r->elapsed_s : 0,
           r->elapsed_s > 0 ? r->calls[1] / r->elapsed_s : 0, suite_load_mb_s (r, size));
  for (guint f_ = 0; f_ < 2; f_++)
    fprintf (f, ",%.2f,%.2f,%.2f", r->latency[f_].mean, r->latency[f_].p50, r->latency[f_].p99);
  for (guint f_ = 0; f_ < 2; f_++)
    fprintf (f, ",%s,%s,%d", r->request_proto[f_] ? r->request_proto[f_] : "",
             r->reply_proto[f_] ? r->reply_proto[f_] : "", r->protocol_changed[f_]);
  fprintf (f, ",%.4f,%.4f,%.2f,%.2f", r->client_cpu_s, r->server_cpu_s, r->client_cpu_s * 1e6 / d,
           r->server_cpu_s * 1e6 / d);
  bench_csv_counters (f, r->have_counters, r->counters);
  fprintf (f, ",%s\n", r->error ? g_strdelimit (r->error, ",\"\n", ';') : "");
  fflush (f);
}

static Target *
target_new (const gchar *label, const gchar *uri, const gchar *suffix)
{
  Target *t = g_new0 (Target, 1);

  t->label = g_strdup (label);
  t->uri = g_strdup (uri);
  t->functions[0] = g_strdup_printf ("mix_lat_%s", suffix);
  t->functions[1] = g_strdup_printf ("mix_tput_%s", suffix);
  return t;
}

static void
target_free (gpointer data)
{
  Target *t = data;

  g_free (t->label);
  g_free (t->uri);
  g_free (t->functions[0]);
  g_free (t->functions[1]);
  g_free (t);
}

/* The columns at @size with @clients: the plan's functions carry the concurrency that is true
 * for @clients here; the stock transports ignore hints, so they call the same. */
static GPtrArray *
targets_for (const SuiteOptions *o, guint64 size, guint clients)
{
  GPtrArray *targets = g_ptr_array_new_with_free_func (target_free);
  g_autofree gchar *plan = g_strdup_printf ("%s_%s", size > 4096 ? "large" : "small",
                                            suite_clients_under (clients) ? "under" : "over");

  if (o->rdma_uri)
  {
    g_ptr_array_add (targets, target_new ("plan", o->rdma_uri, plan));
    for (guint p = 0; suite_protocol_names[p] != NULL; p++)
    {
      g_autofree gchar *echo = g_strdup_printf ("echo_%s", suite_protocol_names[p]);
      g_autofree gchar *uri = suite_function_is_eager_rndv (echo)
                                  ? suite_uri_whole_messages (o->rdma_uri)
                                  : g_strdup (o->rdma_uri);

      g_ptr_array_add (targets,
                       target_new (suite_short_label (echo), uri, suite_protocol_names[p]));
    }
  }
  if (o->tcp_uri)
    g_ptr_array_add (targets, target_new ("tcp", o->tcp_uri, plan));
  if (o->rsocket_uri)
    g_ptr_array_add (targets, target_new ("rsocket", o->rsocket_uri, plan));
  return targets;
}

/* One figure of the paper per size: a value per column and number of clients. */
static void
print_summary (const gchar *title, const gchar *format, GPtrArray *labels, const GArray *clients,
               const double *values)
{
  printf ("\n%s\n%4s", title, "N");
  for (guint t = 0; t < labels->len; t++)
    printf (" %8s", (const gchar *) labels->pdata[t]);
  printf ("\n");
  for (guint c = 0; c < clients->len; c++)
  {
    printf ("%4u", (guint) g_array_index (clients, guint64, c));
    for (guint t = 0; t < labels->len; t++)
      if (values[c * labels->len + t] > 0)
        printf (format, values[c * labels->len + t]);
      else
        printf (" %8s", "-");
    printf ("\n");
  }
  fflush (stdout);
}

int
suite_run_mixed (const SuiteOptions *o)
{
  int status = 0;

  if (o->csv)
  {
    bench_csv_header (o->csv, "column,lat_function,tput_function,transport,size,clients,ratio,"
                              "duration_s,elapsed_s,lat_calls,tput_calls,server_calls,rpc_per_s,"
                              "lat_rpc_per_s,tput_rpc_per_s,mb_per_s,lat_mean_us,lat_p50_us,"
                              "lat_p99_us,tput_mean_us,tput_p50_us,tput_p99_us,"
                              "lat_request_protocol,lat_reply_protocol,lat_protocol_changed,"
                              "tput_request_protocol,tput_reply_protocol,tput_protocol_changed,"
                              "client_cpu_s,server_cpu_s,client_cpu_us_per_rpc,"
                              "server_cpu_us_per_rpc");
  }
  for (guint s = 0; s < o->sizes->len; s++)
  {
    guint64 size = g_array_index (o->sizes, guint64, s);
    const gchar *class = size > 4096 ? "large" : "small";
    g_autofree gchar *st = bench_size_text (size);
    GPtrArray *labels = g_ptr_array_new_with_free_func (g_free);
    double *lat = NULL, *tput = NULL;

    printf ("\n== Mixed (HatRPC Sec. 5.3): %s payload, N clients, %u%% latency function, "
            "%.1f s per point in %u rounds ==\n",
            st, o->ratio, o->duration, o->load_rounds);
    printf ("plan = mix_lat_%s_* (perf_goal=latency) and mix_tput_%s_* (perf_goal=throughput),\n"
            "both with payload_size and concurrency 1 or 64 (whichever is true for N here); the\n"
            "protocol columns force proto on both (e+r_rndv: the pair eager_rndv, the\n"
            "Hybrid-EagerRNDV baseline, bulk=0); tcp = stock framed TCP; rsocket = the same\n"
            "over librspreload. The server checksums each payload. The columns of one N take\n"
            "turns, a round each. Latency in us; RPC/s total and of the throughput function;\n"
            "MB/s payload one way; CPU us per RPC of client and server\n",
            class, class);
    printf ("%-8s %4s %8s %8s %8s | %8s %8s %8s | %8s %8s %8s | %7s %7s | %s\n", "column", "N",
            "lat p50", "lat p99", "lat mean", "tpt p50", "tpt p99", "tpt mean", "RPC/s",
            "tpt RPC/s", "MB/s", "cli CPU", "srv CPU", "request/reply: lat, tput");
    fflush (stdout);
    for (guint c = 0; c < o->mixed_clients->len; c++)
    {
      guint clients = (guint) g_array_index (o->mixed_clients, guint64, c);
      GPtrArray *targets = targets_for (o, size, clients);
      SuiteLoadResult *res = g_new (SuiteLoadResult, targets->len);

      if (lat == NULL)
      {
        /* the same columns at every N */
        lat = g_new0 (double, targets->len * o->mixed_clients->len);
        tput = g_new0 (double, targets->len * o->mixed_clients->len);
        for (guint i = 0; i < targets->len; i++)
          g_ptr_array_add (labels, g_strdup (((Target *) targets->pdata[i])->label));
      }
      for (guint i = 0; i < targets->len; i++)
        suite_load_result_init (&res[i]);
      for (guint round = 0; round < o->load_rounds; round++)
        for (guint k = 0; k < targets->len; k++)
        {
          /* each round starts from another column */
          guint i = (s + c + round + k) % targets->len;
          Target *t = targets->pdata[i];
          SuiteLoadSpec spec;

          if (!res[i].ok)
            continue;
          spec = (SuiteLoadSpec){
            .uri = t->uri,
            .clients = clients,
            .size = size,
            .duration = o->duration / o->load_rounds,
            .warmup = o->warmup,
            .n_functions = 2,
            .ratio = o->ratio,
            .functions = { t->functions[0], t->functions[1] },
          };
          fprintf (stderr, "mixed: %s, %s, %u clients, round %u/%u ...", t->label, st, clients,
                   round + 1, o->load_rounds);
          suite_load_run (&spec, &res[i]);
          fprintf (stderr, " %.0f RPC/s so far%s%s\n", suite_load_rate (&res[i]),
                   res[i].ok ? "" : ", failed: ", res[i].ok ? "" : res[i].error);
        }
      for (guint i = 0; i < targets->len; i++)
      {
        Target *t = targets->pdata[i];

        print_row (t, clients, &res[i], size);
        if (o->csv)
          csv_row (o->csv, t, o, size, clients, &res[i]);
        if (!res[i].ok)
          status = 1;
        else
        {
          lat[c * targets->len + i] = res[i].latency[0].p50;
          tput[c * targets->len + i] = res[i].elapsed_s > 0 ? res[i].calls[1] / res[i].elapsed_s
                                                            : 0;
        }
        suite_load_result_clear (&res[i]);
      }
      g_free (res);
      g_ptr_array_free (targets, TRUE);
    }
    if (o->mixed_clients->len > 1)
    {
      g_autofree gchar *t1 = g_strdup_printf ("Latency function, p50 us, %s", st);
      g_autofree gchar *t2 = g_strdup_printf ("Throughput function, RPC/s, %s", st);

      print_summary (t1, " %8.1f", labels, o->mixed_clients, lat);
      print_summary (t2, " %8.0f", labels, o->mixed_clients, tput);
    }
    g_ptr_array_free (labels, TRUE);
    g_free (lat);
    g_free (tput);
  }
  return status;
}
