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

/* rdma_select.c: hints to polling mode and protocol (see rdma_select.h). */
#include "config.h"

#include "rdma_select.h"

#include "rdma_machine.h"
#include "rdma_plan.h"

static gboolean
oversubscribed (const ThriftHintSet *h)
{
  return (h->set & THRIFT_HINT_HAS_CONCURRENCY) && h->concurrency > rdma_machine_get ()->cores;
}

ThriftRdmaPolling
rdma_select_polling (const ThriftHintSet *h, ThriftRdmaPolling fallback, RdmaMeasure *measure)
{
  RdmaPlan plan;

  if (measure != NULL)
    *measure = RDMA_MEASURE_NONE;
  if (h == NULL)
    return fallback;
  /* the table is in one place, rdma_plan_make; the peer does not matter to polling */
  rdma_plan_make (h, fallback, RDMA_PLAN_PEER_ANY, rdma_machine_get (), &plan);
  /* no length here: a small message's mode, the common case (with payload_size, every
   * message's) */
  if (measure != NULL)
    *measure = rdma_plan_measure (&plan, 0);
  return rdma_plan_polling (&plan, 0);
}

guint
rdma_select_warn_unimplemented (const ThriftHintSet *h)
{
  static GMutex lock;
  static GHashTable *seen = NULL;
  g_autofree gchar *name = NULL;
  gboolean first;
  guint n = 0;

  if (h == NULL)
    return 0;
  g_mutex_lock (&lock);
  if (seen == NULL)
    seen = g_hash_table_new (NULL, NULL);
  first = g_hash_table_add (seen, (gpointer) h);
  g_mutex_unlock (&lock);
  if (!first)
    return 0;

  name = rdma_plan_set_name (h);
  /* (every proto hint has its protocol in the registry, eager_rndv a pair of two that are:
   * /rdma_engine/proto/registry_complete) */
  if ((h->set & THRIFT_HINT_HAS_TRANSPORT) && h->transport == THRIFT_HINT_TRANSPORT_TCP)
  {
    /* hybrid:// sends such calls by its TCP leg: only an RDMA-only connection sees them */
    g_warning ("ThriftRdma: %s: hint transport = tcp cannot be followed on an rdma:// "
               "connection; the calls go by RDMA (use hybrid:// to send them by TCP)",
               name);
    n++;
  }
  if (rdma_select_polling (h, THRIFT_RDMA_POLLING_HYBRID, NULL) == THRIFT_RDMA_POLLING_BUSY
      && oversubscribed (h))
  {
    g_warning ("ThriftRdma: %s asks for busy polling with concurrency %u on %u cores: "
               "throughput collapses when spinning threads outnumber cores",
               name, h->concurrency, rdma_machine_get ()->cores);
    n++;
  }
  return n;
}
