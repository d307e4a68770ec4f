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
 * test_bulk_props.c: the bulk transfer properties (bulk-threshold, bulk-chunk, bulk-depth,
 * rcache-entries, rcache-bytes) of the four shells and their URI options, on the host.
 * What a client's open and a server's accept give the engine carries what was set, down to
 * an accepted connection over the in-memory provider; a setting on an accepted ThriftRdma
 * reaches its connection; the hybrids have the same five; values out of range are refused,
 * by GObject with a warning naming the property and by the URI parser with an error naming
 * the option and its range; a message's payload_size hint beats the threshold, and a
 * threshold of 0 lends nothing.  ASan/UBSan as test_loopback.
 */
#include "config.h"

#include <string.h>

#include <glib.h>
#include <thrift/c_glib/thrift_configuration.h>
#include <thrift/c_glib/transport/thrift_hybrid.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_server_hybrid.h>
#include <thrift/c_glib/transport/thrift_server_rdma.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "lib/c_glib/transport/rdma/rdma_bulk_msg.h"
#include "lib/c_glib/transport/rdma/rdma_call_policy.h"
#include "lib/c_glib/transport/rdma/rdma_conn_private.h"
#include "lib/c_glib/transport/rdma/rdma_resources.h"
#include "lib/c_glib/transport/rdma/rdma_transport.h"
#include "fake_verbs.h"

/* Values unlike every default, so that a setting lost on the way shows. */
typedef struct
{
  guint threshold, chunk, depth, entries;
  guint64 bytes;
} Bulk;

static const Bulk set_a = { 32768, 65536, 2, 8, 4u << 20 };
static const Bulk set_b = { 20000, 8192, 7, 3, 1u << 20 };

static void
set_bulk (gpointer object, const Bulk *b)
{
  g_object_set (object, "bulk-threshold", b->threshold, "bulk-chunk", b->chunk, "bulk-depth",
                b->depth, "rcache-entries", b->entries, "rcache-bytes", b->bytes, NULL);
}

static void
assert_props (gpointer object, const Bulk *b)
{
  Bulk got;

  g_object_get (object, "bulk-threshold", &got.threshold, "bulk-chunk", &got.chunk, "bulk-depth",
                &got.depth, "rcache-entries", &got.entries, "rcache-bytes", &got.bytes, NULL);
  g_assert_cmpuint (got.threshold, ==, b->threshold);
  g_assert_cmpuint (got.chunk, ==, b->chunk);
  g_assert_cmpuint (got.depth, ==, b->depth);
  g_assert_cmpuint (got.entries, ==, b->entries);
  g_assert_cmpuint (got.bytes, ==, b->bytes);
}

static void
assert_settings (const RdmaConnSettings *s, const Bulk *b)
{
  g_assert_cmpuint (s->bulk_chunk, ==, b->chunk);
  g_assert_cmpuint (s->bulk_depth, ==, b->depth);
  g_assert_cmpuint (s->rcache_entries, ==, b->entries);
  g_assert_cmpuint (s->rcache_bytes, ==, b->bytes);
}

/* The four shells have the five, with the engine's defaults: clients lend fields of 16 KiB
 * and more, servers none. */
static void
test_defaults (void)
{
  const Bulk defaults = { RDMA_BULK_DEFAULT_THRESHOLD, RDMA_BULK_DEFAULT_CHUNK,
                          RDMA_BULK_DEFAULT_DEPTH, RDMA_BULK_DEFAULT_RCACHE_ENTRIES,
                          RDMA_BULK_DEFAULT_RCACHE_BYTES };
  GObject *objects[] = {
    g_object_new (THRIFT_TYPE_RDMA, NULL),
    g_object_new (THRIFT_TYPE_SERVER_RDMA, NULL),
    g_object_new (THRIFT_TYPE_HYBRID, NULL),
    g_object_new (THRIFT_TYPE_SERVER_HYBRID, NULL),
  };
  RdmaConnSettings engine;

  /* the engine's own defaults, for connections made without a shell, are the same */
  rdma_conn_settings_init (&engine, 1u << 20, THRIFT_RDMA_POLLING_BUSY);
  assert_settings (&engine, &defaults);
  g_assert_cmpuint (RDMA_BULK_DEFAULT_THRESHOLD, ==, 16u << 10);
  g_assert_cmpuint (RDMA_BULK_SERVER_DEFAULT_THRESHOLD, ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (objects); i++)
  {
    Bulk expected = defaults;
    /* servers lend no reply unless told (rdma_bulk_msg.h: generated processors) */
    if (G_TYPE_CHECK_INSTANCE_TYPE (objects[i], THRIFT_TYPE_SERVER_TRANSPORT))
      expected.threshold = RDMA_BULK_SERVER_DEFAULT_THRESHOLD;
    assert_props (objects[i], &expected);
    set_bulk (objects[i], &set_a);
    assert_props (objects[i], &set_a);
    g_object_unref (objects[i]);
  }
}

/* Out of range: GObject refuses the value (a warning that names the property) and the
 * property keeps what it had. */
static void
test_out_of_range (void)
{
  static const struct
  {
    const gchar *name;
    guint64 bad;
  } cases[] = {
    { "rcache-entries", 0 },  { "rcache-entries", 65537 },
    { "rcache-bytes", 4095 }, { "rcache-bytes", (G_GUINT64_CONSTANT (1) << 40) + 1 },
    { "bulk-chunk", 4095 },   { "bulk-depth", 0 },
    { "bulk-depth", 129 },
  };
  GType types[] = { THRIFT_TYPE_RDMA, THRIFT_TYPE_SERVER_RDMA, THRIFT_TYPE_HYBRID,
                    THRIFT_TYPE_SERVER_HYBRID };

  for (guint t = 0; t < G_N_ELEMENTS (types); t++)
  {
    GObject *o = g_object_new (types[t], NULL);
    set_bulk (o, &set_a);
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      GParamSpec *spec = g_object_class_find_property (G_OBJECT_GET_CLASS (o), cases[i].name);
      GValue v = G_VALUE_INIT;
      g_autofree gchar *pattern = g_strdup_printf ("*out of range for property '%s'*",
                                                   cases[i].name);

      g_assert_nonnull (spec);
      g_value_init (&v, spec->value_type);
      if (spec->value_type == G_TYPE_UINT64)
        g_value_set_uint64 (&v, cases[i].bad);
      else
        g_value_set_uint (&v, (guint) cases[i].bad);
      g_test_expect_message ("GLib-GObject", G_LOG_LEVEL_WARNING, pattern);
      g_object_set_property (o, cases[i].name, &v);
      g_test_assert_expected_messages ();
      g_value_unset (&v);
    }
    assert_props (o, &set_a);
    g_object_unref (o);
  }
}

/* What a client's open hands the engine. */
static void
test_client_settings (void)
{
  ThriftRdma *t = g_object_new (THRIFT_TYPE_RDMA, "hostname", "127.0.0.1", "port", 9, NULL);
  RdmaConnSettings s;

  set_bulk (t, &set_a);
  thrift_rdma_settings_of (t, &s);
  assert_settings (&s, &set_a);
  set_bulk (t, &set_b);
  thrift_rdma_settings_of (t, &s);
  assert_settings (&s, &set_b);
  g_object_unref (t);
}

/* What a server's accept hands the engine, down to the accepted connection, and what the
 * ThriftRdma it hands out says; a setting on that ThriftRdma reaches its connection. */
static void
test_accepted (void)
{
  ThriftConfiguration *conf = g_object_new (THRIFT_TYPE_CONFIGURATION, NULL);
  ThriftServerRdma *server = g_object_new (THRIFT_TYPE_SERVER_RDMA, "port", 0, "configuration",
                                           conf, NULL);
  ThriftRdma *client = g_object_new (THRIFT_TYPE_RDMA, "configuration", conf, NULL);
  struct rdma_cm_id *cid, *sid;
  RdmaConnSettings cs, ss;
  RdmaConn *c = NULL, *s = NULL;
  ThriftRdma *accepted;
  GError *error = NULL;
  RdmaResCounts r;

  set_bulk (server, &set_a);
  set_bulk (client, &set_b);
  thrift_server_rdma_settings_of (server, &ss);
  thrift_rdma_settings_of (client, &cs);
  assert_settings (&ss, &set_a);
  fake_verbs_link (&cid, &sid);
  if (!rdma_conn_pair (cid, sid, &cs, &ss, &c, &s, &error))
    g_error ("pair: %s", error->message);
  /* each end of the connection has its own side's */
  assert_settings (&s->settings, &set_a);
  assert_settings (&c->settings, &set_b);
  accepted = thrift_server_rdma_wrap_accepted (server, s);
  assert_props (accepted, &set_a);
  assert_settings (&s->settings, &set_a);
  /* no field was lent or pulled yet: the cache is not made, all of it still applies */
  g_assert_null (s->bulk);
  set_bulk (accepted, &set_b);
  assert_settings (&s->settings, &set_b);
  g_object_unref (accepted); /* closes and frees @s */
  rdma_conn_free (c);
  rdma_res_counts (&r);
  g_assert_cmpint (r.qps + r.cqs + r.mrs + r.pds, ==, 0);
  fake_verbs_assert_clean ();
  g_object_unref (client);
  g_object_unref (server);
  g_object_unref (conf);
}

/* The size from which a field is lent (rdma_call_policy.h): the payload_size hint of the
 * message's set (its set_hints, else the default set), else the bulk-threshold property,
 * by measurement until the user sets it; nothing is lent with a threshold of 0, whatever the
 * hint says. */
static void
test_threshold_by_hint (void)
{
  static const ThriftHintSet plain = { .version = THRIFT_HINT_SET_VERSION };
  static const ThriftHintSet service = { .version = THRIFT_HINT_SET_VERSION,
                                         .set = THRIFT_HINT_HAS_PAYLOAD_SIZE,
                                         .payload_size = 65536 };
  static const ThriftHintSet function = { .version = THRIFT_HINT_SET_VERSION,
                                          .set = THRIFT_HINT_HAS_PAYLOAD_SIZE,
                                          .payload_size = 8192 };
  RdmaCallPolicy p = { 0 };
  GValue v = G_VALUE_INIT;

  rdma_call_policy_init (&p);
  g_assert_cmpuint (rdma_call_policy_bulk_threshold (&p), ==, RDMA_BULK_DEFAULT_THRESHOLD);
  g_assert_cmpint (rdma_call_policy_bulk_way (&p), ==, RDMA_BULK_LEND_MEASURED);
  p.hints = &service;
  g_assert_cmpuint (rdma_call_policy_bulk_threshold (&p), ==, 65536);
  p.msg_hints = &function; /* as set_hints does */
  g_assert_cmpuint (rdma_call_policy_bulk_threshold (&p), ==, 8192);
  /* sent: the next message goes by the default set until its set_hints */
  rdma_call_policy_sent (&p);
  g_assert_null (p.msg_hints);
  g_assert_cmpuint (rdma_call_policy_bulk_threshold (&p), ==, 65536);
  /* the message's set without the hint: the property's, not the default set's hint */
  p.msg_hints = &plain;
  g_assert_cmpuint (rdma_call_policy_bulk_threshold (&p), ==, RDMA_BULK_DEFAULT_THRESHOLD);
  /* set by the user (the threshold is the first of the bulk properties) */
  g_value_init (&v, G_TYPE_UINT);
  g_value_set_uint (&v, 20000);
  g_assert_true (rdma_bulk_props_set (1, 1, &p.bulk, &v));
  g_assert_cmpuint (rdma_call_policy_bulk_threshold (&p), ==, 20000);
  g_assert_cmpint (rdma_call_policy_bulk_way (&p), ==, RDMA_BULK_LEND);
  p.msg_hints = &function;
  g_assert_cmpuint (rdma_call_policy_bulk_threshold (&p), ==, 8192);
  g_value_set_uint (&v, 0);
  g_assert_true (rdma_bulk_props_set (1, 1, &p.bulk, &v));
  g_assert_cmpuint (rdma_call_policy_bulk_threshold (&p), ==, 0);
  p.msg_hints = NULL;
  g_assert_cmpuint (rdma_call_policy_bulk_threshold (&p), ==, 0);

  /* a server's accepted connection at its default: never lends, stages from the client's
   * default threshold or the hint; set (to 0 as well), lends by the threshold or never */
  rdma_bulk_props_init (&p.bulk, TRUE);
  g_assert_cmpint (rdma_call_policy_bulk_way (&p), ==, RDMA_BULK_STAGE_MEASURED);
  g_assert_cmpuint (rdma_call_policy_bulk_threshold (&p), ==, 65536);
  p.hints = NULL;
  g_assert_cmpuint (rdma_call_policy_bulk_threshold (&p), ==, RDMA_BULK_DEFAULT_THRESHOLD);
  p.msg_hints = &function;
  g_assert_cmpuint (rdma_call_policy_bulk_threshold (&p), ==, 8192);
  g_assert_true (rdma_bulk_props_set (1, 1, &p.bulk, &v));
  g_assert_cmpint (rdma_call_policy_bulk_way (&p), ==, RDMA_BULK_LEND);
  g_assert_cmpuint (rdma_call_policy_bulk_threshold (&p), ==, 0);
  rdma_call_policy_clear (&p);
  g_assert_null (p.plans);
}

/* The URI options: rdma:// only, each onto its property, ranges the properties'. */
static void
test_uri (void)
{
  static const struct
  {
    const gchar *uri;
    gboolean server;
    const gchar *says;
  } bad[] = {
    { "rdma://h:1?rcache_entries=0", FALSE,
      "bad value '0' for option 'rcache_entries'; allowed: 1 to 65536 registrations" },
    { "rdma://h:1?rcache_entries=65537", FALSE, "allowed: 1 to 65536" },
    { "rdma://:1?rcache_entries=x", TRUE, "bad value 'x' for option 'rcache_entries'" },
    { "rdma://h:1?rcache_bytes=4095", FALSE,
      "bad value '4095' for option 'rcache_bytes'; allowed: 4096 to 1099511627776 bytes" },
    { "rdma://:1?rcache_bytes=1099511627777", TRUE, "allowed: 4096 to 1099511627776" },
    { "rdma://h:1?rcache_bytes=-1", FALSE, "bad value '-1' for option 'rcache_bytes'" },
    { "rdma://h:1?bulk_chunk=4095", FALSE,
      "bad value '4095' for option 'bulk_chunk'; allowed: 4096 to" },
    { "rdma://h:1?bulk_depth=129", FALSE, "allowed: 1 to 128 READs in flight" },
    { "rdma://h:1?rcache_entries", FALSE, "option 'rcache_entries' has no value" },
    { "tcp://h:1?rcache_entries=8", FALSE, "option 'rcache_entries' does not apply to tcp://" },
    { "hybrid://h:1?rcache_bytes=65536", FALSE,
      "option 'rcache_bytes' does not apply to hybrid://" },
    { "rdma://h:1?fallback=tcp&rcache_entries=8", FALSE,
      "bulk options do not apply with fallback=tcp" },
    { "rdma://:1?rcache_bytes=65536&fallback=tcp", TRUE,
      "bulk options do not apply with fallback=tcp" },
  };
  ThriftTransport *t;
  ThriftServerTransport *st;
  GError *error = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
  {
    ThriftTransportUri *u = thrift_transport_uri_parse (bad[i].uri, bad[i].server, &error);
    g_assert_null (u);
    g_assert_error (error, THRIFT_TRANSPORT_URI_ERROR, THRIFT_TRANSPORT_URI_ERROR_OPTION);
    if (strstr (error->message, bad[i].says) == NULL)
      g_error ("%s: '%s' does not say '%s'", bad[i].uri, error->message, bad[i].says);
    g_clear_error (&error);
  }
  t = thrift_transport_new_for_uri ("rdma://h:1?bulk=32768&bulk_chunk=65536&bulk_depth=2&"
                                    "rcache_entries=8&rcache_bytes=4194304",
                                    &error);
  g_assert_no_error (error);
  assert_props (t, &set_a);
  g_object_unref (t);
  st = thrift_server_transport_new_for_uri ("rdma://:1?bulk=20000&bulk_chunk=8192&bulk_depth=7&"
                                            "rcache_entries=3&rcache_bytes=1048576",
                                            NULL, NULL, &error);
  g_assert_no_error (error);
  assert_props (st, &set_b);
  g_object_unref (st);
  /* the largest of each range is taken */
  t = thrift_transport_new_for_uri ("rdma://h:1?rcache_entries=65536&rcache_bytes=1099511627776",
                                    &error);
  g_assert_no_error (error);
  {
    guint entries = 0;
    guint64 bytes = 0;
    g_object_get (t, "rcache-entries", &entries, "rcache-bytes", &bytes, NULL);
    g_assert_cmpuint (entries, ==, 65536);
    g_assert_cmpuint (bytes, ==, G_GUINT64_CONSTANT (1) << 40);
  }
  g_object_unref (t);
}

int
main (int argc, char **argv)
{
  gint rc;

  g_test_init (&argc, &argv, NULL);
  fake_verbs_install ();
  g_test_add_func ("/bulk_props/defaults", test_defaults);
  g_test_add_func ("/bulk_props/out_of_range", test_out_of_range);
  g_test_add_func ("/bulk_props/client_settings", test_client_settings);
  g_test_add_func ("/bulk_props/accepted", test_accepted);
  g_test_add_func ("/bulk_props/uri", test_uri);
  g_test_add_func ("/bulk_props/threshold_by_hint", test_threshold_by_hint);
  rc = g_test_run ();
  fake_verbs_uninstall ();
  return rc;
}
