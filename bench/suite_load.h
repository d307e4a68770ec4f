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
 * suite_load.h: one point of a load: N client threads, each with its own connection, calling
 * one function (throughput) or two chosen at random by a ratio (the mixed benchmark) for a
 * bounded time; what came out: calls and latencies per function, RPC/s, CPU seconds of
 * both sides, the verbs counters summed over the connections.  A point may be measured in
 * rounds, each run adding to one result, so that columns measured in turn share the host's
 * slow and fast moments.
 */
#ifndef _SUITE_LOAD_H
#define _SUITE_LOAD_H

#include <glib.h>

#include "bench_util.h"
#include "suite_client.h"

G_BEGIN_DECLS

typedef struct
{
  const gchar *uri;
  guint clients;
  guint64 size;      /* payload bytes of every call */
  double duration;   /* seconds of calls; a call in flight at the end still ends */
  guint warmup;      /* unmeasured calls per thread before the clock starts */
  guint n_functions; /* 1 or 2 */
  const gchar *functions[2];
  guint ratio; /* percent of the calls that go to functions[0] (two only) */
} SuiteLoadSpec;

typedef struct
{
  gboolean ok;
  gchar *error;                       /* the first failure, if !ok */
  double elapsed_s;                   /* from the start to the end of the last call */
  guint64 calls[2];                   /* per function */
  BenchSummary latency[2];            /* microseconds, per function */
  double client_cpu_s;                /* this process, during the calls */
  double server_cpu_s;                /* the server process, during the calls (usage function) */
  gint64 server_calls;                /* benchmark calls the server served meanwhile */
  gint64 server_wakeups;              /* its dispatchers' wake-ups meanwhile (usage function) */
  gint64 server_switches;             /* its voluntary context switches meanwhile */
  gboolean have_counters;             /* rdma:// */
  guint64 counters[BENCH_N_COUNTERS]; /* summed over the connections */
  const gchar *request_proto[2];      /* per function: what carried its requests ("" for tcp://) */
  const gchar *reply_proto[2];        /* and its replies */
  gboolean protocol_changed[2];       /* its calls did not all go alike */
  guint rounds;                       /* runs added together */
  GArray *samples[2];                 /* every measured call's latency, per function, all rounds */
} SuiteLoadResult;

/* Makes @r an empty result, to which runs are added. */
void suite_load_result_init (SuiteLoadResult *r);

/* Runs @spec once and adds what came out to @r: calls, elapsed and CPU time, counters, and
 * the latencies (the summaries cover every round so far).  The first failure stays (ok
 * FALSE, error set).  Free with suite_load_result_clear. */
void suite_load_run (const SuiteLoadSpec *spec, SuiteLoadResult *r);
void suite_load_result_clear (SuiteLoadResult *r);

/* Total calls, calls per second, payload MB per second one way (10^6 bytes). */
guint64 suite_load_calls (const SuiteLoadResult *r);
double suite_load_rate (const SuiteLoadResult *r);
double suite_load_mb_s (const SuiteLoadResult *r, guint64 size);

G_END_DECLS

#endif
