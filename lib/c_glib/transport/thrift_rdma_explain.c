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

/* thrift_rdma_explain.c: hint sets explained in one line each (see thrift_rdma_explain.h). */
#include "config.h"

#include <string.h>

#include <thrift/c_glib/transport/thrift_rdma_explain.h>

#include "rdma/rdma_machine.h"
#include "rdma/rdma_numa.h"
#include "rdma/rdma_plan.h"

gchar *
thrift_rdma_explain_set (const ThriftHintSet *hints, ThriftRdmaPolling default_polling)
{
  const RdmaMachine *m = rdma_machine_get ();
  RdmaPlan plan;

  /* no peer yet: what this side would choose if the peer could receive anything */
  rdma_plan_make (hints, default_polling, RDMA_PLAN_PEER_ANY, m, &plan);
  /* no transport either: the hint against this machine, no numa-node property */
  rdma_numa_plan (&plan, hints, RDMA_NUMA_NONE, FALSE, RDMA_NUMA_NONE, m);
  return rdma_plan_describe (&plan, hints);
}

gchar *
thrift_rdma_explain_sets (const ThriftHintSet *const *sets, ThriftRdmaPolling default_polling)
{
  GString *s = g_string_new (NULL);

  g_return_val_if_fail (sets != NULL, g_string_free (s, FALSE));

  for (; *sets != NULL; sets++)
  {
    g_autofree gchar *line = thrift_rdma_explain_set (*sets, default_polling);

    g_string_append (s, line);
    g_string_append_c (s, '\n');
  }
  return g_string_free (s, FALSE);
}

gboolean
thrift_rdma_explain_enabled (void)
{
  static gsize enabled = 0;

  /* 1 + the answer, so that "no" is not the 0 that g_once_init_leave refuses */
  if (g_once_init_enter (&enabled))
  {
    const gchar *v = g_getenv ("THRIFT_RDMA_EXPLAIN");

    g_once_init_leave (&enabled, 1 + (v != NULL && *v != '\0' && strcmp (v, "0") != 0));
  }
  return enabled == 2;
}

gboolean
thrift_rdma_explain_print_once (const ThriftHintSet *hints, ThriftRdmaPolling default_polling)
{
  static GMutex lock;
  static GHashTable *seen = NULL; /* (owned): the sets printed, by pointer, never freed */
  static const gchar no_set;      /* the key of NULL, no hint set */
  g_autofree gchar *line = NULL;
  gboolean first;

  if (!thrift_rdma_explain_enabled ())
    return FALSE;
  g_mutex_lock (&lock);
  if (seen == NULL)
    seen = g_hash_table_new (NULL, NULL);
  first = g_hash_table_add (seen, hints != NULL ? (gpointer) hints : (gpointer) &no_set);
  g_mutex_unlock (&lock);
  if (!first)
    return FALSE;
  line = thrift_rdma_explain_set (hints, default_polling);
  g_printerr ("ThriftRdma explain: %s\n", line);
  return TRUE;
}
