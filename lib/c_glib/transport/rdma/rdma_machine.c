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

/* rdma_machine.c: the cores and NUMA nodes of this machine (see rdma_machine.h). */
#include "config.h"

#include <numa.h>
#include <string.h>
#include <unistd.h>

#include "rdma_machine.h"

/* The CPUs of a sysfs cpulist ("0-3,8-11"), 0 if it cannot be read. */
static guint
count_cpulist (const gchar *list)
{
  const gchar *c = list;
  guint n = 0;

  while (*c != '\0' && *c != '\n')
  {
    gchar *end;
    guint64 lo = g_ascii_strtoull (c, &end, 10), hi = lo;

    if (end == c)
      return 0;
    c = end;
    if (*c == '-')
    {
      hi = g_ascii_strtoull (c + 1, &end, 10);
      if (end == c + 1 || hi < lo)
        return 0;
      c = end;
    }
    n += (guint) (hi - lo + 1);
    if (*c == ',')
      c++;
    else if (*c != '\0' && *c != '\n')
      return 0;
  }
  return n;
}

void
rdma_machine_read_cores (const gchar *node_dir, guint cores, RdmaMachine *m)
{
  GDir *dir = g_dir_open (node_dir, 0, NULL);
  const gchar *name;

  m->cores = MAX (cores, 1);
  m->nodes = 0;
  m->cores_per_node = 0;
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
  {
    g_autofree gchar *path = NULL, *list = NULL;
    guint n;

    if (!g_str_has_prefix (name, "node") || !g_ascii_isdigit (name[4]))
      continue;
    path = g_build_filename (node_dir, name, "cpulist", NULL);
    if (!g_file_get_contents (path, &list, NULL, NULL) || (n = count_cpulist (list)) == 0)
      continue; /* a node with memory only */
    m->nodes++;
    m->cores_per_node = MAX (m->cores_per_node, n);
  }
  if (dir != NULL)
    g_dir_close (dir);
  if (m->nodes == 0)
  {
    /* no NUMA information (not Linux, or a kernel without it): one node */
    m->nodes = 1;
    m->cores_per_node = m->cores;
  }
  /* the process may be bound to fewer cores than a node has */
  m->cores_per_node = CLAMP (m->cores_per_node, 1, m->cores);
}

static void
usable_set (RdmaMachine *m, gint node)
{
  m->usable[node / 64] |= G_GUINT64_CONSTANT (1) << (node % 64);
}

static void
nodes_clear (RdmaMachine *m, gboolean available)
{
  m->numa_available = available;
  m->max_node = 0;
  memset (m->usable, 0, sizeof m->usable);
}

void
rdma_machine_fake_nodes (RdmaMachine *m, gboolean available, const gint *nodes, guint n)
{
  nodes_clear (m, available);
  if (!available)
    return;
  for (guint i = 0; i < n; i++)
  {
    if (nodes[i] < 0 || nodes[i] >= RDMA_MACHINE_MAX_NODES)
      continue;
    usable_set (m, nodes[i]);
    m->max_node = MAX (m->max_node, nodes[i]);
  }
}

static void
read_nodes (RdmaMachine *m)
{
  /* numa_available () first: libnuma's other calls are undefined without it */
  nodes_clear (m, numa_available () >= 0);
  if (!m->numa_available)
    return;
  m->max_node = MIN (numa_max_node (), RDMA_MACHINE_MAX_NODES - 1);
  /* numa_all_nodes_ptr: the nodes this task may allocate on (its cpuset's mems) */
  for (gint i = 0; i <= m->max_node; i++)
    if (numa_bitmask_isbitset (numa_all_nodes_ptr, (unsigned int) i))
      usable_set (m, i);
}

const RdmaMachine *
rdma_machine_get (void)
{
  static RdmaMachine machine;
  static gsize done = 0;

  /* g_get_num_processors () reads the affinity mask on every call, sysfs and libnuma are as
   * slow: read once, the answer does not change while the process runs */
  if (g_once_init_enter (&done))
  {
    rdma_machine_read_cores ("/sys/devices/system/node", (guint) MAX (g_get_num_processors (), 1),
                             &machine);
    read_nodes (&machine);
    machine.online = (guint) MAX (sysconf (_SC_NPROCESSORS_ONLN), 1);
    g_once_init_leave (&done, 1);
  }
  return &machine;
}

gboolean
rdma_machine_has_node (const RdmaMachine *m, gint node)
{
  if (node < 0 || node >= RDMA_MACHINE_MAX_NODES)
    return FALSE;
  if (!m->numa_available)
    return node == 0;
  return node <= m->max_node && (m->usable[node / 64] >> (node % 64)) & 1;
}

gchar *
rdma_machine_nodes_text (const RdmaMachine *m)
{
  GString *s = g_string_new (NULL);
  gint last = m->numa_available ? m->max_node : 0;

  for (gint i = 0; i <= last; i++)
  {
    gint j = i;

    if (!rdma_machine_has_node (m, i))
      continue;
    while (j + 1 <= last && rdma_machine_has_node (m, j + 1))
      j++;
    g_string_append_printf (s, "%s%d", s->len > 0 ? "," : "", i);
    if (j > i)
      g_string_append_printf (s, "-%d", j);
    i = j;
  }
  if (s->len == 0)
    g_string_append (s, "none");
  return g_string_free (s, FALSE);
}
