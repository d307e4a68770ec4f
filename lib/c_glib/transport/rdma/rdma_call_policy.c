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

/* rdma_call_policy.c: what a ThriftRdma decides per message from its hints
 * (rdma_call_policy.h). */
#include "config.h"

#include <thrift/c_glib/transport/thrift_rdma_explain.h>

#include "rdma_budget.h"
#include "rdma_bulk.h"
#include "rdma_call_policy.h"
#include "rdma_lend_cost.h"
#include "rdma_machine.h"
#include "rdma_poll_cost.h"
#include "rdma_select.h"

void
rdma_call_policy_init (RdmaCallPolicy *p)
{
  p->polling = THRIFT_RDMA_DEFAULT_POLLING;
  p->effective = p->polling;
  rdma_bulk_props_init (&p->bulk, FALSE);
  p->numa_node = p->poll_node = THRIFT_RDMA_DEFAULT_NUMA_NODE;
  p->plans = rdma_plan_cache_new ();
}

void
rdma_call_policy_clear (RdmaCallPolicy *p)
{
  g_clear_pointer (&p->plans, rdma_plan_cache_free);
}

void
rdma_call_policy_set_polling (RdmaCallPolicy *p, ThriftRdmaPolling polling)
{
  p->polling = polling;
  p->effective = p->polling;
  p->measure = RDMA_MEASURE_NONE;
  rdma_plan_cache_reset (p->plans); /* they were made with the old default */
}

void
rdma_call_policy_set_numa_node (RdmaCallPolicy *p, gint numa_node)
{
  p->numa_node = numa_node;
  rdma_plan_cache_reset (p->plans); /* they were made with the old one */
}

gint
rdma_call_policy_buffer_node (const ThriftHintSet *h, gint numa_node)
{
  RdmaNumaChoice choice;

  rdma_numa_choose (h, numa_node, rdma_machine_get (), &choice);
  return choice.node;
}

/* The plan of @h on @conn (the properties' polling and node). */
static const RdmaCachedPlan *
plan_for (RdmaCallPolicy *p, RdmaConn *conn, const ThriftHintSet *h)
{
  return rdma_plan_cache_get (p->plans, conn, h, p->polling, p->numa_node);
}

/* THRIFT_RDMA_EXPLAIN: the default set's plan, as the connection is made. */
static void
explain_default (RdmaCallPolicy *p, RdmaConn *conn)
{
  if (thrift_rdma_explain_enabled ())
    plan_for (p, conn, p->hints);
}

void
rdma_call_policy_connected (RdmaCallPolicy *p, RdmaConn *conn, gint node)
{
  rdma_plan_cache_reset (p->plans);
  p->poll_node = node;
  explain_default (p, conn);
}

void
rdma_call_policy_accepted (RdmaCallPolicy *p, RdmaConn *conn)
{
  /* the node the server chose for the connection (its hints' numa or its numa-node) */
  p->numa_node = p->poll_node = rdma_conn_numa_node (conn);
  rdma_conn_set_polling (conn, p->effective, p->measure);
  explain_default (p, conn);
}

void
rdma_call_policy_closed (RdmaCallPolicy *p)
{
  rdma_plan_cache_reset (p->plans);
}

void
rdma_call_policy_use (RdmaCallPolicy *p, RdmaConn *conn, const ThriftHintSet *h)
{
  if (h == NULL)
    h = p->hints;
  if (conn == NULL)
  {
    p->effective = rdma_select_polling (h, p->polling, &p->measure);
    return;
  }
  /* the set's cached plan already has it: no plan is made again on every message */
  {
    const RdmaCachedPlan *cp = plan_for (p, conn, h);

    p->effective = cp->plan.small_polling;
    p->measure = cp->plan.small_measure;
    p->poll_node = cp->plan.numa_node;
  }
  rdma_conn_set_polling (conn, p->effective, p->measure);
}

void
rdma_call_policy_send (RdmaCallPolicy *p, RdmaConn *conn, gsize len)
{
  const ThriftHintSet *h = rdma_call_policy_message_set (p);

  if (h != p->checked_hints)
  {
    /* once per change of hint set, not per call: the check takes a process-wide lock */
    rdma_select_warn_unimplemented (h);
    p->checked_hints = h;
  }
  rdma_call_policy_use (p, conn, h);
  rdma_call_policy_follow_numa (p);
  rdma_conn_set_tx_proto (conn, rdma_plan_cache_proto (plan_for (p, conn, h), conn, len));
}

void
rdma_call_policy_message_read (RdmaCallPolicy *p, RdmaConn *conn)
{
  rdma_call_policy_use (p, conn, NULL);
}

gchar *
rdma_call_policy_explain (RdmaCallPolicy *p, RdmaConn *conn, const ThriftHintSet *h)
{
  const RdmaPlan *plan;
  RdmaMeasure measure;
  gchar *line, *full;
  guint64 refused;

  /* what flush does with a message written without a set */
  if (h == NULL)
    h = p->hints;
  plan = &plan_for (p, conn, h)->plan;
  line = rdma_plan_describe (plan, h);
  measure = plan->small_measure != RDMA_MEASURE_NONE ? plan->small_measure : plan->large_measure;
  if (measure != RDMA_MEASURE_NONE)
  {
    /* what the connection's calls measured, which decides between spinning and blocking */
    g_autofree gchar *cost = rdma_poll_cost_describe (rdma_conn_poll_cost (conn), measure);

    full = g_strdup_printf ("%s (measured on this connection: %s)", line, cost);
    g_free (line);
    line = full;
  }
  if (rdma_call_policy_bulk_way (p) != RDMA_BULK_LEND
      && (rdma_conn_stats (conn)->bulk_sent > 0 || rdma_conn_stats (conn)->bulk_copied > 0))
  {
    /* what the device's calls measured, which decides between lending (or staging) and
     * copying */
    RdmaLendCost *lc = rdma_bulk_lend_cost (conn, rdma_call_policy_bulk_way (p)
                                                      == RDMA_BULK_STAGE_MEASURED);
    g_autofree gchar *cost = lc != NULL ? rdma_lend_cost_describe (lc) : NULL;

    if (cost != NULL)
    {
      full = g_strdup_printf ("%s (measured on this device: %s)", line, cost);
      g_free (line);
      line = full;
    }
  }
  refused = rdma_conn_stats (conn)->budget_refusals;
  if (refused == 0)
    return line;
  /* what the plan chose is not what went: say why */
  full = g_strdup_printf ("%s (max-pinned-bytes %" G_GUINT64_FORMAT " reached: %" G_GUINT64_FORMAT
                          " buffers not made, those messages by eager)",
                          line, rdma_budget_limit (), refused);
  g_free (line);
  return full;
}
