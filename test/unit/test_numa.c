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
 * test_numa.c: NUMA binding on the host, without verbs.  The decision (rdma_numa.h) on
 * machines made up for the test: a hint beats the property, the property beats none, a
 * node the machine lacks is an error for the property and a warning (once per set) for a
 * hint, a machine with one node (or without NUMA support) takes node 0; explain lines say
 * the node; the numa-node property of both shells, checked at open and listen before
 * anything else; the URI option.  Then the binding on this machine: a buffer's memory
 * policy after rdma_numa_place (get_mempolicy), and a thread's CPUs after
 * rdma_numa_bind_thread (sched_getaffinity against the node's cpulist in sysfs).
 */
/* sched_setaffinity and the CPU_* macros */
#define _GNU_SOURCE
#include "config.h"

#include <numaif.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <glib.h>
#include <thrift/c_glib/transport/thrift_hints.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_rdma_explain.h>
#include <thrift/c_glib/transport/thrift_server_rdma.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "lib/c_glib/transport/rdma/rdma_machine.h"
#include "lib/c_glib/transport/rdma/rdma_numa.h"
#include "numa_test_util.h"

static void
machine_of (RdmaMachine *m, const gint *nodes, guint n)
{
  rdma_machine_fake_nodes (m, TRUE, nodes, n);
}

static ThriftHintSet
hint_numa (const gchar *function, guint32 numa)
{
  return (ThriftHintSet){
    .version = THRIFT_HINT_SET_VERSION,
    .service = "Kv",
    .function = function,
    .side = THRIFT_HINT_SIDE_CLIENT,
    .set = THRIFT_HINT_HAS_NUMA,
    .numa = numa,
  };
}

static void
assert_contains (const gchar *text, const gchar *part)
{
  if (text == NULL || strstr (text, part) == NULL)
    g_error ("'%s' does not say '%s'", text ? text : "(null)", part);
}

/* ---- the decision ---- */

static void
test_nodes_text (void)
{
  static const gint one[] = { 0 }, two[] = { 0, 1 }, holes[] = { 0, 2, 3, 5 };
  RdmaMachine m;
  g_autofree gchar *a = NULL, *b = NULL, *c = NULL, *d = NULL;

  machine_of (&m, one, 1);
  a = rdma_machine_nodes_text (&m);
  g_assert_cmpstr (a, ==, "0");
  machine_of (&m, two, 2);
  b = rdma_machine_nodes_text (&m);
  g_assert_cmpstr (b, ==, "0-1");
  machine_of (&m, holes, 4);
  c = rdma_machine_nodes_text (&m);
  g_assert_cmpstr (c, ==, "0,2-3,5");
  g_assert_true (rdma_machine_has_node (&m, 3));
  g_assert_false (rdma_machine_has_node (&m, 1));
  g_assert_false (rdma_machine_has_node (&m, 4));
  g_assert_false (rdma_machine_has_node (&m, 6));
  /* without NUMA support: one node, 0 */
  rdma_machine_fake_nodes (&m, FALSE, NULL, 0);
  d = rdma_machine_nodes_text (&m);
  g_assert_cmpstr (d, ==, "0");
  g_assert_true (rdma_machine_has_node (&m, 0));
  g_assert_false (rdma_machine_has_node (&m, 1));
}

/* A property is -1 or a node of the machine; anything else is an error naming both. */
static void
test_property (void)
{
  static const gint one[] = { 0 }, holes[] = { 0, 2, 3 };
  static const gint bad_on_one[] = { 1, -2, G_MININT, 1024, G_MAXINT };
  RdmaMachine m;
  GError *error = NULL;

  machine_of (&m, one, 1);
  g_assert_true (rdma_numa_check_property (-1, &m, "ThriftRdma", &error));
  g_assert_no_error (error);
  /* a machine with one node accepts 0 */
  g_assert_true (rdma_numa_check_property (0, &m, "ThriftRdma", &error));
  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (bad_on_one); i++)
  {
    g_autofree gchar *says = g_strdup_printf ("ThriftRdma: numa-node %d is not a NUMA node "
                                              "of this machine (its nodes: 0)",
                                              bad_on_one[i]);

    g_assert_false (rdma_numa_check_property (bad_on_one[i], &m, "ThriftRdma", &error));
    g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET);
    assert_contains (error->message, says);
    g_clear_error (&error);
  }
  /* a hole in the numbering is no node */
  machine_of (&m, holes, 3);
  g_assert_true (rdma_numa_check_property (2, &m, "ThriftServerRdma", &error));
  g_assert_false (rdma_numa_check_property (1, &m, "ThriftServerRdma", &error));
  assert_contains (error->message, "ThriftServerRdma: numa-node 1");
  assert_contains (error->message, "its nodes: 0,2-3");
  g_clear_error (&error);
  /* libnuma says no NUMA: node 0 only, and the message says why */
  rdma_machine_fake_nodes (&m, FALSE, NULL, 0);
  g_assert_true (rdma_numa_check_property (0, &m, "ThriftRdma", &error));
  g_assert_false (rdma_numa_check_property (1, &m, "ThriftRdma", &error));
  assert_contains (error->message, "NUMA is not available");
  g_clear_error (&error);
}

/* Hint, else property, else none. */
static void
test_choose (void)
{
  static const gint two[] = { 0, 1 }, one[] = { 0 };
  ThriftHintSet h1 = hint_numa ("get", 1), h5 = hint_numa ("get", 5);
  ThriftHintSet unset = hint_numa ("get", 1);
  RdmaMachine m;
  RdmaNumaChoice c;

  unset.set = 0; /* a numa field without its bit is no hint */
  machine_of (&m, two, 2);

  rdma_numa_choose (NULL, -1, &m, &c);
  g_assert_cmpint (c.node, ==, RDMA_NUMA_NONE);
  g_assert_cmpint (c.by, ==, RDMA_NUMA_BY_NONE);
  g_assert_false (c.hint_ignored);

  rdma_numa_choose (NULL, 1, &m, &c);
  g_assert_cmpint (c.node, ==, 1);
  g_assert_cmpint (c.by, ==, RDMA_NUMA_BY_PROPERTY);

  rdma_numa_choose (&unset, 0, &m, &c);
  g_assert_cmpint (c.node, ==, 0);
  g_assert_cmpint (c.by, ==, RDMA_NUMA_BY_PROPERTY);

  /* the hint beats the property */
  rdma_numa_choose (&h1, 0, &m, &c);
  g_assert_cmpint (c.node, ==, 1);
  g_assert_cmpint (c.by, ==, RDMA_NUMA_BY_HINT);
  rdma_numa_choose (&h1, -1, &m, &c);
  g_assert_cmpint (c.node, ==, 1);
  g_assert_cmpint (c.by, ==, RDMA_NUMA_BY_HINT);

  /* a hint for a node the machine lacks is ignored: the property, else none */
  rdma_numa_choose (&h5, 0, &m, &c);
  g_assert_cmpint (c.node, ==, 0);
  g_assert_cmpint (c.by, ==, RDMA_NUMA_BY_PROPERTY);
  g_assert_true (c.hint_ignored);
  rdma_numa_choose (&h5, -1, &m, &c);
  g_assert_cmpint (c.node, ==, RDMA_NUMA_NONE);
  g_assert_true (c.hint_ignored);

  /* one node: 0 is taken, 1 is not */
  machine_of (&m, one, 1);
  rdma_numa_choose (&h1, -1, &m, &c);
  g_assert_cmpint (c.node, ==, RDMA_NUMA_NONE);
  g_assert_true (c.hint_ignored);
  {
    ThriftHintSet h0 = hint_numa ("get", 0);

    rdma_numa_choose (&h0, -1, &m, &c);
    g_assert_cmpint (c.node, ==, 0);
    g_assert_cmpint (c.by, ==, RDMA_NUMA_BY_HINT);
    /* and so does a machine without NUMA support */
    rdma_machine_fake_nodes (&m, FALSE, NULL, 0);
    rdma_numa_choose (&h0, -1, &m, &c);
    g_assert_cmpint (c.node, ==, 0);
    rdma_numa_choose (&h1, -1, &m, &c);
    g_assert_cmpint (c.node, ==, RDMA_NUMA_NONE);
    g_assert_true (c.hint_ignored);
  }
}

/* Buffers placed on no node are on node 0 of a one-node machine, not on node 1 of two. */
static void
test_buffers_on (void)
{
  static const gint two[] = { 0, 1 }, one[] = { 0 };
  RdmaMachine m;

  machine_of (&m, two, 2);
  g_assert_true (rdma_numa_buffers_on (-1, 0, &m));
  g_assert_true (rdma_numa_buffers_on (1, 1, &m));
  g_assert_false (rdma_numa_buffers_on (1, 0, &m));
  g_assert_false (rdma_numa_buffers_on (1, -1, &m));
  machine_of (&m, one, 1);
  g_assert_true (rdma_numa_buffers_on (0, -1, &m));
  rdma_machine_fake_nodes (&m, FALSE, NULL, 0);
  g_assert_true (rdma_numa_buffers_on (0, -1, &m));
}

/* One warning per set, naming the function, the node and the nodes there are. */
static void
test_warnings (void)
{
  static const gint one[] = { 0 }, two[] = { 0, 1 };
  static ThriftHintSet missing, zero, other, late;
  RdmaMachine m;

  missing = hint_numa ("get", 1);
  zero = hint_numa ("put", 0);
  other = hint_numa ("scan", 7);
  late = hint_numa ("del", 1);
  machine_of (&m, one, 1);
  g_test_expect_message (NULL, G_LOG_LEVEL_WARNING,
                         "ThriftRdma: Kv.get (client side): hint numa = 1 names a NUMA node this "
                         "machine does not have (nodes available: 0); the hint is ignored");
  g_assert_true (rdma_numa_warn_ignored (&missing, &m));
  g_test_assert_expected_messages ();
  g_assert_false (rdma_numa_warn_ignored (&missing, &m)); /* once */
  g_assert_false (rdma_numa_warn_ignored (&zero, &m));    /* 0 is there */
  g_assert_false (rdma_numa_warn_ignored (NULL, &m));

  rdma_machine_fake_nodes (&m, FALSE, NULL, 0);
  g_test_expect_message (NULL, G_LOG_LEVEL_WARNING,
                         "*Kv.scan (client side): hint numa = 7 *(nodes available: 0; libnuma "
                         "says NUMA is not available)*");
  g_assert_true (rdma_numa_warn_ignored (&other, &m));
  g_test_assert_expected_messages ();

  machine_of (&m, two, 2);
  g_test_expect_message (NULL, G_LOG_LEVEL_WARNING,
                         "*Kv.del (client side): hint numa = 1 came after the connection's "
                         "buffers were registered on node 0: the polling thread is bound to "
                         "node 1*");
  g_assert_true (rdma_numa_warn_late (&late, 1, 0));
  g_test_assert_expected_messages ();
  g_assert_false (rdma_numa_warn_late (&late, 1, 0));
}

/* The plan's numa and the explain line's field, on made-up machines. */
static void
test_plan_reason (void)
{
  static const gint two[] = { 0, 1 };
  ThriftHintSet h1 = hint_numa ("get", 1), h9 = hint_numa ("get", 9), plain = hint_numa ("x", 0);
  RdmaMachine m = { .cores = 8, .cores_per_node = 4, .nodes = 2 };
  RdmaPlan p;
  g_autofree gchar *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL;

  plain.set = 0;
  machine_of (&m, two, 2);
  /* explain without a transport: the hint against the machine */
  rdma_plan_make (&h1, THRIFT_RDMA_POLLING_EVENT, RDMA_PLAN_PEER_ANY, &m, &p);
  rdma_numa_plan (&p, &h1, -1, FALSE, -1, &m);
  g_assert_cmpint (p.numa_node, ==, 1);
  a = rdma_plan_describe (&p, &h1);
  assert_contains (a, "; numa: node 1 (numa hint)]");

  rdma_plan_make (&h9, THRIFT_RDMA_POLLING_EVENT, RDMA_PLAN_PEER_ANY, &m, &p);
  rdma_numa_plan (&p, &h9, -1, FALSE, -1, &m);
  g_assert_cmpint (p.numa_node, ==, -1);
  b = rdma_plan_describe (&p, &h9);
  assert_contains (b, "; numa: none (hint numa=9 ignored, nodes here: 0-1)]");

  /* a connection opened with the property on node 0: a set without numa keeps it */
  rdma_plan_make (&plain, THRIFT_RDMA_POLLING_EVENT, RDMA_PLAN_PEER_ANY, &m, &p);
  rdma_numa_plan (&p, &plain, 0, TRUE, 0, &m);
  c = rdma_plan_describe (&p, &plain);
  assert_contains (c, "; numa: node 0 (numa-node property)]");

  /* ... a function's hint for node 1 moves the polling thread only */
  rdma_plan_make (&h1, THRIFT_RDMA_POLLING_EVENT, RDMA_PLAN_PEER_ANY, &m, &p);
  rdma_numa_plan (&p, &h1, 0, TRUE, 0, &m);
  g_assert_cmpint (p.numa_node, ==, 1);
  d = rdma_plan_describe (&p, &h1);
  assert_contains (d, "; numa: node 1 (numa hint; polling thread only, the buffers were "
                      "placed at connect on node 0)]");

  /* no hint, no property */
  rdma_plan_make (NULL, THRIFT_RDMA_POLLING_EVENT, RDMA_PLAN_PEER_ANY, &m, &p);
  rdma_numa_plan (&p, NULL, -1, TRUE, -1, &m);
  e = rdma_plan_describe (&p, NULL);
  assert_contains (e, "; numa: none (no numa hint, no numa-node property)]");
}

/* thrift_rdma_explain_set on this machine: every line says its node or none. */
static void
test_explain_here (void)
{
  RdmaMachine m;
  ThriftHintSet h0 = hint_numa ("get", 0), plain = hint_numa ("put", 0);
  ThriftHintSet beyond = hint_numa ("scan", 1023);
  g_autofree gchar *a = NULL, *b = NULL, *c = NULL;

  plain.set = 0;
  m = *rdma_machine_get ();
  a = thrift_rdma_explain_set (&h0, THRIFT_RDMA_POLLING_EVENT);
  assert_contains (a, "Kv.get client: ");
  assert_contains (a, "; numa: node 0 (numa hint)]");
  b = thrift_rdma_explain_set (&plain, THRIFT_RDMA_POLLING_EVENT);
  assert_contains (b, "; numa: none (no numa hint)]");
  if (!rdma_machine_has_node (&m, 1023))
  {
    c = thrift_rdma_explain_set (&beyond, THRIFT_RDMA_POLLING_EVENT);
    assert_contains (c, "; numa: none (hint numa=1023 ignored, nodes here: ");
  }
}

/* ---- the shells' property and the URI option ---- */

static void
test_properties (void)
{
  ThriftTransport *t = thrift_rdma_new ("127.0.0.1", 9);
  ThriftServerRdma *s = g_object_new (THRIFT_TYPE_SERVER_RDMA, "port", 0, NULL);
  gint node = 42;

  g_object_get (t, "numa-node", &node, NULL);
  g_assert_cmpint (node, ==, -1);
  g_object_get (s, "numa-node", &node, NULL);
  g_assert_cmpint (node, ==, -1);
  /* any number is taken (a bad one is an error at open, not a GObject warning) */
  g_object_set (t, "numa-node", -7, NULL);
  g_object_get (t, "numa-node", &node, NULL);
  g_assert_cmpint (node, ==, -7);
  g_object_set (s, "numa-node", 3, NULL);
  g_object_get (s, "numa-node", &node, NULL);
  g_assert_cmpint (node, ==, 3);
  g_object_unref (t);
  g_object_unref (s);
}

/* A node this machine lacks fails open and listen with the NUMA error, checked before the
 * device (this host has none: a good node gets the no-device error instead). */
static void
test_checked_at_open (void)
{
  RdmaMachine m;
  gint lacking;
  g_autofree gchar *says = NULL;

  m = *rdma_machine_get ();
  lacking = m.numa_available ? m.max_node + 1 : 1;
  says = g_strdup_printf ("numa-node %d is not a NUMA node of this machine", lacking);
  for (guint i = 0; i < 3; i++)
  {
    gint node = i == 0 ? lacking : i == 1 ? -2 : 0;
    ThriftTransport *t = g_object_new (THRIFT_TYPE_RDMA, "hostname", "127.0.0.1", "port", 9,
                                       "numa-node", node, "connect-timeout", 200, NULL);
    ThriftServerTransport *s = g_object_new (THRIFT_TYPE_SERVER_RDMA, "port", 0, "numa-node", node,
                                             NULL);
    GError *e1 = NULL, *e2 = NULL;

    g_assert_false (thrift_transport_open (t, &e1));
    g_assert_false (thrift_server_transport_listen (s, &e2));
    g_assert_nonnull (e1);
    g_assert_nonnull (e2);
    g_test_message ("numa-node %d: open: %s; listen: %s", node, e1->message, e2->message);
    if (node == 0)
    {
      /* accepted: what stops it is the missing device (or, with one, the missing server) */
      g_assert_null (strstr (e1->message, "numa-node"));
      g_assert_null (strstr (e2->message, "numa-node"));
    }
    else
    {
      g_assert_error (e1, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET);
      g_assert_error (e2, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET);
      assert_contains (e1->message, node == lacking ? says : "numa-node -2 is not");
      assert_contains (e1->message, "ThriftRdma: ");
      assert_contains (e2->message, "ThriftServerRdma: ");
      g_assert_false (thrift_transport_is_open (t));
    }
    g_clear_error (&e1);
    g_clear_error (&e2);
    g_object_unref (t);
    g_object_unref (s);
  }
}

static void
test_uri (void)
{
  static const struct
  {
    const gchar *uri;
    gboolean server;
    const gchar *says;
  } bad[] = {
    { "rdma://h:1?numa=-1", FALSE,
      "bad value '-1' for option 'numa'; allowed: a NUMA node, 0 to 1023" },
    { "rdma://:1?numa=1024", TRUE, "bad value '1024' for option 'numa'" },
    { "rdma://h:1?numa=first", FALSE, "bad value 'first' for option 'numa'" },
    { "rdma://h:1?numa", FALSE, "option 'numa' has no value" },
    { "tcp://h:1?numa=0", FALSE, "option 'numa' does not apply to tcp://" },
  };
  ThriftTransportUri *u;
  ThriftTransport *t;
  ThriftServerTransport *s;
  GError *error = NULL;
  gchar *text;
  gint node = -5;

  u = thrift_transport_uri_parse ("rdma://h:1?numa=1&polling=busy", FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (u->numa_node, ==, 1);
  text = thrift_transport_uri_describe (u);
  g_assert_cmpstr (text, ==, "rdma h:1 (ThriftRdma, polling=busy, numa=1)");
  g_free (text);
  thrift_transport_uri_free (u);
  u = thrift_transport_uri_parse ("rdma://h:1", FALSE, &error);
  g_assert_cmpint (u->numa_node, ==, -1);
  thrift_transport_uri_free (u);

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
  {
    g_assert_null (thrift_transport_uri_parse (bad[i].uri, bad[i].server, &error));
    g_assert_error (error, THRIFT_TRANSPORT_URI_ERROR, THRIFT_TRANSPORT_URI_ERROR_OPTION);
    assert_contains (error->message, bad[i].says);
    assert_contains (error->message, bad[i].uri);
    g_clear_error (&error);
  }

  /* the option reaches the property, on both sides */
  t = thrift_transport_new_for_uri ("rdma://127.0.0.1:9?numa=3", &error);
  g_assert_no_error (error);
  g_object_get (t, "numa-node", &node, NULL);
  g_assert_cmpint (node, ==, 3);
  g_object_unref (t);
  t = thrift_transport_new_for_uri ("rdma://127.0.0.1:9", &error);
  g_object_get (t, "numa-node", &node, NULL);
  g_assert_cmpint (node, ==, -1);
  g_object_unref (t);
  s = thrift_server_transport_new_for_uri ("rdma://:9?numa=2", NULL, NULL, &error);
  g_assert_no_error (error);
  g_object_get (s, "numa-node", &node, NULL);
  g_assert_cmpint (node, ==, 2);
  g_object_unref (s);
}

/* ---- the binding, on this machine ---- */

static cpu_set_t start_cpus; /* the process's CPUs before any test bound a thread */

typedef struct
{
  gint node;
  cpu_set_t before, after, again;
  gboolean ok, ok_again;
} BindRun;

/* On a fresh thread (the binding is remembered per thread): narrowed to its first CPU,
 * bound, narrowed again and bound again (remembered: nothing done). */
static gpointer
bind_main (gpointer data)
{
  BindRun *r = data;

  numa_test_narrow (&start_cpus);
  sched_getaffinity (0, sizeof r->before, &r->before);
  r->ok = rdma_numa_bind_thread (r->node, NULL);
  sched_getaffinity (0, sizeof r->after, &r->after);
  numa_test_narrow (&start_cpus);
  r->ok_again = rdma_numa_bind_thread (r->node, NULL);
  sched_getaffinity (0, sizeof r->again, &r->again);
  return NULL;
}

static void
test_bind_thread (void)
{
  BindRun r = { .node = 0 }, none = { .node = RDMA_NUMA_NONE };
  cpu_set_t want;
  RdmaMachine m;

  m = *rdma_machine_get ();
  if (!m.numa_available || !numa_test_node_cpus (0, &start_cpus, &want))
  {
    g_test_skip ("no NUMA support or no node0/cpulist here");
    return;
  }
  g_thread_join (g_thread_new ("bind", bind_main, &r));
  g_assert_true (r.ok);
  g_test_message ("node 0: %d CPUs; the thread had %d, then %d", CPU_COUNT (&want),
                  CPU_COUNT (&r.before), CPU_COUNT (&r.after));
  g_assert_true (CPU_EQUAL (&r.after, &want));
  if (CPU_COUNT (&want) > 1)
    g_assert_false (CPU_EQUAL (&r.before, &r.after)); /* it did change something */
  /* the second time for the same node is the pointer compare only */
  g_assert_true (r.ok_again);
  g_assert_true (CPU_EQUAL (&r.again, &r.before));

  /* no node: the thread is left alone */
  g_thread_join (g_thread_new ("bind none", bind_main, &none));
  g_assert_true (none.ok);
  g_assert_true (CPU_EQUAL (&none.after, &none.before));
}

/* A buffer placed on node 0 has the policy "preferred node 0" and its pages are there; one
 * placed on no node keeps the default policy. */
static void
test_place (void)
{
  const gsize len = 3 * (gsize) sysconf (_SC_PAGESIZE);
  RdmaMachine m;
  guint8 *placed, *plain;
  unsigned long mask[RDMA_MACHINE_MAX_NODES / (8 * sizeof (unsigned long))];
  int mode = -1, node = -1;

  m = *rdma_machine_get ();
  if (!m.numa_available)
  {
    g_test_skip ("no NUMA support here");
    return;
  }
  placed = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  plain = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  g_assert_true (placed != MAP_FAILED && plain != MAP_FAILED);
  rdma_numa_place (placed, len, 0);
  rdma_numa_place (plain, len, RDMA_NUMA_NONE);
  memset (placed, 1, len);
  memset (plain, 1, len);
  for (gsize off = 0; off < len; off += len / 3)
  {
    memset (mask, 0, sizeof mask);
    g_assert_cmpint (
        get_mempolicy (&mode, mask, RDMA_MACHINE_MAX_NODES + 1, placed + off, MPOL_F_ADDR), ==, 0);
    g_assert_cmpint (mode, ==, MPOL_PREFERRED);
    g_assert_cmpuint (mask[0], ==, 1);
    g_assert_cmpint (get_mempolicy (&node, NULL, 0, placed + off, MPOL_F_NODE | MPOL_F_ADDR), ==,
                     0);
    g_assert_cmpint (node, ==, 0);
    g_assert_cmpint (get_mempolicy (&mode, NULL, 0, plain + off, MPOL_F_ADDR), ==, 0);
    g_assert_cmpint (mode, ==, MPOL_DEFAULT);
  }
  munmap (placed, len);
  munmap (plain, len);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  sched_getaffinity (0, sizeof start_cpus, &start_cpus);

  g_test_add_func ("/numa/decide/nodes_text", test_nodes_text);
  g_test_add_func ("/numa/decide/property", test_property);
  g_test_add_func ("/numa/decide/choose", test_choose);
  g_test_add_func ("/numa/decide/buffers_on", test_buffers_on);
  g_test_add_func ("/numa/decide/warnings", test_warnings);
  g_test_add_func ("/numa/explain/plan", test_plan_reason);
  g_test_add_func ("/numa/explain/here", test_explain_here);
  g_test_add_func ("/numa/shells/properties", test_properties);
  g_test_add_func ("/numa/shells/checked_at_open", test_checked_at_open);
  g_test_add_func ("/numa/uri", test_uri);
  g_test_add_func ("/numa/bind/thread", test_bind_thread);
  g_test_add_func ("/numa/bind/place", test_place);
  return g_test_run ();
}
