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
 * thrift-rdma-suite: the benchmark suite of the RDMA transport (issue 8, "Performance") over
 * the service of bench/suite.thrift.  One program, one server and four measurements:
 *
 *   thrift-rdma-suite --server URI [--server URI ...]           serve until SIGINT/SIGTERM
 *   thrift-rdma-suite --run latency    --rdma URI --tcp URI      per function and size
 *   thrift-rdma-suite --run throughput --rdma URI --tcp URI      N client threads
 *   thrift-rdma-suite --run mixed      --rdma URI --tcp URI      HatRPC paper Sec. 5.3
 *   thrift-rdma-suite --run hybrid     --hybrid URI --rdma URI --tcp URI   small by RDMA,
 *                                                                  bulk by TCP (issue 9)
 *   thrift-rdma-suite --run bulk       --bulk URI                large binaries: copied, by
 *                                                                  bulk transfer (issue 10)
 *   thrift-rdma-suite --run scale      --rdma URI --tcp URI      many connections: connect
 *                                                                  time, memory, call time
 *   thrift-rdma-suite --run calls      --client URI              calls only, for strace
 *
 * Called as atb_lat, atb_thr or atb_mix (the names of the paper's Apache Thrift Benchmarks;
 * make links them in bench/), it is --run latency, throughput or mixed with that part's
 * options.  --rsocket URI measures a stock tcp:// server as the rsocket column, in a process
 * of its own run under LD_PRELOAD of librdmacm's librspreload.
 *
 * bench/run-all runs them all in one soft-RoCE guest boot.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "bench_serve.h"
#include "suite_handler.h"
#include "suite_modes.h"

static const gchar *prog = "thrift-rdma-suite";

/* The Apache Thrift Benchmarks' programs: this one under another name, one part each. */
static const struct
{
  const gchar *name, *part, *summary;
  const gchar *options; /* the options of the part, shown by --help */
} atb_programs[] = {
  { "atb_lat", "latency",
    "ATB latency (thrift-rdma-suite --run latency): one call at a time per function and\n"
    "payload size (4 B to 1 MiB): the hint-selected plan, no hints, each protocol forced,\n"
    "stock tcp:// and rsocket; mean, p50, p99, the protocols and the verbs counters per RPC.",
    " functions iterations large-iterations rounds " },
  { "atb_thr", "throughput",
    "ATB throughput (thrift-rdma-suite --run throughput): N client threads, a connection\n"
    "each, at 512 B and 128 KB: RPC/s, MB/s, p50/p99, CPU time per RPC of both sides.",
    " clients duration load-rounds " },
  { "atb_mix", "mixed",
    "ATB mixed (thrift-rdma-suite --run mixed, HatRPC Sec. 5.3): N clients call a latency\n"
    "and a throughput function at random (--ratio), for each N of --mixed-clients: the\n"
    "latency function's latency and the throughput function's RPC/s per column.",
    " mixed-clients ratio duration load-rounds " },
};

/* Options every ATB program shows: the server, the columns' servers, sizes, CSV. */
static const gchar atb_common[] = " server server-mode rdma tcp rsocket sizes warmup csv ";

/* TRUE when librspreload is loaded into this process: then every socket is an rsocket. */
static gboolean
under_rspreload (void)
{
  gchar *maps = NULL;
  gboolean found;

  if (!g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL))
    return FALSE;
  found = strstr (maps, "librspreload") != NULL;
  g_free (maps);
  return found;
}

static int
usage_error (const gchar *message)
{
  fprintf (stderr, "%s: %s (try --help)\n", prog, message);
  return 2;
}

/* The latency benchmark's default columns: the plan, no hints, each protocol. */
static gchar **
default_functions (void)
{
  GPtrArray *a = g_ptr_array_new ();

  g_ptr_array_add (a, g_strdup ("echo_plan"));
  g_ptr_array_add (a, g_strdup ("echo_plain"));
  for (guint p = 0; suite_protocol_names[p] != NULL; p++)
    g_ptr_array_add (a, g_strdup_printf ("echo_%s", suite_protocol_names[p]));
  g_ptr_array_add (a, NULL);
  return (gchar **) g_ptr_array_free (a, FALSE);
}

/* Appends to @servers the URI of each bulk mode this build takes, on @base's port and the next
 * ones, saying on stdout what is served and what is not; FALSE if @base itself is wrong. */
static gboolean
add_bulk_servers (gchar ***servers, const gchar *base)
{
  GPtrArray *all = g_ptr_array_new ();
  GError *error = NULL;
  gboolean ok = TRUE;

  for (guint i = 0; *servers != NULL && (*servers)[i] != NULL; i++)
    g_ptr_array_add (all, (*servers)[i]);
  if (!suite_bulk_base_check (base, TRUE, &error))
  {
    fprintf (stderr, "%s: --bulk-server: %s\n", prog, error->message);
    g_error_free (error);
    ok = FALSE;
  }
  for (guint m = 0; ok && m < suite_bulk_n_modes (); m++)
  {
    const gchar *note = NULL;
    gchar *uri = suite_bulk_mode_uri (base, m, TRUE, &note, &error);

    if (uri != NULL)
    {
      printf ("bulk: %s served on %s%s%s\n", suite_bulk_mode_name (m), uri, note ? ": " : "",
              note ? note : "");
      g_ptr_array_add (all, uri);
    }
    else
      printf ("bulk: %s not served: %s\n", suite_bulk_mode_name (m), error->message);
    g_clear_error (&error);
  }
  fflush (stdout);
  g_free (*servers); /* the strings live on in the new array */
  g_ptr_array_add (all, NULL);
  *servers = (gchar **) g_ptr_array_free (all, FALSE);
  return ok;
}

int
main (int argc, char **argv)
{
  gchar **servers = NULL, *server_mode = NULL, *run = NULL, *rdma = NULL, *tcp = NULL;
  gchar *rsocket = NULL, *mixed_clients = NULL;
  gchar *hybrid = NULL, *bulk = NULL, *bulk_server = NULL, *bulk_modes = NULL;
  gchar *columns = NULL;
  gint mix_small = 20, mix_units = 40;
  gchar *client = NULL, *functions = NULL, *sizes = NULL, *clients = NULL, *function = NULL;
  gchar *csv = NULL, *connections = NULL;
  gint server_pid = 0;
  gint iterations = 200, large_iterations = 50, warmup = 10, rounds = 10;
  gint ratio = 50, calls = 1000, load_rounds = 4;
  gdouble duration = 2.0;
  GOptionEntry entries[] = {
    { "server", 's', 0, G_OPTION_ARG_STRING_ARRAY, &servers,
      "serve the suite's service on URI (repeat for several); until SIGINT", "URI" },
    { "bulk-server", 0, 0, G_OPTION_ARG_STRING, &bulk_server,
      "also serve the bulk part's modes, each with its rdma:// options, on URI's port and the "
      "next ones (a mode this build refuses is reported and left out)",
      "URI" },
    { "server-mode", 0, 0, G_OPTION_ARG_STRING, &server_mode,
      "ThriftThreadedServer mode: pool (default) or per-connection", "MODE" },
    { "run", 'r', 0, G_OPTION_ARG_STRING, &run,
      "measure: latency, throughput, mixed, hybrid, bulk, scale or calls", "WHAT" },
    { "rdma", 0, 0, G_OPTION_ARG_STRING, &rdma, "the rdma:// server to measure", "URI" },
    { "tcp", 0, 0, G_OPTION_ARG_STRING, &tcp, "the tcp:// baseline server", "URI" },
    { "rsocket", 0, 0, G_OPTION_ARG_STRING, &rsocket,
      "latency, throughput, mixed: a tcp:// server measured as the rsocket column; this "
      "process and the server must run under LD_PRELOAD=librspreload.so (alone: every socket "
      "of the process is then an rsocket)",
      "URI" },
    { "hybrid", 0, 0, G_OPTION_ARG_STRING, &hybrid, "hybrid: the hybrid:// server", "URI" },
    { "bulk", 0, 0, G_OPTION_ARG_STRING, &bulk,
      "bulk: the rdma:// URI given to the server's --bulk-server", "URI" },
    { "bulk-modes", 0, 0, G_OPTION_ARG_STRING, &bulk_modes,
      "bulk: the modes measured (default copy,bulk,bulk-unpipelined,default)", "M,M,..." },
    { "columns", 0, 0, G_OPTION_ARG_STRING, &columns,
      "throughput: only these columns (plan, plain, e+r_rndv, tcp, rsocket; default every one "
      "whose server is given)",
      "C,C,..." },
    { "mix-small", 0, 0, G_OPTION_ARG_INT, &mix_small,
      "hybrid: small calls per bulk call (default 20)", "N" },
    { "mix-units", 0, 0, G_OPTION_ARG_INT, &mix_units,
      "hybrid: units (the small calls and one bulk call) per column (default 40)", "N" },
    { "client", 'c', 0, G_OPTION_ARG_STRING, &client, "calls: the server", "URI" },
    { "functions", 'f', 0, G_OPTION_ARG_STRING, &functions,
      "latency: the functions measured over rdma:// (default echo_plan,echo_plain and "
      "echo_PROTO for each protocol)",
      "F,F,..." },
    { "function", 0, 0, G_OPTION_ARG_STRING, &function, "calls: the function (default echo_plan)",
      "F" },
    { "sizes", 0, 0, G_OPTION_ARG_STRING, &sizes,
      "payload sizes (K, M allowed; default: latency 4 B to 1M in powers of 4, "
      "throughput and mixed 512,128K, bulk 1M,16M, calls 64)",
      "S,S,..." },
    { "clients", 0, 0, G_OPTION_ARG_STRING, &clients,
      "throughput: client threads per point (default 1,2,4,8,16,32,64)", "N,N,..." },
    { "mixed-clients", 0, 0, G_OPTION_ARG_STRING, &mixed_clients,
      "mixed: client threads, a point each (default 4)", "N,N,..." },
    { "ratio", 0, 0, G_OPTION_ARG_INT, &ratio,
      "mixed: percent of calls to the latency function (default 50)", "PCT" },
    { "duration", 'd', 0, G_OPTION_ARG_DOUBLE, &duration,
      "throughput, mixed: seconds of calls per point; bulk: per column (default 2)", "S" },
    { "iterations", 'n', 0, G_OPTION_ARG_INT, &iterations,
      "latency: measured calls per size below 64 KB (default 200)", "N" },
    { "large-iterations", 'N', 0, G_OPTION_ARG_INT, &large_iterations,
      "latency: measured calls per size from 64 KB (default 50)", "N" },
    { "warmup", 'w', 0, G_OPTION_ARG_INT, &warmup,
      "unmeasured calls before each measurement, per connection (default 10)", "N" },
    { "rounds", 0, 0, G_OPTION_ARG_INT, &rounds,
      "latency: each size's calls are made in N rounds, a block of every function per round, "
      "so that the host's load falls on all alike (default 10)",
      "N" },
    { "load-rounds", 0, 0, G_OPTION_ARG_INT, &load_rounds,
      "throughput, mixed, bulk: each point's --duration is split into N rounds, the columns "
      "taking turns, a round each (default 4)",
      "N" },
    { "calls", 0, 0, G_OPTION_ARG_INT, &calls, "calls: how many (default 1000)", "N" },
    { "connections", 0, 0, G_OPTION_ARG_STRING, &connections,
      "scale: open connections at each point, ascending (default 16,256,1024)", "N,N,..." },
    { "server-pid", 0, 0, G_OPTION_ARG_INT, &server_pid,
      "scale: the server's process id, whose memory (/proc/PID/status) is measured too", "PID" },
    { "csv", 0, 0, G_OPTION_ARG_FILENAME, &csv, "also write the figures to FILE as CSV", "FILE" },
    { NULL }
  };
  GOptionContext *context;
  GError *error = NULL;
  SuiteOptions o = { 0 };
  gchar *base = g_path_get_basename (argv[0]), *summary;
  gint atb = -1;
  int status;

  for (guint i = 0; i < G_N_ELEMENTS (atb_programs); i++)
    if (g_strcmp0 (base, atb_programs[i].name) == 0)
      atb = (gint) i;
  g_free (base);
  if (atb >= 0)
  {
    prog = atb_programs[atb].name;
    /* the other parts' options stay accepted, as for thrift-rdma-suite, but unlisted */
    for (guint i = 0; entries[i].long_name != NULL; i++)
    {
      g_autofree gchar *word = g_strdup_printf (" %s ", entries[i].long_name);

      if (strstr (atb_common, word) == NULL && strstr (atb_programs[atb].options, word) == NULL)
        entries[i].flags |= G_OPTION_FLAG_HIDDEN;
    }
    summary = g_strdup_printf (
        "%s\n\nStart the server (the same program), then measure:\n"
        "  %s --server tcp://:9091 --server rdma://10.77.0.1:9092 &\n"
        "  %s --rdma rdma://10.77.0.1:9092 --tcp tcp://10.77.0.1:9091\n"
        "The rsocket column: a server of its own and a client process, both under\n"
        "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/rsocket/librspreload.so (the server a thread per\n"
        "connection: in pool mode, whose poller waits in librspreload's poll, calls stalled):\n"
        "  %s --server tcp://:9097 --server-mode per-connection &\n"
        "  %s --rsocket tcp://10.77.0.1:9097\n"
        "tcp:// is stock ThriftSocket with framed transports. Tables go to stdout, progress to\n"
        "stderr, CSV to --csv. bench/run-all runs it all in the soft-RoCE guest.",
        atb_programs[atb].summary, prog, prog, prog, prog);
  }
  else
    summary = g_strdup (
        "Start the server, then one measurement at a time:\n"
        "  thrift-rdma-suite --server tcp://:9091 --server rdma://10.77.0.1:9092 &\n"
        "  thrift-rdma-suite --run latency --rdma rdma://10.77.0.1:9092 --tcp "
        "tcp://10.77.0.1:9091\n"
        "latency: one call at a time per function and size, with the protocol used and the verbs\n"
        "counters per RPC; throughput: N client threads, a connection each, for --duration per\n"
        "point; mixed: a latency and a throughput function called at random by --mixed-clients\n"
        "threads (HatRPC Sec. 5.3); hybrid: units of --mix-small small calls hinted transport =\n"
        "rdma and one bulk call hinted transport = tcp (sizes: small,bulk; default 64,1M) over\n"
        "--hybrid, --rdma and --tcp in turns; bulk: one client echoes large binaries in each\n"
        "mode of bulk transfer (issue 10: copy, bulk, bulk-unpipelined, default, served by\n"
        "--bulk-server on consecutive ports) with the same buffer every call or a new one;\n"
        "scale: one process opens --connections connections, with connect time, memory per\n"
        "connection (and the server's, given --server-pid) and the time of a call on each in\n"
        "turn; calls: --calls calls and one CSV row of counters (for strace).\n"
        "tcp:// is stock ThriftSocket with framed transports; --rsocket measures one as the\n"
        "rsocket column, this process and its server under LD_PRELOAD of librspreload. Called as\n"
        "atb_lat, atb_thr or atb_mix, it is --run latency, throughput or mixed. Tables go to\n"
        "stdout, progress to stderr, CSV to --csv. bench/run-all runs it all in the soft-RoCE\n"
        "guest.");
  context = g_option_context_new (atb >= 0 ? "- a part of the Apache Thrift Benchmarks"
                                           : "- the RDMA transport's benchmark suite");
  g_option_context_set_summary (context, summary);
  g_free (summary);
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
  {
    fprintf (stderr, "%s: %s (try --help)\n", prog, error->message);
    return 2;
  }
  g_option_context_free (context);
  signal (SIGPIPE, SIG_IGN);
  if (atb >= 0 && servers == NULL && bulk_server == NULL)
  {
    if (run != NULL && g_strcmp0 (run, atb_programs[atb].part) != 0)
      return usage_error ("--run names another part than this program measures");
    g_free (run);
    run = g_strdup (atb_programs[atb].part);
  }

  if ((servers == NULL && bulk_server == NULL) == (run == NULL))
    return usage_error ("give --server URI... (or --bulk-server URI) or --run WHAT");
  if (servers != NULL || bulk_server != NULL)
  {
    ThriftThreadedServerMode mode;
    GObject *processor;

    if (!bench_parse_server_mode (server_mode, &mode))
      return usage_error ("--server-mode must be pool or per-connection");
    if (bulk_server != NULL && !add_bulk_servers (&servers, bulk_server))
      return 2;
    if (servers == NULL || servers[0] == NULL)
    {
      fprintf (stderr, "%s: no server to start: this build refuses every bulk mode\n", prog);
      return 1;
    }
    processor = suite_processor_new ();
    status = bench_serve (servers, mode, processor, prog);
    g_object_unref (processor);
    g_strfreev (servers);
    return status;
  }

  if (iterations < 1 || large_iterations < 1 || warmup < 0 || calls < 0 || rounds < 1
      || load_rounds < 1 || ratio < 0 || ratio > 100 || mix_small < 0 || mix_units < 1
      || !(duration > 0 && duration <= 3600))
    return usage_error ("iterations, rounds and load-rounds must be at least 1, "
                        "warmup and calls at least 0, ratio 0 to 100 and duration above 0 (at "
                        "most 3600 s)");
  o.iterations = (guint) iterations;
  o.large_iterations = (guint) large_iterations;
  o.warmup = (guint) warmup;
  o.rounds = (guint) rounds;
  o.load_rounds = (guint) load_rounds;
  o.mix_small = (guint) mix_small;
  o.mix_units = (guint) mix_units;
  o.hybrid_uri = hybrid;
  o.calls = (guint) calls;
  o.ratio = (guint) ratio;
  o.duration = duration;
  o.rdma_uri = rdma;
  o.tcp_uri = tcp;
  o.rsocket_uri = rsocket;
  o.client_uri = client;
  o.function = function ? function : "echo_plan";
  o.functions = functions ? g_strsplit (functions, ",", -1) : default_functions ();
  o.bulk_uri = bulk;
  o.bulk_modes = bulk_modes ? g_strsplit (bulk_modes, ",", -1) : NULL;
  for (guint i = 0; o.bulk_modes != NULL && o.bulk_modes[i] != NULL; i++)
    if (suite_bulk_mode_find (o.bulk_modes[i]) < 0)
    {
      fprintf (stderr, "%s: no bulk mode '%s' (copy, bulk, bulk-unpipelined)\n", prog,
               o.bulk_modes[i]);
      return 2;
    }
  o.columns = columns ? g_strsplit (columns, ",", -1) : NULL;
  for (guint i = 0; o.columns != NULL && o.columns[i] != NULL; i++)
    if (!suite_throughput_column_known (o.columns[i]))
    {
      g_autofree gchar *known = suite_throughput_column_list ();

      fprintf (stderr, "%s: no throughput column '%s' (%s)\n", prog, o.columns[i], known);
      return 2;
    }
  o.sizes = g_array_new (FALSE, FALSE, sizeof (guint64));
  o.clients = g_array_new (FALSE, FALSE, sizeof (guint64));
  o.mixed_clients = g_array_new (FALSE, FALSE, sizeof (guint64));
  o.connections = g_array_new (FALSE, FALSE, sizeof (guint64));
  o.server_pid = server_pid;
  if (sizes == NULL)
    sizes = g_strdup (g_strcmp0 (run, "latency") == 0  ? "4,16,64,256,1K,4K,16K,64K,256K,1M"
                      : g_strcmp0 (run, "calls") == 0  ? "64"
                      : g_strcmp0 (run, "bulk") == 0   ? "1M,16M"
                      : g_strcmp0 (run, "hybrid") == 0 ? "64,1M"
                                                       : "512,128K");
  if (!bench_parse_list (sizes, TRUE, o.sizes, &error)
      || !bench_parse_list (clients ? clients : "1,2,4,8,16,32,64", FALSE, o.clients, &error)
      || !bench_parse_list (mixed_clients ? mixed_clients : "4", FALSE, o.mixed_clients, &error)
      || !bench_parse_list (connections ? connections : "16,256,1024", FALSE, o.connections,
                            &error))
  {
    fprintf (stderr, "%s: %s\n", prog, error->message);
    return 2;
  }
  for (guint i = 1; i < o.connections->len; i++)
    if (g_array_index (o.connections, guint64, i) <= g_array_index (o.connections, guint64, i - 1))
      return usage_error ("--connections must ascend: each point opens more connections");
  for (guint i = 0; o.functions[i] != NULL; i++)
    if (suite_function_find (o.functions[i]) == NULL)
    {
      fprintf (stderr, "%s: no echo function '%s' in bench/suite.thrift\n", prog, o.functions[i]);
      return 2;
    }
  if (suite_function_find (o.function) == NULL)
  {
    fprintf (stderr, "%s: no echo function '%s' in bench/suite.thrift\n", prog, o.function);
    return 2;
  }
  /* Under librspreload every socket of the process is an rsocket: a tcp:// column there would
   * be rsocket under another name, and the rsocket column needs the preload. */
  if (rsocket != NULL || rdma != NULL || tcp != NULL || hybrid != NULL)
  {
    const gchar *wrong = NULL;

    if (rsocket != NULL && !g_str_has_prefix (rsocket, "tcp://"))
      wrong = "--rsocket takes a tcp:// URI (stock ThriftSocket, which librspreload carries)";
    else if (rsocket != NULL && g_strcmp0 (run, "latency") != 0
             && g_strcmp0 (run, "throughput") != 0 && g_strcmp0 (run, "mixed") != 0)
      wrong = "--rsocket is a column of latency, throughput and mixed only";
    else if (rsocket != NULL && (rdma != NULL || tcp != NULL || hybrid != NULL))
      wrong = "--rsocket goes alone: under librspreload the other columns' sockets would be "
              "rsockets too; measure them in another process";
    else if (rsocket != NULL && !under_rspreload ())
      wrong = "--rsocket: this process is not under LD_PRELOAD of librspreload, so its sockets "
              "are plain TCP; run it as LD_PRELOAD=/usr/lib/x86_64-linux-gnu/rsocket/"
              "librspreload.so (librdmacm1), the server too";
    else if (rsocket == NULL && under_rspreload ())
      wrong = "this process runs under librspreload, so every socket is an rsocket: give "
              "--rsocket URI alone, and --rdma, --tcp or --hybrid in a process without it";
    if (wrong != NULL)
    {
      fprintf (stderr, "%s: %s\n", prog, wrong);
      return 2;
    }
  }
  if (csv != NULL && (o.csv = fopen (csv, "w")) == NULL)
  {
    fprintf (stderr, "%s: cannot write %s: %s\n", prog, csv, g_strerror (errno));
    return 2;
  }

  if (g_strcmp0 (run, "calls") == 0)
    status = client ? suite_run_calls (&o) : usage_error ("--run calls needs --client URI");
  else if (g_strcmp0 (run, "bulk") == 0)
  {
    if (bulk == NULL)
      status = usage_error ("--run bulk needs --bulk URI");
    else if (!suite_bulk_base_check (bulk, FALSE, &error))
    {
      fprintf (stderr, "%s: --bulk: %s\n", prog, error->message);
      g_clear_error (&error);
      status = 2;
    }
    else
      status = suite_run_bulk (&o);
  }
  else if (rdma == NULL && tcp == NULL && hybrid == NULL && rsocket == NULL)
    status = usage_error ("give --rdma URI, --tcp URI or both (and --hybrid URI for hybrid), or "
                          "--rsocket URI");
  else if (g_strcmp0 (run, "hybrid") == 0)
    status = suite_run_hybrid (&o);
  else if (g_strcmp0 (run, "scale") == 0)
    status = server_pid < 0 ? usage_error ("--server-pid must be a process id")
                            : suite_run_scale (&o);
  else if (g_strcmp0 (run, "latency") == 0)
    status = suite_run_latency (&o);
  else if (g_strcmp0 (run, "throughput") == 0)
    status = suite_run_throughput (&o);
  else if (g_strcmp0 (run, "mixed") == 0)
    status = suite_run_mixed (&o);
  else
    status = usage_error ("--run takes latency, throughput, mixed, hybrid, bulk, scale or calls");

  if (o.csv != NULL && fclose (o.csv) != 0)
  {
    fprintf (stderr, "%s: writing %s: %s\n", prog, csv, g_strerror (errno));
    status = 1;
  }
  g_strfreev (o.functions);
  g_strfreev (o.bulk_modes);
  g_strfreev (o.columns);
  g_array_free (o.sizes, TRUE);
  g_array_free (o.clients, TRUE);
  g_array_free (o.mixed_clients, TRUE);
  g_array_free (o.connections, TRUE);
  return status;
}
