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

/* rdma_plan_cache.c: a connection's plans by hint set (rdma_plan_cache.h). */
#include "config.h"

#include <thrift/c_glib/transport/thrift_rdma_explain.h>

#include "rdma_machine.h"
#include "rdma_numa.h"
#include "rdma_plan_cache.h"
#include "proto/rdma_proto_rfp.h"

struct _RdmaPlanCache
{
  GHashTable *plans;             /* const ThriftHintSet * -> RdmaCachedPlan (owned) */
  const ThriftHintSet *last_set; /* the last set looked up, and its plan */
  const RdmaCachedPlan *last;
};

RdmaPlanCache *
rdma_plan_cache_new (void)
{
  RdmaPlanCache *cache = g_new0 (RdmaPlanCache, 1);

  cache->plans = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  return cache;
}

void
rdma_plan_cache_reset (RdmaPlanCache *cache)
{
  g_hash_table_remove_all (cache->plans);
  cache->last_set = NULL;
  cache->last = NULL;
}

void
rdma_plan_cache_free (RdmaPlanCache *cache)
{
  if (cache == NULL)
    return;
  g_hash_table_unref (cache->plans);
  g_free (cache);
}

/* The node of @plan (made from @h) on @conn: @h's numa beats the property; said once per set
 * when the hint names a node the machine lacks, or comes too late for the buffers (they
 * were placed at connect). */
static void
plan_numa (RdmaConn *conn, const ThriftHintSet *h, gint numa_node, RdmaPlan *plan)
{
  gint buffer_node = rdma_conn_numa_node (conn);
  const RdmaMachine *m = rdma_machine_get ();

  rdma_numa_plan (plan, h, numa_node, TRUE, buffer_node, m);
  rdma_numa_warn_ignored (h, m);
  if (!rdma_numa_buffers_on (plan->numa_node, buffer_node, m))
    rdma_numa_warn_late (h, plan->numa_node, buffer_node);
}

const RdmaCachedPlan *
rdma_plan_cache_get (RdmaPlanCache *cache, RdmaConn *conn, const ThriftHintSet *h,
                     ThriftRdmaPolling polling, gint numa_node)
{
  /* (no hints: a key no hint set has) */
  gconstpointer key = h != NULL ? (gconstpointer) h : (gconstpointer) cache;
  RdmaCachedPlan *cp;
  guint32 peer = 0;

  if (cache->last != NULL && cache->last_set == h)
    return cache->last;
  cp = g_hash_table_lookup (cache->plans, key);
  if (cp == NULL)
  {
    /* the peer's accepted protocols, in the hint's numbering */
    for (guint i = 0; i < RDMA_PROTO_COUNT; i++)
      if (rdma_proto_registry[i] != NULL && (rdma_conn_peer_protocols (conn) & (1u << i)))
        peer |= 1u << rdma_proto_registry[i]->hint;
    cp = g_new0 (RdmaCachedPlan, 1);
    rdma_plan_make (h, polling, peer, rdma_machine_get (), &cp->plan);
    plan_numa (conn, h, numa_node, &cp->plan);
    cp->small = rdma_proto_for_hint (cp->plan.small_proto);
    cp->large = rdma_proto_for_hint (cp->plan.large_proto);
    if (cp->plan.unfetched_proto != THRIFT_HINT_PROTO_UNSET)
      cp->unfetched = rdma_proto_for_hint (cp->plan.unfetched_proto);
    g_hash_table_insert (cache->plans, (gpointer) key, cp);
    if (thrift_rdma_explain_enabled ())
    {
      gchar *line = rdma_plan_describe (&cp->plan, h);
      g_printerr ("ThriftRdma explain: %s\n", line);
      g_free (line);
    }
  }
  cache->last_set = h;
  cache->last = cp;
  return cp;
}

const RdmaProtoOps *
rdma_plan_cache_proto (const RdmaCachedPlan *cp, RdmaConn *conn, gsize len)
{
  const RdmaProtoOps *ops = (guint64) len <= cp->plan.threshold ? cp->small : cp->large;

  if (ops == &rdma_proto_rfp_ops && cp->unfetched != NULL && rdma_proto_rfp_peer_announced (conn))
    return cp->unfetched;
  return ops;
}
