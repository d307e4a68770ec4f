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
 * rdma_numa.h: NUMA binding (the `numa` hint and the "numa-node" property; paper Sec. 3.3,
 * 5.5): which node a connection's buffers and polling thread belong to, checked against this
 * machine, and the binding itself (libnuma).
 *
 * The decision is apart from the binding, so that it can be tested with any machine
 * (rdma_machine_fake_nodes):
 *   - a numa-node property is -1 (none) or a node of this machine; anything else is an
 *     error at open or listen (rdma_numa_check_property);
 *   - a hint set's numa beats the property; a hint naming a node the machine lacks is
 *     ignored with one warning per hint set (rdma_numa_choose, rdma_numa_warn_ignored);
 *   - a machine without NUMA support (numa_available () < 0) counts as one node, 0.
 *
 * When: a connection's buffers are placed when they are mapped, before their first touch
 * (mbind, MPOL_PREFERRED), and its slots and transmit buffers are mapped at connect, so
 * their node is decided at open or accept: the numa of the "hints" property's set (the
 * service's) if it has one, else the numa-node property.  Buffers a protocol maps later
 * (the direct ring, rendezvous buffers, RFP and Batched-Write regions) go to the same node.
 * A function's hint set comes later, with its first call (client) or once its request was
 * read (server): pinned pages cannot move, so such a hint only binds the polling thread,
 * and one warning says so when the buffers are elsewhere (rdma_numa_warn_late).
 */
#ifndef _RDMA_NUMA_H
#define _RDMA_NUMA_H

#include <glib.h>

#include <thrift/c_glib/transport/thrift_hints.h>

#include "rdma_machine.h"
#include "rdma_plan.h"

G_BEGIN_DECLS

/* No node: the kernel places memory and runs threads where it likes. */
#define RDMA_NUMA_NONE (-1)

/* A numa-node property of @who ("ThriftRdma", "ThriftServerRdma"): -1 or a node of @m.
 * Otherwise FALSE with @error (THRIFT_TRANSPORT_ERROR) naming the value and the nodes. */
gboolean rdma_numa_check_property (gint node, const RdmaMachine *m, const gchar *who,
                                   GError **error);

typedef enum
{
  RDMA_NUMA_BY_NONE,    /* no hint naming a node of the machine, no property */
  RDMA_NUMA_BY_HINT,    /* the hint set's numa */
  RDMA_NUMA_BY_PROPERTY /* the numa-node property */
} RdmaNumaSource;

typedef struct
{
  gint node; /* RDMA_NUMA_NONE or a node of the machine */
  RdmaNumaSource by;
  gboolean hint_ignored; /* the set has numa, a node the machine lacks */
} RdmaNumaChoice;

/* The node of messages written with @h (NULL: no set) on a transport whose numa-node
 * property is @property (checked already): @h's numa if @m has that node, else
 * @property, else none. */
void rdma_numa_choose (const ThriftHintSet *h, gint property, const RdmaMachine *m,
                       RdmaNumaChoice *out);

/* TRUE if memory placed for @buffer_node is on @node: the same node, or any memory of a
 * machine with one node. */
gboolean rdma_numa_buffers_on (gint node, gint buffer_node, const RdmaMachine *m);

/* Why choice @c was made for @h, for explain (an interned string): "numa hint", "numa-node
 * property" (@property), "no numa hint", with a hint that was ignored, and, when
 * @connected, where the buffers are if they are not on the chosen node (@buffer_node: where
 * the connection's buffers were placed). */
const gchar *rdma_numa_reason (const RdmaNumaChoice *c, const ThriftHintSet *h, gint property,
                               gboolean connected, gint buffer_node, const RdmaMachine *m);

/* The numa of plan @p, made from @h (rdma_plan_make took the hint as it is), for this
 * machine @m and a transport whose numa-node property is @property: sets p->numa_node and
 * p->numa_reason (rdma_numa_choose, rdma_numa_reason).  @connected: for a connection whose
 * buffers were placed on @buffer_node, which is then the node of a set without a usable
 * numa (the node decided at connect: the default set's numa, else @property). */
void rdma_numa_plan (RdmaPlan *p, const ThriftHintSet *h, gint property, gboolean connected,
                     gint buffer_node, const RdmaMachine *m);

/* Once per hint set for the process: a warning that @h's numa names a node @m lacks (the
 * function, the node, the nodes there are) and is ignored.  Returns TRUE if it logged. */
gboolean rdma_numa_warn_ignored (const ThriftHintSet *h, const RdmaMachine *m);
/* Once per hint set for the process: a warning that @h's numa (@node) came after the
 * buffers were placed (on @buffer_node), so it binds the polling thread only.  Returns
 * TRUE if it logged. */
gboolean rdma_numa_warn_late (const ThriftHintSet *h, gint node, gint buffer_node);

/* Places the @len bytes mapped at @mem (page-aligned, not touched yet) on @node, preferred
 * (when the node runs out of memory the pages come from another): mbind.  Nothing for
 * RDMA_NUMA_NONE or a machine without NUMA support.  A failure is not an error (the memory
 * works wherever it is): it is logged once per process. */
void rdma_numa_place (gpointer mem, gsize len, gint node);

/* Binds the calling thread to @node's CPUs (numa_run_on_node), unless it was the last node
 * this function bound it to (a per-thread memory: after the first time, a pointer compare).
 * Nothing for RDMA_NUMA_NONE (a thread is never unbound) or a machine without NUMA support.
 * FALSE with @error if the kernel refused (the thread runs where it did; not tried again
 * for the same node on this thread). */
gboolean rdma_numa_bind_thread (gint node, GError **error);

G_END_DECLS

#endif
