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
 * bench_util.h: what every benchmark program of bench/ measures with: a monotonic clock, the
 * process's CPU time, latency summaries (mean, p50, p99), payload patterns, size names,
 * lists of numbers on the command line, and the verbs counters of ThriftRdma as CSV columns.
 */
#ifndef _BENCH_UTIL_H
#define _BENCH_UTIL_H

#include <stdio.h>

#include <glib.h>
#include <thrift/c_glib/transport/thrift_rdma.h>

G_BEGIN_DECLS

/* Microseconds on the monotonic clock. */
double bench_now_us (void);

/* CPU seconds the whole process has used so far, user and system (getrusage). */
void bench_cpu_seconds (double *user, double *system);

/* Mean and percentiles of a set of latencies. */
typedef struct
{
  guint64 n;
  double mean, p50, p95, p99, max;
} BenchSummary;

/* Summarises @n latencies (sorts @values in place); all zero when @n is 0. */
void bench_summarize (double *values, gsize n, BenchSummary *out);

/* Fills @data (its length already set) with a pattern that differs per size. */
void bench_fill (GByteArray *data);

/* "4 B", "16 KB", "1 MB" (binary units, exact multiples only). */
gchar *bench_size_text (guint64 size);

/* Parses "1,2,4" (sizes may carry K or M: 512,128K,1M) into @out; FALSE with a message in
 * @error if an element is not a positive number. */
gboolean bench_parse_list (const gchar *text, gboolean sizes, GArray *out, GError **error);

/* The ThriftRdmaStats counters written to CSV, in this order (totals over the calls of a
 * row, not per call). */
extern const gchar *const bench_counter_names[];
#define BENCH_N_COUNTERS 19

/* Copies the counters named by bench_counter_names out of @st into @out. */
void bench_counters_from_stats (const ThriftRdmaStats *st, guint64 out[BENCH_N_COUNTERS]);

/* Writes a CSV header: @columns (comma-separated), the counter columns, then "error". */
void bench_csv_header (FILE *f, const gchar *columns);

/* Writes ",v,v..." or, when @have is FALSE (a tcp:// row), empty fields. */
void bench_csv_counters (FILE *f, gboolean have, const guint64 c[BENCH_N_COUNTERS]);

/* Index of a counter in bench_counter_names. */
enum
{
  BENCH_C_WR_POSTED,
  BENCH_C_POST_SEND,
  BENCH_C_POST_RECV,
  BENCH_C_COMPLETIONS,
  BENCH_C_SENDS,
  BENCH_C_WRITES,
  BENCH_C_WRITE_IMMS,
  BENCH_C_READS,
  BENCH_C_RECVS,
  BENCH_C_COPIED,
  BENCH_C_ROUND_TRIPS,
  BENCH_C_CQ_EVENTS,
  BENCH_C_CONTROL,
  BENCH_C_CREDITS,
  BENCH_C_BINDS,
  BENCH_C_INVALIDATIONS,
  BENCH_C_POLL_WAITS,
  BENCH_C_READ_WAITS,
  BENCH_C_SPINS_DECLINED
};

G_END_DECLS

#endif
