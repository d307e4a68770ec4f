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
 * test_numa_loopback.c: NUMA binding through the engine's own allocation paths, on the host:
 * two connections of one process over the in-memory provider (fake_verbs.h), as
 * test_loopback runs them.  The provider's reg_mr is wrapped so that every buffer the engine
 * registers is looked at as it is registered (get_mempolicy): with a connection on node 0,
 * every one, whichever protocol mapped it (slot pools, transmit buffers, the direct ring,
 * rendezvous buffers, RFP and Batched-Write regions), is "preferred node 0" and on node 0;
 * with none, every one keeps the default policy.  Then two ThriftRdma transports over a pair:
 * the threads that call and serve are bound to node 0's CPUs (sched_getaffinity against
 * sysfs) by the connection's node or by a hint, and a hint naming a node this machine lacks
 * is said once and leaves the thread alone.  Built with ASan/UBSan; nothing may leak.
 */
/* sched_setaffinity and the CPU_* macros */
#define _GNU_SOURCE
#include "config.h"

#include <numaif.h>
#include <sched.h>
#include <string.h>

#include <glib.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/thrift_configuration.h>
#include <thrift/c_glib/transport/thrift_hints.h>
#include <thrift/c_glib/transport/thrift_rdma.h>

/* a white-box test: it makes connections and swaps the verbs table */
#include "lib/c_glib/transport/rdma/rdma_conn_private.h"
#include "lib/c_glib/transport/rdma/rdma_machine.h"
#include "lib/c_glib/transport/rdma/rdma_numa.h"
#include "lib/c_glib/transport/rdma/rdma_proto.h"
#include "lib/c_glib/transport/rdma/rdma_resources.h"
#include "lib/c_glib/transport/rdma/rdma_status.h"
#include "lib/c_glib/transport/rdma/rdma_transport.h"
#include "lib/c_glib/transport/rdma/rdma_verbs.h"
#include "fake_verbs.h"
#include "numa_test_util.h"

#define MAX_MESSAGE (16u << 20)
#define WAIT_S 30

static gint64
deadline (void)
{
  return g_get_monotonic_time () + WAIT_S * G_USEC_PER_SEC;
}

/* ---- every registration, looked at as it happens ---- */

typedef struct
{
  guint regions;        /* registrations seen */
  guint on_node0;       /* policy "preferred node 0", first page on node 0 */
  guint default_policy; /* policy MPOL_DEFAULT */
  gsize bytes;
} Seen;

static GMutex seen_lock;
static Seen seen;
static RdmaVerbs wrapped; /* the fake's table with reg_mr wrapped */
static const RdmaVerbs *fake;

static struct ibv_mr *
looking_reg_mr (struct ibv_pd *pd, void *addr, size_t length, int access)
{
  unsigned long mask[RDMA_MACHINE_MAX_NODES / (8 * sizeof (unsigned long))] = { 0 };
  int mode = -1, node = -1;

  /* as a real reg_mr pins them: the pages come into being now, by the policy set before */
  g_assert_cmpint (get_mempolicy (&mode, mask, RDMA_MACHINE_MAX_NODES + 1, addr, MPOL_F_ADDR), ==,
                   0);
  g_assert_cmpint (get_mempolicy (&node, NULL, 0, addr, MPOL_F_NODE | MPOL_F_ADDR), ==, 0);
  g_mutex_lock (&seen_lock);
  seen.regions++;
  seen.bytes += length;
  if (mode == MPOL_PREFERRED && mask[0] == 1 && node == 0)
    seen.on_node0++;
  if (mode == MPOL_DEFAULT)
    seen.default_policy++;
  g_mutex_unlock (&seen_lock);
  return fake->reg_mr (pd, addr, length, access);
}

static void
seen_reset (void)
{
  g_mutex_lock (&seen_lock);
  memset (&seen, 0, sizeof seen);
  g_mutex_unlock (&seen_lock);
}

static void
assert_clean (void)
{
  RdmaResCounts r;

  rdma_res_counts (&r);
  g_assert_cmpint (r.mrs, ==, 0);
  g_assert_cmpint (r.qps, ==, 0);
  g_assert_cmpint (r.pinned_bytes, ==, 0);
  fake_verbs_assert_clean ();
}

/* ---- a pair and an echo ---- */

typedef struct
{
  RdmaConn *c, *s;
  GThread *echo;
  GError *echo_error;
} Pair;

static void
pair_open (Pair *p, gint numa_node)
{
  RdmaConnSettings cs, ss;
  struct rdma_cm_id *cid, *sid;
  GError *error = NULL;

  memset (p, 0, sizeof *p);
  rdma_conn_settings_init (&cs, MAX_MESSAGE, THRIFT_RDMA_POLLING_EVENT);
  cs.keepalive_ms = 0;
  cs.numa_node = numa_node;
  ss = cs;
  fake_verbs_link (&cid, &sid);
  if (!rdma_conn_pair (cid, sid, &cs, &ss, &p->c, &p->s, &error))
    g_error ("pair: %s", error->message);
  g_assert_cmpint (rdma_conn_numa_node (p->c), ==, numa_node);
}

/* Answers every message with its bytes, by the protocol that carried it, until the client
 * leaves. */
static gpointer
echo_main (gpointer data)
{
  Pair *p = data;

  for (;;)
  {
    RdmaMessage *msg = rdma_conn_wait_message (p->s, deadline (), &p->echo_error);

    if (msg == NULL)
      break;
    rdma_conn_set_tx_proto (p->s, rdma_message_proto (msg));
    if (!rdma_conn_send (p->s, rdma_message_data (msg), rdma_message_len (msg), deadline (),
                         &p->echo_error)
        || !rdma_conn_release_message (p->s, &p->echo_error))
      break;
  }
  return NULL;
}

static void
pair_close (Pair *p)
{
  rdma_conn_free (p->c);
  g_thread_join (p->echo);
  g_assert_error (p->echo_error, RDMA_ENGINE_ERROR, RDMA_ERR_PEER_GONE);
  g_clear_error (&p->echo_error);
  rdma_conn_free (p->s);
  assert_clean ();
}

static void
echo_by (Pair *p, const RdmaProtoOps *ops, gsize len)
{
  guint8 *buf = g_malloc (MAX (len, 1));
  GError *error = NULL;
  RdmaMessage *msg;

  for (gsize j = 0; j < len; j++)
    buf[j] = (guint8) (j * 7 + len);
  rdma_conn_set_tx_proto (p->c, ops);
  if (!rdma_conn_send (p->c, buf, len, deadline (), &error))
    g_error ("%s, %" G_GSIZE_FORMAT " bytes: send: %s", ops->name, len, error->message);
  msg = rdma_conn_wait_message (p->c, deadline (), &error);
  if (msg == NULL)
    g_error ("%s, %" G_GSIZE_FORMAT " bytes: reply: %s", ops->name, len, error->message);
  g_assert_cmpuint (rdma_message_len (msg), ==, len);
  g_assert_true (memcmp (rdma_message_data (msg), buf, len) == 0);
  g_assert_cmpstr (rdma_message_proto (msg)->name, ==, ops->name);
  g_assert_true (rdma_conn_release_message (p->c, &error));
  g_free (buf);
}

/* Every buffer a protocol makes the engine register, on both sides, follows the
 * connection's node (data: the node, as a pointer to gint). */
static void
test_buffers (gconstpointer data)
{
  static const gsize sizes[] = { 100, 70000, 1u << 20 };
  gint node = *(const gint *) data;
  guint before_protocols;
  Pair p;

  seen_reset ();
  pair_open (&p, node);
  /* the send slots of both sides, and the first chunk of the device's shared receive queue
   * (rdma_srq.h) */
  before_protocols = seen.regions;
  g_assert_cmpuint (before_protocols, >=, 3);
  p.echo = g_thread_new ("echo", echo_main, &p);
  for (guint i = 0; i < RDMA_PROTO_COUNT; i++)
  {
    if (rdma_proto_registry[i] == NULL)
      continue;
    for (guint j = 0; j < G_N_ELEMENTS (sizes); j++)
      echo_by (&p, rdma_proto_registry[i], sizes[j]);
  }
  pair_close (&p);
  g_test_message ("numa-node %d: %u registrations (%" G_GSIZE_FORMAT " bytes), %u at connect; "
                  "%u preferred on node 0, %u default policy",
                  node, seen.regions, seen.bytes, before_protocols, seen.on_node0,
                  seen.default_policy);
  /* the protocols registered more than the pools and transmit buffers: the ring, the
   * rendezvous buffers, the RFP and Batched-Write regions went through the check too */
  g_assert_cmpuint (seen.regions, >, before_protocols + 4);
  if (node == 0)
    g_assert_cmpuint (seen.on_node0, ==, seen.regions);
  else
    g_assert_cmpuint (seen.default_policy, ==, seen.regions);
}

/* ---- the threads of two ThriftRdma transports ---- */

static cpu_set_t start_cpus; /* the process's CPUs, before any test bound a thread */

typedef struct
{
  ThriftTransport *t;
  const ThriftHintSet *reply_hints; /* the server's set for its replies (NULL: none) */
  guint calls;
  GError *error;
  cpu_set_t cpus; /* the thread's CPUs after it served */
} Side;

static gpointer
serve_main (gpointer data)
{
  Side *s = data;
  ThriftProtocol *proto = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", s->t, NULL);

  numa_test_narrow (&start_cpus);
  for (guint i = 0; i < s->calls; i++)
  {
    gpointer buf = NULL;
    guint32 len = 0;
    gboolean ok = thrift_protocol_read_binary (proto, &buf, &len, &s->error) >= 0
                  && thrift_transport_read_end (s->t, &s->error);

    if (ok && s->reply_hints != NULL)
      thrift_hint_receiver_set_hints (THRIFT_HINT_RECEIVER (s->t), s->reply_hints);
    ok = ok && thrift_protocol_write_binary (proto, buf, len, &s->error) >= 0
         && thrift_transport_flush (s->t, &s->error)
         && thrift_transport_write_end (s->t, &s->error);
    g_free (buf);
    if (!ok)
      break;
  }
  sched_getaffinity (0, sizeof s->cpus, &s->cpus);
  g_object_unref (proto);
  return NULL;
}

typedef struct
{
  Side *client;
  const ThriftHintSet *call_hints;
} CallRun;

static gpointer
call_main (gpointer data)
{
  CallRun *r = data;
  Side *s = r->client;
  ThriftProtocol *proto = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", s->t, NULL);
  guint8 out[300];

  numa_test_narrow (&start_cpus);
  memset (out, 0x5a, sizeof out);
  for (guint i = 0; i < s->calls; i++)
  {
    gpointer in = NULL;
    guint32 in_len = 0;

    if (r->call_hints != NULL)
      thrift_hint_receiver_set_hints (THRIFT_HINT_RECEIVER (s->t), r->call_hints);
    if (thrift_protocol_write_binary (proto, out, sizeof out, &s->error) < 0
        || !thrift_transport_flush (s->t, &s->error)
        || !thrift_transport_write_end (s->t, &s->error)
        || thrift_protocol_read_binary (proto, &in, &in_len, &s->error) < 0
        || !thrift_transport_read_end (s->t, &s->error))
      break;
    g_assert_cmpuint (in_len, ==, sizeof out);
    g_free (in);
  }
  sched_getaffinity (0, sizeof s->cpus, &s->cpus);
  g_object_unref (proto);
  return NULL;
}

typedef struct
{
  const gchar *name;
  gint conn_node;        /* both connections' node, as a property or server would set it */
  gint call_hint;        /* the client's numa hint (-1: its calls carry no numa) */
  gint reply_hint;       /* the server's */
  gboolean client_bound; /* expected: the calling thread ends on node 0's CPUs */
  gboolean server_bound;
  const gchar *warning; /* expected once, or NULL */
} ThreadCase;

static const ThreadCase thread_cases[] = {
  { "property", 0, -1, -1, TRUE, TRUE, NULL },
  { "none", -1, -1, -1, FALSE, FALSE, NULL },
  /* a hint beats no property; on one node, buffers placed nowhere are on node 0 anyway */
  { "hint", -1, 0, 0, TRUE, TRUE, NULL },
  /* a hint for a node this machine lacks is said once and changes nothing */
  { "missing_node", -1, 1, -1, FALSE, FALSE,
    "*Numa.call (client side): hint numa = 1 names a NUMA node this machine does not have*" },
};

static void
test_threads (gconstpointer data)
{
  const ThreadCase *tc = data;
  ThriftConfiguration *conf = g_object_new (THRIFT_TYPE_CONFIGURATION, "max_message_size",
                                            (gint) MAX_MESSAGE, NULL);
  ThriftHintSet call = {
    .version = THRIFT_HINT_SET_VERSION,
    .service = "Numa",
    .function = "call",
    .side = THRIFT_HINT_SIDE_CLIENT,
    .set = tc->call_hint >= 0 ? THRIFT_HINT_HAS_NUMA : 0,
    .numa = (guint32) MAX (tc->call_hint, 0),
  };
  ThriftHintSet reply = call;
  Side client = { .calls = 20 }, server = { .calls = 20 };
  CallRun run = { &client, &call };
  cpu_set_t node0;
  RdmaMachine m;
  GThread *st;
  Pair p;

  m = *rdma_machine_get ();
  if (!m.numa_available || !numa_test_node_cpus (0, &start_cpus, &node0))
  {
    g_test_skip ("no NUMA support or no node0/cpulist here");
    g_object_unref (conf);
    return;
  }
  if (tc->call_hint > 0 && rdma_machine_has_node (&m, tc->call_hint))
  {
    g_test_skip ("this machine has the node the case expects to be missing");
    g_object_unref (conf);
    return;
  }
  reply.side = THRIFT_HINT_SIDE_SERVER;
  reply.set = tc->reply_hint >= 0 ? THRIFT_HINT_HAS_NUMA : 0;
  reply.numa = (guint32) MAX (tc->reply_hint, 0);
  server.reply_hints = &reply;

  pair_open (&p, tc->conn_node);
  client.t = THRIFT_TRANSPORT (
      thrift_rdma_new_accepted (p.c, conf, NULL, THRIFT_RDMA_POLLING_EVENT, WAIT_S * 1000, 0, 0));
  server.t = THRIFT_TRANSPORT (
      thrift_rdma_new_accepted (p.s, conf, NULL, THRIFT_RDMA_POLLING_EVENT, WAIT_S * 1000, 0, 0));
  if (tc->warning != NULL)
    g_test_expect_message (NULL, G_LOG_LEVEL_WARNING, tc->warning);
  if (m.max_node > 0 && tc->call_hint >= 0 && tc->call_hint != tc->conn_node
      && rdma_machine_has_node (&m, tc->call_hint))
  {
    /* several nodes: buffers placed on no node are not on the hint's for sure */
    g_test_expect_message (NULL, G_LOG_LEVEL_WARNING, "*Numa.call (client side)*came after*");
    g_test_expect_message (NULL, G_LOG_LEVEL_WARNING, "*Numa.call (server side)*came after*");
  }
  st = g_thread_new ("serve", serve_main, &server);
  g_thread_join (g_thread_new ("call", call_main, &run));
  g_thread_join (st);
  g_assert_no_error (client.error);
  g_assert_no_error (server.error);
  g_test_assert_expected_messages ();
  g_test_message ("%s: node 0 has %d CPUs; the client thread ends on %d, the server's on %d",
                  tc->name, CPU_COUNT (&node0), CPU_COUNT (&client.cpus), CPU_COUNT (&server.cpus));
  if (tc->client_bound)
    g_assert_true (CPU_EQUAL (&client.cpus, &node0));
  else
    g_assert_cmpint (CPU_COUNT (&client.cpus), ==, 1); /* as numa_test_narrow left it */
  if (tc->server_bound)
    g_assert_true (CPU_EQUAL (&server.cpus, &node0));
  else
    g_assert_cmpint (CPU_COUNT (&server.cpus), ==, 1);
  thrift_transport_close (client.t, NULL);
  thrift_transport_close (server.t, NULL);
  g_object_unref (client.t);
  g_object_unref (server.t);
  g_object_unref (conf);
  assert_clean ();
}

int
main (int argc, char **argv)
{
  static const gint node0 = 0, none = RDMA_NUMA_NONE;
  RdmaMachine m;
  gint rc;

  g_test_init (&argc, &argv, NULL);
  sched_getaffinity (0, sizeof start_cpus, &start_cpus);
  fake_verbs_install ();
  fake = rdma_verbs;
  wrapped = *fake;
  wrapped.reg_mr = looking_reg_mr;
  rdma_verbs_set (&wrapped);

  m = *rdma_machine_get ();
  if (m.numa_available)
  {
    g_test_add_data_func ("/numa_loopback/buffers/node0", &node0, test_buffers);
    g_test_add_data_func ("/numa_loopback/buffers/none", &none, test_buffers);
  }
  for (guint i = 0; i < G_N_ELEMENTS (thread_cases); i++)
  {
    gchar *path = g_strdup_printf ("/numa_loopback/threads/%s", thread_cases[i].name);

    g_test_add_data_func (path, &thread_cases[i], test_threads);
    g_free (path);
  }
  rc = g_test_run ();
  rdma_verbs_set (NULL);
  return rc;
}
