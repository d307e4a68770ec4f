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
 * rdma_plan_cache.h: what each hint set selects on one connection (rdma_plan.h), made the
 * first time the set is seen there (with the peer's protocols and the node of the
 * connection's buffers), so that a call finds its protocols and polling without a lookup by
 * name.  Keyed by the set's address: generated hint tables are static.  Not thread-safe (one
 * per connection, used by its owner).
 */
#ifndef _RDMA_PLAN_CACHE_H
#define _RDMA_PLAN_CACHE_H

#include <glib.h>

#include <thrift/c_glib/transport/thrift_hints.h>
#include <thrift/c_glib/transport/thrift_rdma.h>

#include "rdma_conn.h"
#include "rdma_plan.h"
#include "rdma_proto.h"

G_BEGIN_DECLS

typedef struct
{
  RdmaPlan plan;
  const RdmaProtoOps *small, *large; /* NULL: not implemented, Eager-SendRecv carries it */
  /* What carries a message the table gave to RFP while the peer asks for every RFP message to
   * be announced (a client whose waits block, rdma_proto_rfp.c): the announcement is a SEND,
   * as many work requests as writing the message itself, and the peer would then pay a READ
   * round trip and a second wake-up to fetch it, on any fabric; so it is written, by the
   * plan's unfetched_proto: Direct-WriteIMM (the protocol a client's large calls keep in that
   * cell), or eager where the peer has no ring.  Only for a table's choice: a proto=rfp hint
   * still fetches. */
  const RdmaProtoOps *unfetched; /* NULL: keeps RFP */
} RdmaCachedPlan;

typedef struct _RdmaPlanCache RdmaPlanCache;

RdmaPlanCache *rdma_plan_cache_new (void);
/* Forgets every plan (the default polling, the NUMA property or the connection changed). */
void rdma_plan_cache_reset (RdmaPlanCache *cache);
void rdma_plan_cache_free (RdmaPlanCache *cache);

/* The plan of @h (NULL: no hints) on @conn, @polling the default mode and @numa_node the
 * numa-node property (-1: none); made (and explained, THRIFT_RDMA_EXPLAIN) the first time. */
const RdmaCachedPlan *rdma_plan_cache_get (RdmaPlanCache *cache, RdmaConn *conn,
                                           const ThriftHintSet *h, ThriftRdmaPolling polling,
                                           gint numa_node);

/* The protocol of a @len-byte message by @cp on @conn now (its unfetched one in RFP's place
 * while the peer asks for announcements). */
const RdmaProtoOps *rdma_plan_cache_proto (const RdmaCachedPlan *cp, RdmaConn *conn, gsize len);

G_END_DECLS

#endif
