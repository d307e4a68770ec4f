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

/* numa_test_util.c: see numa_test_util.h. */
/* sched_setaffinity and the CPU_* macros */
#define _GNU_SOURCE
#include "config.h"

#include <string.h>

#include "numa_test_util.h"

gboolean
numa_test_node_cpus (gint node, const cpu_set_t *allowed, cpu_set_t *out)
{
  g_autofree gchar *path = g_strdup_printf ("/sys/devices/system/node/node%d/cpulist", node);
  g_autofree gchar *list = NULL;
  g_auto (GStrv) parts = NULL;
  cpu_set_t listed;

  CPU_ZERO (out);
  CPU_ZERO (&listed);
  if (!g_file_get_contents (path, &list, NULL, NULL))
    return FALSE;
  g_strstrip (list);
  parts = g_strsplit (list, ",", -1);
  for (gchar **p = parts; *p != NULL && **p != '\0'; p++)
  {
    gchar *dash = strchr (*p, '-');
    guint64 lo = g_ascii_strtoull (*p, NULL, 10);
    guint64 hi = dash != NULL ? g_ascii_strtoull (dash + 1, NULL, 10) : lo;

    for (guint64 c = lo; c <= hi && c < CPU_SETSIZE; c++)
      CPU_SET ((int) c, &listed);
  }
  CPU_AND (out, &listed, allowed);
  return CPU_COUNT (out) > 0;
}

void
numa_test_narrow (const cpu_set_t *allowed)
{
  cpu_set_t one;
  gint first = 0;

  while (first < CPU_SETSIZE - 1 && !CPU_ISSET (first, allowed))
    first++;
  CPU_ZERO (&one);
  CPU_SET (first, &one);
  g_assert_cmpint (sched_setaffinity (0, sizeof one, &one), ==, 0);
}
