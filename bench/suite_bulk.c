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
 * suite_bulk.c: bulk transfer of large fields (issue 10).  One client echoes a binary of S
 * bytes (bulk_echo, no hints) through ThriftRdma, one call at a time, in each mode of the
 * table below (rdma:// URI options that both sides use; each mode's server listens on a port
 * of its own) and with two ways of handing the buffer over: the same GByteArray every call
 * (repeat: a registration of it can be cached) or a new one per call (fresh: new pages,
 * mapped before the call and unmapped after it, so that no registration of an earlier call
 * can serve it).  Every call writes a stamp of its own into each page of the buffer and the
 * echo must bring the stamps back, so a stale registration (old pages) shows as a wrong echo.
 * The columns of one size take turns in rounds (--load-rounds), so the host's load falls on
 * all alike.  Per column: RPC/s, MB/s of payload counting both ways of the echo (2 * S per
 * RPC) over the time spent in calls, latency, and the client connection's counters per RPC,
 * the bulk and registration-cache ones with them.  A mode whose options this build refuses
 * (before bulk transfer lands: an unknown option) is reported as skipped, not as a failure.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "suite_modes.h"

typedef struct
{
  const gchar *name;
  const gchar *options; /* URI options, the same on both sides */
  const gchar *what;    /* for the legend */
} BulkMode;

/* bulk=16384 spells the default threshold out, so that a build without bulk transfer refuses
 * the mode rather than measuring copies under its name. */
static const BulkMode modes[] = {
  { "copy", "bulk=0", "bulk transfer off: fields copied into the messages, as before issue 10" },
  { "bulk", "bulk=16384",
    "fields from 16 KiB pulled by RDMA READ into the reader's buffer, pipelined (default "
    "bulk_depth and bulk_chunk)" },
  { "bulk-unpipelined", "bulk=16384&bulk_depth=1",
    "the same with one READ in flight: the field registered whole, then read a chunk at a "
    "time" },
  { "default", "",
    "no options on either side: the client lends its fields or copies them, the server stages "
    "its replies' (one copy, pulled by the client) or copies them, each by which measures "
    "cheaper on the device (rdma_lend_cost.h, rdma_bulk_stage.h)" },
};

guint
suite_bulk_n_modes (void)
{
  return G_N_ELEMENTS (modes);
}

const gchar *
suite_bulk_mode_name (guint mode)
{
  g_return_val_if_fail (mode < G_N_ELEMENTS (modes), NULL);
  return modes[mode].name;
}

gint
suite_bulk_mode_find (const gchar *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (modes); i++)
    if (g_strcmp0 (modes[i].name, name) == 0)
      return (gint) i;
  return -1;
}

static gboolean
uri_valid (const gchar *uri, gboolean for_server, GError **error)
{
  ThriftTransportUri *u = thrift_transport_uri_parse (uri, for_server, error);

  if (u == NULL)
    return FALSE;
  thrift_transport_uri_free (u);
  return TRUE;
}

gboolean
suite_bulk_base_check (const gchar *base, gboolean for_server, GError **error)
{
  g_autoptr (ThriftTransportUri) u = thrift_transport_uri_parse (base, for_server, error);

  if (u == NULL)
    return FALSE;
  if (u->scheme != THRIFT_TRANSPORT_URI_RDMA || u->port + G_N_ELEMENTS (modes) - 1 > 65535)
  {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                 "%s: the bulk part needs an rdma:// URI with %u ports free from its port on", base,
                 (guint) G_N_ELEMENTS (modes));
    return FALSE;
  }
  return TRUE;
}

gchar *
suite_bulk_mode_uri (const gchar *base, guint mode, gboolean for_server, const gchar **note,
                     GError **error)
{
  g_autoptr (ThriftTransportUri) u = NULL;
  const gchar *query = strchr (base, '?');
  g_autofree gchar *host = NULL, *prefix = NULL;
  GError *refused = NULL;
  gchar *uri;

  g_return_val_if_fail (mode < G_N_ELEMENTS (modes), NULL);
  if (note != NULL)
    *note = NULL;
  if (!suite_bulk_base_check (base, for_server, error))
    return NULL;
  u = thrift_transport_uri_parse (base, for_server, NULL);
  host = strchr (u->host, ':') != NULL ? g_strdup_printf ("[%s]", u->host) : g_strdup (u->host);
  /* the base's own options first, then the mode's; the prefix ends in '?' or '&' */
  prefix = g_strdup_printf ("rdma://%s:%u?%s%s", host, u->port + mode,
                            query != NULL ? query + 1 : "",
                            query != NULL && query[1] != '\0' ? "&" : "");
  /* (no options of the mode's and none of the base's: the prefix's '?' goes) */
  uri = modes[mode].options[0] != '\0' || query != NULL
            ? g_strconcat (prefix, modes[mode].options, NULL)
            : g_strndup (prefix, strlen (prefix) - 1);
  if (uri_valid (uri, for_server, &refused))
    return uri;
  g_free (uri);
  /* A build from before bulk transfer knows no bulk option and copies every field: that is
   * the copy mode, spelled without the option. */
  if (mode == 0 && strstr (refused->message, "unknown option 'bulk'") != NULL)
  {
    g_error_free (refused);
    if (note != NULL)
      *note = "this build has no bulk transfer (it refuses bulk=0), so no bulk option: every "
              "field is copied";
    return g_strndup (prefix, strlen (prefix) - 1);
  }
  g_propagate_error (error, refused);
  return NULL;
}

/* The counters of the table and the CSV: bench_counter_names, then these. */
static const struct
{
  const gchar *name;
  glong offset;
} bulk_counters[] = {
#define C(f) { #f, G_STRUCT_OFFSET (ThriftRdmaStats, f) },
  C (bulk_sent) C (bulk_received) C (rcache_hits) C (rcache_misses) C (rcache_evictions)
      C (rcache_invalidations)
#undef C
};
enum
{
  K_BULK_SENT = BENCH_N_COUNTERS,
  K_BULK_RECEIVED,
  K_HITS,
  K_MISSES,
  K_EVICTIONS,
  K_INVALIDATIONS,
  N_K
};
G_STATIC_ASSERT (N_K == BENCH_N_COUNTERS + G_N_ELEMENTS (bulk_counters));

static void
counters_now (ThriftRdma *rdma, guint64 k[N_K])
{
  ThriftRdmaStats st;

  thrift_rdma_get_stats (rdma, &st);
  bench_counters_from_stats (&st, k);
  for (guint i = 0; i < G_N_ELEMENTS (bulk_counters); i++)
    k[BENCH_N_COUNTERS + i] = G_STRUCT_MEMBER (guint64, &st, bulk_counters[i].offset);
}

typedef struct
{
  guint mode;
  gchar *uri; /* NULL: skipped */
  const gchar *note;
  gchar *skipped;  /* why: this build refuses the mode's options */
  SuiteConn *conn; /* open while a size is measured; both buffer columns use it */
} Mode;

typedef struct
{
  Mode *m;
  gboolean fresh;
  gchar *error;   /* the first failure at this size */
  GArray *lat;    /* us of each measured call at this size */
  double time_s;  /* in the measured calls */
  guint64 k[N_K]; /* counters over the measured calls */
  const gchar *request_proto, *reply_proto;
  gboolean protocol_changed;
} Column;

static gsize
mapped_length (guint64 size)
{
  gsize page = (gsize) sysconf (_SC_PAGESIZE);

  return (gsize) ((size + page - 1) / page * page);
}

/* A new GByteArray over new anonymous pages: its memory is new to the process (the kernel
 * may hand the same addresses out again, but not the same pages). */
static GByteArray *
fresh_new (guint64 size, GError **error)
{
  void *p = mmap (NULL, mapped_length (size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                  -1, 0);

  if (p == MAP_FAILED)
  {
    g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno),
                 "mmap of %" G_GUINT64_FORMAT " bytes: %s", size, g_strerror (errno));
    return NULL;
  }
  return g_byte_array_new_take (p, (gsize) size);
}

static void
fresh_free (GByteArray *a)
{
  gsize len = mapped_length (a->len);
  guint8 *p = g_byte_array_steal (a, NULL);

  g_byte_array_unref (a);
  munmap (p, len);
}

/* The stamp of call @seq at offset @off: differs per call and per page. */
static guint64
stamp_at (guint64 seq, gsize off)
{
  return (seq + 1) * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15) ^ off;
}

/* Writes call @seq's stamps into @data (@check FALSE) or tells whether @data holds them: 8
 * bytes (fewer at the end) at the start of every page of @len bytes, and the last 8. */
static gboolean
stamps (guint8 *data, gsize len, guint64 seq, gboolean check)
{
  for (gsize off = 0; off < len;)
  {
    guint64 v = stamp_at (seq, off);
    gsize n = MIN (8, len - off);

    if (!check)
      memcpy (data + off, &v, n);
    else if (memcmp (data + off, &v, n) != 0)
      return FALSE;
    if (off + n == len)
      break;
    off = off + 4096 < len - 8 ? off + 4096 : len - 8;
  }
  return TRUE;
}

/* What @data holds instead of call @seq's stamps: the first stamp that differs, and whose it
 * is (an earlier call's, zeros, or neither), so that a wrong echo tells stale memory from
 * memory never written. */
static gchar *
stamps_explain (const guint8 *data, gsize len, guint64 seq)
{
  for (gsize off = 0; off < len;)
  {
    guint64 v = stamp_at (seq, off), got = 0;
    gsize n = MIN (8, len - off);

    if (memcmp (data + off, &v, n) != 0)
    {
      memcpy (&got, data + off, n);
      for (guint64 back = 1; back <= 64 && back <= seq; back++)
      {
        guint64 old = stamp_at (seq - back, off);

        if (memcmp (data + off, &old, n) == 0)
          return g_strdup_printf ("first wrong at byte %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT
                                  ": the stamp of the call %" G_GUINT64_FORMAT " before",
                                  off, len, back);
      }
      return g_strdup_printf ("first wrong at byte %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT
                              ": %s (0x%016" G_GINT64_MODIFIER "x)",
                              off, len, got == 0 ? "zeros" : "no recent call's stamp", got);
    }
    if (off + n == len)
      break;
    off = off + 4096 < len - 8 ? off + 4096 : len - 8;
  }
  return g_strdup ("every stamp right");
}

/* One call on @c's connection with @repeat or a fresh buffer; its time in @us (the buffer's
 * making and unmapping not counted).  FALSE with @c->error set if it failed. */
static gboolean
bulk_call (Column *c, GByteArray *repeat, guint64 size, guint64 seq, double *us)
{
  const SuiteFunction *fn = suite_function_find ("bulk_echo");
  const gchar *label = modes[c->m->mode].name, *request = NULL, *reply = NULL;
  GByteArray *data = repeat, *back = NULL;
  GError *error = NULL;
  double t0;
  gboolean ok;

  if (c->fresh && (data = fresh_new (size, &error)) == NULL)
  {
    c->error = g_strdup_printf ("%s: %s", label, error->message);
    g_error_free (error);
    return FALSE;
  }
  stamps (data->data, data->len, seq, FALSE);
  t0 = bench_now_us ();
  ok = suite_call (c->m->conn, fn, data, &back, &request, &reply, &error);
  *us = bench_now_us () - t0;
  if (!ok)
  {
    c->error = g_strdup_printf ("%s: %s", label, error->message);
    g_error_free (error);
  }
  else if (back == NULL || back->len != data->len || !stamps (back->data, back->len, seq, TRUE))
  {
    g_autofree gchar *why = back == NULL || back->len != data->len
                                ? g_strdup_printf ("%u bytes", back != NULL ? back->len : 0)
                                : stamps_explain (back->data, back->len, seq);

    c->error = g_strdup_printf ("%s: the echo of %u bytes came back wrong (%s; %s buffer, "
                                "call %" G_GUINT64_FORMAT ")",
                                label, data->len, why, c->fresh ? "fresh" : "repeated", seq);
    ok = FALSE;
  }
  else if (c->request_proto == NULL)
  {
    c->request_proto = request;
    c->reply_proto = reply;
  }
  else if (g_strcmp0 (c->request_proto, request) != 0 || g_strcmp0 (c->reply_proto, reply) != 0)
    c->protocol_changed = TRUE;
  if (back != NULL)
    g_byte_array_unref (back);
  if (c->fresh)
    fresh_free (data);
  return ok;
}

/* One round of @c: calls for @seconds (at least one), measured. */
static void
measure_round (Column *c, GByteArray *repeat, guint64 size, double seconds, guint64 *seq)
{
  ThriftRdma *rdma = suite_conn_rdma (c->m->conn);
  guint64 k0[N_K], k1[N_K];
  double start = bench_now_us (), us;

  counters_now (rdma, k0);
  do
  {
    if (!bulk_call (c, repeat, size, (*seq)++, &us))
      break;
    g_array_append_val (c->lat, us);
    c->time_s += us / 1e6;
  } while (bench_now_us () - start < seconds * 1e6);
  counters_now (rdma, k1);
  for (guint i = 0; i < N_K; i++)
    c->k[i] += k1[i] - k0[i];
}

static gboolean
column_runs (const Column *c)
{
  return c->m->conn != NULL && c->error == NULL;
}

static double
column_rate (const Column *c)
{
  return c->time_s > 0 ? c->lat->len / c->time_s : 0;
}

static const gchar *
buffer_name (const Column *c)
{
  return c->fresh ? "fresh" : "repeat";
}

static void
print_row (Column *c, guint64 size)
{
  const gchar *label = modes[c->m->mode].name;
  double d = MAX (c->lat->len, 1), rate = column_rate (c);
  BenchSummary s;
  guint64 *k = c->k;

  printf ("%-16s %-6s ", label, buffer_name (c));
  if (c->m->skipped != NULL)
  {
    printf ("skipped (this build refuses %s)\n", modes[c->m->mode].options);
    return;
  }
  bench_summarize ((double *) c->lat->data, c->lat->len, &s);
  printf ("%7.2f %8.1f %8.2f | %10.0f %6.1f %6.1f %6.1f %6.1f %6.1f | %10.0f %10.0f %5.1f ", rate,
          rate * 2 * size / 1e6, s.p50 / 1e3, k[BENCH_C_COPIED] / d, k[BENCH_C_READS] / d,
          k[BENCH_C_WRITES] / d, k[BENCH_C_SENDS] / d, k[BENCH_C_POST_SEND] / d,
          k[BENCH_C_COMPLETIONS] / d, k[K_BULK_RECEIVED] / d, k[K_BULK_SENT] / d,
          k[BENCH_C_BINDS] / d);
  if (k[K_HITS] + k[K_MISSES] > 0)
    printf ("%4.0f%%", 100.0 * k[K_HITS] / (k[K_HITS] + k[K_MISSES]));
  else
    printf ("%5s", "-");
  printf (" %s/%s%s", c->request_proto ? suite_proto_short (c->request_proto) : "-",
          c->reply_proto ? suite_proto_short (c->reply_proto) : "-",
          c->protocol_changed ? "*" : "");
  if (c->error != NULL)
    printf ("  FAILED: %s", c->error);
  printf ("\n");
}

static void
csv_header (FILE *f)
{
  fputs ("column,buffer,options,uri,transport,size,status,calls,time_s,rpc_per_s,mb_per_s,"
         "mean_us,p50_us,p99_us,request_protocol,reply_protocol,protocol_changed",
         f);
  for (guint i = 0; i < BENCH_N_COUNTERS; i++)
    fprintf (f, ",%s", bench_counter_names[i]);
  for (guint i = 0; i < G_N_ELEMENTS (bulk_counters); i++)
    fprintf (f, ",%s", bulk_counters[i].name);
  fputs (",rcache_hit_rate,note,error\n", f);
}

/* A free text as one CSV field. */
static gchar *
csv_text (const gchar *text)
{
  return g_strdelimit (g_strdup (text ? text : ""), ",\"\n", ';');
}

static void
csv_row (FILE *f, Column *c, guint64 size)
{
  const Mode *m = c->m;
  const gchar *status = m->skipped ? "skipped" : c->error ? "failed" : "ok";
  g_autofree gchar *note = csv_text (m->note);
  g_autofree gchar *error = csv_text (m->skipped ? m->skipped : c->error);
  double rate = column_rate (c);
  BenchSummary s;

  bench_summarize ((double *) c->lat->data, c->lat->len, &s);
  fprintf (f, "%s,%s,%s,%s,rdma,%" G_GUINT64_FORMAT ",%s,%u,%.4f,%.3f,%.3f,%.1f,%.1f,%.1f,%s,%s,%d",
           modes[m->mode].name, buffer_name (c), modes[m->mode].options, m->uri ? m->uri : "", size,
           status, c->lat->len, c->time_s, rate, rate * 2 * size / 1e6, s.mean, s.p50, s.p99,
           c->request_proto ? c->request_proto : "", c->reply_proto ? c->reply_proto : "",
           c->protocol_changed);
  for (guint i = 0; i < N_K; i++)
    if (m->skipped == NULL)
      fprintf (f, ",%" G_GUINT64_FORMAT, c->k[i]);
    else
      fputc (',', f);
  if (m->skipped == NULL && c->k[K_HITS] + c->k[K_MISSES] > 0)
    fprintf (f, ",%.4f", (double) c->k[K_HITS] / (c->k[K_HITS] + c->k[K_MISSES]));
  else
    fputc (',', f);
  fprintf (f, ",%s,%s\n", note, error);
  fflush (f);
}

/* Opens the connections of the modes measured; a failure fails both columns of its mode. */
static void
open_modes (Mode *ms, guint n_modes, Column *cols, guint n_cols)
{
  for (guint i = 0; i < n_modes; i++)
  {
    GError *error = NULL;

    if (ms[i].skipped != NULL)
      continue;
    ms[i].conn = suite_conn_open (ms[i].uri, &error);
    if (ms[i].conn != NULL && suite_conn_rdma (ms[i].conn) == NULL)
    {
      g_set_error_literal (&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                           "not a ThriftRdma connection (fallback?)");
      g_clear_pointer (&ms[i].conn, suite_conn_free);
    }
    if (ms[i].conn == NULL)
    {
      for (guint j = 0; j < n_cols; j++)
        if (cols[j].m == &ms[i])
          cols[j].error = g_strdup_printf ("%s: %s", ms[i].uri, error->message);
      g_error_free (error);
    }
  }
}

int
suite_run_bulk (const SuiteOptions *o)
{
  guint n_modes = 0, n_cols, measured = 0;
  Mode *ms = g_new0 (Mode, G_N_ELEMENTS (modes));
  Column *cols;
  guint64 seq = 0;
  int status = 0;

  /* the modes asked for, in the table's order */
  for (guint i = 0; i < G_N_ELEMENTS (modes); i++)
  {
    GError *error = NULL;

    if (o->bulk_modes != NULL
        && !g_strv_contains ((const gchar *const *) o->bulk_modes, modes[i].name))
      continue;
    ms[n_modes].mode = i;
    ms[n_modes].uri = suite_bulk_mode_uri (o->bulk_uri, i, FALSE, &ms[n_modes].note, &error);
    if (ms[n_modes].uri == NULL)
    {
      ms[n_modes].skipped = g_strdup (error->message);
      g_error_free (error);
    }
    n_modes++;
  }
  n_cols = 2 * n_modes;
  cols = g_new0 (Column, n_cols);
  for (guint i = 0; i < n_cols; i++)
  {
    cols[i].m = &ms[i / 2];
    cols[i].fresh = i % 2;
  }

  printf ("\n== Bulk transfer (issue 10): echo of a binary (bulk_echo, no hints), one call at a "
          "time, %.1f s per column in %u rounds ==\n",
          o->duration, o->load_rounds);
  printf ("modes (their URI options on both sides, each server on a port of its own):\n");
  for (guint i = 0; i < n_modes; i++)
  {
    printf ("  %-16s %-24s %s\n", modes[ms[i].mode].name, modes[ms[i].mode].options,
            modes[ms[i].mode].what);
    if (ms[i].skipped != NULL)
      printf ("  %-16s skipped: %s\n", "", ms[i].skipped);
    else
      printf ("  %-16s %s%s%s\n", "", ms[i].uri, ms[i].note ? ": " : "",
              ms[i].note ? ms[i].note : "");
  }
  printf ("repeat = the same GByteArray every call; fresh = a new one per call over new pages\n"
          "(mmap before the call, munmap after; neither timed). Every call stamps each page and\n"
          "the echo must bring the stamps back. MB/s = payload of both ways of the echo, 2 x S\n"
          "per RPC, over the time in calls (MB = 10^6 B). Per RPC, from the client's connection:\n"
          "copied = bytes copied by the CPU, READs, WRITEs, SENDs, posts = ibv_post_send calls,\n"
          "CQEs = completions, bulk rx = field bytes pulled by READ into the client's buffers,\n"
          "bulk tx = field bytes the server pulled from the client's, binds = memory windows\n"
          "bound, hit%% = registration cache hits / (hits + misses)\n");
  if (o->csv)
    csv_header (o->csv);
  fflush (stdout);

  for (guint s = 0; s < o->sizes->len; s++)
  {
    guint64 size = g_array_index (o->sizes, guint64, s);
    g_autofree gchar *st = bench_size_text (size);
    GByteArray *repeat = g_byte_array_sized_new ((guint) size);

    g_byte_array_set_size (repeat, (guint) size);
    bench_fill (repeat);
    for (guint i = 0; i < n_cols; i++)
    {
      g_clear_pointer (&cols[i].error, g_free);
      g_clear_pointer (&cols[i].lat, g_array_unref);
      cols[i].lat = g_array_new (FALSE, FALSE, sizeof (double));
      cols[i].time_s = 0;
      memset (cols[i].k, 0, sizeof cols[i].k);
      cols[i].request_proto = cols[i].reply_proto = NULL;
      cols[i].protocol_changed = FALSE;
    }
    fprintf (stderr, "bulk: %s: connecting and %u warm-up call(s) per column ...\n", st, o->warmup);
    open_modes (ms, n_modes, cols, n_cols);
    for (guint i = 0; i < n_cols; i++)
    {
      double us;

      for (guint w = 0; w < o->warmup && column_runs (&cols[i]); w++)
        bulk_call (&cols[i], repeat, size, seq++, &us);
    }
    for (guint r = 0; r < o->load_rounds; r++)
      for (guint i = 0; i < n_cols; i++)
      {
        /* each round starts from another column */
        Column *c = &cols[(r + i) % n_cols];

        if (!column_runs (c))
          continue;
        fprintf (stderr, "bulk: %s, %s %s, round %u/%u ...", st, modes[c->m->mode].name,
                 buffer_name (c), r + 1, o->load_rounds);
        measure_round (c, repeat, size, o->duration / o->load_rounds, &seq);
        fprintf (stderr, " %u calls, %.1f MB/s so far%s%s\n", c->lat->len,
                 column_rate (c) * 2 * size / 1e6, c->error ? ", failed: " : "",
                 c->error ? c->error : "");
      }

    printf ("\n%s: %s per call each way\n", st, st);
    printf ("%-16s %-6s %7s %8s %8s | %10s %6s %6s %6s %6s %6s | %10s %10s %5s %5s %s\n", "column",
            "buffer", "RPC/s", "MB/s", "p50 ms", "copied", "READs", "WRITEs", "SENDs", "posts",
            "CQEs", "bulk rx", "bulk tx", "binds", "hit%", "request/reply");
    for (guint i = 0; i < n_cols; i++)
    {
      print_row (&cols[i], size);
      if (o->csv)
        csv_row (o->csv, &cols[i], size);
      if (cols[i].m->skipped == NULL)
      {
        if (cols[i].error != NULL)
          status = 1;
        else
          measured++;
      }
    }
    fflush (stdout);
    for (guint i = 0; i < n_modes; i++)
      g_clear_pointer (&ms[i].conn, suite_conn_free);
    g_byte_array_unref (repeat);
  }
  if (measured == 0)
  {
    fprintf (stderr, "bulk: no column measured\n");
    status = 1;
  }

  for (guint i = 0; i < n_cols; i++)
  {
    g_free (cols[i].error);
    if (cols[i].lat != NULL)
      g_array_unref (cols[i].lat);
  }
  for (guint i = 0; i < n_modes; i++)
  {
    g_free (ms[i].uri);
    g_free (ms[i].skipped);
  }
  g_free (cols);
  g_free (ms);
  return status;
}
