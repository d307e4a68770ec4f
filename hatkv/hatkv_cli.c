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

/* hatkv-cli: get, put, multi-get and multi-put on a HatKV server from the command line. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <thrift/c_glib/transport/thrift_rdma_explain.h>

#include "kv_client.h"

#define PROG "hatkv-cli"
#define DEFAULT_URI "rdma://10.77.0.1:9100"

static gboolean show_protocols;

/* A value as text when it is printable ASCII, else as hex:... */
static void
print_value (const GByteArray *v)
{
  gboolean text = TRUE;

  for (guint i = 0; i < v->len && text; i++)
    text = g_ascii_isprint (v->data[i]) || v->data[i] == '\t';
  if (text)
    fwrite (v->data, 1, v->len, stdout);
  else
  {
    printf ("hex:");
    for (guint i = 0; i < v->len; i++)
      printf ("%02x", v->data[i]);
  }
}

static GByteArray *
bytes (const gchar *text)
{
  GByteArray *b = g_byte_array_new ();

  if (g_strcmp0 (text, "-") == 0)
  {
    guint8 buf[65536];
    size_t n;
    while ((n = fread (buf, 1, sizeof buf, stdin)) > 0)
      g_byte_array_append (b, buf, n);
  }
  else
    g_byte_array_append (b, (const guint8 *) text, strlen (text));
  return b;
}

/* Exit status of a call: 0 done, 1 missing or refused, 3 broken. */
static int
report (KvConn *c, KvCallResult r, GError *error, const gchar *what)
{
  if (show_protocols)
    fprintf (stderr, "%s: %s: request by %s, reply by %s\n", PROG, what, c->request_proto,
             c->reply_proto);
  switch (r)
  {
  case KV_CALL_OK:
    return 0;
  case KV_CALL_MISSING:
    fprintf (stderr, "%s: %s: not found\n", PROG, what);
    return 1;
  case KV_CALL_REFUSED:
    fprintf (stderr, "%s: %s: %s\n", PROG, what, error->message);
    return 1;
  default:
    fprintf (stderr, "%s: %s failed: %s\n", PROG, what,
             error != NULL ? error->message : "(no reason given)");
    return 3;
  }
}

int
main (int argc, char **argv)
{
  gchar *uri = NULL, *variant_name = NULL, *names = kv_variant_names ();
  gboolean explain = FALSE;
  GOptionEntry entries[] = {
    { "transport", 't', 0, G_OPTION_ARG_STRING, &uri,
      "the server: tcp://HOST:PORT, rdma://HOST:PORT[?OPTIONS] or hybrid://... "
      "(default " DEFAULT_URI ")",
      "URI" },
    { "variant", 'v', 0, G_OPTION_ARG_STRING, &variant_name,
      "the variant the server serves there (default function)", "NAME" },
    { "protocols", 'P', 0, G_OPTION_ARG_NONE, &show_protocols,
      "say on stderr which protocol carried each request and reply", NULL },
    { "explain", 'e', 0, G_OPTION_ARG_NONE, &explain,
      "print what ThriftRdma chooses for each function of the variant, and why; no call", NULL },
    { NULL }
  };
  GOptionContext *context = g_option_context_new ("COMMAND [ARGUMENTS] - use a HatKV store");
  const KvVariant *variant;
  GError *error = NULL;
  KvConn *c;
  gchar *summary;
  int status = 0;

  summary = g_strdup_printf (
      "Commands:\n"
      "  get KEY                 print KEY's value (printable text as is, else hex:...)\n"
      "  put KEY VALUE           store VALUE (- reads it from stdin) under KEY\n"
      "  multi-get KEY...        print KEY<TAB>VALUE for each key, (missing) for one not there\n"
      "  multi-put KEY VALUE...  store each pair, all or none\n"
      "Exit status: 0 done, 1 not found or refused by the server, 2 bad usage, 3 the call\n"
      "failed (e.g. no server). Variants: %s.",
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
  variant = kv_variant_find (variant_name != NULL ? variant_name : "function");
  if (variant == NULL)
  {
    fprintf (stderr, PROG ": no variant %s (variants: %s)\n", variant_name, names);
    return 2;
  }
  if (explain)
  {
    gchar *text = thrift_rdma_explain_sets (variant->hint_sets, THRIFT_RDMA_DEFAULT_POLLING);
    printf ("%s\n", text);
    g_free (text);
    return 0;
  }
  if (argc < 2 || (g_strcmp0 (argv[1], "get") == 0 && argc != 3)
      || (g_strcmp0 (argv[1], "put") == 0 && argc != 4)
      || (g_strcmp0 (argv[1], "multi-get") == 0 && argc < 3)
      || (g_strcmp0 (argv[1], "multi-put") == 0 && (argc < 4 || argc % 2 != 0)))
  {
    fprintf (stderr, PROG ": want get KEY, put KEY VALUE, multi-get KEY... or multi-put KEY "
                          "VALUE... (try --help)\n");
    return 2;
  }
  if (strcmp (argv[1], "get") != 0 && strcmp (argv[1], "put") != 0
      && strcmp (argv[1], "multi-get") != 0 && strcmp (argv[1], "multi-put") != 0)
  {
    fprintf (stderr, PROG ": no command %s (try --help)\n", argv[1]);
    return 2;
  }

  if ((c = kv_conn_open (variant, uri != NULL ? uri : DEFAULT_URI, &error)) == NULL)
  {
    fprintf (stderr, PROG ": %s\n", error->message);
    return 3;
  }
  if (strcmp (argv[1], "get") == 0)
  {
    GByteArray *key = bytes (argv[2]), *value = NULL;
    KvCallResult r = kv_conn_get (c, key, &value, &error);
    status = report (c, r, error, "get");
    if (status == 0)
    {
      print_value (value);
      printf ("\n");
    }
    if (value != NULL)
      g_byte_array_unref (value);
    g_byte_array_unref (key);
  }
  else if (strcmp (argv[1], "put") == 0)
  {
    GByteArray *key = bytes (argv[2]), *value = bytes (argv[3]);
    KvCallResult r = kv_conn_put (c, key, value, &error);
    status = report (c, r, error, "put");
    g_byte_array_unref (key);
    g_byte_array_unref (value);
  }
  else
  {
    gboolean get = strcmp (argv[1], "multi-get") == 0;
    GPtrArray *keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_byte_array_unref);
    GPtrArray *values = g_ptr_array_new_with_free_func ((GDestroyNotify) g_byte_array_unref);
    GPtrArray *got = NULL;

    for (int i = 2; i < argc; i += get ? 1 : 2)
    {
      g_ptr_array_add (keys, bytes (argv[i]));
      if (!get)
        g_ptr_array_add (values, bytes (argv[i + 1]));
    }
    if (get)
    {
      KvCallResult r = kv_conn_multi_get (c, keys, &got, &error);
      status = report (c, r, error, "multi-get");
      for (guint i = 0; status == 0 && i < keys->len; i++)
      {
        const GByteArray *v = got->pdata[i];
        print_value (keys->pdata[i]);
        printf ("\t");
        if (v->len == 0)
          printf ("(missing)");
        else
          print_value (v);
        printf ("\n");
      }
    }
    else
    {
      KvCallResult r = kv_conn_multi_put (c, keys, values, &error);
      status = report (c, r, error, "multi-put");
    }
    if (got != NULL)
      g_ptr_array_unref (got);
    g_ptr_array_unref (keys);
    g_ptr_array_unref (values);
  }
  g_clear_error (&error);
  kv_conn_free (c);
  g_free (uri);
  g_free (variant_name);
  g_free (names);
  return status;
}
