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

/* suite_load.c: N client threads against one server for a bounded time (suite_load.h). */
#include "config.h"

#include <string.h>

#include "suite_load.h"

typedef struct _Load Load;

typedef struct
{
  Load *load;
  guint index;
  SuiteConn *conn;
  const SuiteFunction *fn[2];
  GArray *latency[2]; /* double microseconds */
  const gchar *request_proto[2], *reply_proto[2];
  gboolean protocol_changed[2];
  gchar *error;
  ThriftRdmaStats stats;
  GThread *thread;
  GArray *slow; /* SlowCall: its calls over SLOW_CALL_US */
} Worker;

/* A call this slow is listed with when it began (to tell a stall from a slow column). */
#define SLOW_CALL_US 100000.0

typedef struct
{
  double start_us; /* since the point's clock started */
  double took_us;
  guint client;
} SlowCall;

struct _Load
{
  const SuiteLoadSpec *spec;
  GMutex lock;
  GCond cond;
  guint ready;     /* workers connected and warmed up (or failed) */
  gboolean go;     /* set with deadline: start calling */
  double start_us; /* set with deadline */
  double deadline_us;
  double last_end_us; /* when the last call of any worker ended */
  guint32 seed;       /* the workers' random choices: another each run */
};

/* One call of function @f of @w with @data; FALSE (error kept in @w) if it failed. */
static gboolean
call_once (Worker *w, guint f, GByteArray *data, double *took_us)
{
  GByteArray *back = NULL;
  GError *error = NULL;
  const gchar *request = NULL, *reply = NULL;
  double t0 = bench_now_us ();
  gboolean ok = suite_call (w->conn, w->fn[f], data, &back, &request, &reply, &error);

  *took_us = bench_now_us () - t0;
  /* The length and the ends of the echo: a full compare would add client CPU per RPC. */
  if (ok
      && (back == NULL || back->len != data->len
          || (data->len > 0
              && (back->data[0] != data->data[0]
                  || back->data[data->len - 1] != data->data[data->len - 1]))))
  {
    w->error = g_strdup_printf ("client %u: %s: the echo of %u bytes came back wrong", w->index,
                                w->load->spec->functions[f], data->len);
    ok = FALSE;
  }
  else if (!ok)
  {
    w->error = g_strdup_printf ("client %u: %s: %s", w->index, w->load->spec->functions[f],
                                error->message);
    g_clear_error (&error);
  }
  if (back != NULL)
    g_byte_array_unref (back);
  if (ok && w->request_proto[f] == NULL)
  {
    w->request_proto[f] = request;
    w->reply_proto[f] = reply;
  }
  else if (ok
           && (g_strcmp0 (w->request_proto[f], request) != 0
               || g_strcmp0 (w->reply_proto[f], reply) != 0))
    w->protocol_changed[f] = TRUE;
  return ok;
}

static gpointer
worker_run (gpointer data)
{
  Worker *w = data;
  Load *load = w->load;
  const SuiteLoadSpec *spec = load->spec;
  GByteArray *payload = g_byte_array_sized_new ((guint) spec->size);
  GRand *rand = g_rand_new_with_seed (w->load->seed + w->index);
  GError *error = NULL;
  gboolean ok = TRUE;
  double took, end = 0;

  g_byte_array_set_size (payload, (guint) spec->size);
  bench_fill (payload);
  w->conn = suite_conn_open (spec->uri, &error);
  if (w->conn == NULL)
  {
    w->error = g_strdup_printf ("client %u: %s: %s", w->index, spec->uri, error->message);
    g_clear_error (&error);
    ok = FALSE;
  }
  for (guint i = 0; ok && i < spec->warmup; i++)
    ok = call_once (w, i % spec->n_functions, payload, &took);
  if (ok && suite_conn_rdma (w->conn) != NULL)
    thrift_rdma_reset_stats (suite_conn_rdma (w->conn));

  g_mutex_lock (&load->lock);
  load->ready++;
  g_cond_broadcast (&load->cond);
  while (!load->go)
    g_cond_wait (&load->cond, &load->lock);
  g_mutex_unlock (&load->lock);

  while (ok && bench_now_us () < load->deadline_us)
  {
    guint f = spec->n_functions > 1 && (guint) g_rand_int_range (rand, 0, 100) >= spec->ratio;

    double t0 = bench_now_us ();

    ok = call_once (w, f, payload, &took);
    if (ok)
      g_array_append_val (w->latency[f], took);
    if (ok && took >= SLOW_CALL_US)
    {
      SlowCall c = { t0 - load->start_us, took, w->index };
      g_array_append_val (w->slow, c);
    }
  }
  end = bench_now_us ();
  if (w->conn != NULL && suite_conn_rdma (w->conn) != NULL)
    thrift_rdma_get_stats (suite_conn_rdma (w->conn), &w->stats);
  g_mutex_lock (&load->lock);
  load->last_end_us = MAX (load->last_end_us, end);
  g_mutex_unlock (&load->lock);
  g_rand_free (rand);
  g_byte_array_unref (payload);
  return NULL;
}

static gint
by_start (gconstpointer a, gconstpointer b)
{
  double d = ((const SlowCall *) a)->start_us - ((const SlowCall *) b)->start_us;
  return d < 0 ? -1 : d > 0;
}

/* On stderr, beside the progress lines: the calls over SLOW_CALL_US of this run (a round),
 * when each began after the clock started, how long it took, and whose it was. */
static void
report_slow (const SuiteLoadSpec *spec, Worker *workers)
{
  GArray *all = g_array_new (FALSE, FALSE, sizeof (SlowCall));
  GString *line;

  for (guint i = 0; i < spec->clients; i++)
    g_array_append_vals (all, workers[i].slow->data, workers[i].slow->len);
  if (all->len > 0)
  {
    g_array_sort (all, by_start);
    line = g_string_new (NULL);
    g_string_printf (line,
                     "slow calls: %s, %u clients, %" G_GUINT64_FORMAT " B: %u over %.0f ms"
                     " (began at ms, took ms, client):",
                     spec->functions[0], spec->clients, spec->size, all->len, SLOW_CALL_US / 1000);
    for (guint k = 0; k < MIN (all->len, 12u); k++)
    {
      const SlowCall *c = &g_array_index (all, SlowCall, k);
      g_string_append_printf (line, " %.0f/%.0f/%u", c->start_us / 1000, c->took_us / 1000,
                              c->client);
    }
    /* (on a line of its own: the progress line ends after the run) */
    fprintf (stderr, "\n%s%s\n", line->str, all->len > 12 ? " ..." : "");
    g_string_free (line, TRUE);
  }
  g_array_free (all, TRUE);
}

/* Keeps the first failure of a point; takes @message. */
static void
fail (SuiteLoadResult *r, gchar *message)
{
  if (r->ok)
  {
    r->ok = FALSE;
    r->error = message;
  }
  else
    g_free (message);
}

void
suite_load_run (const SuiteLoadSpec *spec, SuiteLoadResult *r)
{
  Load load = { .spec = spec };
  Worker *workers = g_new0 (Worker, spec->clients);
  SuiteConn *control;
  GError *error = NULL;
  double cpu_user0, cpu_sys0, cpu_user1, cpu_sys1, start_us;
  SuiteServerUsage server0 = { 0 }, server1 = { 0 };
  gboolean server_ok;

  r->rounds++;
  /* the server's CPU time comes from its usage function over a connection of its own */
  control = suite_conn_open (spec->uri, &error);
  if (control == NULL)
  {
    fail (r, g_strdup_printf ("%s: %s", spec->uri, error->message));
    g_clear_error (&error);
    g_free (workers);
    return;
  }
  g_mutex_init (&load.lock);
  g_cond_init (&load.cond);

  for (guint i = 0; i < spec->clients; i++)
  {
    Worker *w = &workers[i];
    w->load = &load;
    w->index = i;
    for (guint f = 0; f < spec->n_functions; f++)
    {
      w->fn[f] = suite_function_find (spec->functions[f]);
      w->latency[f] = g_array_new (FALSE, FALSE, sizeof (double));
    }
    w->slow = g_array_new (FALSE, FALSE, sizeof (SlowCall));
    w->thread = g_thread_new ("bench-client", worker_run, w);
  }
  g_mutex_lock (&load.lock);
  while (load.ready < spec->clients)
    g_cond_wait (&load.cond, &load.lock);
  g_mutex_unlock (&load.lock);

  server_ok = suite_server_usage (control, &server0, &error);
  bench_cpu_seconds (&cpu_user0, &cpu_sys0);
  g_mutex_lock (&load.lock);
  start_us = bench_now_us ();
  load.start_us = start_us;
  load.deadline_us = start_us + spec->duration * 1e6;
  load.last_end_us = start_us;
  load.go = TRUE;
  g_cond_broadcast (&load.cond);
  g_mutex_unlock (&load.lock);

  for (guint i = 0; i < spec->clients; i++)
    g_thread_join (workers[i].thread);
  bench_cpu_seconds (&cpu_user1, &cpu_sys1);
  if (server_ok)
    server_ok = suite_server_usage (control, &server1, &error);
  if (!server_ok)
  {
    fail (r, g_strdup_printf ("%s: usage: %s", spec->uri, error->message));
    g_clear_error (&error);
  }

  r->elapsed_s += (load.last_end_us - start_us) / 1e6;
  r->client_cpu_s += (cpu_user1 + cpu_sys1) - (cpu_user0 + cpu_sys0);
  r->server_cpu_s += server1.cpu_s - server0.cpu_s;
  r->server_calls += server1.calls - server0.calls;
  r->server_wakeups += server1.wakeups - server0.wakeups;
  r->server_switches += server1.switches - server0.switches;
  for (guint f = 0; f < spec->n_functions; f++)
  {
    GArray *all = r->samples[f];

    for (guint i = 0; i < spec->clients; i++)
    {
      Worker *w = &workers[i];
      g_array_append_vals (all, w->latency[f]->data, w->latency[f]->len);
      if (w->request_proto[f] != NULL && r->request_proto[f] == NULL)
      {
        r->request_proto[f] = w->request_proto[f];
        r->reply_proto[f] = w->reply_proto[f];
      }
      else if (w->request_proto[f] != NULL
               && (g_strcmp0 (w->request_proto[f], r->request_proto[f]) != 0
                   || g_strcmp0 (w->reply_proto[f], r->reply_proto[f]) != 0))
        r->protocol_changed[f] = TRUE;
      r->protocol_changed[f] |= w->protocol_changed[f];
    }
    r->calls[f] = all->len;
    bench_summarize ((double *) all->data, all->len, &r->latency[f]);
  }
  report_slow (spec, workers);
  for (guint i = 0; i < spec->clients; i++)
  {
    Worker *w = &workers[i];
    guint64 c[BENCH_N_COUNTERS];

    if (w->error != NULL)
      fail (r, g_strdup (w->error));
    if (w->conn != NULL && suite_conn_rdma (w->conn) != NULL)
    {
      r->have_counters = TRUE;
      bench_counters_from_stats (&w->stats, c);
      for (guint k = 0; k < BENCH_N_COUNTERS; k++)
        r->counters[k] += c[k];
    }
    suite_conn_free (w->conn);
    g_free (w->error);
    for (guint f = 0; f < spec->n_functions; f++)
      g_array_free (w->latency[f], TRUE);
    g_array_free (w->slow, TRUE);
  }
  suite_conn_free (control);
  g_free (workers);
  g_mutex_clear (&load.lock);
  g_cond_clear (&load.cond);
}

void
suite_load_result_init (SuiteLoadResult *r)
{
  memset (r, 0, sizeof *r);
  r->ok = TRUE;
  for (guint f = 0; f < G_N_ELEMENTS (r->samples); f++)
    r->samples[f] = g_array_new (FALSE, FALSE, sizeof (double));
}

void
suite_load_result_clear (SuiteLoadResult *r)
{
  g_clear_pointer (&r->error, g_free);
  for (guint f = 0; f < G_N_ELEMENTS (r->samples); f++)
    g_clear_pointer (&r->samples[f], g_array_unref);
}

guint64
suite_load_calls (const SuiteLoadResult *r)
{
  return r->calls[0] + r->calls[1];
}

double
suite_load_rate (const SuiteLoadResult *r)
{
  return r->elapsed_s > 0 ? suite_load_calls (r) / r->elapsed_s : 0;
}

double
suite_load_mb_s (const SuiteLoadResult *r, guint64 size)
{
  return suite_load_rate (r) * size / 1e6;
}
