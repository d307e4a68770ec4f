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
 * suite_calls.c: a plain run of calls of one function at one size, nothing else: the program
 * that bench/run-all puts under strace -f -c to count system calls per RPC.  Connects, makes
 * the warm-up calls, then the counted calls, and writes one CSV row (header first) with the
 * verbs counters of the counted calls.  Run it with --calls 0 too: the difference of the two
 * strace counts is what the calls cost, without connecting and starting up.
 */
#include "config.h"

#include <string.h>

#include "suite_modes.h"

int
suite_run_calls (const SuiteOptions *o)
{
  const SuiteFunction *fn = suite_function_find (o->function);
  GByteArray *data = g_byte_array_sized_new ((guint) g_array_index (o->sizes, guint64, 0));
  GError *error = NULL;
  SuiteConn *conn = suite_conn_open (o->client_uri, &error);
  ThriftRdma *rdma;
  const gchar *request = "", *reply = "";
  gboolean ok = TRUE;
  FILE *out = o->csv ? o->csv : stdout;
  guint64 counters[BENCH_N_COUNTERS] = { 0 };

  if (conn == NULL)
  {
    fprintf (stderr, "thrift-rdma-suite: %s: %s\n", o->client_uri, error->message);
    g_clear_error (&error);
    g_byte_array_unref (data);
    return 1;
  }
  rdma = suite_conn_rdma (conn);
  g_byte_array_set_size (data, (guint) g_array_index (o->sizes, guint64, 0));
  bench_fill (data);
  for (guint i = 0; ok && i < o->warmup + o->calls; i++)
  {
    GByteArray *back = NULL;

    if (i == o->warmup && rdma != NULL)
      thrift_rdma_reset_stats (rdma);
    ok = suite_call (conn, fn, data, &back, &request, &reply, &error);
    if (ok && (back == NULL || back->len != data->len))
    {
      fprintf (stderr, "thrift-rdma-suite: the echo of %u bytes came back wrong\n", data->len);
      ok = FALSE;
    }
    else if (!ok)
    {
      fprintf (stderr, "thrift-rdma-suite: %s: %s\n", o->function, error->message);
      g_clear_error (&error);
    }
    if (back != NULL)
      g_byte_array_unref (back);
  }
  if (ok && rdma != NULL)
  {
    ThriftRdmaStats st;
    thrift_rdma_get_stats (rdma, &st);
    bench_counters_from_stats (&st, counters);
  }
  fprintf (stderr, "calls: %u calls of %s, %u B, on %s: %s\n", o->calls, o->function, data->len,
           o->client_uri, ok ? "done" : "failed");
  bench_csv_header (out, "function,transport,size,calls,request_protocol,reply_protocol");
  fprintf (out, "%s,%s,%u,%u,%s,%s", o->function, rdma != NULL ? "rdma" : "tcp", data->len,
           o->calls, request, reply);
  bench_csv_counters (out, rdma != NULL, counters);
  fprintf (out, ",%s\n", ok ? "" : "failed");
  fflush (out);
  suite_conn_free (conn);
  g_byte_array_unref (data);
  return ok ? 0 : 1;
}
