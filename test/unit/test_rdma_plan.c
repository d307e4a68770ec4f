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
 * Host-side tests of the protocol and polling plan (rdma_plan.c) and of the explain API
 * (thrift_rdma_explain.c).  The expected values are HatRPC's table (Sec. 3.3, Fig. 6), copied
 * row by row into `fig6` below, not what the implementation happens to return.
 */
#include "config.h"

#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <thrift/c_glib/transport/thrift_rdma_explain.h>

#include "lib/c_glib/transport/rdma/rdma_machine.h"
#include "lib/c_glib/transport/rdma/rdma_plan.h"

#define EAGER THRIFT_HINT_PROTO_EAGER
#define DWI THRIFT_HINT_PROTO_DIRECT_WRITE_IMM
#define RFP THRIFT_HINT_PROTO_RFP
#define WRNDV THRIFT_HINT_PROTO_WRITE_RNDV
#define BUSY THRIFT_RDMA_POLLING_BUSY
#define EVENT THRIFT_RDMA_POLLING_EVENT
#define HYBRID THRIFT_RDMA_POLLING_HYBRID

/* Two NUMA nodes of 8 cores: concurrency 4 is under, 12 full, 64 over. */
static const RdmaMachine two_nodes = { .cores = 16, .cores_per_node = 8, .nodes = 2 };
static const guint32 concurrency_of[] = {
  [RDMA_PLAN_UNDER] = 4, [RDMA_PLAN_FULL] = 12, [RDMA_PLAN_OVER] = 64
};
static const gchar *const sub_names[] = { "under", "full", "over" };

/* HatRPC's table, Sec. 3.3, Fig. 6 ("Design Space"), one row per goal and subscription level. */
typedef struct
{
  ThriftHintPerfGoal goal;
  const gchar *goal_name;
  RdmaPlanSubscription sub;
  ThriftHintProto small_proto, large_proto; /* a server's reply */
  ThriftHintProto client_large_proto;       /* a client's call */
  ThriftRdmaPolling small_polling, large_polling;
} Fig6Row;

static const Fig6Row fig6[] = {
  /* latency, under: "busy polling; Direct-WriteIMM for all sizes" */
  { THRIFT_HINT_PERF_GOAL_LATENCY, "latency", RDMA_PLAN_UNDER, DWI, DWI, DWI, BUSY, BUSY },
  /* latency, full / over: "Direct-WriteIMM with hybrid polling" */
  { THRIFT_HINT_PERF_GOAL_LATENCY, "latency", RDMA_PLAN_FULL, DWI, DWI, DWI, HYBRID, HYBRID },
  { THRIFT_HINT_PERF_GOAL_LATENCY, "latency", RDMA_PLAN_OVER, DWI, DWI, DWI, HYBRID, HYBRID },
  /* throughput, under: "Direct-WriteIMM for all sizes; event polling for small, busy
   * polling for large" */
  { THRIFT_HINT_PERF_GOAL_THROUGHPUT, "throughput", RDMA_PLAN_UNDER, DWI, DWI, DWI, EVENT, BUSY },
  /* throughput, full / over: "event polling; Direct-WriteIMM small, RFP large"; RFP carries
   * a server's reply only, so a client's large call stays Direct-WriteIMM (Fig. 3i) */
  { THRIFT_HINT_PERF_GOAL_THROUGHPUT, "throughput", RDMA_PLAN_FULL, DWI, RFP, DWI, EVENT, EVENT },
  { THRIFT_HINT_PERF_GOAL_THROUGHPUT, "throughput", RDMA_PLAN_OVER, DWI, RFP, DWI, EVENT, EVENT },
  /* resource utilisation, under: "Direct-WriteIMM small, Write-RNDV large"; the table gives
   * no polling here: event, the mode that spends no core on waiting */
  { THRIFT_HINT_PERF_GOAL_RES_UTIL, "res_util", RDMA_PLAN_UNDER, DWI, WRNDV, WRNDV, EVENT, EVENT },
  /* resource utilisation, full / over: "Eager-SendRecv small, Write- or Read-RNDV large"
   * (Write-RNDV chosen, rdma_plan.c) */
  { THRIFT_HINT_PERF_GOAL_RES_UTIL, "res_util", RDMA_PLAN_FULL, EAGER, WRNDV, WRNDV, EVENT, EVENT },
  { THRIFT_HINT_PERF_GOAL_RES_UTIL, "res_util", RDMA_PLAN_OVER, EAGER, WRNDV, WRNDV, EVENT, EVENT },
};

/* One test per cell: a row of `fig6` and small or large. */
typedef struct
{
  const Fig6Row *row;
  gboolean large;
} Cell;

static ThriftHintSet
set_for (const Fig6Row *row, ThriftHintSide side)
{
  return (ThriftHintSet){
    .version = THRIFT_HINT_SET_VERSION,
    .service = "Kv",
    .function = "get",
    .side = side,
    .set = THRIFT_HINT_HAS_PERF_GOAL | THRIFT_HINT_HAS_CONCURRENCY,
    .perf_goal = row->goal,
    .concurrency = concurrency_of[row->sub],
  };
}

static void
assert_contains (const gchar *text, const gchar *words)
{
  if (strstr (text, words) == NULL)
    g_error ("'%s' does not say '%s'", text, words);
}

/* The cell's protocol and polling, on each side, decided by the message's length and by a
 * payload_size hint; and the line names the hints that decided them. */
static void
test_cell (gconstpointer data)
{
  const Cell *cell = data;
  const Fig6Row *row = cell->row;
  gsize len = cell->large ? 4097 : 4096;

  for (ThriftHintSide side = THRIFT_HINT_SIDE_CLIENT; side <= THRIFT_HINT_SIDE_SERVER; side++)
  {
    ThriftHintSet h = set_for (row, side);
    ThriftHintProto want_proto = !cell->large                      ? row->small_proto
                                 : side == THRIFT_HINT_SIDE_SERVER ? row->large_proto
                                                                   : row->client_large_proto;
    ThriftRdmaPolling want_polling = cell->large ? row->large_polling : row->small_polling;
    g_autofree gchar *sub = g_strdup_printf ("%s (concurrency=%u", sub_names[row->sub],
                                             h.concurrency);
    g_autofree gchar *goal = g_strdup_printf ("perf_goal=%s", row->goal_name);
    g_autofree gchar *line = NULL;
    RdmaPlan p;

    /* by length */
    rdma_plan_make (&h, HYBRID, RDMA_PLAN_PEER_ANY, &two_nodes, &p);
    g_assert_true (p.by_length);
    g_assert_cmpuint (p.threshold, ==, 4096);
    g_assert_cmpuint (p.subscription, ==, row->sub);
    g_assert_cmpint (rdma_plan_proto (&p, len), ==, want_proto);
    g_assert_cmpint (rdma_plan_polling (&p, len), ==, want_polling);
    g_assert_cmpint (rdma_plan_proto (&p, cell->large ? 1 << 24 : 1), ==, want_proto);
    line = rdma_plan_describe (&p, &h);
    assert_contains (line, side == THRIFT_HINT_SIDE_SERVER ? "Kv.get server: " : "Kv.get client: ");
    assert_contains (line, goal);
    assert_contains (line, sub);
    assert_contains (line, "size: by message length");
    g_assert_null (strchr (line, '\n'));
    g_clear_pointer (&line, g_free);

    /* by payload_size: every message is the hinted size's, whatever its length */
    h.set |= THRIFT_HINT_HAS_PAYLOAD_SIZE;
    h.payload_size = cell->large ? 65536 : 64;
    rdma_plan_make (&h, HYBRID, RDMA_PLAN_PEER_ANY, &two_nodes, &p);
    g_assert_false (p.by_length);
    g_assert_cmpint (p.small_proto, ==, want_proto);
    g_assert_cmpint (p.large_proto, ==, want_proto);
    g_assert_cmpint (p.small_polling, ==, want_polling);
    g_assert_cmpint (p.large_polling, ==, want_polling);
    line = rdma_plan_describe (&p, &h);
    assert_contains (line, cell->large ? "payload_size=65536 > 4096, all large"
                                       : "payload_size=64 <= 4096, all small");
    assert_contains (line, goal);
  }
}

/* No hints at all (code generated without them) and a set without perf_goal: eager for
 * small messages (nothing pinned per connection), Direct-WriteIMM for large ones, and the
 * transport's polling. */
static void
test_no_hints (void)
{
  static const ThriftHintSet no_goal = {
    .version = THRIFT_HINT_SET_VERSION,
    .service = "Kv",
    .function = "put",
    .set = THRIFT_HINT_HAS_CONCURRENCY,
    .concurrency = 64,
  };
  static const ThriftRdmaPolling defaults[] = { BUSY, EVENT, HYBRID };

  for (gsize i = 0; i < G_N_ELEMENTS (defaults); i++)
  {
    g_autofree gchar *none_line = NULL, *no_goal_line = NULL;
    RdmaPlan p;

    rdma_plan_make (NULL, defaults[i], RDMA_PLAN_PEER_ANY, &two_nodes, &p);
    g_assert_cmpint (rdma_plan_proto (&p, 1), ==, EAGER);
    g_assert_cmpint (rdma_plan_proto (&p, 4096), ==, EAGER);
    g_assert_cmpint (rdma_plan_proto (&p, 4097), ==, DWI);
    g_assert_cmpint (rdma_plan_proto (&p, 1 << 20), ==, DWI);
    g_assert_cmpint (rdma_plan_polling (&p, 1), ==, defaults[i]);
    g_assert_cmpint (rdma_plan_polling (&p, 1 << 20), ==, defaults[i]);
    none_line = rdma_plan_describe (&p, NULL);
    assert_contains (none_line, "(no hint set): ");
    assert_contains (none_line, "under (no concurrency hint)");

    rdma_plan_make (&no_goal, defaults[i], RDMA_PLAN_PEER_ANY, &two_nodes, &p);
    g_assert_cmpint (p.small_proto, ==, EAGER);
    g_assert_cmpint (p.large_proto, ==, DWI);
    g_assert_cmpint (p.small_polling, ==, defaults[i]);
    g_assert_cmpint (p.large_polling, ==, defaults[i]);
    no_goal_line = rdma_plan_describe (&p, &no_goal);
    assert_contains (no_goal_line, "proto: no perf_goal");
    assert_contains (no_goal_line, "over (concurrency=64");
  }
}

/* The plan of @h with payload_size = @size, into @p, and its line. */
static gchar *
plan_with_payload (ThriftHintSet *h, guint64 size, RdmaPlan *p)
{
  h->set |= THRIFT_HINT_HAS_PAYLOAD_SIZE;
  h->payload_size = size;
  rdma_plan_make (h, HYBRID, RDMA_PLAN_PEER_ANY, &two_nodes, p);
  return rdma_plan_describe (p, h);
}

/* payload_size decides once: 4096 is small, 4097 large. */
static void
test_payload_threshold (void)
{
  /* throughput, under: event small, busy large; res_util, under: Write-RNDV large */
  ThriftHintSet h = set_for (&fig6[3], THRIFT_HINT_SIDE_CLIENT);
  g_autofree gchar *small_line = NULL, *large_line = NULL;
  RdmaPlan p;

  small_line = plan_with_payload (&h, 4096, &p);
  g_assert_cmpint (rdma_plan_polling (&p, 1 << 20), ==, EVENT);
  assert_contains (small_line, "payload_size=4096 <= 4096, all small");
  large_line = plan_with_payload (&h, 4097, &p);
  g_assert_cmpint (rdma_plan_polling (&p, 1), ==, BUSY);
  assert_contains (large_line, "payload_size=4097 > 4096, all large");

  h.perf_goal = THRIFT_HINT_PERF_GOAL_RES_UTIL;
  rdma_plan_make (&h, HYBRID, RDMA_PLAN_PEER_ANY, &two_nodes, &p);
  g_assert_cmpint (rdma_plan_proto (&p, 1), ==, WRNDV);
  h.payload_size = 4096;
  rdma_plan_make (&h, HYBRID, RDMA_PLAN_PEER_ANY, &two_nodes, &p);
  g_assert_cmpint (rdma_plan_proto (&p, 1 << 20), ==, DWI);
}

/* Where the table gives event polling under a throughput or resource goal, the plan leaves
 * spinning or blocking to measurement: by the wait's time for throughput with cores to spare,
 * by CPU per call otherwise; busy and hybrid halves, a polling hint and no goal are as they
 * are.  The line says so. */
static void
test_measure (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (fig6); i++)
  {
    const Fig6Row *row = &fig6[i];
    ThriftHintSet h = set_for (row, THRIFT_HINT_SIDE_CLIENT);
    RdmaMeasure want = row->goal == THRIFT_HINT_PERF_GOAL_THROUGHPUT && row->sub == RDMA_PLAN_UNDER
                           ? RDMA_MEASURE_WALL
                           : RDMA_MEASURE_CPU;
    g_autofree gchar *line = NULL;
    RdmaPlan p;

    rdma_plan_make (&h, HYBRID, RDMA_PLAN_PEER_ANY, &two_nodes, &p);
    line = rdma_plan_describe (&p, &h);
    g_assert_cmpint (rdma_plan_measure (&p, 1), ==,
                     row->small_polling == EVENT ? want : RDMA_MEASURE_NONE);
    g_assert_cmpint (rdma_plan_measure (&p, 1 << 20), ==,
                     row->large_polling == EVENT ? want : RDMA_MEASURE_NONE);
    if (row->small_polling == EVENT || row->large_polling == EVENT)
      assert_contains (line, want == RDMA_MEASURE_WALL
                                 ? "(spins until blocking measures the shorter call)"
                                 : "(event until a spin measures less CPU per call)");
    else
      g_assert_null (strstr (line, " until "));

    /* payload_size picks one half, its measure with it */
    h.set |= THRIFT_HINT_HAS_PAYLOAD_SIZE;
    h.payload_size = 1 << 20;
    rdma_plan_make (&h, HYBRID, RDMA_PLAN_PEER_ANY, &two_nodes, &p);
    g_assert_cmpint (rdma_plan_measure (&p, 1), ==,
                     row->large_polling == EVENT ? want : RDMA_MEASURE_NONE);
    g_free (line);
    line = rdma_plan_describe (&p, &h);
    if (row->large_polling != EVENT)
      g_assert_null (strstr (line, " until "));
    else
      assert_contains (line, want == RDMA_MEASURE_WALL ? "(spins until blocking measures"
                                                       : "(event until a spin measures");

    /* a polling hint is followed as it is */
    h.set |= THRIFT_HINT_HAS_POLLING;
    h.polling = THRIFT_HINT_POLLING_EVENT;
    rdma_plan_make (&h, HYBRID, RDMA_PLAN_PEER_ANY, &two_nodes, &p);
    g_assert_cmpint (rdma_plan_polling (&p, 1), ==, EVENT);
    g_assert_cmpint (rdma_plan_measure (&p, 1), ==, RDMA_MEASURE_NONE);
    g_assert_cmpint (rdma_plan_measure (&p, 1 << 20), ==, RDMA_MEASURE_NONE);
  }
  {
    /* no goal: the transport's polling, even when it is event */
    ThriftHintSet none = { .version = THRIFT_HINT_SET_VERSION, .service = "Kv" };
    RdmaPlan p;

    rdma_plan_make (&none, EVENT, RDMA_PLAN_PEER_ANY, &two_nodes, &p);
    g_assert_cmpint (rdma_plan_measure (&p, 1), ==, RDMA_MEASURE_NONE);
    rdma_plan_make (NULL, EVENT, RDMA_PLAN_PEER_ANY, &two_nodes, &p);
    g_assert_cmpint (rdma_plan_measure (&p, 1 << 20), ==, RDMA_MEASURE_NONE);
  }
}

/* An explicit proto hint sets the protocol of every size; the polling still follows the
 * table. */
static void
test_proto_override (void)
{
  ThriftHintSet h = set_for (&fig6[7], THRIFT_HINT_SIDE_SERVER); /* res_util, full */
  g_autofree gchar *line = NULL;
  RdmaPlan p;

  h.set |= THRIFT_HINT_HAS_PROTO;
  h.proto = THRIFT_HINT_PROTO_READ_RNDV;
  rdma_plan_make (&h, HYBRID, RDMA_PLAN_PEER_ANY, &two_nodes, &p);
  g_assert_cmpint (rdma_plan_proto (&p, 1), ==, THRIFT_HINT_PROTO_READ_RNDV);
  g_assert_cmpint (rdma_plan_proto (&p, 1 << 20), ==, THRIFT_HINT_PROTO_READ_RNDV);
  g_assert_cmpint (rdma_plan_polling (&p, 1), ==, EVENT);
  line = rdma_plan_describe (&p, &h);
  assert_contains (line, "proto: proto=read_rndv hint");
  assert_contains (line, "polling: perf_goal=res_util, full");
}

/* An explicit polling hint sets the polling of every size; the protocol still follows the
 * table. */
static void
test_polling_override (void)
{
  ThriftHintSet h = set_for (&fig6[3], THRIFT_HINT_SIDE_SERVER); /* throughput, under */
  g_autofree gchar *line = NULL;
  RdmaPlan p;

  h.set |= THRIFT_HINT_HAS_POLLING;
  h.polling = THRIFT_HINT_POLLING_HYBRID;
  rdma_plan_make (&h, BUSY, RDMA_PLAN_PEER_ANY, &two_nodes, &p);
  g_assert_cmpint (rdma_plan_polling (&p, 1), ==, HYBRID);
  g_assert_cmpint (rdma_plan_polling (&p, 1 << 20), ==, HYBRID);
  g_assert_cmpint (rdma_plan_proto (&p, 1 << 20), ==, DWI);
  line = rdma_plan_describe (&p, &h);
  assert_contains (line, "polling: polling=hybrid hint");
  assert_contains (line, "proto: perf_goal=throughput, under");
}

/* What the peer cannot receive goes by eager, and the line says why. */
static void
test_peer (void)
{
  ThriftHintSet h = set_for (&fig6[6], THRIFT_HINT_SIDE_CLIENT); /* res_util, under */
  const guint32 eager_only = 1u << EAGER;
  g_autofree gchar *line = NULL, *both_line = NULL, *hint_line = NULL;
  RdmaPlan p;

  /* Direct-WriteIMM small, Write-RNDV large; the peer has Write-RNDV only */
  rdma_plan_make (&h, HYBRID, 1u << WRNDV, &two_nodes, &p);
  g_assert_cmpint (rdma_plan_proto (&p, 1), ==, EAGER);
  g_assert_cmpint (rdma_plan_proto (&p, 1 << 20), ==, WRNDV);
  line = rdma_plan_describe (&p, &h);
  assert_contains (line, "peer cannot receive direct_write_imm");
  assert_contains (line, "peer: eager,write_rndv; numa:");

  /* eager is always there, even in an empty mask */
  rdma_plan_make (&h, HYBRID, 0, &two_nodes, &p);
  g_assert_cmpint (rdma_plan_proto (&p, 1), ==, EAGER);
  g_assert_cmpint (rdma_plan_proto (&p, 1 << 20), ==, EAGER);
  both_line = rdma_plan_describe (&p, &h);
  assert_contains (both_line, "peer cannot receive direct_write_imm or write_rndv");
  assert_contains (both_line, "peer: eager; numa:");

  /* a proto hint is held to the peer too */
  h.set |= THRIFT_HINT_HAS_PROTO;
  h.proto = THRIFT_HINT_PROTO_CHAINED_WRITE_SEND;
  rdma_plan_make (&h, HYBRID, eager_only, &two_nodes, &p);
  g_assert_cmpint (p.small_proto, ==, EAGER);
  g_assert_cmpint (p.large_proto, ==, EAGER);
  hint_line = rdma_plan_describe (&p, &h);
  assert_contains (hint_line, "proto=chained_write_send hint, peer cannot receive "
                              "chained_write_send");
}

/* RFP is for a server's reply: a client's large call under throughput, full or over, goes by
 * Direct-WriteIMM; the reply of the same function by RFP. */
static void
test_rfp_side (void)
{
  ThriftHintSet client = set_for (&fig6[5], THRIFT_HINT_SIDE_CLIENT); /* throughput, over */
  ThriftHintSet server = set_for (&fig6[5], THRIFT_HINT_SIDE_SERVER);
  g_autofree gchar *client_line = NULL;
  RdmaPlan p;

  rdma_plan_make (&server, HYBRID, RDMA_PLAN_PEER_ANY, &two_nodes, &p);
  g_assert_cmpint (rdma_plan_proto (&p, 1 << 20), ==, RFP);
  rdma_plan_make (&client, HYBRID, RDMA_PLAN_PEER_ANY, &two_nodes, &p);
  g_assert_cmpint (rdma_plan_proto (&p, 1 << 20), ==, DWI);
  client_line = rdma_plan_describe (&p, &client);
  assert_contains (client_line, "client side (rfp carries server replies only)");
  /* a server peer that cannot receive RFP does not matter to a client that does not use it */
  rdma_plan_make (&client, HYBRID, 1u << DWI, &two_nodes, &p);
  g_assert_cmpint (rdma_plan_proto (&p, 1 << 20), ==, DWI);
}

/* proto = eager_rndv (AR-gRPC's pair, the HatRPC paper's Hybrid-EagerRNDV baseline, Sec. 5):
 * Eager-SendRecv for a message up to 4 KiB, Read-RNDV above, on both sides and over the
 * table of any goal; payload_size picks one half; a peer without Read-RNDV gets the large
 * messages by eager, and the line says each. */
static void
test_eager_rndv (void)
{
  const ThriftHintProto RRNDV = THRIFT_HINT_PROTO_READ_RNDV;

  for (ThriftHintSide side = THRIFT_HINT_SIDE_CLIENT; side <= THRIFT_HINT_SIDE_SERVER; side++)
  {
    /* throughput, over: the table would give Direct-WriteIMM small and RFP large */
    ThriftHintSet h = set_for (&fig6[5], side);
    g_autofree gchar *line = NULL, *small_line = NULL, *large_line = NULL, *peer_line = NULL;
    RdmaPlan p;

    h.set |= THRIFT_HINT_HAS_PROTO;
    h.proto = THRIFT_HINT_PROTO_EAGER_RNDV;
    rdma_plan_make (&h, HYBRID, RDMA_PLAN_PEER_ANY, &two_nodes, &p);
    g_assert_true (p.by_length);
    g_assert_cmpint (rdma_plan_proto (&p, 0), ==, EAGER);
    g_assert_cmpint (rdma_plan_proto (&p, 64), ==, EAGER);
    g_assert_cmpint (rdma_plan_proto (&p, 4096), ==, EAGER);
    g_assert_cmpint (rdma_plan_proto (&p, 4097), ==, RRNDV);
    g_assert_cmpint (rdma_plan_proto (&p, 65536), ==, RRNDV);
    g_assert_cmpint (rdma_plan_proto (&p, 1 << 24), ==, RRNDV);
    /* the polling is still the table's */
    g_assert_cmpint (rdma_plan_polling (&p, 1 << 24), ==, EVENT);
    line = rdma_plan_describe (&p, &h);
    assert_contains (line, "small (<= 4096 B) eager/event, large read_rndv/event");
    assert_contains (line, "proto: proto=eager_rndv hint: eager up to 4 KiB, read_rndv above;");
    assert_contains (line, "polling: perf_goal=throughput, over");

    /* payload_size says which half every message takes */
    small_line = plan_with_payload (&h, 64, &p);
    g_assert_cmpint (rdma_plan_proto (&p, 1 << 20), ==, EAGER);
    assert_contains (small_line, "payload_size=64 <= 4096, all small");
    assert_contains (small_line, "proto=eager_rndv hint");
    large_line = plan_with_payload (&h, 65536, &p);
    g_assert_cmpint (rdma_plan_proto (&p, 1), ==, RRNDV);
    assert_contains (large_line, "payload_size=65536 > 4096, all large");
    h.set &= ~(guint32) THRIFT_HINT_HAS_PAYLOAD_SIZE;

    /* a peer that takes eager and Direct-WriteIMM but not Read-RNDV */
    rdma_plan_make (&h, HYBRID, (1u << EAGER) | (1u << DWI), &two_nodes, &p);
    g_assert_cmpint (rdma_plan_proto (&p, 64), ==, EAGER);
    g_assert_cmpint (rdma_plan_proto (&p, 65536), ==, EAGER);
    peer_line = rdma_plan_describe (&p, &h);
    assert_contains (peer_line, "proto=eager_rndv hint: eager up to 4 KiB, read_rndv above, "
                                "peer cannot receive read_rndv: eager");
    assert_contains (peer_line, "peer: eager,direct_write_imm;");
  }
  /* not a protocol of its own: the peer masks and the registry's protocols do not have it */
  g_assert_cmpuint (RDMA_PLAN_PEER_ANY & (1u << THRIFT_HINT_PROTO_EAGER_RNDV), ==, 0);
  g_assert_cmpint (RDMA_PLAN_LAST_PROTO, <, THRIFT_HINT_PROTO_EAGER_RNDV);
}

/* Under is "at most the cores of one NUMA node", full "at most all cores": with two nodes of
 * 8 cores, 8 is under, 9 and 16 full, 17 over; with one node of 16 cores, 9 is under. */
static void
test_numa_boundary (void)
{
  static const RdmaMachine one_node = { .cores = 16, .cores_per_node = 16, .nodes = 1 };
  static const struct
  {
    const RdmaMachine *m;
    guint32 concurrency;
    RdmaPlanSubscription sub;
    ThriftRdmaPolling latency_polling; /* the latency row of `fig6` */
  } cases[] = {
    { &two_nodes, 1, RDMA_PLAN_UNDER, BUSY },   { &two_nodes, 8, RDMA_PLAN_UNDER, BUSY },
    { &two_nodes, 9, RDMA_PLAN_FULL, HYBRID },  { &two_nodes, 16, RDMA_PLAN_FULL, HYBRID },
    { &two_nodes, 17, RDMA_PLAN_OVER, HYBRID }, { &one_node, 9, RDMA_PLAN_UNDER, BUSY },
    { &one_node, 16, RDMA_PLAN_UNDER, BUSY },   { &one_node, 17, RDMA_PLAN_OVER, HYBRID },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
  {
    ThriftHintSet h = set_for (&fig6[0], THRIFT_HINT_SIDE_CLIENT);
    g_autofree gchar *line = NULL;
    RdmaPlan p;

    h.concurrency = cases[i].concurrency;
    rdma_plan_make (&h, EVENT, RDMA_PLAN_PEER_ANY, cases[i].m, &p);
    g_assert_cmpuint (p.subscription, ==, cases[i].sub);
    g_assert_cmpint (rdma_plan_polling (&p, 1), ==, cases[i].latency_polling);
    line = rdma_plan_describe (&p, &h);
    assert_contains (line, sub_names[cases[i].sub]);
  }
}

/* The line's exact form for one set: the format is documented in thrift_rdma_explain.h, and
 * scripts grep it. */
static void
test_describe_format (void)
{
  static const RdmaMachine eight = { .cores = 8, .cores_per_node = 8, .nodes = 1 };
  static const ThriftHintSet h = {
    .version = THRIFT_HINT_SET_VERSION,
    .service = "Calculator",
    .function = "add",
    .side = THRIFT_HINT_SIDE_CLIENT,
    .set = THRIFT_HINT_HAS_PERF_GOAL | THRIFT_HINT_HAS_CONCURRENCY | THRIFT_HINT_HAS_PAYLOAD_SIZE,
    .perf_goal = THRIFT_HINT_PERF_GOAL_LATENCY,
    .concurrency = 4,
    .payload_size = 64,
  };
  g_autofree gchar *line = NULL;
  RdmaPlan p;

  rdma_plan_make (&h, HYBRID, RDMA_PLAN_PEER_ANY, &eight, &p);
  line = rdma_plan_describe (&p, &h);
  g_assert_cmpstr (line, ==,
                   "Calculator.add client: small (<= 4096 B) direct_write_imm/busy, "
                   "large direct_write_imm/busy  [size: payload_size=64 <= 4096, all small; "
                   "proto: perf_goal=latency, under; polling: perf_goal=latency, under; "
                   "subscription: under (concurrency=4 <= 8 cores per NUMA node); peer: all; "
                   "numa: none (no numa hint)]");
}

/* nodeN/cpulist files give the nodes and the cores of the largest; memory-only nodes and
 * other files are skipped; no directory is one node. */
static void
test_machine_read (void)
{
  g_autofree gchar *dir = g_dir_make_tmp ("rdma-plan-XXXXXX", NULL);
  static const struct
  {
    const gchar *node, *cpulist;
  } files[] = {
    { "node0", "0-3,8-11\n" },
    { "node1", "4-7,12-15\n" },
    { "node2", "\n" },
  };
  g_autofree gchar *possible = NULL, *missing = NULL;
  RdmaMachine m;

  g_assert_nonnull (dir);
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
  {
    g_autofree gchar *node = g_build_filename (dir, files[i].node, NULL);
    g_autofree gchar *list = g_build_filename (node, "cpulist", NULL);

    g_assert_cmpint (g_mkdir (node, 0700), ==, 0);
    g_assert_true (g_file_set_contents (list, files[i].cpulist, -1, NULL));
  }
  possible = g_build_filename (dir, "possible", NULL);
  g_assert_true (g_file_set_contents (possible, "0-2\n", -1, NULL));

  rdma_machine_read_cores (dir, 16, &m);
  g_assert_cmpuint (m.cores, ==, 16);
  g_assert_cmpuint (m.nodes, ==, 2);
  g_assert_cmpuint (m.cores_per_node, ==, 8);
  /* bound to 4 cores: a node has no more than that */
  rdma_machine_read_cores (dir, 4, &m);
  g_assert_cmpuint (m.cores_per_node, ==, 4);

  missing = g_build_filename (dir, "absent", NULL);
  rdma_machine_read_cores (missing, 6, &m);
  g_assert_cmpuint (m.nodes, ==, 1);
  g_assert_cmpuint (m.cores_per_node, ==, 6);

  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
  {
    g_autofree gchar *node = g_build_filename (dir, files[i].node, NULL);
    g_autofree gchar *list = g_build_filename (node, "cpulist", NULL);

    g_remove (list);
    g_rmdir (node);
  }
  g_remove (possible);
  g_rmdir (dir);
}

static void
test_machine_get (void)
{
  const RdmaMachine *m = rdma_machine_get ();

  /* read once: every part of the engine sees the same machine */
  g_assert_true (rdma_machine_get () == m);
  g_assert_cmpuint (m->cores, ==, MAX (g_get_num_processors (), 1));
  g_assert_cmpuint (m->nodes, >=, 1);
  g_assert_cmpuint (m->cores_per_node, >=, 1);
  g_assert_cmpuint (m->cores_per_node, <=, m->cores);
}

/* The public API: one line per set of a NULL-terminated table, for this machine. */
static void
test_explain_sets (void)
{
  const ThriftHintSet get_c = set_for (&fig6[0], THRIFT_HINT_SIDE_CLIENT);
  ThriftHintSet get_s = set_for (&fig6[0], THRIFT_HINT_SIDE_SERVER);
  const ThriftHintSet *const sets[] = { &get_c, &get_s, NULL };
  const ThriftHintSet *const empty[] = { NULL };
  g_autofree gchar *one = NULL, *all = NULL, *none = NULL, *nothing = NULL;
  g_auto (GStrv) lines = NULL;

  get_s.set |= THRIFT_HINT_HAS_PROTO;
  get_s.proto = RFP;
  one = thrift_rdma_explain_set (&get_c, HYBRID);
  assert_contains (one, "Kv.get client: small (<= 4096 B) direct_write_imm/");
  assert_contains (one, "perf_goal=latency");
  all = thrift_rdma_explain_sets (sets, HYBRID);
  lines = g_strsplit (all, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 3);
  g_assert_cmpstr (lines[0], ==, one);
  assert_contains (lines[1], "Kv.get server: small (<= 4096 B) rfp/");
  assert_contains (lines[1], "proto: proto=rfp hint");
  g_assert_cmpstr (lines[2], ==, "");
  none = thrift_rdma_explain_sets (empty, HYBRID);
  g_assert_cmpstr (none, ==, "");
  nothing = thrift_rdma_explain_set (NULL, EVENT);
  assert_contains (nothing, "(no hint set): small (<= 4096 B) eager/event, "
                            "large direct_write_imm/event  [");
}

/* A connection's explain needs the connection (its peer): nothing before open.  The open
 * case, with the peer's protocols, is test/rdma/test_table's. */
static void
test_explain_connection_closed (void)
{
  const ThriftHintSet get_c = set_for (&fig6[0], THRIFT_HINT_SIDE_CLIENT);
  ThriftTransport *t = thrift_rdma_new ("127.0.0.1", 9);

  g_assert_null (thrift_rdma_explain_connection (THRIFT_RDMA (t), &get_c));
  g_assert_null (thrift_rdma_explain_connection (THRIFT_RDMA (t), NULL));
  g_object_unref (t);
}

/* THRIFT_RDMA_EXPLAIN=1: each set is printed once per process (in a child: the variable is
 * read once). */
static void
test_explain_print_once (void)
{
  static const ThriftHintSet h = {
    .version = THRIFT_HINT_SET_VERSION,
    .service = "Kv",
    .function = "put",
    .side = THRIFT_HINT_SIDE_SERVER,
  };

  if (g_test_subprocess ())
  {
    g_setenv ("THRIFT_RDMA_EXPLAIN", "1", TRUE);
    g_assert_true (thrift_rdma_explain_enabled ());
    g_assert_true (thrift_rdma_explain_print_once (&h, EVENT));
    g_assert_false (thrift_rdma_explain_print_once (&h, EVENT));
    g_assert_true (thrift_rdma_explain_print_once (NULL, EVENT));
    g_assert_false (thrift_rdma_explain_print_once (NULL, EVENT));
    return;
  }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("ThriftRdma explain: Kv.put server: small (<= 4096 B) "
                             "eager/event, *\n"
                             "ThriftRdma explain: (no hint set): *\n");
}

static void
test_explain_disabled (void)
{
  if (g_test_subprocess ())
  {
    g_setenv ("THRIFT_RDMA_EXPLAIN", "0", TRUE);
    g_assert_false (thrift_rdma_explain_enabled ());
    g_assert_false (thrift_rdma_explain_print_once (NULL, EVENT));
    return;
  }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr_unmatched ("*ThriftRdma explain*");
}

int
main (int argc, char **argv)
{
  static Cell cells[G_N_ELEMENTS (fig6) * 2];

  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (fig6); i++)
    for (gsize large = 0; large <= 1; large++)
    {
      Cell *cell = &cells[i * 2 + large];
      g_autofree gchar *path = NULL;

      cell->row = &fig6[i];
      cell->large = (gboolean) large;
      path = g_strdup_printf ("/rdma_plan/table/%s/%s/%s", fig6[i].goal_name,
                              sub_names[fig6[i].sub], large ? "large" : "small");
      g_test_add_data_func (path, cell, test_cell);
    }
  g_test_add_func ("/rdma_plan/no_hints", test_no_hints);
  g_test_add_func ("/rdma_plan/payload_size/threshold", test_payload_threshold);
  g_test_add_func ("/rdma_plan/measure", test_measure);
  g_test_add_func ("/rdma_plan/override/proto", test_proto_override);
  g_test_add_func ("/rdma_plan/override/polling", test_polling_override);
  g_test_add_func ("/rdma_plan/peer", test_peer);
  g_test_add_func ("/rdma_plan/rfp_side", test_rfp_side);
  g_test_add_func ("/rdma_plan/override/eager_rndv", test_eager_rndv);
  g_test_add_func ("/rdma_plan/numa_boundary", test_numa_boundary);
  g_test_add_func ("/rdma_plan/describe/format", test_describe_format);
  g_test_add_func ("/rdma_plan/machine/read", test_machine_read);
  g_test_add_func ("/rdma_plan/machine/get", test_machine_get);
  g_test_add_func ("/rdma_plan/explain/sets", test_explain_sets);
  g_test_add_func ("/rdma_plan/explain/connection_closed", test_explain_connection_closed);
  g_test_add_func ("/rdma_plan/explain/print_once", test_explain_print_once);
  g_test_add_func ("/rdma_plan/explain/disabled", test_explain_disabled);
  return g_test_run ();
}
