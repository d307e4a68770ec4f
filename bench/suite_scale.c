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
 * suite_scale.c: many connections from one client process to one server (issue 22).  The
 * connections grow to each count of --connections in turn; at each point: how long a connect
 * took (mean and slowest of the new ones), the memory pinned (VmPin) and resident (VmRSS) per
 * connection on the client and, given the server's pid, on the server, what the engine says
 * it registered (ThriftRdmaStats pinned_bytes), and the time of one call on each open
 * connection in turn (the first call on a connection apart: it sets up what the protocol
 * needs on demand).  Columns: rdma:// without hints (echo_plain) and tcp://.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "suite_modes.h"

/* calls on each connection per point, after the first (the steady state) */
#define SCALE_PASSES 3

typedef struct
{
  guint64 pin_kb, rss_kb;
  gboolean ok;
} ProcMem;

/* VmPin and VmRSS of /proc/PID/status (@pid 0: this process). */
static ProcMem
proc_mem (gint pid)
{
  g_autofree gchar *path = pid > 0 ? g_strdup_printf ("/proc/%d/status", pid)
                                   : g_strdup ("/proc/self/status");
  g_autofree gchar *text = NULL;
  ProcMem m = { 0 };

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return m;
  for (gchar *line = text; line != NULL && *line != '\0';)
  {
    gchar *next = strchr (line, '\n');

    if (g_str_has_prefix (line, "VmPin:"))
      m.pin_kb = g_ascii_strtoull (line + 6, NULL, 10);
    else if (g_str_has_prefix (line, "VmRSS:"))
    {
      m.rss_kb = g_ascii_strtoull (line + 6, NULL, 10);
      m.ok = TRUE;
    }
    line = next != NULL ? next + 1 : NULL;
  }
  return m;
}

/* Each connection takes descriptors (a socket; for rdma://, CM and completion channels):
 * the soft limit goes up to the hard one, as ThriftThreadedServer does for its side. */
static void
raise_fd_limit (void)
{
  struct rlimit rl;

  if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max)
  {
    rl.rlim_cur = rl.rlim_max;
    setrlimit (RLIMIT_NOFILE, &rl);
  }
}

typedef struct
{
  guint connections;
  double connect_mean_ms, connect_max_ms;
  double first_call_us, call_us; /* per call, on each connection in turn */
  ProcMem client, server;        /* absolute, at the point */
  double client_pin_kb, client_rss_kb, server_pin_kb, server_rss_kb; /* per connection */
  double engine_pinned_kb; /* ThriftRdmaStats pinned_bytes, per connection */
  gboolean have_counters;  /* rdma://: the counters of all its connections */
  guint64 counters[BENCH_N_COUNTERS];
  gchar *error;
} ScalePoint;

/* One call of 64 B on @c; FALSE with @error. */
static gboolean
call_once (SuiteConn *c, const SuiteFunction *f, const GByteArray *data, GError **error)
{
  GByteArray *ret = NULL;
  const gchar *req, *rep;
  gboolean ok = suite_call (c, f, data, &ret, &req, &rep, error);

  if (ok && (ret == NULL || ret->len != data->len))
  {
    g_set_error (error, g_quark_from_static_string ("suite-scale"), 0,
                 "the echo came back with %u bytes", ret != NULL ? ret->len : 0);
    ok = FALSE;
  }
  if (ret != NULL)
    g_byte_array_unref (ret);
  return ok;
}

/* Grows @conns to @p->connections connections to @uri and measures the point. */
static gboolean
measure_point (const gchar *label, const gchar *uri, GPtrArray *conns, gint server_pid,
               ProcMem client0, ProcMem server0, const GByteArray *data, ScalePoint *p)
{
  const SuiteFunction *f = suite_function_find ("echo_plain");
  guint first_new = conns->len;
  double sum_ms = 0, t0;
  guint64 engine_pinned = 0;
  GError *error = NULL;

  for (guint i = conns->len; i < p->connections; i++)
  {
    SuiteConn *c;
    double ms;

    t0 = bench_now_us ();
    c = suite_conn_open (uri, &error);
    ms = (bench_now_us () - t0) / 1000.0;
    if (c == NULL)
    {
      p->error = g_strdup_printf ("connection %u: %s", i + 1, error->message);
      g_clear_error (&error);
      return FALSE;
    }
    g_ptr_array_add (conns, c);
    sum_ms += ms;
    p->connect_max_ms = MAX (p->connect_max_ms, ms);
    if ((i + 1) % 256 == 0)
      fprintf (stderr, "scale: %s, %u connections open ...\n", label, i + 1);
  }
  if (conns->len > first_new)
    p->connect_mean_ms = sum_ms / (conns->len - first_new);

  /* the first call on each new connection, then passes over all of them */
  t0 = bench_now_us ();
  for (guint i = first_new; i < conns->len; i++)
    if (!call_once (g_ptr_array_index (conns, i), f, data, &error))
      goto failed;
  if (conns->len > first_new)
    p->first_call_us = (bench_now_us () - t0) / (conns->len - first_new);
  t0 = bench_now_us ();
  for (guint pass = 0; pass < SCALE_PASSES; pass++)
    for (guint i = 0; i < conns->len; i++)
      if (!call_once (g_ptr_array_index (conns, i), f, data, &error))
        goto failed;
  p->call_us = (bench_now_us () - t0) / ((double) SCALE_PASSES * conns->len);

  for (guint i = 0; i < conns->len; i++)
  {
    ThriftRdma *rdma = suite_conn_rdma (g_ptr_array_index (conns, i));
    ThriftRdmaStats st;

    if (rdma != NULL)
    {
      guint64 k[BENCH_N_COUNTERS];

      thrift_rdma_get_stats (rdma, &st);
      engine_pinned += st.pinned_bytes;
      bench_counters_from_stats (&st, k);
      for (guint j = 0; j < BENCH_N_COUNTERS; j++)
        p->counters[j] += k[j];
      p->have_counters = TRUE;
    }
  }
  p->engine_pinned_kb = engine_pinned / 1024.0 / conns->len;
  p->client = proc_mem (0);
  p->client_pin_kb = ((double) p->client.pin_kb - client0.pin_kb) / conns->len;
  p->client_rss_kb = ((double) p->client.rss_kb - client0.rss_kb) / conns->len;
  if (server_pid > 0)
  {
    p->server = proc_mem (server_pid);
    if (p->server.ok)
    {
      p->server_pin_kb = ((double) p->server.pin_kb - server0.pin_kb) / conns->len;
      p->server_rss_kb = ((double) p->server.rss_kb - server0.rss_kb) / conns->len;
    }
  }
  return TRUE;

failed:
  p->error = g_strdup_printf ("a call with %u connections open: %s", conns->len, error->message);
  g_clear_error (&error);
  return FALSE;
}

static void
print_point (const gchar *label, const ScalePoint *p, gboolean have_server)
{
  printf ("%-6s %6u %9.2f %9.2f %9.1f %9.1f %9.1f %9.1f %9.1f", label, p->connections,
          p->connect_mean_ms, p->connect_max_ms, p->first_call_us, p->call_us, p->client_pin_kb,
          p->client_rss_kb, p->engine_pinned_kb);
  if (have_server && p->server.ok)
    printf (" %9.1f %9.1f %9.1f", p->server_pin_kb, p->server_rss_kb, p->server.pin_kb / 1024.0);
  else
    printf (" %9s %9s %9s", "-", "-", "-");
  if (p->error != NULL)
    printf ("  FAILED: %s", p->error);
  printf ("\n");
  fflush (stdout);
}

static void
csv_point (FILE *f, const gchar *label, const gchar *uri, const ScalePoint *p)
{
  fprintf (
      f, "%s,%s,%u,%.3f,%.3f,%.1f,%.1f,%.1f,%.1f,%.1f,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",",
      label, suite_column_transport (label, uri), p->connections, p->connect_mean_ms,
      p->connect_max_ms, p->first_call_us, p->call_us, p->client_pin_kb, p->client_rss_kb,
      p->engine_pinned_kb, p->client.pin_kb, p->client.rss_kb);
  if (p->server.ok)
    fprintf (f, "%.1f,%.1f,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT, p->server_pin_kb,
             p->server_rss_kb, p->server.pin_kb, p->server.rss_kb);
  else
    fprintf (f, ",,,");
  bench_csv_counters (f, p->have_counters, p->counters);
  fprintf (f, ",%s\n", p->error != NULL ? g_strdelimit (p->error, ",\"\n", ';') : "");
  fflush (f);
}

/* One column: its connections grow point by point, then all close. */
static gboolean
run_column (const SuiteOptions *o, const gchar *label, const gchar *uri, const GByteArray *data)
{
  GPtrArray *conns = g_ptr_array_new_with_free_func ((GDestroyNotify) suite_conn_free);
  ProcMem client0 = proc_mem (0), server0 = proc_mem (o->server_pid);
  gboolean ok = TRUE;

  for (guint i = 0; ok && i < o->connections->len; i++)
  {
    ScalePoint p = { .connections = (guint) g_array_index (o->connections, guint64, i) };

    fprintf (stderr, "scale: %s, %u connections ...\n", label, p.connections);
    ok = measure_point (label, uri, conns, o->server_pid, client0, server0, data, &p);
    if (!ok)
      p.connections = conns->len;
    print_point (label, &p, o->server_pid > 0);
    if (o->csv)
      csv_point (o->csv, label, uri, &p);
    g_free (p.error);
  }
  {
    double t0 = bench_now_us ();
    guint n = conns->len;

    g_ptr_array_unref (conns);
    if (n > 0)
      fprintf (stderr, "scale: %s, %u connections closed in %.1f ms\n", label, n,
               (bench_now_us () - t0) / 1000.0);
  }
  return ok;
}

int
suite_run_scale (const SuiteOptions *o)
{
  GByteArray *data = g_byte_array_sized_new (64);
  gboolean ok = TRUE;

  raise_fd_limit ();
  g_byte_array_set_size (data, 64);
  bench_fill (data);
  if (o->server_pid > 0 && !proc_mem (o->server_pid).ok)
    fprintf (stderr, "scale: cannot read /proc/%d/status: no server columns\n", o->server_pid);
  if (o->csv)
    bench_csv_header (o->csv, "column,transport,connections,connect_mean_ms,connect_max_ms,"
                              "first_call_us,call_us,client_pin_kib_per_conn,"
                              "client_rss_kib_per_conn,engine_pinned_kib_per_conn,"
                              "client_vmpin_kib,client_vmrss_kib,server_pin_kib_per_conn,"
                              "server_rss_kib_per_conn,server_vmpin_kib,server_vmrss_kib");
  printf ("\n== Scale: one client process, N connections to one server, a 64 B echo ==\n"
          "connect = ms per connect (mean, slowest of the new ones); 1st call = us of the first\n"
          "call on each new connection; call = us per call, one on each open connection in turn\n"
          "(%d passes); pin, rss = KiB per connection (VmPin, VmRSS growth of the process since\n"
          "the column began); engine = KiB the transport says it registered per connection\n"
          "(pinned_bytes); srv = the server's (--server-pid), MiB = its whole VmPin; the CSV has\n"
          "the verbs counters of all the client's connections, totals since they opened\n",
          SCALE_PASSES);
  printf ("%-6s %6s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "column", "N", "conn ms", "max ms",
          "1st call", "call us", "cli pin", "cli rss", "engine", "srv pin", "srv rss", "srv MiB");
  fflush (stdout);
  if (o->rdma_uri != NULL)
    ok = run_column (o, "rdma", o->rdma_uri, data) && ok;
  if (o->tcp_uri != NULL)
    ok = run_column (o, "tcp", o->tcp_uri, data) && ok;
  g_byte_array_unref (data);
  return ok ? 0 : 1;
}
