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
 * hatkv-server: serves HatKV (hatkv.thrift) from one LMDB store, each variant it is asked for
 * on a URI of its own, until SIGINT or SIGTERM.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <glib.h>
#include <thrift/c_glib/server/thrift_server_uri.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "kv_store.h"
#include "kv_tuning.h"
#include "kv_variant.h"

#define PROG "hatkv-server"
#define DEFAULT_URI "rdma://:9100"

/* what the scripts wait for */
static void
on_listening (ThriftThreadedServer *server, const gchar *uri, gpointer data)
{
  printf ("listening on %s\n", uri);
  fflush (stdout);
}

/* --server-mode's value (NULL: pool) by the mode's nick: pool or per-connection. */
static gboolean
parse_mode (const gchar *text, ThriftThreadedServerMode *mode)
{
  GEnumClass *modes = g_type_class_ref (THRIFT_TYPE_THREADED_SERVER_MODE);
  GEnumValue *v = g_enum_get_value_by_nick (modes, text != NULL ? text : "pool");

  if (v != NULL)
    *mode = v->value;
  g_type_class_unref (modes);
  return v != NULL;
}

/* A byte count with an optional K, M or G (powers of 1024). */
static gboolean
parse_bytes (const gchar *text, guint64 *out)
{
  gchar *end = NULL;
  guint64 v = g_ascii_strtoull (text, &end, 10);
  guint shift = 0;

  if (end == text)
    return FALSE;
  switch (*end)
  {
  case 'K':
  case 'k':
    shift = 10;
    end++;
    break;
  case 'M':
  case 'm':
    shift = 20;
    end++;
    break;
  case 'G':
  case 'g':
    shift = 30;
    end++;
    break;
  default:
    break;
  }
  if (*end != '\0' || v == 0 || v > (G_MAXUINT64 >> shift))
    return FALSE;
  *out = v << shift;
  return TRUE;
}

int
main (int argc, char **argv)
{
  gchar **listens = NULL, *uri = NULL, *variant_name = NULL, *path = NULL, *map_text = NULL;
  gchar *sync_text = NULL, *mode_text = NULL, *names = kv_variant_names ();
  gint max_readers = 0;
  GOptionEntry entries[] = {
    { "transport", 't', 0, G_OPTION_ARG_STRING, &uri,
      "where to serve --variant: tcp://[HOST]:PORT, rdma://[HOST]:PORT[?OPTIONS] or "
      "hybrid://... (default " DEFAULT_URI " when no --listen)",
      "URI" },
    { "variant", 'v', 0, G_OPTION_ARG_STRING, &variant_name,
      "the variant served on --transport (default function)", "NAME" },
    { "listen", 'l', 0, G_OPTION_ARG_STRING_ARRAY, &listens,
      "serve VARIANT on URI as well (repeatable), e.g. herd=rdma://:9103", "VARIANT=URI" },
    { "path", 'p', 0, G_OPTION_ARG_FILENAME, &path,
      "the LMDB environment's directory (default ./hatkv-data; made if missing)", "DIR" },
    { "sync", 's', 0, G_OPTION_ARG_STRING, &sync_text,
      "commit strategy: durable, group or nosync (default: from the hints)", "HOW" },
    { "map-size", 0, 0, G_OPTION_ARG_STRING, &map_text,
      "LMDB map size, e.g. 4G (default: from the hints)", "BYTES" },
    { "max-readers", 0, 0, G_OPTION_ARG_INT, &max_readers,
      "concurrent reads LMDB allows (default: from the hints)", "N" },
    { "server-mode", 0, 0, G_OPTION_ARG_STRING, &mode_text,
      "pool (a pool of workers, the default) or per-connection (a thread each)", "MODE" },
    { NULL }
  };
  GOptionContext *context = g_option_context_new ("- serve HatKV from an LMDB store");
  GError *error = NULL;
  GPtrArray *uris = g_ptr_array_new_with_free_func (g_free);
  GPtrArray *variants = g_ptr_array_new ();
  GPtrArray *processors = g_ptr_array_new_with_free_func (g_object_unref);
  ThriftThreadedServerMode mode;
  KvTuning tuning;
  KvStoreStats stats;
  KvStore *store;
  GString *why = g_string_new (NULL);
  gchar *summary;
  int status;

  summary = g_strdup_printf (
      "Serves the HatKV key-value store (hatkv/hatkv.thrift: get, put, multi_get, multi_put)\n"
      "from one LMDB environment. Each variant is a service of its own with its own hints\n"
      "(HatRPC paper Sec. 5.4); all share the store. Variants: %s.\n\n"
      "The store's tuning comes from the hints of the first variant served (kv_tuning.h):\n"
      "the writes' perf_goal picks the commit strategy (latency: durable, throughput: group,\n"
      "res_util: nosync), the concurrency hint the max readers, the payload sizes of the writes\n"
      "the map size. durable and group acknowledge a write after it is synced to disk; nosync\n"
      "survives the server's death but not the machine's. SIGINT or SIGTERM stops it.",
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
  if (argc > 1)
  {
    fprintf (stderr, PROG ": unexpected argument %s (try --help)\n", argv[1]);
    return 2;
  }

  if (uri != NULL || variant_name != NULL || listens == NULL)
  {
    const KvVariant *v = kv_variant_find (variant_name != NULL ? variant_name : "function");
    if (v == NULL)
    {
      fprintf (stderr, PROG ": no variant %s (variants: %s)\n", variant_name, names);
      return 2;
    }
    g_ptr_array_add (variants, (gpointer) v);
    g_ptr_array_add (uris, g_strdup (uri != NULL ? uri : DEFAULT_URI));
  }
  for (guint i = 0; listens != NULL && listens[i] != NULL; i++)
  {
    gchar **pair = g_strsplit (listens[i], "=", 2);
    const KvVariant *v = pair[0] != NULL ? kv_variant_find (pair[0]) : NULL;

    if (v == NULL || pair[1] == NULL || pair[1][0] == '\0')
    {
      fprintf (stderr, PROG ": --listen %s: want VARIANT=URI with VARIANT one of %s\n", listens[i],
               names);
      return 2;
    }
    g_ptr_array_add (variants, (gpointer) v);
    g_ptr_array_add (uris, g_strdup (pair[1]));
    g_strfreev (pair);
  }
  for (guint i = 0; i < variants->len; i++)
  {
    const KvVariant *v = variants->pdata[i];
    if (v->tcp_only && !g_str_has_prefix (uris->pdata[i], "tcp://"))
    {
      fprintf (stderr,
               PROG ": variant %s is stock Thrift over TCP: its URI must be tcp://, "
                    "not %s\n",
               v->name, (gchar *) uris->pdata[i]);
      return 2;
    }
  }
  if (!parse_mode (mode_text, &mode))
  {
    fprintf (stderr, PROG ": --server-mode must be pool or per-connection\n");
    return 2;
  }

  kv_tuning_from_hints (((const KvVariant *) variants->pdata[0])->hint_sets, variants->len, &tuning,
                        why);
  if (sync_text != NULL && g_strcmp0 (sync_text, "auto") != 0)
  {
    if (!kv_sync_parse (sync_text, &tuning.sync))
    {
      fprintf (stderr, PROG ": --sync must be auto, durable, group or nosync, not %s\n", sync_text);
      return 2;
    }
    g_string_append_printf (why, "sync %s: --sync\n", sync_text);
  }
  if (map_text != NULL)
  {
    if (!parse_bytes (map_text, &tuning.map_size) || tuning.map_size < (1 << 20))
    {
      fprintf (stderr, PROG ": --map-size must be at least 1M, not %s\n", map_text);
      return 2;
    }
    g_string_append_printf (why, "map size %s: --map-size\n", map_text);
  }
  if (max_readers != 0)
  {
    if (max_readers < 1 || max_readers > 65536)
    {
      fprintf (stderr, PROG ": --max-readers must be 1 to 65536\n");
      return 2;
    }
    tuning.max_readers = (guint) max_readers;
    g_string_append_printf (why, "max readers %d: --max-readers\n", max_readers);
  }

  if (path == NULL)
    path = g_strdup ("hatkv-data");
  if ((store = kv_store_open (path, &tuning, &error)) == NULL)
  {
    fprintf (stderr, PROG ": %s\n", error->message);
    return 1;
  }
  kv_store_get_tuning (store, &tuning);
  printf ("store %s: sync %s, max readers %u, map size %" G_GUINT64_FORMAT " bytes "
          "(tuned from %s)\n",
          path, kv_sync_name (tuning.sync), tuning.max_readers, tuning.map_size,
          ((const KvVariant *) variants->pdata[0])->service);
  {
    gchar **lines = g_strsplit (why->str, "\n", -1);
    for (guint i = 0; lines[i] != NULL; i++)
      if (lines[i][0] != '\0')
        printf ("  %s\n", lines[i]);
    g_strfreev (lines);
  }
  for (guint i = 0; i < variants->len; i++)
  {
    const KvVariant *v = variants->pdata[i];
    printf ("variant %s (%s, service %s) on %s\n", v->name, v->label, v->service,
            (gchar *) uris->pdata[i]);
    g_ptr_array_add (processors, kv_variant_new_processor (v, store));
  }
  fflush (stdout);

  g_ptr_array_add (uris, NULL);
  status = thrift_server_serve_uris ((gchar **) uris->pdata, (GObject **) processors->pdata, mode,
                                     &(ThriftServeOptions){ .listening = on_listening }, &error);
  if (status == THRIFT_SERVE_STOPPED)
    printf ("servers stopped\n");
  else
    fprintf (stderr, PROG ": %s%s\n", status == THRIFT_SERVE_FAILED ? "server: " : "",
             error->message);
  g_clear_error (&error);
  g_ptr_array_unref (processors);
  kv_store_get_stats (store, &stats);
  printf ("store: %" G_GUINT64_FORMAT " keys read, %" G_GUINT64_FORMAT
          " written in %" G_GUINT64_FORMAT " commits (at most %" G_GUINT64_FORMAT
          " writes in one)\n",
          stats.gets, stats.puts, stats.commits, stats.batches_max);
  kv_store_close (store);
  g_string_free (why, TRUE);
  g_ptr_array_unref (uris);
  g_ptr_array_unref (variants);
  g_strfreev (listens);
  g_free (uri);
  g_free (variant_name);
  g_free (path);
  g_free (map_text);
  g_free (sync_text);
  g_free (mode_text);
  g_free (names);
  return status;
}
