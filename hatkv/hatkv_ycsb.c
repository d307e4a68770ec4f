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
 * hatkv-ycsb: a YCSB-style driver for HatKV (HatRPC paper Sec. 5.4).  YCSB's core workload:
 * 24-byte keys, 10 fields of 100 bytes, a load phase that writes every record, then a run
 * phase of operations on records drawn from the zipfian distribution; workload A is 25% each
 * of GET, PUT, MultiGET and MultiPUT, B 47.5/2.5/47.5/2.5 (the paper halves YCSB's reads and
 * updates for the batches), batches of 10.  N client threads, a connection each per target;
 * the targets (variants of hatkv.thrift on their servers) take turns in rounds so that the
 * machine's load falls on all of them alike.  Every value read is checked (whole, of its
 * record) and a sample of the records against an in-memory model (ycsb_model.h).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <thrift/c_glib/transport/thrift_rdma_explain.h>

#include "bench_util.h"
#include "kv_client.h"
#include "ycsb_model.h"
#include "ycsb_record.h"
#include "ycsb_zipf.h"

#define PROG "hatkv-ycsb"
#define DEFAULT_TARGET "function=rdma://10.77.0.1:9100"
#define MAX_BATCH 64
/* zeta(n) takes O(n) at start, and the model 48 bytes per modelled record */
#define YCSB_MAX_RECORDS 100000000
#define YCSB_MAX_MODELLED 10000000

typedef enum
{
  OP_GET,
  OP_PUT,
  OP_MULTI_GET,
  OP_MULTI_PUT,
  N_OPS
} Op;
static const gchar *const op_names[N_OPS] = { "get", "put", "multi_get", "multi_put" };

typedef struct
{
  const gchar *name;
  double mix[N_OPS];
} Workload;

static const Workload workloads[] = {
  { "a", { 0.25, 0.25, 0.25, 0.25 } },
  { "b", { 0.475, 0.025, 0.475, 0.025 } },
};

typedef struct
{
  const KvVariant *variant;
  gchar *uri;
} Target;

/* What one op kind did, over threads and rounds. */
typedef struct
{
  guint64 ops, errors, missing;
  GArray *lat; /* microseconds */
  guint64 counters[BENCH_N_COUNTERS];
  GHashTable *protos; /* "request reply" -> count */
} OpStats;

/* One client thread of one target. */
typedef struct
{
  const Target *target;
  KvConn *conn;
  GRand *rand;
  const Workload *workload;
  gint64 deadline; /* monotonic us; 0: by quota */
  guint64 quota;   /* ops; 0: by deadline */
  guint64 lo, hi;  /* load: records [lo, hi) */
  OpStats ops[N_OPS];
  gchar *error; /* the first failure */
} Worker;

static guint64 opt_records = 10000, opt_operations;
static gint opt_threads = 4, opt_batch = 10, opt_load_batch = 1, opt_rounds = 2, opt_sample = 16;
static gdouble opt_duration = 10;
static gboolean opt_quiet, opt_uniform;
static YcsbZipf zipf;
static YcsbModel *model;
static gint64 next_version = 1;   /* atomic: every write's number */
static gint64 progress_ops;       /* atomic */
static gint64 integrity_failures; /* atomic */
static FILE *ack_log;
static GMutex ack_lock;

static void
op_stats_init (OpStats *s)
{
  memset (s, 0, sizeof *s);
  s->lat = g_array_new (FALSE, FALSE, sizeof (double));
  s->protos = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

static void
op_stats_clear (OpStats *s)
{
  g_array_unref (s->lat);
  g_hash_table_unref (s->protos);
}

static void
op_stats_add (OpStats *to, const OpStats *from)
{
  GHashTableIter it;
  gpointer k, v;

  to->ops += from->ops;
  to->errors += from->errors;
  to->missing += from->missing;
  g_array_append_vals (to->lat, from->lat->data, from->lat->len);
  for (guint i = 0; i < BENCH_N_COUNTERS; i++)
    to->counters[i] += from->counters[i];
  g_hash_table_iter_init (&it, from->protos);
  while (g_hash_table_iter_next (&it, &k, &v))
  {
    gpointer was = g_hash_table_lookup (to->protos, k);
    g_hash_table_insert (to->protos, g_strdup (k),
                         GSIZE_TO_POINTER (GPOINTER_TO_SIZE (was) + GPOINTER_TO_SIZE (v)));
  }
}

/* The distinct request (@reply: reply) protocols seen, sorted, '|'-separated. */
static gchar *
protos_text (const OpStats *s, gboolean reply)
{
  GList *keys = g_list_sort (g_hash_table_get_keys (s->protos), (GCompareFunc) strcmp);
  GPtrArray *seen = g_ptr_array_new_with_free_func (g_free);
  gchar *text;

  for (GList *l = keys; l != NULL; l = l->next)
  {
    gchar **two = g_strsplit (l->data, " ", 2);
    const gchar *p = reply ? two[1] : two[0];
    gboolean dup = FALSE;
    for (guint i = 0; i < seen->len && !dup; i++)
      dup = strcmp (seen->pdata[i], p) == 0;
    if (!dup)
      g_ptr_array_add (seen, g_strdup (p));
    g_strfreev (two);
  }
  g_ptr_array_sort (seen, (GCompareFunc) g_strcmp0);
  g_ptr_array_add (seen, NULL);
  text = g_strjoinv ("|", (gchar **) seen->pdata);
  g_ptr_array_unref (seen);
  g_list_free (keys);
  return text;
}

static void
snapshot (Worker *w, guint64 c[BENCH_N_COUNTERS])
{
  ThriftRdma *rdma = w->conn != NULL ? kv_conn_rdma (w->conn) : NULL;
  ThriftRdmaStats st;

  if (rdma == NULL)
  {
    memset (c, 0, sizeof (guint64) * BENCH_N_COUNTERS);
    return;
  }
  thrift_rdma_get_stats (rdma, &st);
  bench_counters_from_stats (&st, c);
}

static void
fail_note (Worker *w, const gchar *what, GError *error)
{
  if (w->error == NULL)
    w->error = g_strdup_printf ("%s: %s", what, error != NULL ? error->message : "failed");
}

/* A value read for record @n: whole, of its record, and what the model holds. */
static void
check_value (Worker *w, guint64 n, const GByteArray *value)
{
  gboolean present = value != NULL && value->len > 0;
  guint64 version = 0;
  const gchar *bad = NULL;
  gchar *why = NULL;

  if (present && !ycsb_value_check (value, n, &version, &bad))
  {
    if (g_atomic_pointer_add (&integrity_failures, 1) < 5)
      fprintf (stderr, PROG ": record %" G_GUINT64_FORMAT ": %s\n", n, bad);
    return;
  }
  if (!ycsb_model_check (model, n, present, version, &why))
  {
    fprintf (stderr, PROG ": model: %s\n", why);
    g_free (why);
  }
}

static guint64
next_record (Worker *w)
{
  if (opt_uniform)
    return (guint64) g_rand_double_range (w->rand, 0, (double) opt_records) % opt_records;
  return ycsb_zipf_next (&zipf, g_rand_double (w->rand));
}

static Op
next_op (Worker *w)
{
  double u = g_rand_double (w->rand), sum = 0;

  for (int i = 0; i < N_OPS; i++)
    if (u < (sum += w->workload->mix[i]))
      return (Op) i;
  return OP_GET;
}

/* One call of @op on records @ns; FALSE if the connection broke. */
static gboolean
call (Worker *w, Op op, const guint64 *ns, guint count)
{
  GPtrArray *keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_byte_array_unref);
  GPtrArray *values = g_ptr_array_new_with_free_func ((GDestroyNotify) g_byte_array_unref);
  guint64 versions[MAX_BATCH], before[BENCH_N_COUNTERS], after[BENCH_N_COUNTERS];
  OpStats *s = &w->ops[op];
  GPtrArray *got = NULL;
  GByteArray *one = NULL;
  GError *error = NULL;
  KvCallResult r;
  double t0, us;

  for (guint i = 0; i < count; i++)
  {
    g_ptr_array_add (keys, ycsb_key (ns[i]));
    if (op == OP_PUT || op == OP_MULTI_PUT)
    {
      versions[i] = (guint64) g_atomic_pointer_add (&next_version, 1);
      g_ptr_array_add (values, ycsb_value (ns[i], versions[i]));
    }
  }
  ycsb_model_lock (model, ns, count);
  snapshot (w, before);
  t0 = bench_now_us ();
  switch (op)
  {
  case OP_GET:
    r = kv_conn_get (w->conn, keys->pdata[0], &one, &error);
    break;
  case OP_PUT:
    r = kv_conn_put (w->conn, keys->pdata[0], values->pdata[0], &error);
    break;
  case OP_MULTI_GET:
    r = kv_conn_multi_get (w->conn, keys, &got, &error);
    break;
  default:
    r = kv_conn_multi_put (w->conn, keys, values, &error);
    break;
  }
  us = bench_now_us () - t0;
  snapshot (w, after);

  if (op == OP_PUT || op == OP_MULTI_PUT)
    for (guint i = 0; i < count; i++)
    {
      ycsb_model_written (model, ns[i], versions[i], r == KV_CALL_OK);
      if (r == KV_CALL_OK && ack_log != NULL)
      {
        g_mutex_lock (&ack_lock);
        fprintf (ack_log, "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT "\n", ns[i], versions[i]);
        g_mutex_unlock (&ack_lock);
      }
    }
  else if (r == KV_CALL_OK || r == KV_CALL_MISSING)
    for (guint i = 0; i < count; i++)
    {
      const GByteArray *v = op == OP_GET ? one : got->pdata[i];
      if (v == NULL || v->len == 0)
        s->missing++;
      check_value (w, ns[i], v);
    }
  ycsb_model_unlock (model, ns, count);

  if (r == KV_CALL_OK || r == KV_CALL_MISSING)
  {
    gchar *pair = g_strdup_printf ("%s %s", w->conn->request_proto, w->conn->reply_proto);
    gpointer was = g_hash_table_lookup (s->protos, pair);
    g_hash_table_insert (s->protos, pair, GSIZE_TO_POINTER (GPOINTER_TO_SIZE (was) + 1));
    s->ops++;
    g_array_append_val (s->lat, us);
    for (guint i = 0; i < BENCH_N_COUNTERS; i++)
      s->counters[i] += after[i] - before[i];
  }
  else
  {
    s->errors++;
    fail_note (w, op_names[op], error);
  }
  g_atomic_pointer_add (&progress_ops, 1);
  g_clear_error (&error);
  if (one != NULL)
    g_byte_array_unref (one);
  if (got != NULL)
    g_ptr_array_unref (got);
  g_ptr_array_unref (keys);
  g_ptr_array_unref (values);
  return r != KV_CALL_BROKEN;
}

/* After a broken call: a new connection, or FALSE if none can be had. */
static gboolean
reconnect (Worker *w)
{
  GError *error = NULL;

  kv_conn_free (w->conn);
  w->conn = kv_conn_open (w->target->variant, w->target->uri, &error);
  if (w->conn == NULL)
  {
    fail_note (w, "reconnect", error);
    g_clear_error (&error);
    return FALSE;
  }
  return TRUE;
}

static gpointer
run_thread (gpointer data)
{
  Worker *w = data;
  guint64 done = 0;

  while (w->conn != NULL)
  {
    guint64 ns[MAX_BATCH];
    Op op;
    guint count;

    if (w->quota > 0 ? done >= w->quota : bench_now_us () >= (double) w->deadline)
      break;
    op = next_op (w);
    count = op == OP_GET || op == OP_PUT ? 1 : (guint) opt_batch;
    for (guint i = 0; i < count; i++)
      ns[i] = next_record (w);
    if (!call (w, op, ns, count) && !reconnect (w))
      break;
    done++;
  }
  return NULL;
}

static gpointer
load_thread (gpointer data)
{
  Worker *w = data;

  for (guint64 n = w->lo; n < w->hi && w->conn != NULL;)
  {
    guint64 ns[MAX_BATCH];
    guint count = (guint) MIN ((guint64) opt_load_batch, w->hi - n);

    for (guint i = 0; i < count; i++)
      ns[i] = n + i;
    if (!call (w, count == 1 ? OP_PUT : OP_MULTI_PUT, ns, count))
      break; /* a load stops at the first broken call */
    n += count;
  }
  return NULL;
}

typedef struct
{
  Worker *worker;
  GThreadFunc fn;
  gint *finished;
} Running;

static gpointer
running_thread (gpointer data)
{
  Running *r = data;

  r->fn (r->worker);
  g_atomic_int_inc (r->finished);
  return NULL;
}

/* Runs @fn on @workers, printing progress once a second; the wall time it took. */
static double
run_workers (Worker *workers, guint n, GThreadFunc fn, const gchar *what, guint64 total)
{
  GThread **threads = g_new (GThread *, n);
  Running *running = g_new (Running, n);
  double t0 = bench_now_us (), last = t0;
  gint64 last_ops = g_atomic_pointer_get (&progress_ops), start_ops = last_ops;
  gint finished = 0;

  for (guint i = 0; i < n; i++)
  {
    running[i] = (Running){ &workers[i], fn, &finished };
    threads[i] = g_thread_new ("ycsb", running_thread, &running[i]);
  }
  while ((guint) g_atomic_int_get (&finished) < n)
  {
    g_usleep (20000);
    if (bench_now_us () - last >= 1e6 && !opt_quiet)
    {
      gint64 ops = g_atomic_pointer_get (&progress_ops);
      double now = bench_now_us ();
      fprintf (stderr, PROG ": %s: %" G_GINT64_FORMAT, what, ops - start_ops);
      if (total > 0)
        fprintf (stderr, " of %" G_GUINT64_FORMAT, total);
      fprintf (stderr, " calls, %.0f/s\n", (ops - last_ops) / ((now - last) / 1e6));
      last = now;
      last_ops = ops;
    }
  }
  for (guint i = 0; i < n; i++)
    g_thread_join (threads[i]);
  g_free (threads);
  g_free (running);
  return (bench_now_us () - t0) / 1e6;
}

static gboolean
parse_targets (gchar **specs, GPtrArray *targets)
{
  gchar *names = kv_variant_names ();
  gboolean ok = TRUE;

  for (guint i = 0; ok && specs[i] != NULL; i++)
  {
    gchar **pair = g_strsplit (specs[i], "=", 2);
    const KvVariant *v = pair[0] != NULL ? kv_variant_find (pair[0]) : NULL;

    if (v == NULL || pair[1] == NULL || pair[1][0] == '\0')
    {
      fprintf (stderr, PROG ": --target %s: want VARIANT=URI with VARIANT one of %s\n", specs[i],
               names);
      ok = FALSE;
    }
    else
    {
      Target *t = g_new0 (Target, 1);
      t->variant = v;
      t->uri = g_strdup (pair[1]);
      g_ptr_array_add (targets, t);
    }
    g_strfreev (pair);
  }
  g_free (names);
  return ok;
}

static void
target_free (Target *t)
{
  g_free (t->uri);
  g_free (t);
}

/* Checks that every write in @file ("RECORD VERSION" per line, as --ack-log writes them) is
 * in the store of @t; the exit status. */
static int
verify (const Target *t, const gchar *file)
{
  gchar *text = NULL, **lines;
  GError *error = NULL;
  KvConn *c;
  guint64 total = 0, present = 0, missing = 0, wrong = 0;

  if (!g_file_get_contents (file, &text, NULL, &error))
  {
    fprintf (stderr, PROG ": %s\n", error->message);
    return 2;
  }
  if ((c = kv_conn_open (t->variant, t->uri, &error)) == NULL)
  {
    fprintf (stderr, PROG ": %s\n", error->message);
    return 3;
  }
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
  {
    guint64 n, version, got = 0;
    GByteArray *key, *value = NULL;
    const gchar *why = NULL;
    KvCallResult r;

    if (lines[i][0] == '\0')
      continue;
    if (sscanf (lines[i], "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT, &n, &version) != 2)
    {
      fprintf (stderr, PROG ": %s:%u: not RECORD VERSION\n", file, i + 1);
      return 2;
    }
    total++;
    key = ycsb_key (n);
    r = kv_conn_get (c, key, &value, &error);
    g_byte_array_unref (key);
    if (r == KV_CALL_OK && ycsb_value_check (value, n, &got, &why) && got == version)
      present++;
    else if (r == KV_CALL_MISSING)
    {
      if (missing++ < 5)
        fprintf (stderr,
                 PROG ": record %" G_GUINT64_FORMAT " (write %" G_GUINT64_FORMAT
                      ", acknowledged) is missing\n",
                 n, version);
    }
    else if (r == KV_CALL_OK)
    {
      if (wrong++ < 5)
        fprintf (stderr,
                 PROG ": record %" G_GUINT64_FORMAT ": want write %" G_GUINT64_FORMAT ", have %s\n",
                 n, version, why != NULL ? why : "another write");
    }
    else
    {
      fprintf (stderr, PROG ": get failed: %s\n", error != NULL ? error->message : "?");
      return 3;
    }
    if (value != NULL)
      g_byte_array_unref (value);
    g_clear_error (&error);
  }
  printf ("verify: %" G_GUINT64_FORMAT " acknowledged writes: %" G_GUINT64_FORMAT
          " present, %" G_GUINT64_FORMAT " missing, %" G_GUINT64_FORMAT " with another value\n",
          total, present, missing, wrong);
  g_strfreev (lines);
  g_free (text);
  kv_conn_free (c);
  return missing + wrong > 0 ? 1 : 0;
}

static Worker *
workers_open (const Target *t, guint n, guint64 seed, gboolean *ok)
{
  Worker *w = g_new0 (Worker, n);

  for (guint i = 0; i < n; i++)
  {
    GError *error = NULL;
    w[i].target = t;
    w[i].rand = g_rand_new_with_seed ((guint32) (seed * 7919 + i * 104729 + 1));
    for (int k = 0; k < N_OPS; k++)
      op_stats_init (&w[i].ops[k]);
    if ((w[i].conn = kv_conn_open (t->variant, t->uri, &error)) == NULL)
    {
      fprintf (stderr, PROG ": %s: %s\n", t->variant->name, error->message);
      g_clear_error (&error);
      *ok = FALSE;
    }
  }
  return w;
}

static void
workers_free (Worker *w, guint n)
{
  for (guint i = 0; i < n; i++)
  {
    kv_conn_free (w[i].conn);
    g_rand_free (w[i].rand);
    for (int k = 0; k < N_OPS; k++)
      op_stats_clear (&w[i].ops[k]);
    g_free (w[i].error);
  }
  g_free (w);
}

/* Takes the workers' stats into @into (and clears theirs); errors to stderr; the count of
 * errors. */
static guint64
workers_collect (Worker *w, guint n, OpStats *into)
{
  guint64 errors = 0;

  for (guint i = 0; i < n; i++)
  {
    for (int k = 0; k < N_OPS; k++)
    {
      errors += w[i].ops[k].errors;
      op_stats_add (&into[k], &w[i].ops[k]);
      op_stats_clear (&w[i].ops[k]);
      op_stats_init (&w[i].ops[k]);
    }
    if (w[i].error != NULL)
      fprintf (stderr, PROG ": %s, thread %u: %s\n", w[i].target->variant->name, i, w[i].error);
    g_clear_pointer (&w[i].error, g_free);
  }
  return errors;
}

static void
csv_row (FILE *f, const gchar *workload, const Target *t, const gchar *op, OpStats *s,
         double seconds, guint64 checks, guint64 mismatches)
{
  double *lat = (double *) (void *) s->lat->data;
  BenchSummary sum;
  gchar *req = protos_text (s, FALSE), *rep = protos_text (s, TRUE);
  /* the counters are an RDMA connection's: rdma:// and hybrid://'s RDMA leg */
  gboolean rdma = !g_str_has_prefix (t->uri, "tcp://");

  bench_summarize (lat, s->lat->len, &sum);
  fprintf (f,
           "%s,%s,%d,%s,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%.6f,%.3f,%.1f,%.1f,"
           "%.1f,%.1f,%s,%" G_GUINT64_FORMAT ",%s,%s,%s,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
           ",%" G_GUINT64_FORMAT,
           workload, t->variant->name, opt_threads, op, s->ops, s->errors, seconds,
           seconds > 0 ? s->ops / seconds : 0, sum.mean, sum.p50, sum.p95, sum.p99, t->uri,
           opt_records, rdma ? "rdma" : "tcp", req, rep, checks, mismatches, s->missing);
  bench_csv_counters (f, rdma, s->counters);
  fprintf (f, ",\n");
  g_free (req);
  g_free (rep);
}

static void
print_row (const gchar *name, OpStats *s, double seconds, gboolean indent)
{
  BenchSummary sum;
  gchar *req = protos_text (s, FALSE), *rep = protos_text (s, TRUE);

  bench_summarize ((double *) (void *) s->lat->data, s->lat->len, &sum);
  printf ("%s%-*s %9.0f %8.1f %8.1f %8.1f %6" G_GUINT64_FORMAT, indent ? "  " : "",
          indent ? 14 : 16, name, seconds > 0 ? s->ops / seconds : 0, sum.mean, sum.p50, sum.p99,
          s->errors);
  if (indent)
    printf ("  %s > %s, %.1f WRs, %.1f READs per call", req, rep,
            s->ops > 0 ? (double) s->counters[BENCH_C_WR_POSTED] / s->ops : 0,
            s->ops > 0 ? (double) s->counters[BENCH_C_READS] / s->ops : 0);
  printf ("\n");
  g_free (req);
  g_free (rep);
}

int
main (int argc, char **argv)
{
  gchar **target_specs = NULL, *workload_text = NULL, *phase = NULL, *csv_path = NULL;
  gchar *ack_path = NULL, *verify_path = NULL, *distribution = NULL;
  gint64 records = 10000, operations = 0, seed = 1;
  gboolean explain = FALSE;
  GOptionEntry entries[] = {
    { "target", 't', 0, G_OPTION_ARG_STRING_ARRAY, &target_specs,
      "a variant and its server (repeatable; default " DEFAULT_TARGET ")", "VARIANT=URI" },
    { "workload", 'w', 0, G_OPTION_ARG_STRING, &workload_text,
      "workloads to run, a and/or b (default a)", "LIST" },
    { "phase", 0, 0, G_OPTION_ARG_STRING, &phase,
      "load (write every record), run (the workloads) or both (default)", "PHASE" },
    { "records", 'r', 0, G_OPTION_ARG_INT64, &records, "records (default 10000)", "N" },
    { "threads", 'n', 0, G_OPTION_ARG_INT, &opt_threads,
      "client threads, a connection each per target (default 4)", "N" },
    { "duration", 'd', 0, G_OPTION_ARG_DOUBLE, &opt_duration,
      "seconds of each workload per target (default 10)", "S" },
    { "operations", 'o', 0, G_OPTION_ARG_INT64, &operations,
      "calls of each workload per target instead of a duration", "N" },
    { "rounds", 0, 0, G_OPTION_ARG_INT, &opt_rounds,
      "turns the targets take, each a share of the duration (default 2)", "N" },
    { "batch", 0, 0, G_OPTION_ARG_INT, &opt_batch, "keys per MultiGET and MultiPUT (default 10)",
      "N" },
    { "load-batch", 0, 0, G_OPTION_ARG_INT, &opt_load_batch,
      "records per write in the load phase: 1 by put (default), more by multi_put", "N" },
    { "distribution", 0, 0, G_OPTION_ARG_STRING, &distribution,
      "zipfian (scrambled, 0.99: the default) or uniform", "NAME" },
    { "sample", 0, 0, G_OPTION_ARG_INT, &opt_sample,
      "check one in N records against the model (default 16; 0: none)", "N" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &seed, "random seed (default 1)", "N" },
    { "csv", 'c', 0, G_OPTION_ARG_FILENAME, &csv_path, "write the results as CSV", "FILE" },
    { "ack-log", 0, 0, G_OPTION_ARG_FILENAME, &ack_path,
      "load phase: write RECORD VERSION of every acknowledged write", "FILE" },
    { "verify-log", 0, 0, G_OPTION_ARG_FILENAME, &verify_path,
      "only check that every write in FILE (from --ack-log) is in the first target's store",
      "FILE" },
    { "explain", 'e', 0, G_OPTION_ARG_NONE, &explain,
      "print what ThriftRdma chooses for each function of each target's variant; no call", NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet, "no progress on stderr", NULL },
    { NULL }
  };
  GOptionContext *context = g_option_context_new ("- YCSB workloads on HatKV servers");
  GPtrArray *targets = g_ptr_array_new_with_free_func ((GDestroyNotify) target_free);
  GPtrArray *runs = g_ptr_array_new ();
  gboolean do_load, do_run, ok = TRUE;
  guint64 errors = 0, checks = 0, mismatches = 0;
  GError *error = NULL;
  FILE *csv = NULL;
  gchar *summary, *names = kv_variant_names ();
  int status = 0;

  summary = g_strdup_printf (
      "YCSB's core workload on HatKV (HatRPC paper Sec. 5.4): 24-byte keys, 10 fields of\n"
      "100 bytes, a load phase writing every record, then a run phase per workload:\n"
      "  a: 25%% get, 25%% put, 25%% multi_get, 25%% multi_put\n"
      "  b: 47.5%% get, 2.5%% put, 47.5%% multi_get, 2.5%% multi_put\n"
      "Targets take turns in --rounds. Every value read must be whole and its record's, and\n"
      "one record in --sample must hold what the model says (its last acknowledged write).\n"
      "Tables go to stdout, progress to stderr. Exit status: 0 all calls succeeded and every\n"
      "check held; 1 a call failed or a check did not hold; 2 bad usage; 3 no connection.\n"
      "Variants: %s.",
      names);
  g_option_context_set_summary (context, summary);
  g_free (summary);
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
  {
    fprintf (stderr, PROG ": %s (try --help)\n", error->message);
    return 2;
  }
  g_option_context_free (context);

  if (target_specs == NULL)
    target_specs = g_strsplit (DEFAULT_TARGET, "\n", 0);
  if (!parse_targets (target_specs, targets))
    return 2;
  if (explain)
  {
    for (guint i = 0; i < targets->len; i++)
    {
      const Target *t = targets->pdata[i];
      gchar *text = thrift_rdma_explain_sets (t->variant->hint_sets, THRIFT_RDMA_DEFAULT_POLLING);
      printf ("# %s (%s)\n%s\n", t->variant->name, t->variant->label, text);
      g_free (text);
    }
    return 0;
  }
  if (verify_path != NULL)
    return verify (targets->pdata[0], verify_path);

  if (records < 1 || records > YCSB_MAX_RECORDS || opt_threads < 1 || opt_threads > 1024
      || opt_batch < 1 || opt_batch > MAX_BATCH || opt_load_batch < 1 || opt_load_batch > MAX_BATCH
      || opt_rounds < 1 || opt_rounds > 1000 || opt_sample < 0 || opt_duration <= 0
      || operations < 0)
  {
    fprintf (stderr,
             PROG ": --records 1 to %d, --threads 1 to 1024, --batch and "
                  "--load-batch 1 to %d, --rounds 1 to 1000, --sample >= 0, --duration > 0\n",
             YCSB_MAX_RECORDS, MAX_BATCH);
    return 2;
  }
  if (opt_sample > 0 && records / opt_sample > YCSB_MAX_MODELLED)
  {
    fprintf (stderr,
             PROG ": --sample %d models %" G_GINT64_FORMAT " records; at most %d: "
                  "raise --sample\n",
             opt_sample, records / opt_sample, YCSB_MAX_MODELLED);
    return 2;
  }
  opt_records = (guint64) records;
  opt_operations = (guint64) operations;
  if (phase == NULL)
    phase = g_strdup ("both");
  do_load = g_strcmp0 (phase, "load") == 0 || g_strcmp0 (phase, "both") == 0;
  do_run = g_strcmp0 (phase, "run") == 0 || g_strcmp0 (phase, "both") == 0;
  if (!do_load && !do_run)
  {
    fprintf (stderr, PROG ": --phase must be load, run or both\n");
    return 2;
  }
  if (ack_path != NULL && do_run)
  {
    /* in the run phase two threads may write one record at once: no order to check */
    fprintf (stderr, PROG ": --ack-log goes with --phase load\n");
    return 2;
  }
  if (distribution != NULL && g_strcmp0 (distribution, "uniform") != 0
      && g_strcmp0 (distribution, "zipfian") != 0)
  {
    fprintf (stderr, PROG ": --distribution must be zipfian or uniform\n");
    return 2;
  }
  opt_uniform = g_strcmp0 (distribution, "uniform") == 0;
  {
    gchar **list = g_strsplit (workload_text != NULL ? workload_text : "a", ",", -1);
    for (guint i = 0; list[i] != NULL; i++)
    {
      const Workload *w = NULL;
      for (guint k = 0; k < G_N_ELEMENTS (workloads); k++)
        if (g_ascii_strcasecmp (list[i], workloads[k].name) == 0)
          w = &workloads[k];
      if (w == NULL)
      {
        fprintf (stderr, PROG ": no workload %s (a, b)\n", list[i]);
        return 2;
      }
      g_ptr_array_add (runs, (gpointer) w);
    }
    g_strfreev (list);
  }
  if (ack_path != NULL && (ack_log = fopen (ack_path, "w")) == NULL)
  {
    fprintf (stderr, PROG ": cannot write %s: %s\n", ack_path, g_strerror (errno));
    return 2;
  }
  if (csv_path != NULL)
  {
    if ((csv = fopen (csv_path, "w")) == NULL)
    {
      fprintf (stderr, PROG ": cannot write %s: %s\n", csv_path, g_strerror (errno));
      return 2;
    }
    bench_csv_header (csv,
                      "workload,variant,threads,op,ops,errors,seconds,ops_per_s,avg_us,"
                      "p50_us,p95_us,p99_us,uri,records,transport,req_proto,rep_proto,model_checks,"
                      "model_mismatches,missing");
  }
  signal (SIGPIPE, SIG_IGN);
  ycsb_zipf_init (&zipf, opt_records, YCSB_ZIPF_CONSTANT, TRUE);
  model = ycsb_model_new (opt_records, (guint) opt_sample);

  if (do_load)
  {
    const Target *t = targets->pdata[0];
    Worker *w = workers_open (t, (guint) opt_threads, (guint64) seed, &ok);
    OpStats sum[N_OPS];
    gchar *what = g_strdup_printf ("load by %s", t->variant->name);
    double secs;

    for (int k = 0; k < N_OPS; k++)
      op_stats_init (&sum[k]);
    for (guint i = 0; i < (guint) opt_threads; i++)
    {
      w[i].lo = opt_records * i / opt_threads;
      w[i].hi = opt_records * (i + 1) / opt_threads;
    }
    if (ok)
    {
      secs = run_workers (w, (guint) opt_threads, load_thread, what, opt_records / opt_load_batch);
      errors += workers_collect (w, (guint) opt_threads, sum);
      printf ("load: %" G_GUINT64_FORMAT
              " records by %s in %.2f s (%.0f writes/s), %" G_GUINT64_FORMAT " failed\n",
              sum[OP_PUT].ops + sum[OP_MULTI_PUT].ops * opt_load_batch, t->variant->name, secs,
              (sum[OP_PUT].ops + sum[OP_MULTI_PUT].ops) / MAX (secs, 1e-9),
              sum[OP_PUT].errors + sum[OP_MULTI_PUT].errors);
    }
    for (int k = 0; k < N_OPS; k++)
      op_stats_clear (&sum[k]);
    workers_free (w, (guint) opt_threads);
    g_free (what);
  }

  for (guint r = 0; ok && do_run && errors == 0 && r < runs->len; r++)
  {
    const Workload *wl = runs->pdata[r];
    guint nt = targets->len;
    Worker **w = g_new0 (Worker *, nt);
    OpStats (*sum)[N_OPS] = g_malloc0 (sizeof (OpStats[N_OPS]) * nt);
    double *secs = g_new0 (double, nt);

    for (guint i = 0; i < nt; i++)
    {
      w[i] = workers_open (targets->pdata[i], (guint) opt_threads, (guint64) seed + r * 31 + i,
                           &ok);
      for (int k = 0; k < N_OPS; k++)
        op_stats_init (&sum[i][k]);
    }
    for (guint round = 0; ok && round < (guint) opt_rounds; round++)
      for (guint i = 0; i < nt; i++)
      {
        gchar *what = g_strdup_printf ("workload %s, %s, round %u of %d", wl->name,
                                       ((Target *) targets->pdata[i])->variant->name, round + 1,
                                       opt_rounds);
        guint64 share = opt_operations / opt_rounds / opt_threads;
        for (guint k = 0; k < (guint) opt_threads; k++)
        {
          w[i][k].workload = wl;
          w[i][k].quota = opt_operations > 0 ? MAX (share, 1) : 0;
          w[i][k].deadline = (gint64) (bench_now_us () + opt_duration * 1e6 / opt_rounds);
        }
        secs[i] += run_workers (w[i], (guint) opt_threads, run_thread, what,
                                opt_operations > 0 ? MAX (share, 1) * opt_threads : 0);
        errors += workers_collect (w[i], (guint) opt_threads, sum[i]);
        g_free (what);
      }

    ycsb_model_counts (model, &checks, &mismatches);
    printf ("\nworkload %s: %d threads, %" G_GUINT64_FORMAT " records, %s, batches of %d\n",
            wl->name, opt_threads, opt_records, opt_uniform ? "uniform" : "zipfian 0.99",
            opt_batch);
    printf ("%-16s %9s %8s %8s %8s %6s\n", "variant / op", "calls/s", "avg us", "p50 us", "p99 us",
            "errors");
    for (guint i = 0; i < nt; i++)
    {
      const Target *t = targets->pdata[i];
      OpStats all;
      op_stats_init (&all);
      for (int k = 0; k < N_OPS; k++)
        op_stats_add (&all, &sum[i][k]);
      print_row (t->variant->name, &all, secs[i], FALSE);
      for (int k = 0; k < N_OPS; k++)
        print_row (op_names[k], &sum[i][k], secs[i], TRUE);
      if (csv != NULL)
      {
        csv_row (csv, wl->name, t, "all", &all, secs[i], checks, mismatches);
        for (int k = 0; k < N_OPS; k++)
          csv_row (csv, wl->name, t, op_names[k], &sum[i][k], secs[i], checks, mismatches);
      }
      op_stats_clear (&all);
      for (int k = 0; k < N_OPS; k++)
        op_stats_clear (&sum[i][k]);
      workers_free (w[i], (guint) opt_threads);
    }
    g_free (w);
    g_free (sum);
    g_free (secs);
  }

  ycsb_model_counts (model, &checks, &mismatches);
  printf ("\nchecks: %" G_GUINT64_FORMAT
          " reads of sampled records against the model, %" G_GUINT64_FORMAT
          " disagreed; %" G_GINT64_FORMAT " values damaged or of another "
          "record; %" G_GUINT64_FORMAT " calls failed\n",
          checks, mismatches, (gint64) g_atomic_pointer_get (&integrity_failures), errors);
  if (!ok)
    status = 3;
  else if (errors > 0 || mismatches > 0 || g_atomic_pointer_get (&integrity_failures) > 0)
    status = 1;
  if (csv != NULL)
    fclose (csv);
  if (ack_log != NULL)
    fclose (ack_log);
  ycsb_model_free (model);
  g_ptr_array_unref (targets);
  g_ptr_array_unref (runs);
  g_strfreev (target_specs);
  g_free (workload_text);
  g_free (phase);
  g_free (csv_path);
  g_free (ack_path);
  g_free (verify_path);
  g_free (distribution);
  g_free (names);
  return status;
}
