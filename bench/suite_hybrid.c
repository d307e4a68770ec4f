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
 * suite_hybrid.c: the hybrid mix (issue 9): one client makes units of calls, each unit K small
 * calls of hy_small (hinted transport = rdma, perf_goal = latency) and one bulk call of
 * hy_bulk (hinted transport = tcp), over hybrid:// (each call by the leg its hint names),
 * rdma:// (every call by RDMA; the tcp hint is warned about once) and tcp:// (every call by
 * TCP).  The columns take turns in rounds, a block of units each, so the host's load falls
 * on all alike; the table gives the time per unit and per call kind, and the leg each kind
 * took.
 */
#include "config.h"

#include "suite_client.h"
#include "suite_modes.h"

typedef struct
{
  const gchar *label;
  const gchar *uri;
  SuiteConn *conn;
  GArray *unit_us, *small_us, *bulk_us;
  const gchar *small_leg, *bulk_leg;
  gchar *error;
} Column;

/* One call; its time in @us and the leg it took. */
static gboolean
timed_call (Column *c, const SuiteFunction *f, const GByteArray *data, double *us,
            const gchar **leg)
{
  GByteArray *back = NULL;
  const gchar *request = NULL, *reply = NULL;
  GError *error = NULL;
  double t0 = bench_now_us ();
  gboolean ok = suite_call (c->conn, f, data, &back, &request, &reply, &error);

  *us = bench_now_us () - t0;
  *leg = suite_conn_leg (c->conn);
  if (ok
      && (back == NULL || back->len != data->len
          || (data->len > 0 && memcmp (back->data, data->data, data->len) != 0)))
  {
    c->error = g_strdup_printf ("%s: the echo of %u bytes came back wrong", c->label, data->len);
    ok = FALSE;
  }
  else if (!ok)
  {
    c->error = g_strdup_printf ("%s: %s", c->label, error->message);
    g_clear_error (&error);
  }
  if (back != NULL)
    g_byte_array_unref (back);
  return ok;
}

/* @n units on @c; measured unless @warmup. */
static void
run_units (Column *c, const SuiteOptions *o, guint n, GByteArray *small, GByteArray *bulk,
           gboolean warmup)
{
  const SuiteFunction *fs = suite_function_find ("hy_small");
  const SuiteFunction *fb = suite_function_find ("hy_bulk");

  for (guint u = 0; u < n && c->error == NULL; u++)
  {
    double t0 = bench_now_us (), us;
    const gchar *leg;

    for (guint i = 0; i < o->mix_small && c->error == NULL; i++)
    {
      if (!timed_call (c, fs, small, &us, &leg))
        return;
      if (!warmup)
        g_array_append_val (c->small_us, us);
      c->small_leg = leg;
    }
    if (!timed_call (c, fb, bulk, &us, &leg))
      return;
    c->bulk_leg = leg;
    if (warmup)
      continue;
    g_array_append_val (c->bulk_us, us);
    us = bench_now_us () - t0;
    g_array_append_val (c->unit_us, us);
  }
}

int
suite_run_hybrid (const SuiteOptions *o)
{
  const gchar *labels[] = { "hybrid", "rdma", "tcp" };
  const gchar *uris[] = { o->hybrid_uri, o->rdma_uri, o->tcp_uri };
  guint64 small_size = g_array_index (o->sizes, guint64, 0);
  guint64 bulk_size = o->sizes->len > 1 ? g_array_index (o->sizes, guint64, 1) : 1 << 20;
  g_autofree gchar *st = bench_size_text (small_size), *bt = bench_size_text (bulk_size);
  GByteArray *small = g_byte_array_sized_new ((guint) small_size);
  GByteArray *bulk = g_byte_array_sized_new ((guint) bulk_size);
  Column cols[3];
  guint n = 0, per_round;
  double best_other = 0;
  int status = 0;

  g_byte_array_set_size (small, (guint) small_size);
  g_byte_array_set_size (bulk, (guint) bulk_size);
  bench_fill (small);
  bench_fill (bulk);
  for (guint i = 0; i < G_N_ELEMENTS (uris); i++)
  {
    GError *error = NULL;

    if (uris[i] == NULL)
      continue;
    cols[n] = (Column){ .label = labels[i],
                        .uri = uris[i],
                        .unit_us = g_array_new (FALSE, FALSE, sizeof (double)),
                        .small_us = g_array_new (FALSE, FALSE, sizeof (double)),
                        .bulk_us = g_array_new (FALSE, FALSE, sizeof (double)),
                        .small_leg = "-",
                        .bulk_leg = "-" };
    cols[n].conn = suite_conn_open (uris[i], &error);
    if (cols[n].conn == NULL)
    {
      cols[n].error = g_strdup_printf ("%s: %s", uris[i], error->message);
      g_clear_error (&error);
    }
    else
    {
      run_units (&cols[n], o, 2, small, bulk, TRUE);
      if (suite_conn_rdma (cols[n].conn) != NULL)
        thrift_rdma_reset_stats (suite_conn_rdma (cols[n].conn));
    }
    n++;
  }

  printf ("\n== Hybrid mix (issue 9): units of %u x %s (hy_small: transport = rdma, "
          "perf_goal = latency) and 1 x %s (hy_bulk: transport = tcp), one at a time, %u units "
          "per column in %u rounds ==\n",
          o->mix_small, st, bt, o->mix_units, o->rounds);
  printf ("hybrid = hybrid:// (each call by the leg its hint names); rdma = rdma:// (every\n"
          "call by RDMA); tcp = stock framed TCP. Times: mean per unit, p50 per call kind\n");
  printf ("%-7s %12s %12s %12s %12s | %-10s %-10s\n", "column", "unit ms", "unit p50 ms",
          "small p50 us", "bulk p50 ms", "small leg", "bulk leg");
  fflush (stdout);
  per_round = MAX (1, o->mix_units / o->rounds);
  for (guint r = 0; r < o->rounds; r++)
    for (guint i = 0; i < n; i++)
    {
      Column *c = &cols[(r + i) % n];
      guint units = r + 1 == o->rounds ? o->mix_units - per_round * r : per_round;

      if (c->conn != NULL && (gint) units > 0)
        run_units (c, o, units, small, bulk, FALSE);
    }
  if (o->csv)
    bench_csv_header (o->csv, "column,uri,units,small_per_unit,small_size,bulk_size,"
                              "unit_mean_ms,unit_p50_ms,small_mean_us,small_p50_us,"
                              "bulk_mean_ms,bulk_p50_ms,small_leg,bulk_leg");
  for (guint i = 0; i < n; i++)
  {
    Column *c = &cols[i];
    BenchSummary unit, sm, bk;

    bench_summarize ((double *) c->unit_us->data, c->unit_us->len, &unit);
    bench_summarize ((double *) c->small_us->data, c->small_us->len, &sm);
    bench_summarize ((double *) c->bulk_us->data, c->bulk_us->len, &bk);
    printf ("%-7s %12.2f %12.2f %12.1f %12.2f | %-10s %-10s%s%s\n", c->label, unit.mean / 1e3,
            unit.p50 / 1e3, sm.p50, bk.p50 / 1e3, c->small_leg, c->bulk_leg,
            c->error ? "  FAILED: " : "", c->error ? c->error : "");
    if (o->csv)
    {
      /* the RDMA leg's counters, over the measured units */
      ThriftRdma *rdma = c->conn != NULL ? suite_conn_rdma (c->conn) : NULL;
      guint64 k[BENCH_N_COUNTERS] = { 0 };

      if (rdma != NULL)
      {
        ThriftRdmaStats stats;
        thrift_rdma_get_stats (rdma, &stats);
        bench_counters_from_stats (&stats, k);
      }
      fprintf (o->csv,
               "%s,%s,%u,%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
               ",%.3f,%.3f,%.2f,%.2f,%.3f,%.3f,%s,%s",
               c->label, c->uri, c->unit_us->len, o->mix_small, small_size, bulk_size,
               unit.mean / 1e3, unit.p50 / 1e3, sm.mean, sm.p50, bk.mean / 1e3, bk.p50 / 1e3,
               c->small_leg, c->bulk_leg);
      bench_csv_counters (o->csv, rdma != NULL, k);
      fprintf (o->csv, ",%s\n", c->error ? g_strdelimit (c->error, ",\"\n", ';') : "");
    }
    if (c->error != NULL)
      status = 1;
    else if (i > 0 && (best_other == 0 || unit.mean < best_other))
      best_other = unit.mean;
  }
  if (n > 1 && cols[0].label == labels[0] && cols[0].error == NULL && best_other > 0
      && cols[0].unit_us->len > 0)
  {
    BenchSummary unit;
    bench_summarize ((double *) cols[0].unit_us->data, cols[0].unit_us->len, &unit);
    printf ("hybrid against the better of the others: %+.1f%% time per unit\n",
            100.0 * (unit.mean - best_other) / best_other);
  }
  fflush (stdout);
  for (guint i = 0; i < n; i++)
  {
    suite_conn_free (cols[i].conn);
    g_array_free (cols[i].unit_us, TRUE);
    g_array_free (cols[i].small_us, TRUE);
    g_array_free (cols[i].bulk_us, TRUE);
    g_free (cols[i].error);
  }
  g_byte_array_unref (small);
  g_byte_array_unref (bulk);
  return status;
}
