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
 * suite_modes.h: the measurements of bench/thrift-rdma-suite, one per file: latency per
 * function and size, throughput with N client threads, the mixed benchmark, and a plain run of
 * calls for strace.  Each prints its table on stdout, progress on stderr, and writes CSV when
 * given a file.
 */
#ifndef _SUITE_MODES_H
#define _SUITE_MODES_H

#include <stdio.h>

#include <glib.h>

#include "bench_util.h"
#include "suite_client.h"

G_BEGIN_DECLS

typedef struct
{
  const gchar *rdma_uri;    /* the rdma:// server, or NULL */
  const gchar *tcp_uri;     /* the tcp:// baseline server, or NULL */
  const gchar *hybrid_uri;  /* the hybrid:// server (hybrid mix), or NULL */
  guint mix_small;          /* hybrid mix: small calls per unit */
  guint mix_units;          /* hybrid mix: units per column */
  GArray *sizes;            /* guint64 payload sizes */
  GArray *clients;          /* guint64 client counts (throughput) */
  gchar **functions;        /* latency: the functions measured over rdma:// */
  guint iterations;         /* latency: measured calls per size below 64 KB */
  guint large_iterations;   /* ... and from 64 KB */
  guint warmup;             /* unmeasured calls before each measurement */
  guint rounds;             /* latency: blocks each cell's calls are made in, interleaved */
  double duration;          /* throughput, mixed: seconds per point */
  guint load_rounds;        /* throughput, mixed: runs each point's duration is split into */
  guint mixed_clients;      /* mixed: client threads */
  guint ratio;              /* mixed: percent of calls to the latency function */
  const gchar *client_uri;  /* calls: the server */
  const gchar *function;    /* calls: the function */
  guint calls;              /* calls: how many */
  FILE *csv;                /* where CSV goes, or NULL */
} SuiteOptions;

int suite_run_latency (const SuiteOptions *o);
int suite_run_throughput (const SuiteOptions *o);
int suite_run_mixed (const SuiteOptions *o);
int suite_run_calls (const SuiteOptions *o);
int suite_run_hybrid (const SuiteOptions *o);

/* A short column label for a function ("echo_direct_write_imm" -> "dw_imm"). */
const gchar *suite_short_label (const gchar *name);

G_END_DECLS

#endif
