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
 * kv_tuning.h: the store's tuning from the service's hints, as the HatRPC paper does for
 * HatKV's LMDB backend (Sec. 4.4):
 *
 *   commit strategy  from the perf_goal of the writes (put's server-side set):
 *                    latency -> durable (each write its own synced commit: nothing waits
 *                    for others), throughput -> group (concurrent writes share a commit and
 *                    its sync), res_util -> nosync (no sync: the least CPU and I/O);
 *                    no perf_goal -> durable
 *   max readers      the concurrency hint (the most of any function's server set), times the
 *                    listeners that share the store, plus 8 for LMDB's own tools (mdb_stat,
 *                    mdb_dump); without a concurrency hint, LMDB's default of 126 in its place
 *   map size         room for each of those concurrent clients to have written 1,024 of the
 *                    largest writes (the client-side payload_size of put and multi_put;
 *                    4 KiB without one), twice over for the B-tree's pages: between 64 MiB
 *                    and 64 GiB.  The map is address space, not memory: LMDB's file grows
 *                    with the data.
 */
#ifndef _KV_TUNING_H
#define _KV_TUNING_H

#include <glib.h>
#include <thrift/c_glib/transport/thrift_hints.h>

#include "kv_store.h"

G_BEGIN_DECLS

/* Fills @out from @sets (a generated <service>_hint_sets table, NULL-terminated) for a
 * store shared by @listeners servers; appends to @why (if not NULL) one line per choice
 * saying which hint decided it. */
void kv_tuning_from_hints (const ThriftHintSet *const *sets, guint listeners, KvTuning *out,
                           GString *why);

G_END_DECLS

#endif
