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
 * rdma_plan.h: what the engine does with the messages of one hint set, decided once when the
 * set changes (paper Sec. 3.3, Fig. 6): the protocol and the polling mode of a small
 * (<= 4 KiB) and of a large message, and why.  The paper's design-space table lives in one
 * function, rdma_plan_make (); the flush only compares a length with the threshold
 * (rdma_plan_proto, rdma_plan_polling).
 *
 * The plan names protocols by their hint (ThriftHintProto), not by an implementation: the
 * engine maps a hint to the protocol it has and reports its own fallbacks, so a plan made
 * today stays right as protocols land.
 */
#ifndef _RDMA_PLAN_H
#define _RDMA_PLAN_H

#include <glib.h>

#include <thrift/c_glib/transport/thrift_hints.h>
#include <thrift/c_glib/transport/thrift_rdma.h>

#include "rdma_machine.h"

G_BEGIN_DECLS

/* A message of at most this many bytes is small (the paper's 4 KB threshold). */
#define RDMA_PLAN_THRESHOLD G_GUINT64_CONSTANT (4096)

/* The last ThriftHintProto that names one protocol: the values after it (eager_rndv) name
 * pairs, which a plan resolves into its small and large protocols. */
#define RDMA_PLAN_LAST_PROTO THRIFT_HINT_PROTO_BATCHED_WRITE

/* peer_protocols of a peer that can receive every protocol (or is not known yet): one bit
 * (1u << ThriftHintProto) per protocol. */
#define RDMA_PLAN_PEER_ANY \
  (((1u << (RDMA_PLAN_LAST_PROTO + 1)) - 1) & ~(1u << THRIFT_HINT_PROTO_UNSET))

/* What a connection's calls measure to choose between spinning and blocking, where the plan
 * leaves that to measurement (rdma_poll_cost.h): the table's event polling is the prior, and
 * a spin is taken once it measures cheaper by the goal's measure.  Throughput with cores to
 * spare is one over a call's time; with the cores all taken, or for resource utilisation, it
 * is the CPU a call takes. */
typedef enum
{
  RDMA_MEASURE_NONE = 0, /* the polling mode as it is: no measured choice */
  RDMA_MEASURE_WALL,     /* the shorter call */
  RDMA_MEASURE_CPU       /* the less CPU per call */
} RdmaMeasure;

/* The concurrency hint against the machine.  No concurrency hint counts as under. */
typedef enum
{
  RDMA_PLAN_UNDER = 0, /* concurrency <= the cores of one NUMA node */
  RDMA_PLAN_FULL,      /* concurrency <= all cores */
  RDMA_PLAN_OVER       /* more calls than cores */
} RdmaPlanSubscription;

typedef struct
{
  ThriftHintProto small_proto, large_proto; /* never UNSET, never a pair (eager_rndv) */
  ThriftRdmaPolling small_polling, large_polling;
  RdmaMeasure small_measure, large_measure; /* with event polling only */
  ThriftHintProto unfetched_proto; /* what carries a message the table gave to RFP while the
                                     * peer asks for it announced (rdma_plan_cache.h); UNSET:
                                     * RFP keeps it (a proto=rfp hint) */
  guint64 threshold;    /* RDMA_PLAN_THRESHOLD: a message of length <= threshold is small */
  gboolean by_length;   /* no payload_size hint: decided per message by its length;
                             * otherwise both halves are the one payload_size chose */
  guint64 payload_size; /* the hint, when !by_length */
  /* what decided each, for explain: static or interned strings, never freed */
  const gchar *proto_reason, *polling_reason;

  RdmaPlanSubscription subscription;
  guint32 concurrency;    /* the hint, 0 if none */
  RdmaMachine machine;    /* what subscription was computed against */
  guint32 peer_protocols; /* as passed, with eager added */
  /* the NUMA node of the set's buffers and polling thread (-1: none) and why: the hint's
   * numa as rdma_plan_make found it; rdma_numa_plan () checks it against the machine and
   * the transport's numa-node property */
  gint numa_node;
  const gchar *numa_reason;
} RdmaPlan;

/* Makes the plan for messages written with @h (NULL: code generated without hints), on a
 * transport whose polling property is @default_polling, to a peer that can receive the
 * protocols of @peer_protocols (bits 1u << ThriftHintProto; eager is always assumed; pass
 * RDMA_PLAN_PEER_ANY before the peer is known), on machine @m. */
void rdma_plan_make (const ThriftHintSet *h, ThriftRdmaPolling default_polling,
                     guint32 peer_protocols, const RdmaMachine *m, RdmaPlan *out);

/* The protocol and polling mode of a message of @len bytes: one comparison, no lookup. */
static inline ThriftHintProto
rdma_plan_proto (const RdmaPlan *p, gsize len)
{
  return (guint64) len <= p->threshold ? p->small_proto : p->large_proto;
}

static inline ThriftRdmaPolling
rdma_plan_polling (const RdmaPlan *p, gsize len)
{
  return (guint64) len <= p->threshold ? p->small_polling : p->large_polling;
}

static inline RdmaMeasure
rdma_plan_measure (const RdmaPlan *p, gsize len)
{
  return (guint64) len <= p->threshold ? p->small_measure : p->large_measure;
}

/* One line (no newline) saying what @p does and why, for @h (the set @p was made from; its
 * name starts the line).  The format is thrift_rdma_explain_set ()'s, documented in
 * thrift_rdma_explain.h.  Free with g_free (). */
gchar *rdma_plan_describe (const RdmaPlan *p, const ThriftHintSet *h);

/* "Service.function (client side)": how warnings and explain name @h.  Free with g_free (). */
gchar *rdma_plan_set_name (const ThriftHintSet *h);

/* The IDL spelling of a polling mode ("busy", "event", "hybrid"). */
const gchar *rdma_plan_polling_name (ThriftRdmaPolling polling);

G_END_DECLS

#endif
