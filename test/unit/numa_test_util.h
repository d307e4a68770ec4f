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
 * numa_test_util.h: what the NUMA tests check a thread's binding against, read apart from
 * libnuma and rdma_numa: a node's CPUs from sysfs.  Include after defining _GNU_SOURCE.
 */
#ifndef _NUMA_TEST_UTIL_H
#define _NUMA_TEST_UTIL_H

#include <sched.h>

#include <glib.h>

G_BEGIN_DECLS

/* The CPUs of /sys/devices/system/node/node@node/cpulist ("0-3,8") that are in @allowed;
 * FALSE if there is none (no such file, or none allowed). */
gboolean numa_test_node_cpus (gint node, const cpu_set_t *allowed, cpu_set_t *out);

/* Narrows the calling thread to the first CPU of @allowed, so that a binding to a node of
 * several CPUs shows in its affinity. */
void numa_test_narrow (const cpu_set_t *allowed);

G_END_DECLS

#endif
