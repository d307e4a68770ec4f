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
 * function and size, throughput with N client threads, the mixed benchmark, many connections
 * (scale), and a plain run of calls for strace.  Each prints its table on stdout, progress on stderr, and writes CSV when
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
  const gchar *rsocket_uri; /* a tcp:// server measured as the rsocket column (this process
                             * runs under librspreload), or NULL */
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
  GArray *mixed_clients;    /* mixed: guint64 client counts, a point each */
  guint ratio;              /* mixed: percent of calls to the latency function */
  const gchar *client_uri;  /* calls: the server */
  const gchar *function;    /* calls: the function */
  guint calls;              /* calls: how many */
  const gchar *bulk_uri;    /* bulk: the rdma:// URI of the first mode's server */
  gchar **bulk_modes;       /* bulk: the modes measured (names), or NULL for all */
  gchar **columns;          /* throughput: the columns measured (labels), or NULL for all */
  GArray *connections;      /* scale: guint64 connection counts, ascending, a point each */
  gint server_pid;          /* scale: the server's pid, for its memory (0: not measured) */
  FILE *csv;                /* where CSV goes, or NULL */
} SuiteOptions;

int suite_run_latency (const SuiteOptions *o);
int suite_run_throughput (const SuiteOptions *o);
gboolean suite_throughput_column_known (const gchar *label);
/* The labels --columns takes, ", "-separated (owned). */
gchar *suite_throughput_column_list (void);
int suite_run_mixed (const SuiteOptions *o);
int suite_run_calls (const SuiteOptions *o);
int suite_run_hybrid (const SuiteOptions *o);
int suite_run_bulk (const SuiteOptions *o);
int suite_run_scale (const SuiteOptions *o);

/* The bulk part's modes (issue 10): copy, bulk, bulk-unpipelined, each a set of rdma:// URI
 * options that both sides use, each served on a port of its own: the base URI's port plus
 * the mode's index.  The server and the client resolve them alike. */
guint suite_bulk_n_modes (void);
const gchar *suite_bulk_mode_name (guint mode);
/* The index of the mode called @name, or -1. */
gint suite_bulk_mode_find (const gchar *name);
/* FALSE with @error unless @base is an rdma:// URI (for a server or a client) with a port
 * for each mode from its port on. */
gboolean suite_bulk_base_check (const gchar *base, gboolean for_server, GError **error);
/* @base (rdma://HOST:PORT[?OPTIONS]) with mode @mode's port and options added, for a client
 * or a server; NULL with @error if @base is wrong or this build refuses the options.  @note (may be NULL) gets a
 * sentence when the URI is not the mode's own spelling (static; NULL otherwise). */
gchar *suite_bulk_mode_uri (const gchar *base, guint mode, gboolean for_server, const gchar **note,
                            GError **error);

/* A short column label for a function ("echo_direct_write_imm" -> "dw_imm"). */
const gchar *suite_short_label (const gchar *name);

G_END_DECLS

#endif
