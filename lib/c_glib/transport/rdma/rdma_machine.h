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
 * rdma_machine.h: the machine, as this process sees it: its cores, its NUMA nodes and the
 * cores of each, read once per process and the same for every part of the engine (the plan
 * compares the concurrency hint with the cores, NUMA binding checks a node against the
 * nodes, spinning is admitted per core).
 *
 * Two sources, each with its hook for tests, so that a decision can be tested on any
 * machine: the cores (the process's affinity mask) and the cores of each node (sysfs,
 * rdma_machine_read_cores), and the nodes this process may allocate on (libnuma,
 * rdma_machine_fake_nodes).
 */
#ifndef _RDMA_MACHINE_H
#define _RDMA_MACHINE_H

#include <glib.h>

G_BEGIN_DECLS

/* Nodes a machine can have here, and a hint can name (the compiler's range for `numa`: 0 to
 * 1023). */
#define RDMA_MACHINE_MAX_NODES 1024

typedef struct
{
  /* sysfs: what the concurrency hint is compared with */
  guint cores;          /* cores this process may run on (>= 1) */
  guint cores_per_node; /* cores of one NUMA node (>= 1, <= cores) */
  guint nodes;          /* NUMA nodes with cores (>= 1) */
  guint online;         /* cores the machine has online, the process's or not (>= 1) */
  /* libnuma: where memory and threads can be bound */
  gboolean numa_available;                     /* numa_available () >= 0 */
  gint max_node;                               /* numa_max_node (); 0 if !numa_available */
  guint64 usable[RDMA_MACHINE_MAX_NODES / 64]; /* nodes this process may use */
} RdmaMachine;

/* This machine, read on the first call (thread-safe); never freed. */
const RdmaMachine *rdma_machine_get (void);

/* rdma_machine_get's reading of the cores, apart for tests: @cores cores, the NUMA nodes
 * described under @node_dir (its nodeN/cpulist files; one node with every core if there are
 * none).  Sets @m's cores, cores_per_node and nodes. */
void rdma_machine_read_cores (const gchar *node_dir, guint cores, RdmaMachine *m);

/* For tests: @m's NUMA nodes become the @n nodes of @nodes (@available FALSE: no NUMA
 * support, @nodes ignored; one node 0).  Sets numa_available, max_node and usable. */
void rdma_machine_fake_nodes (RdmaMachine *m, gboolean available, const gint *nodes, guint n);

/* TRUE if @node is a node of @m (node 0 of a machine without NUMA support). */
gboolean rdma_machine_has_node (const RdmaMachine *m, gint node);

/* The nodes of @m as a list ("0", "0-1", "0,2-3"; "none").  Free with g_free (). */
gchar *rdma_machine_nodes_text (const RdmaMachine *m);

G_END_DECLS

#endif
