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

/* rdma_plan.c: HatRPC's design-space table (Fig. 6), hints to protocols and polling (see
 * rdma_plan.h). */
#include "config.h"

#include <stdlib.h>

#include "rdma_plan.h"

/* One cell of HatRPC's table (Sec. 3.3, Fig. 6): what a perf_goal does at a subscription level. */
typedef struct
{
  ThriftHintProto small_proto, large_proto;
  ThriftRdmaPolling small_polling, large_polling;
} PlanCell;

#define DWI THRIFT_HINT_PROTO_DIRECT_WRITE_IMM
#define BUSY THRIFT_RDMA_POLLING_BUSY
#define EVENT THRIFT_RDMA_POLLING_EVENT
#define HYBRID THRIFT_RDMA_POLLING_HYBRID

/* [perf_goal][0: under, 1: full or over], rows as Fig. 6 gives them. */
static const PlanCell table[][2] = {
  [THRIFT_HINT_PERF_GOAL_LATENCY] = {
    /* busy polling; Direct-WriteIMM for all sizes */
    { DWI, DWI, BUSY, BUSY },
    /* not in the paper: busy polling collapses once spinning threads outnumber the cores
     * (Fig. 5), so hybrid polling keeps the latency of a short spin without that */
    { DWI, DWI, HYBRID, HYBRID },
  },
  [THRIFT_HINT_PERF_GOAL_THROUGHPUT] = {
    /* Direct-WriteIMM for all sizes; event polling for small, busy polling for large */
    { DWI, DWI, EVENT, BUSY },
    /* event polling; Direct-WriteIMM small, RFP large (server side only: see plan_goal) */
    { DWI, THRIFT_HINT_PROTO_RFP, EVENT, EVENT },
  },
  /* The table gives no polling for resource utilisation: event polling, since a blocked
   * thread spends no core on waiting, which is the goal. */
  [THRIFT_HINT_PERF_GOAL_RES_UTIL] = {
    /* Direct-WriteIMM small, Write-RNDV large */
    { DWI, THRIFT_HINT_PROTO_WRITE_RNDV, EVENT, EVENT },
    /* Eager-SendRecv small, "Write- or Read-RNDV" large: Write-RNDV, because the receiver's
     * buffer is pinned only for the transfer (it hands out its address on the RTS) and the
     * sender's buffer is free as soon as its WRITE completes; Read-RNDV keeps the sender's
     * buffer pinned until the receiver's READ and done come back */
    { THRIFT_HINT_PROTO_EAGER, THRIFT_HINT_PROTO_WRITE_RNDV, EVENT, EVENT },
  },
};

#undef DWI
#undef BUSY
#undef EVENT
#undef HYBRID

/* The reasons are static strings, so that making a plan allocates nothing and takes no lock
 * (rdma_select_polling makes one per flush); only a peer fallback interns one. */
static const gchar *const goal_reasons[][3] = {
  [THRIFT_HINT_PERF_GOAL_LATENCY] = { "perf_goal=latency, under", "perf_goal=latency, full",
                                      "perf_goal=latency, over" },
  [THRIFT_HINT_PERF_GOAL_THROUGHPUT] = { "perf_goal=throughput, under",
                                         "perf_goal=throughput, full",
                                         "perf_goal=throughput, over" },
  [THRIFT_HINT_PERF_GOAL_RES_UTIL] = { "perf_goal=res_util, under", "perf_goal=res_util, full",
                                       "perf_goal=res_util, over" },
};

/* The polling reason of a cell whose event polling is left to measurement (RdmaMeasure):
 * [goal][subscription]. */
#define WALL_NOTE " (spins until blocking measures the shorter call)"
#define CPU_NOTE " (event until a spin measures less CPU per call)"
static const gchar *const measured_reasons[][3] = {
  [THRIFT_HINT_PERF_GOAL_THROUGHPUT] = { "perf_goal=throughput, under" WALL_NOTE,
                                         "perf_goal=throughput, full" CPU_NOTE,
                                         "perf_goal=throughput, over" CPU_NOTE },
  [THRIFT_HINT_PERF_GOAL_RES_UTIL] = { "perf_goal=res_util, under" CPU_NOTE,
                                       "perf_goal=res_util, full" CPU_NOTE,
                                       "perf_goal=res_util, over" CPU_NOTE },
};
#undef WALL_NOTE
#undef CPU_NOTE

static const gchar *const client_rfp_reasons[] = {
  [RDMA_PLAN_FULL] = "perf_goal=throughput, full, client side (rfp carries server replies only)",
  [RDMA_PLAN_OVER] = "perf_goal=throughput, over, client side (rfp carries server replies only)",
};

/* a server's RFP reply to a client that asks for it announced is written (rdma_plan_cache.h) */
static const gchar *const server_rfp_reasons[] = {
  [RDMA_PLAN_FULL] = "perf_goal=throughput, full (rfp written by direct_write_imm while the "
                     "client asks for its replies announced)",
  [RDMA_PLAN_OVER] = "perf_goal=throughput, over (rfp written by direct_write_imm while the "
                     "client asks for its replies announced)",
};

static const gchar *const proto_hint_reasons[] = {
  [THRIFT_HINT_PROTO_EAGER] = "proto=eager hint",
  [THRIFT_HINT_PROTO_WRITE_RNDV] = "proto=write_rndv hint",
  [THRIFT_HINT_PROTO_READ_RNDV] = "proto=read_rndv hint",
  [THRIFT_HINT_PROTO_DIRECT_WRITE_SEND] = "proto=direct_write_send hint",
  [THRIFT_HINT_PROTO_CHAINED_WRITE_SEND] = "proto=chained_write_send hint",
  [THRIFT_HINT_PROTO_DIRECT_WRITE_IMM] = "proto=direct_write_imm hint",
  [THRIFT_HINT_PROTO_RFP] = "proto=rfp hint",
  [THRIFT_HINT_PROTO_BATCHED_WRITE] = "proto=batched_write hint",
  [THRIFT_HINT_PROTO_EAGER_RNDV] = "proto=eager_rndv hint: eager up to 4 KiB, read_rndv above",
};

static const gchar *const polling_names[] = {
  [THRIFT_RDMA_POLLING_BUSY] = "busy",
  [THRIFT_RDMA_POLLING_EVENT] = "event",
  [THRIFT_RDMA_POLLING_HYBRID] = "hybrid",
};

static const gchar *const polling_hint_reasons[] = {
  [THRIFT_HINT_POLLING_BUSY] = "polling=busy hint",
  [THRIFT_HINT_POLLING_EVENT] = "polling=event hint",
  [THRIFT_HINT_POLLING_HYBRID] = "polling=hybrid hint",
};

static const gchar *const subscription_names[] = {
  [RDMA_PLAN_UNDER] = "under",
  [RDMA_PLAN_FULL] = "full",
  [RDMA_PLAN_OVER] = "over",
};

static const gchar *
proto_name (ThriftHintProto proto)
{
  const gchar *name = thrift_hint_proto_to_string (proto);

  return name != NULL ? name : "?";
}

const gchar *
rdma_plan_polling_name (ThriftRdmaPolling polling)
{
  return (guint) polling < G_N_ELEMENTS (polling_names) ? polling_names[polling] : "?";
}

static RdmaPlanSubscription
subscription_of (guint32 concurrency, const RdmaMachine *m)
{
  if (concurrency <= m->cores_per_node)
    return RDMA_PLAN_UNDER;
  return concurrency <= m->cores ? RDMA_PLAN_FULL : RDMA_PLAN_OVER;
}

/* The protocols and polling of @goal's cell of the table.  In RFP the client READs the reply
 * out of the server's memory, so only a server's reply can go by it; a client's large calls
 * keep Direct-WriteIMM, the row's small-message protocol. */
static void
plan_goal (ThriftHintPerfGoal goal, const ThriftHintSet *h, RdmaPlan *out)
{
  const PlanCell *cell = &table[goal][out->subscription == RDMA_PLAN_UNDER ? 0 : 1];

  out->small_proto = cell->small_proto;
  out->large_proto = cell->large_proto;
  out->small_polling = cell->small_polling;
  out->large_polling = cell->large_polling;
  out->proto_reason = out->polling_reason = goal_reasons[goal][out->subscription];
  /* The table's event polling is a prior measured on one cluster (paper Fig. 6): what a
   * wake-up costs against a spin differs by an order of magnitude between fabrics.  The
   * connection measures both ways and keeps the cheaper (rdma_poll_cost.h): by a call's time
   * while there are cores to spare (a thread's throughput is one over it; spinning until
   * blocking measures shorter), by its CPU once the cores are all taken, and for resource
   * utilisation (blocking until a spin measures less). */
  if (goal == THRIFT_HINT_PERF_GOAL_THROUGHPUT || goal == THRIFT_HINT_PERF_GOAL_RES_UTIL)
  {
    RdmaMeasure m = goal == THRIFT_HINT_PERF_GOAL_THROUGHPUT && out->subscription == RDMA_PLAN_UNDER
                        ? RDMA_MEASURE_WALL
                        : RDMA_MEASURE_CPU;

    if (out->small_polling == THRIFT_RDMA_POLLING_EVENT)
      out->small_measure = m;
    if (out->large_polling == THRIFT_RDMA_POLLING_EVENT)
      out->large_measure = m;
  }
  if (out->large_proto == THRIFT_HINT_PROTO_RFP && h->side != THRIFT_HINT_SIDE_SERVER)
  {
    out->large_proto = THRIFT_HINT_PROTO_DIRECT_WRITE_IMM;
    out->proto_reason = client_rfp_reasons[out->subscription];
  }
  else if (out->large_proto == THRIFT_HINT_PROTO_RFP)
  {
    out->unfetched_proto = THRIFT_HINT_PROTO_DIRECT_WRITE_IMM;
    out->proto_reason = server_rfp_reasons[out->subscription];
  }
}

static gboolean
peer_receives (guint32 peer_protocols, ThriftHintProto proto)
{
  return (guint) proto < 32 && (peer_protocols & (1u << proto)) != 0;
}

/* Sends by eager what the peer cannot receive; the reason keeps what chose the protocol and
 * says what the peer lacks ("perf_goal=latency, under, peer cannot receive
 * direct_write_imm: eager"). */
static void
plan_peer (RdmaPlan *out)
{
  ThriftHintProto missing[2];
  guint n = 0;
  gchar *reason;

  if (!peer_receives (out->peer_protocols, out->small_proto))
  {
    missing[n++] = out->small_proto;
    out->small_proto = THRIFT_HINT_PROTO_EAGER;
  }
  if (!peer_receives (out->peer_protocols, out->large_proto))
  {
    if (n == 0 || missing[0] != out->large_proto)
      missing[n++] = out->large_proto;
    out->large_proto = THRIFT_HINT_PROTO_EAGER;
  }
  if (out->unfetched_proto != THRIFT_HINT_PROTO_UNSET
      && !peer_receives (out->peer_protocols, out->unfetched_proto))
    out->unfetched_proto = THRIFT_HINT_PROTO_EAGER;
  if (n == 0)
    return;
  /* a bounded set of strings (reasons x protocols), so interning them does not grow */
  reason = g_strdup_printf ("%s, peer cannot receive %s%s%s: eager", out->proto_reason,
                            proto_name (missing[0]), n > 1 ? " or " : "",
                            n > 1 ? proto_name (missing[1]) : "");
  out->proto_reason = g_intern_string (reason);
  g_free (reason);
}

void
rdma_plan_make (const ThriftHintSet *h, ThriftRdmaPolling default_polling, guint32 peer_protocols,
                const RdmaMachine *m, RdmaPlan *out)
{
  guint32 set = h != NULL ? h->set : 0;

  g_return_if_fail (m != NULL && out != NULL);

  *out = (RdmaPlan){
    .threshold = RDMA_PLAN_THRESHOLD,
    .by_length = TRUE,
    .machine = *m,
    .peer_protocols = peer_protocols | (1u << THRIFT_HINT_PROTO_EAGER),
  };
  if (set & THRIFT_HINT_HAS_CONCURRENCY)
    out->concurrency = h->concurrency;
  /* no concurrency hint: as few calls as one node's cores, the paper's default case */
  out->subscription = out->concurrency != 0 ? subscription_of (out->concurrency, m)
                                            : RDMA_PLAN_UNDER;

  if ((set & THRIFT_HINT_HAS_PERF_GOAL) && (guint) h->perf_goal < G_N_ELEMENTS (table)
      && h->perf_goal != THRIFT_HINT_PERF_GOAL_UNSET)
  {
    plan_goal (h->perf_goal, h, out);
  }
  else
  {
    /* Code generated without hints, or a set that does not say what it wants: small
     * messages by Eager-SendRecv into the device's shared receive queue, which pins nothing
     * per connection and takes one WR per message as Direct-WriteIMM does; larger ones by
     * Direct-WriteIMM, whose ring is made for them (rdma_ring.h): the fast path, and the
     * transport's polling. */
    out->small_proto = THRIFT_HINT_PROTO_EAGER;
    out->large_proto = THRIFT_HINT_PROTO_DIRECT_WRITE_IMM;
    out->small_polling = out->large_polling = default_polling;
    out->proto_reason = h != NULL ? "no perf_goal (the fast path)" : "no hint set (the fast path)";
    out->polling_reason = h != NULL ? "no perf_goal (the transport's polling)"
                                    : "no hint set (the transport's polling)";
  }

  /* The expected size decides small or large once, for every message of the set: a size
   * known in advance beats the length of the first bytes flushed. */
  if (set & THRIFT_HINT_HAS_PAYLOAD_SIZE)
  {
    gboolean large = h->payload_size > out->threshold;

    out->by_length = FALSE;
    out->payload_size = h->payload_size;
    out->small_proto = out->large_proto = large ? out->large_proto : out->small_proto;
    out->small_polling = out->large_polling = large ? out->large_polling : out->small_polling;
    out->small_measure = out->large_measure = large ? out->large_measure : out->small_measure;
  }
  /* the reason says so where a half that is used left its polling to measurement (with a
   * payload_size, only the half it chose is) */
  if (out->small_measure != RDMA_MEASURE_NONE || out->large_measure != RDMA_MEASURE_NONE)
    out->polling_reason = measured_reasons[h->perf_goal][out->subscription];

  /* explicit hints beat the table, for every size; the pair eager_rndv (AR-gRPC's, the
   * paper's Hybrid-EagerRNDV) splits at the plan's own threshold, and a payload_size hint
   * picks its one half as it does the table's */
  if ((set & THRIFT_HINT_HAS_PROTO) && (guint) h->proto < G_N_ELEMENTS (proto_hint_reasons)
      && h->proto != THRIFT_HINT_PROTO_UNSET)
  {
    out->unfetched_proto = THRIFT_HINT_PROTO_UNSET; /* the hint's RFP is fetched */
    if (h->proto == THRIFT_HINT_PROTO_EAGER_RNDV)
    {
      out->small_proto = THRIFT_HINT_PROTO_EAGER;
      out->large_proto = THRIFT_HINT_PROTO_READ_RNDV;
      if (!out->by_length)
        out->small_proto = out->large_proto = out->payload_size > out->threshold ? out->large_proto
                                                                                 : out->small_proto;
    }
    else
    {
      out->small_proto = out->large_proto = h->proto;
    }
    out->proto_reason = proto_hint_reasons[h->proto];
  }
  if ((set & THRIFT_HINT_HAS_POLLING) && (guint) h->polling < G_N_ELEMENTS (polling_hint_reasons)
      && h->polling != THRIFT_HINT_POLLING_UNSET)
  {
    static const ThriftRdmaPolling from_hint[] = {
      [THRIFT_HINT_POLLING_BUSY] = THRIFT_RDMA_POLLING_BUSY,
      [THRIFT_HINT_POLLING_EVENT] = THRIFT_RDMA_POLLING_EVENT,
      [THRIFT_HINT_POLLING_HYBRID] = THRIFT_RDMA_POLLING_HYBRID,
    };

    out->small_polling = out->large_polling = from_hint[h->polling];
    out->small_measure = out->large_measure = RDMA_MEASURE_NONE;
    out->polling_reason = polling_hint_reasons[h->polling];
  }

  /* last, so that a hint naming a protocol the peer lacks falls back too */
  plan_peer (out);

  /* as the hint says; rdma_numa_plan checks it against the machine and the property */
  if ((set & THRIFT_HINT_HAS_NUMA) && h->numa <= G_MAXINT)
  {
    out->numa_node = (gint) h->numa;
    out->numa_reason = "numa hint";
  }
  else
  {
    out->numa_node = -1;
    out->numa_reason = "no numa hint";
  }
}

static void
append_subscription (GString *s, const RdmaPlan *p)
{
  const gchar *name = subscription_names[p->subscription];

  if (p->concurrency == 0)
    g_string_append_printf (s, "%s (no concurrency hint)", name);
  else if (p->subscription == RDMA_PLAN_UNDER)
    g_string_append_printf (s, "%s (concurrency=%u <= %u cores per NUMA node)", name,
                            p->concurrency, p->machine.cores_per_node);
  else if (p->subscription == RDMA_PLAN_FULL)
    g_string_append_printf (s, "%s (concurrency=%u > %u cores per NUMA node, <= %u cores)", name,
                            p->concurrency, p->machine.cores_per_node, p->machine.cores);
  else
    g_string_append_printf (s, "%s (concurrency=%u > %u cores)", name, p->concurrency,
                            p->machine.cores);
}

static void
append_peer (GString *s, guint32 peer_protocols)
{
  const gchar *sep = "";

  if ((peer_protocols & RDMA_PLAN_PEER_ANY) == RDMA_PLAN_PEER_ANY)
  {
    g_string_append (s, "all");
    return;
  }
  for (guint proto = THRIFT_HINT_PROTO_EAGER; proto <= RDMA_PLAN_LAST_PROTO; proto++)
    if (peer_protocols & (1u << proto))
    {
      g_string_append_printf (s, "%s%s", sep, proto_name (proto));
      sep = ",";
    }
}

gchar *
rdma_plan_set_name (const ThriftHintSet *h)
{
  return g_strdup_printf ("%s.%s (%s side)", h->service != NULL ? h->service : "?",
                          h->function != NULL ? h->function : "(service default)",
                          h->side == THRIFT_HINT_SIDE_SERVER ? "server" : "client");
}

gchar *
rdma_plan_describe (const RdmaPlan *p, const ThriftHintSet *h)
{
  GString *s = g_string_new (NULL);

  g_return_val_if_fail (p != NULL, NULL);

  if (h == NULL)
    g_string_append (s, "(no hint set)");
  else
    g_string_append_printf (s, "%s.%s %s", h->service != NULL ? h->service : "?",
                            h->function != NULL ? h->function : "(service default)",
                            h->side == THRIFT_HINT_SIDE_SERVER ? "server" : "client");
  g_string_append_printf (
      s, ": small (<= %" G_GUINT64_FORMAT " B) %s/%s, large %s/%s  [size: ", p->threshold,
      proto_name (p->small_proto), rdma_plan_polling_name (p->small_polling),
      proto_name (p->large_proto), rdma_plan_polling_name (p->large_polling));
  if (p->by_length)
    g_string_append (s, "by message length");
  else
    g_string_append_printf (
        s, "payload_size=%" G_GUINT64_FORMAT " %s %" G_GUINT64_FORMAT ", all %s", p->payload_size,
        p->payload_size > p->threshold ? ">" : "<=", p->threshold,
        p->payload_size > p->threshold ? "large" : "small");
  g_string_append_printf (s, "; proto: %s; polling: %s; subscription: ", p->proto_reason,
                          p->polling_reason);
  append_subscription (s, p);
  g_string_append (s, "; peer: ");
  append_peer (s, p->peer_protocols);
  if (p->numa_node >= 0)
    g_string_append_printf (s, "; numa: node %d (%s)", p->numa_node, p->numa_reason);
  else
    g_string_append_printf (s, "; numa: none (%s)", p->numa_reason);
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}
