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
 * are taken over the measured calls only (reset after the warm-up).  The columns are
 * measured in turn for each size, all connections open, so that they share the machine's
 * moods alike.
 */
#include "config.h"

#include <string.h>

#include "suite_modes.h"

typedef struct
{
  gboolean ok;
  gchar *error;
  guint calls;
  BenchSummary lat;
  const gchar *request_proto, *reply_proto;   /* what carried the calls, each way */
  gboolean protocol_changed;                    /* not all calls went by the same */
  gboolean have_counters;
  guint64 counters[BENCH_N_COUNTERS];
} Cell;

typedef struct
{
  const gchar *label;         /* plan, plain, eager, ..., tcp */
  const gchar *uri;
  const gchar *function;
  const SuiteFunction *fn;
  SuiteConn *conn;            /* open while the sizes are measured */
  Cell *cells;                /* one per size */
} Column;

const gchar *
suite_short_label (const gchar *name)
{
  if (g_strcmp0 (name, "echo_plan") == 0 || g_strcmp0 (name, "echo_plain") == 0)
    return name + 5;
  return g_str_has_prefix (name, "echo_") ? suite_proto_short (name + 5) : name;
}

/* Measures one size on @conn into @cell; FALSE if a call failed (the connection is then
 * unusable). */
static gboolean
measure_size (SuiteConn *conn, const SuiteFunction *fn, guint64 size, guint calls,
              guint warmup, Cell *cell)
{
  GByteArray *data = g_byte_array_sized_new ((guint) size);
  double *lat = g_new (double, calls);
  ThriftRdma *rdma = suite_conn_rdma (conn);
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
      thrift_rdma_reset_stats (rdma);
    t0 = bench_now_us ();
    ok = suite_call (conn, fn, data, &back, &request, &reply, &error);
    if (i >= warmup)
      lat[i - warmup] = bench_now_us () - t0;
    if (ok && (back == NULL || back->len != data->len
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
    cell->ok = TRUE;
    cell->calls = calls;
    bench_summarize (lat, calls, &cell->lat);
    if (rdma != NULL)
    {
      ThriftRdmaStats st;
      thrift_rdma_get_stats (rdma, &st);
      cell->have_counters = TRUE;
      bench_counters_from_stats (&st, cell->counters);
    }
  }
  g_free (lat);
  g_byte_array_unref (data);
  return ok;
}

/* Measures one cell: size @s of column @col over its connection, opened on first use and
 * again after a failed call (which leaves a connection unusable). */
static gboolean
measure_cell (const SuiteOptions *o, Column *col, guint s)
{
  guint64 size = g_array_index (o->sizes, guint64, s);
  guint calls = size >= 65536 ? o->large_iterations : o->iterations;
  Cell *cell = &col->cells[s];
  GError *error = NULL;

  if (col->conn == NULL && (col->conn = suite_conn_open (col->uri, &error)) == NULL)
  {
    cell->error = g_strdup (error->message);
    g_clear_error (&error);
    fprintf (stderr, "  %-8s %s\n", col->label, cell->error);
    return FALSE;
  }
  if (!measure_size (col->conn, col->fn, size, calls, o->warmup, cell))
  {
    fprintf (stderr, "  %-8s failed: %s\n", col->label, cell->error);
    g_clear_pointer (&col->conn, suite_conn_free);
    return FALSE;
  }
  fprintf (stderr, "  %-8s p50 %9.1f us%s%s%s%s\n", col->label, cell->lat.p50,
           *cell->request_proto ? "  " : "", cell->request_proto,
           *cell->reply_proto ? "/" : "", cell->reply_proto);
  return TRUE;
}

static void
print_tables (const SuiteOptions *o, Column *cols, guint n)
{
  printf ("\n== Latency: one call at a time, echo of a binary argument ==\n");
  printf ("rdma:// %s, tcp:// %s (stock ThriftSocket + ThriftFramedTransport, the baseline)\n",
          o->rdma_uri ? o->rdma_uri : "-", o->tcp_uri ? o->tcp_uri : "-");
  printf ("columns: plan = perf_goal=latency, concurrency=1 (hint-selected); plain = no hints;\n"
          "  the others force a protocol with the same hints (proto = ...)\n");
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
        printf (" %8.1f", cols[c].cells[s].lat.p50);
      else
        printf (" %8s", "-");
    printf ("\n");
  }

  printf ("\nPer size and column: latency (us) and per-RPC counters of the client's connection\n"
          "(WRs = work requests posted, posts = ibv_post_send calls (doorbells), rposts =\n"
          "ibv_post_recv calls, CQEs = completions, copied = payload bytes copied by the CPU;\n"
          "request/reply = the protocols that carried them, '*' if not all calls went alike)\n");
  printf ("%-8s %-8s %-16s %8s %8s %8s | %5s %5s %5s %5s | %5s %5s %5s %5s %5s | %9s\n",
          "column", "size", "request/reply", "mean", "p50", "p99", "WRs", "posts", "rpost",
          "CQEs", "SEND", "WRITE", "WIMM", "READ", "RECV", "copied");
  for (guint c = 0; c < n; c++)
    for (guint s = 0; s < o->sizes->len; s++)
    {
      Cell *x = &cols[c].cells[s];
      g_autofree gchar *st = bench_size_text (g_array_index (o->sizes, guint64, s));
      g_autofree gchar *proto = x->have_counters
        ? g_strdup_printf ("%s/%s%s", suite_proto_short (x->request_proto),
                           suite_proto_short (x->reply_proto), x->protocol_changed ? "*" : "")
        : g_strdup ("tcp");
      if (!x->ok)
      {
        printf ("%-8s %-8s failed: %s\n", cols[c].label, st, x->error ? x->error : "?");
        continue;
      }
      printf ("%-8s %-8s %-16s %8.1f %8.1f %8.1f", cols[c].label, st, proto, x->lat.mean,
              x->lat.p50, x->lat.p99);
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
               g_str_has_prefix (cols[c].uri, "rdma") ? "rdma" : "tcp",
               g_array_index (o->sizes, guint64, s), x->calls);
      if (x->ok)
        fprintf (f, "%.2f,%.2f,%.2f,%.2f", x->lat.mean, x->lat.p50, x->lat.p99, x->lat.max);
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
  guint n = n_rdma + (o->tcp_uri ? 1 : 0);
  Column *cols = g_new0 (Column, n);
  int status = 0;

  for (guint c = 0; c < n_rdma; c++)
  {
    cols[c].label = suite_short_label (o->functions[c]);
    cols[c].uri = o->rdma_uri;
    cols[c].function = o->functions[c];
  }
  if (o->tcp_uri)
  {
    /* stock transports ignore hints: any function is the baseline; the unhinted one says so */
    cols[n - 1].label = "tcp";
    cols[n - 1].uri = o->tcp_uri;
    cols[n - 1].function = "echo_plain";
  }
  for (guint c = 0; c < n; c++)
  {
    cols[c].fn = suite_function_find (cols[c].function);
    cols[c].cells = g_new0 (Cell, o->sizes->len);
  }
  /* Size by size, every column in turn, each from a different one: a drift of the machine
   * (another guest starting, caches warming up) does not favour a column, and the columns
   * of one size are measured close together in time. */
  for (guint s = 0; s < o->sizes->len; s++)
  {
    fprintf (stderr, "latency: %" G_GUINT64_FORMAT " B\n", g_array_index (o->sizes, guint64, s));
    for (guint i = 0; i < n; i++)
      if (!measure_cell (o, &cols[(s + i) % n], s))
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
      g_free (cols[c].cells[s].error);
    g_free (cols[c].cells);
  }
  g_free (cols);
  return status;
}
