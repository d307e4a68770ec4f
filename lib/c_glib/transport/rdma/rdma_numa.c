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

/* rdma_numa.c: NUMA binding of connections (see rdma_numa.h). */
#include "config.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>

#include <thrift/c_glib/transport/thrift_transport.h>

#include "rdma_numa.h"

gboolean
rdma_numa_check_property (gint node, const RdmaMachine *m, const gchar *who, GError **error)
{
  g_autofree gchar *nodes = NULL;

  if (node == RDMA_NUMA_NONE || rdma_machine_has_node (m, node))
    return TRUE;
  nodes = rdma_machine_nodes_text (m);
  /* not the engine's domain: a setting that was wrong from the start, as "already open" */
  g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET,
               "%s: numa-node %d is not a NUMA node of this machine (its nodes: %s%s); use "
               "-1 for none or one of those",
               who, node, nodes, m->numa_available ? "" : ", libnuma says NUMA is not available");
  return FALSE;
}

void
rdma_numa_choose (const ThriftHintSet *h, gint property, const RdmaMachine *m, RdmaNumaChoice *out)
{
  *out = (RdmaNumaChoice){ .node = RDMA_NUMA_NONE, .by = RDMA_NUMA_BY_NONE };
  if (h != NULL && (h->set & THRIFT_HINT_HAS_NUMA))
  {
    if (h->numa < RDMA_MACHINE_MAX_NODES && rdma_machine_has_node (m, (gint) h->numa))
    {
      out->node = (gint) h->numa;
      out->by = RDMA_NUMA_BY_HINT;
      return;
    }
    out->hint_ignored = TRUE;
  }
  if (property != RDMA_NUMA_NONE && rdma_machine_has_node (m, property))
  {
    out->node = property;
    out->by = RDMA_NUMA_BY_PROPERTY;
  }
}

gboolean
rdma_numa_buffers_on (gint node, gint buffer_node, const RdmaMachine *m)
{
  if (node == RDMA_NUMA_NONE || node == buffer_node)
    return TRUE;
  if (buffer_node != RDMA_NUMA_NONE)
    return FALSE;
  /* placed on no node: with one node, that is still node 0 */
  return !m->numa_available || m->max_node == 0;
}

const gchar *
rdma_numa_reason (const RdmaNumaChoice *c, const ThriftHintSet *h, gint property,
                  gboolean connected, gint buffer_node, const RdmaMachine *m)
{
  GString *s = g_string_new (NULL);
  const gchar *interned;

  if (c->hint_ignored)
  {
    g_autofree gchar *nodes = rdma_machine_nodes_text (m);
    g_string_append_printf (s, "hint numa=%u ignored, nodes here: %s", h->numa, nodes);
  }
  switch (c->by)
  {
  case RDMA_NUMA_BY_HINT:
    g_string_append (s, "numa hint");
    break;
  case RDMA_NUMA_BY_PROPERTY:
    g_string_append_printf (s, "%s%s", s->len > 0 ? "; " : "",
                            !connected || buffer_node == property
                                ? "numa-node property"
                                : "the default hint set's numa, at connect");
    break;
  default:
    if (s->len == 0)
      g_string_append (s, "no numa hint");
    if (connected)
      g_string_append (s, ", no numa-node property");
    break;
  }
  if (connected && !rdma_numa_buffers_on (c->node, buffer_node, m))
  {
    if (buffer_node == RDMA_NUMA_NONE)
      g_string_append (s, "; polling thread only, the buffers were placed at connect on no "
                          "node");
    else
      g_string_append_printf (s,
                              "; polling thread only, the buffers were placed at connect "
                              "on node %d",
                              buffer_node);
  }
  /* a bounded set (sources x nodes), like the plan's other reasons */
  interned = g_intern_string (s->str);
  g_string_free (s, TRUE);
  return interned;
}

void
rdma_numa_plan (RdmaPlan *p, const ThriftHintSet *h, gint property, gboolean connected,
                gint buffer_node, const RdmaMachine *m)
{
  RdmaNumaChoice c;

  /* a connection without a usable hint keeps the node it was opened with */
  rdma_numa_choose (h, connected ? buffer_node : property, m, &c);
  p->numa_node = c.node;
  p->numa_reason = rdma_numa_reason (&c, h, property, connected, buffer_node, m);
}

/* TRUE the first time @h is seen in @table (a process-wide set, by pointer). */
static gboolean
first_time (GHashTable **table, const ThriftHintSet *h)
{
  static GMutex lock;
  gboolean first;

  g_mutex_lock (&lock);
  if (*table == NULL)
    *table = g_hash_table_new (NULL, NULL);
  first = g_hash_table_add (*table, (gpointer) h);
  g_mutex_unlock (&lock);
  return first;
}

gboolean
rdma_numa_warn_ignored (const ThriftHintSet *h, const RdmaMachine *m)
{
  static GHashTable *seen = NULL;
  g_autofree gchar *name = NULL, *nodes = NULL;

  if (h == NULL || !(h->set & THRIFT_HINT_HAS_NUMA)
      || (h->numa < RDMA_MACHINE_MAX_NODES && rdma_machine_has_node (m, (gint) h->numa))
      || !first_time (&seen, h))
    return FALSE;
  name = rdma_plan_set_name (h);
  nodes = rdma_machine_nodes_text (m);
  g_warning ("ThriftRdma: %s: hint numa = %u names a NUMA node this machine does not have "
             "(nodes available: %s%s); the hint is ignored",
             name, h->numa, nodes, m->numa_available ? "" : "; libnuma says NUMA is not available");
  return TRUE;
}

gboolean
rdma_numa_warn_late (const ThriftHintSet *h, gint node, gint buffer_node)
{
  static GHashTable *seen = NULL;
  g_autofree gchar *name = NULL;

  if (h == NULL || !first_time (&seen, h))
    return FALSE;
  name = rdma_plan_set_name (h);
  if (buffer_node == RDMA_NUMA_NONE)
    g_warning ("ThriftRdma: %s: hint numa = %d came after the connection's buffers were "
               "registered, on no particular node: the polling thread is bound to node %d, "
               "the buffers stay where they are; to place them too, give the node at open "
               "(the numa-node property, numa=%d in the URI, or a \"hints\" set with numa)",
               name, node, node, node);
  else
    g_warning ("ThriftRdma: %s: hint numa = %d came after the connection's buffers were "
               "registered on node %d: the polling thread is bound to node %d, the buffers "
               "stay on node %d",
               name, node, buffer_node, node, buffer_node);
  return TRUE;
}

void
rdma_numa_place (gpointer mem, gsize len, gint node)
{
  static gint warned = 0;
  unsigned long mask[RDMA_MACHINE_MAX_NODES / (8 * sizeof (unsigned long))] = { 0 };
  const guint bits = 8 * sizeof (unsigned long);
  const RdmaMachine *m;

  if (node == RDMA_NUMA_NONE || mem == NULL || len == 0)
    return;
  m = rdma_machine_get ();
  if (!m->numa_available || !rdma_machine_has_node (m, node))
    return;
  mask[node / bits] = 1ul << (node % bits);
  /* maxnode one past the mask's bits: the kernel drops the last bit it is given */
  if (mbind (mem, len, MPOL_PREFERRED, mask, RDMA_MACHINE_MAX_NODES + 1, 0) != 0
      && g_atomic_int_compare_and_exchange (&warned, 0, 1))
  {
    int err = errno;
    g_warning ("ThriftRdma: cannot place a %" G_GSIZE_FORMAT "-byte buffer on NUMA node %d: "
               "mbind: %s; it stays where the kernel puts it (said once)",
               len, node, g_strerror (err));
  }
}

gboolean
rdma_numa_bind_thread (gint node, GError **error)
{
  /* node + 1 of the last binding of this thread (0: none) */
  static GPrivate bound = G_PRIVATE_INIT (NULL);
  /* libnuma fills its cache of each node's CPUs without a lock: two threads binding at once
   * both filled it and one's allocation was lost (LeakSanitizer, test_numa_loopback) */
  static GMutex libnuma;
  const RdmaMachine *m;
  int rc, err;

  if (node == RDMA_NUMA_NONE || g_private_get (&bound) == GINT_TO_POINTER (node + 1))
    return TRUE;
  /* remembered before trying: a refusal is reported once per thread and node */
  g_private_set (&bound, GINT_TO_POINTER (node + 1));
  m = rdma_machine_get ();
  if (!m->numa_available || !rdma_machine_has_node (m, node))
    return TRUE;
  g_mutex_lock (&libnuma);
  rc = numa_run_on_node (node);
  err = errno;
  g_mutex_unlock (&libnuma);
  if (rc != 0)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET,
                 "cannot bind the thread to the CPUs of NUMA node %d: %s (is the node in "
                 "this process's cpuset, and does it have CPUs?)",
                 node, g_strerror (err));
    return FALSE;
  }
  return TRUE;
}
