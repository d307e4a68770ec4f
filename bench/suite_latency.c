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
 * suite_latency.c: latency of one call at a time, per function and payload size: each
 * function on rdma:// over a connection of its own (the hint-selected plan, no hints, each
 * protocol forced), beside the stock tcp:// baseline.  After each half of every call the
 * protocol that carried it is read back (request and reply), so a fallback shows.  Counters
 * are taken over the measured calls only.  The columns share the machine's moods alike: for
 * each size, the calls of every column are made in rounds (--rounds), a block of each
 * column per round, all connections open, so that a slow second of the host falls on all of
 * them rather than on one (under emulation the host's load moves a p50 by tens of percent
 * from one second to the next).  Each block starts with two unmeasured calls that bring its
 * connection back from idle (both sides' polling, the server's worker).  The column of the
 * Hybrid-EagerRNDV baseline (echo_eager_rndv) connects with bulk transfer off, so that its
 * messages go whole, by eager or read_rndv, as the baseline's do.
 */
#include "config.h"

#include <string.h>

#include "suite_modes.h"

typedef struct
{
  gboolean ok;
  gchar *error;
  guint calls;
  BenchSummary lat_summary;
  const gchar *request_proto, *reply_proto; /* what carried the calls, each way */
  gboolean protocol_changed;                /* not all calls went by the same */
  gboolean have_counters;
  guint64 counters[BENCH_N_COUNTERS]; /* summed over the measured calls */
  double *lat;                        /* each measured call, in the order made */
  guint done;
  gboolean failed;
} Cell;

typedef struct
{
  const gchar *label; /* plan, plain, eager, ..., tcp */
  gchar *uri;
  const gchar *function;
  const SuiteFunction *fn;
  SuiteConn *conn; /* open while the sizes are measured */
  Cell *cells;     /* one per size */
} Column;

const gchar *
suite_short_label (const gchar *name)
{
  if (g_strcmp0 (name, "echo_plan") == 0 || g_strcmp0 (name, "echo_plain") == 0)
    return name + 5;
  return g_str_has_prefix (name, "echo_") ? suite_proto_short (name + 5) : name;
}

static void
counters_now (ThriftRdma *rdma, guint64 out[BENCH_N_COUNTERS])
{
  ThriftRdmaStats st;

  thrift_rdma_get_stats (rdma, &st);
  bench_counters_from_stats (&st, out);
}

/* Makes @warmup unmeasured and then @calls measured calls of @size bytes on @conn, adding
 * them to @cell; FALSE if a call failed (the connection is then unusable). */
static gboolean
measure_block (SuiteConn *conn, const SuiteFunction *fn, guint64 size, guint calls, guint warmup,
               Cell *cell)
{
  GByteArray *data = g_byte_array_sized_new ((guint) size);
  ThriftRdma *rdma = suite_conn_rdma (conn);
  guint64 before[BENCH_N_COUNTERS], after[BENCH_N_COUNTERS];
  GError *error = NULL;
  gboolean ok = TRUE;
  guint i;

  g_byte_array_set_size (data, (guint) size);
  bench_fill (data);
  for (i = 0; i < warmup + calls && ok; i++)
  {
    GByteArray *back = NULL;
    const gchar *request = NULL, *reply = NULL;
    double t0;

    if (i == warmup && rdma != NULL)
      counters_now (rdma, before);
    t0 = bench_now_us ();
    ok = suite_call (conn, fn, data, &back, &request, &reply, &error);
    if (i >= warmup)
      cell->lat[cell->done + i - warmup] = bench_now_us () - t0;
    if (ok
        && (back == NULL || back->len != data->len
            || memcmp (back->data, data->data, data->len) != 0))
    {
      cell->error = g_strdup_printf ("the echo of %u bytes came back wrong", data->len);
      ok = FALSE;
    }
    else if (!ok)
    {
      cell->error = g_strdup (error->message);
      g_clear_error (&error);
    }
    if (back != NULL)
      g_byte_array_unref (back);
    if (ok && i >= warmup)
    {
      /* what carried this call: a protocol that falls back for some calls shows as changed */
      if (cell->request_proto == NULL)
      {
        cell->request_proto = request;
        cell->reply_proto = reply;
      }
      else if (g_strcmp0 (cell->request_proto, request) != 0
               || g_strcmp0 (cell->reply_proto, reply) != 0)
        cell->protocol_changed = TRUE;
    }
  }
  if (ok)
  {
    cell->done += calls;
    if (rdma != NULL)
    {
      counters_now (rdma, after);
      cell->have_counters = TRUE;
      for (guint c = 0; c < BENCH_N_COUNTERS; c++)
        cell->counters[c] += after[c] - before[c];
    }
  }
  g_byte_array_unref (data);
  return ok;
}

/* Measures round @r of @rounds of size @s of column @col over its connection, opened on
 * first use.  A failed call leaves the connection unusable: the cell is then given up. */
static void
measure_round (const SuiteOptions *o, Column *col, guint s, guint r, guint rounds)
{
  guint64 size = g_array_index (o->sizes, guint64, s);
  guint calls = size >= 65536 ? o->large_iterations : o->iterations;
  guint first = calls * r / rounds, block = calls * (r + 1) / rounds - first;
  Cell *cell = &col->cells[s];
  GError *error = NULL;

  if (cell->failed || block == 0)
    return;
  if (cell->lat == NULL)
    cell->lat = g_new (double, calls);
  if (col->conn == NULL && (col->conn = suite_conn_open (col->uri, &error)) == NULL)
  {
    cell->error = g_strdup (error->message);
    g_clear_error (&error);
    fprintf (stderr, "  %-8s %s\n", col->label, cell->error);
    cell->failed = TRUE;
    return;
  }
  if (!measure_block (col->conn, col->fn, size, block, r == 0 ? o->warmup : 2, cell))
  {
    fprintf (stderr, "  %-8s failed: %s\n", col->label, cell->error);
    g_clear_pointer (&col->conn, suite_conn_free);
    cell->failed = TRUE;
    return;
  }
  if (cell->done == calls)
  {
    cell->ok = TRUE;
    cell->calls = calls;
    bench_summarize (cell->lat, calls, &cell->lat_summary);
    fprintf (stderr, "  %-8s p50 %9.1f us%s%s%s%s\n", col->label, cell->lat_summary.p50,
             *cell->request_proto ? "  " : "", cell->request_proto, *cell->reply_proto ? "/" : "",
             cell->reply_proto);
  }
}

static void
print_tables (const SuiteOptions *o, Column *cols, guint n)
{
  printf ("\n== Latency: one call at a time, echo of a binary argument ==\n");
  printf ("rdma:// %s, tcp:// %s (stock ThriftSocket + ThriftFramedTransport, the baseline)\n",
          o->rdma_uri ? o->rdma_uri : "-", o->tcp_uri ? o->tcp_uri : "-");
  if (o->rsocket_uri)
    printf ("rsocket: %s, the same stock transports with every socket an rsocket (LD_PRELOAD of "
            "librspreload)\n",
            o->rsocket_uri);
  printf ("columns: plan = perf_goal=latency, concurrency=1 (hint-selected); plain = no hints;\n"
          "  the others force a protocol with the same hints (proto = ...); e+r_rndv = proto =\n"
          "  eager_rndv, eager up to 4 KiB and read_rndv above (AR-gRPC's pair, the HatRPC\n"
          "  paper's Hybrid-EagerRNDV baseline), whole messages (bulk=0)\n");
  printf ("\np50 latency (us)\n%-8s", "size");
  for (guint c = 0; c < n; c++)
    printf (" %8s", cols[c].label);
  printf ("\n");
  for (guint s = 0; s < o->sizes->len; s++)
  {
    g_autofree gchar *st = bench_size_text (g_array_index (o->sizes, guint64, s));
    printf ("%-8s", st);
    for (guint c = 0; c < n; c++)
      if (cols[c].cells[s].ok)
        printf (" %8.1f", cols[c].cells[s].lat_summary.p50);
      else
        printf (" %8s", "-");
    printf ("\n");
  }

  printf ("\nPer size and column: latency (us) and per-RPC counters of the client's connection\n"
          "(WRs = work requests posted, posts = ibv_post_send calls (doorbells), rposts =\n"
          "ibv_post_recv calls, CQEs = completions, copied = payload bytes copied by the CPU;\n"
          "request/reply = the protocols that carried them, '*' if not all calls went alike)\n");
  printf ("%-8s %-8s %-16s %8s %8s %8s | %5s %5s %5s %5s | %5s %5s %5s %5s %5s | %9s\n", "column",
          "size", "request/reply", "mean", "p50", "p99", "WRs", "posts", "rpost", "CQEs", "SEND",
          "WRITE", "WIMM", "READ", "RECV", "copied");
  for (guint c = 0; c < n; c++)
    for (guint s = 0; s < o->sizes->len; s++)
    {
      Cell *x = &cols[c].cells[s];
      g_autofree gchar *st = bench_size_text (g_array_index (o->sizes, guint64, s));
      g_autofree gchar *proto =
          x->have_counters
              ? g_strdup_printf ("%s/%s%s", suite_proto_short (x->request_proto),
                                 suite_proto_short (x->reply_proto), x->protocol_changed ? "*" : "")
              : g_strdup (suite_column_transport (cols[c].label, cols[c].uri));
      if (!x->ok)
      {
        printf ("%-8s %-8s failed: %s\n", cols[c].label, st, x->error ? x->error : "?");
        continue;
      }
      printf ("%-8s %-8s %-16s %8.1f %8.1f %8.1f", cols[c].label, st, proto, x->lat_summary.mean,
              x->lat_summary.p50, x->lat_summary.p99);
      if (x->have_counters)
      {
        const guint64 *k = x->counters;
        double d = x->calls;
        printf (" | %5.2f %5.2f %5.2f %5.2f | %5.2f %5.2f %5.2f %5.2f %5.2f | %9.0f",
                k[BENCH_C_WR_POSTED] / d, k[BENCH_C_POST_SEND] / d, k[BENCH_C_POST_RECV] / d,
                k[BENCH_C_COMPLETIONS] / d, k[BENCH_C_SENDS] / d, k[BENCH_C_WRITES] / d,
                k[BENCH_C_WRITE_IMMS] / d, k[BENCH_C_READS] / d, k[BENCH_C_RECVS] / d,
                k[BENCH_C_COPIED] / d);
      }
      printf ("\n");
    }
  fflush (stdout);
}

static void
write_csv (const SuiteOptions *o, Column *cols, guint n)
{
  FILE *f = o->csv;

  bench_csv_header (f, "column,function,transport,size,calls,mean_us,p50_us,p99_us,max_us,"
                       "request_protocol,reply_protocol,protocol_changed");
  for (guint c = 0; c < n; c++)
    for (guint s = 0; s < o->sizes->len; s++)
    {
      Cell *x = &cols[c].cells[s];
      fprintf (f, "%s,%s,%s,%" G_GUINT64_FORMAT ",%u,", cols[c].label, cols[c].function,
               suite_column_transport (cols[c].label, cols[c].uri),
               g_array_index (o->sizes, guint64, s), x->calls);
      if (x->ok)
        fprintf (f, "%.2f,%.2f,%.2f,%.2f", x->lat_summary.mean, x->lat_summary.p50,
                 x->lat_summary.p99, x->lat_summary.max);
      else
        fprintf (f, ",,,");
      fprintf (f, ",%s,%s,%d", x->request_proto ? x->request_proto : "",
               x->reply_proto ? x->reply_proto : "", x->protocol_changed);
      bench_csv_counters (f, x->have_counters, x->counters);
      /* an error message as one field: no commas or quotes to escape */
      fprintf (f, ",%s\n", x->error ? g_strdelimit (x->error, ",\"\n", ';') : "");
    }
  fflush (f);
}

int
suite_run_latency (const SuiteOptions *o)
{
  guint n_rdma = o->rdma_uri ? g_strv_length (o->functions) : 0;
  guint n = n_rdma + (o->tcp_uri ? 1 : 0) + (o->rsocket_uri ? 1 : 0);
  Column *cols = g_new0 (Column, n);
  int status = 0;

  for (guint c = 0; c < n_rdma; c++)
  {
    cols[c].label = suite_short_label (o->functions[c]);
    cols[c].uri = suite_function_is_eager_rndv (o->functions[c])
                      ? suite_uri_whole_messages (o->rdma_uri)
                      : g_strdup (o->rdma_uri);
    cols[c].function = o->functions[c];
  }
  /* stock transports ignore hints: any function is the baseline; the unhinted one says so */
  if (o->tcp_uri)
    cols[n_rdma] =
        (Column){ .label = "tcp", .uri = g_strdup (o->tcp_uri), .function = "echo_plain" };
  if (o->rsocket_uri)
    cols[n - 1] =
        (Column){ .label = "rsocket", .uri = g_strdup (o->rsocket_uri), .function = "echo_plain" };
  for (guint c = 0; c < n; c++)
  {
    cols[c].fn = suite_function_find (cols[c].function);
    cols[c].cells = g_new0 (Cell, o->sizes->len);
  }
  /* Size by size, in rounds, every column in turn within a round, each round from a
   * different one: a drift of the machine (another guest starting, caches warming up)
   * does not favour a column. */
  for (guint s = 0; s < o->sizes->len; s++)
  {
    fprintf (stderr, "latency: %" G_GUINT64_FORMAT " B\n", g_array_index (o->sizes, guint64, s));
    for (guint r = 0; r < o->rounds; r++)
      for (guint i = 0; i < n; i++)
        measure_round (o, &cols[(s + r + i) % n], s, r, o->rounds);
    for (guint c = 0; c < n; c++)
      if (!cols[c].cells[s].ok)
        status = 1;
  }
  for (guint c = 0; c < n; c++)
    g_clear_pointer (&cols[c].conn, suite_conn_free);
  print_tables (o, cols, n);
  if (o->csv)
    write_csv (o, cols, n);
  for (guint c = 0; c < n; c++)
  {
    for (guint s = 0; s < o->sizes->len; s++)
    {
      g_free (cols[c].cells[s].error);
      g_free (cols[c].cells[s].lat);
    }
    g_free (cols[c].cells);
    g_free (cols[c].uri);
  }
  g_free (cols);
  return status;
}
