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
 * test_numa_rdma.c: NUMA binding over real verbs (soft-RoCE in the guest, one NUMA node).
 * A ThriftServerRdma with numa-node 0 and a client from rdma://...?numa=0 echo calls of up
 * to 1 MiB: the kernel's own account (/proc/self/numa_maps) shows mappings "prefer:0" appear
 * with the connections' registered buffers and all go when they close; the threads that
 * called and served run on node 0's CPUs (sched_getaffinity against sysfs); explain names
 * the node.  Node 1, which the guest lacks: numa-node 1 is an error at open and at listen,
 * and a call hinted numa = 1 is said once and still goes through.
 */
/* sched_setaffinity and the CPU_* macros */
#define _GNU_SOURCE
#include "config.h"

#include <string.h>

#include <glib.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_rdma_explain.h>
#include <thrift/c_glib/transport/thrift_server_rdma.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "rdma_test_util.h"
#include "test/unit/numa_test_util.h"

#define CALLS 30

static cpu_set_t start_cpus;

/* The node-1 cases need a machine without node 1 (the guest has one node). */
static gboolean
skip_if_node1 (void)
{
  if (!g_file_test ("/sys/devices/system/node/node1", G_FILE_TEST_EXISTS))
    return FALSE;
  g_test_skip ("this machine has a node 1");
  return TRUE;
}

/* Mappings of this process whose memory policy is "preferred node 0" (numa_maps says
 * "prefer:0"), as the kernel sees them. */
static guint
preferred_node0_mappings (void)
{
  g_autofree gchar *maps = NULL;
  g_auto (GStrv) lines = NULL;
  guint n = 0;

  if (!g_file_get_contents ("/proc/self/numa_maps", &maps, NULL, NULL))
    return 0;
  lines = g_strsplit (maps, "\n", -1);
  for (gchar **l = lines; *l != NULL; l++)
    if (strstr (*l, " prefer:0 ") != NULL)
      n++;
  return n;
}

typedef struct
{
  ThriftServerTransport *server;
  guint calls;
  GError *error;
  cpu_set_t cpus; /* the serving thread's, after it served */
} Serve;

/* Accepts one connection and echoes its binaries, on a thread narrowed to one CPU. */
static gpointer
serve_main (gpointer data)
{
  Serve *s = data;
  ThriftTransport *t;
  ThriftProtocol *p;

  numa_test_narrow (&start_cpus);
  t = thrift_server_transport_accept (s->server, &s->error);
  if (t == NULL)
    return NULL;
  p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
  while (thrift_transport_peek (t, NULL))
  {
    gpointer buf = NULL;
    guint32 len = 0;
    gboolean ok = thrift_protocol_read_binary (p, &buf, &len, &s->error) >= 0
                  && thrift_transport_read_end (t, &s->error)
                  && thrift_protocol_write_binary (p, buf, len, &s->error) >= 0
                  && thrift_transport_flush (t, &s->error)
                  && thrift_transport_write_end (t, &s->error);

    g_free (buf);
    if (!ok)
      break;
    s->calls++;
  }
  sched_getaffinity (0, sizeof s->cpus, &s->cpus);
  g_object_unref (p);
  thrift_transport_close (t, NULL);
  g_object_unref (t);
  return NULL;
}

typedef struct
{
  const gchar *uri;
  const ThriftHintSet *hints; /* of every call (NULL: none) */
  GError *error;
  guint mappings_open; /* preferred-node-0 mappings while connected */
  gchar *explain;      /* thrift_rdma_explain_connection of the calls' set */
  cpu_set_t cpus;
} Call;

static gpointer
call_main (gpointer data)
{
  static const gsize sizes[] = { 1, 300, 5000, 70000, 1u << 20 };
  Call *c = data;
  ThriftTransport *t;

  numa_test_narrow (&start_cpus);
  t = thrift_transport_new_for_uri (c->uri, &c->error);
  if (t == NULL || !thrift_transport_open (t, &c->error))
  {
    g_clear_object (&t);
    return NULL;
  }
  for (guint i = 0; i < CALLS; i++)
  {
    ThriftProtocol *p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);

    if (c->hints != NULL)
      thrift_hints_apply (p, c->hints);
    g_object_unref (p);
    if (!rt_echo (t, sizes[i % G_N_ELEMENTS (sizes)], i, &c->error))
      break;
  }
  c->mappings_open = preferred_node0_mappings ();
  c->explain = thrift_rdma_explain_connection (THRIFT_RDMA (t), c->hints);
  sched_getaffinity (0, sizeof c->cpus, &c->cpus);
  thrift_transport_close (t, NULL);
  g_object_unref (t);
  return NULL;
}

/* One server (numa-node @server_node) and one client (@uri_option) for CALLS calls. */
static void
run (gint server_node, const gchar *uri_option, const ThriftHintSet *hints, Serve *s, Call *c)
{
  GError *error = NULL;
  GThread *st;

  s->server = g_object_new (THRIFT_TYPE_SERVER_RDMA, "hostname", rt_server_addr (), "port", 0,
                            "numa-node", server_node, NULL);
  if (!thrift_server_transport_listen (s->server, &error))
    g_error ("listen: %s", error->message);
  /* bulk=0: the 1 MiB calls go through the connection's own buffers, whose placement this
   * test looks at (a lent field moves between the callers' buffers) */
  c->uri = g_strdup_printf ("rdma://%s:%u?call-timeout=20000&bulk=0%s", rt_server_addr (),
                            thrift_server_rdma_get_port (THRIFT_SERVER_RDMA (s->server)),
                            uri_option);
  c->hints = hints;
  st = g_thread_new ("serve", serve_main, s);
  g_thread_join (g_thread_new ("call", call_main, c));
  g_thread_join (st);
  g_assert_no_error (c->error);
  g_assert_no_error (s->error);
  g_assert_cmpuint (s->calls, ==, CALLS);
  thrift_server_transport_close (s->server, NULL);
  g_object_unref (s->server);
  g_free ((gchar *) c->uri);
}

/* Node 0 on both sides: the buffers are preferred-node-0 mappings while the connections
 * live, and gone after; the threads run on node 0's CPUs. */
static void
test_node0 (void)
{
  gint baseline = rt_live_resources ();
  guint before = preferred_node0_mappings (), after;
  cpu_set_t node0;
  Serve s = { 0 };
  Call c = { 0 };

  if (!numa_test_node_cpus (0, &start_cpus, &node0))
  {
    g_test_skip ("no /sys/devices/system/node/node0/cpulist");
    return;
  }
  run (0, "&numa=0", NULL, &s, &c);
  after = preferred_node0_mappings ();
  g_test_message ("preferred-node-0 mappings: %u before, %u while connected, %u after; node 0 "
                  "has %d CPUs, the client thread ends on %d, the server's on %d",
                  before, c.mappings_open, after, CPU_COUNT (&node0), CPU_COUNT (&c.cpus),
                  CPU_COUNT (&s.cpus));
  g_test_message ("explain: %s", c.explain);
  /* both sides' slot pools and transmit buffers at least */
  g_assert_cmpuint (c.mappings_open, >=, before + 4);
  g_assert_cmpuint (after, ==, before);
  g_assert_true (CPU_EQUAL (&c.cpus, &node0));
  g_assert_true (CPU_EQUAL (&s.cpus, &node0));
  g_assert_nonnull (strstr (c.explain, "; numa: node 0 (numa-node property)]"));
  g_free (c.explain);
  g_assert_true (rt_resources_at_baseline (baseline));
}

/* No node: nothing preferred, the threads left as they were. */
static void
test_none (void)
{
  guint before = preferred_node0_mappings ();
  Serve s = { 0 };
  Call c = { 0 };

  run (-1, "", NULL, &s, &c);
  g_assert_cmpuint (c.mappings_open, ==, before);
  g_assert_cmpint (CPU_COUNT (&c.cpus), ==, 1);
  g_assert_cmpint (CPU_COUNT (&s.cpus), ==, 1);
  g_assert_nonnull (strstr (c.explain, "; numa: none (no numa hint, no numa-node property)]"));
  g_free (c.explain);
}

/* Node 1, which this machine lacks: the property is an error at open and listen. */
static void
test_node1_property (void)
{
  ThriftTransport *t = NULL;
  ThriftServerTransport *s = g_object_new (THRIFT_TYPE_SERVER_RDMA, "hostname", rt_server_addr (),
                                           "port", 0, "numa-node", 1, NULL);
  g_autofree gchar *uri = g_strdup_printf ("rdma://%s:9?numa=1", rt_server_addr ());
  GError *error = NULL;

  if (skip_if_node1 ())
  {
    g_object_unref (s);
    return;
  }
  g_assert_false (thrift_server_transport_listen (s, &error));
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET);
  g_test_message ("listen: %s", error->message);
  g_assert_nonnull (strstr (error->message, "ThriftServerRdma: numa-node 1 is not a NUMA node "
                                            "of this machine (its nodes: 0)"));
  g_clear_error (&error);
  g_assert_cmpuint (thrift_server_rdma_get_port (THRIFT_SERVER_RDMA (s)), ==, 0);
  g_object_unref (s);

  t = thrift_transport_new_for_uri (uri, &error);
  g_assert_no_error (error);
  g_assert_false (thrift_transport_open (t, &error));
  g_test_message ("open: %s", error->message);
  g_assert_nonnull (strstr (error->message, "ThriftRdma: numa-node 1 is not a NUMA node of "
                                            "this machine (its nodes: 0)"));
  g_clear_error (&error);
  g_assert_false (thrift_transport_is_open (t));
  g_object_unref (t);
}

/* A call hinted numa = 1: one warning naming the function, the node and the nodes, and the
 * calls go on as without the hint. */
static void
test_node1_hint (void)
{
  static const ThriftHintSet hint = {
    .version = THRIFT_HINT_SET_VERSION,
    .service = "Numa",
    .function = "far",
    .side = THRIFT_HINT_SIDE_CLIENT,
    .set = THRIFT_HINT_HAS_NUMA,
    .numa = 1,
  };
  Serve s = { 0 };
  Call c = { 0 };

  if (skip_if_node1 ())
    return;
  g_test_expect_message (NULL, G_LOG_LEVEL_WARNING,
                         "ThriftRdma: Numa.far (client side): hint numa = 1 names a NUMA node "
                         "this machine does not have (nodes available: 0); the hint is ignored");
  run (-1, "", &hint, &s, &c);
  g_test_assert_expected_messages ();
  g_assert_cmpint (CPU_COUNT (&c.cpus), ==, 1);
  g_assert_nonnull (strstr (c.explain, "; numa: none (hint numa=1 ignored, nodes here: 0, no "
                                       "numa-node property)]"));
  g_free (c.explain);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  sched_getaffinity (0, sizeof start_cpus, &start_cpus);
  g_test_add_func ("/numa_rdma/node0", test_node0);
  g_test_add_func ("/numa_rdma/none", test_none);
  g_test_add_func ("/numa_rdma/node1/property", test_node1_property);
  g_test_add_func ("/numa_rdma/node1/hint", test_node1_hint);
  return g_test_run ();
}
