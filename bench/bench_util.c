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

/* bench_util.c: the measuring helpers of bench/ (see bench_util.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_util.h"

double
bench_now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

void
bench_cpu_seconds (double *user, double *system)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);
  *user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
  *system = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

void
bench_summarize (double *values, gsize n, BenchSummary *out)
{
  double sum = 0;
  gsize i;

  memset (out, 0, sizeof *out);
  if (n == 0)
    return;
  for (i = 0; i < n; i++)
    sum += values[i];
  qsort (values, n, sizeof (double), cmp_double);
  out->n = n;
  out->mean = sum / n;
  out->p50 = values[(n - 1) / 2];
  out->p95 = values[MIN (n - 1, (gsize) (n * 0.95))];
  out->p99 = values[MIN (n - 1, (gsize) (n * 0.99))];
  out->max = values[n - 1];
}

void
bench_fill (GByteArray *data)
{
  for (guint i = 0; i < data->len; i++)
    data->data[i] = (guint8) (i * 13 + data->len);
}

gchar *
bench_size_text (guint64 size)
{
  if (size >= 1024 * 1024 && size % (1024 * 1024) == 0)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " MB", size / (1024 * 1024));
  if (size >= 1024 && size % 1024 == 0)
    return g_strdup_printf ("%" G_GUINT64_FORMAT " KB", size / 1024);
  return g_strdup_printf ("%" G_GUINT64_FORMAT " B", size);
}

gboolean
bench_parse_list (const gchar *text, gboolean sizes, GArray *out, GError **error)
{
  gchar **parts = g_strsplit (text, ",", -1);
  gboolean ok = TRUE;

  for (guint i = 0; parts[i] != NULL && ok; i++)
  {
    gchar *end = NULL;
    guint64 v = g_ascii_strtoull (parts[i], &end, 10);
    guint64 unit = 1;

    if (sizes && end != NULL && (*end == 'K' || *end == 'k'))
      unit = 1024, end++;
    else if (sizes && end != NULL && (*end == 'M' || *end == 'm'))
      unit = 1024 * 1024, end++;
    if (end == parts[i] || *end != '\0' || v == 0 || v > G_MAXUINT32 / unit)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "'%s' in '%s' is not a positive number%s", parts[i], text,
                   sizes ? " of bytes (K and M allowed)" : "");
      ok = FALSE;
      break;
    }
    v *= unit;
    g_array_append_val (out, v);
  }
  if (ok && out->len == 0)
  {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "empty list");
    ok = FALSE;
  }
  g_strfreev (parts);
  return ok;
}

const gchar *const bench_counter_names[BENCH_N_COUNTERS] = { "wr_posted",
                                                             "post_send_calls",
                                                             "post_recv_calls",
                                                             "completions",
                                                             "sends",
                                                             "writes",
                                                             "write_imms",
                                                             "reads",
                                                             "recvs",
                                                             "bytes_copied",
                                                             "round_trips",
                                                             "cq_events",
                                                             "control_messages",
                                                             "credit_messages",
                                                             "window_binds",
                                                             "window_invalidations",
                                                             "poll_waits",
                                                             "read_waits",
                                                             "spins_declined" };

void
bench_counters_from_stats (const ThriftRdmaStats *st, guint64 out[BENCH_N_COUNTERS])
{
  out[BENCH_C_WR_POSTED] = st->wr_posted;
  out[BENCH_C_POST_SEND] = st->post_send_calls;
  out[BENCH_C_POST_RECV] = st->post_recv_calls;
  out[BENCH_C_COMPLETIONS] = st->completions;
  out[BENCH_C_SENDS] = st->sends;
  out[BENCH_C_WRITES] = st->writes;
  out[BENCH_C_WRITE_IMMS] = st->write_imms;
  out[BENCH_C_READS] = st->reads;
  out[BENCH_C_RECVS] = st->recvs;
  out[BENCH_C_COPIED] = st->bytes_copied;
  out[BENCH_C_ROUND_TRIPS] = st->round_trips;
  out[BENCH_C_CQ_EVENTS] = st->cq_events;
  out[BENCH_C_CONTROL] = st->control_messages;
  out[BENCH_C_CREDITS] = st->credit_messages;
  out[BENCH_C_BINDS] = st->window_binds;
  out[BENCH_C_INVALIDATIONS] = st->window_invalidations;
  /* how the waits blocked: the wake-ups cq_events counts, by the system call that slept */
  out[BENCH_C_POLL_WAITS] = st->poll_waits;
  out[BENCH_C_READ_WAITS] = st->read_waits;
  out[BENCH_C_SPINS_DECLINED] = st->spins_declined;
}

void
bench_csv_header (FILE *f, const gchar *columns)
{
  fputs (columns, f);
  for (guint i = 0; i < BENCH_N_COUNTERS; i++)
    fprintf (f, ",%s", bench_counter_names[i]);
  fputs (",error\n", f);
}

void
bench_csv_counters (FILE *f, gboolean have, const guint64 c[BENCH_N_COUNTERS])
{
  for (guint i = 0; i < BENCH_N_COUNTERS; i++)
    if (have)
      fprintf (f, ",%" G_GUINT64_FORMAT, c[i]);
    else
      fputc (',', f);
}
