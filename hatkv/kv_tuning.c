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

/* kv_tuning.c: the store's tuning from the service's hints (see kv_tuning.h). */
#include "config.h"

#include "kv_tuning.h"

#define KV_DEFAULT_READERS 126 /* LMDB's own default */
#define KV_DEFAULT_WRITE 4096  /* the small/large threshold of the plan */
#define KV_WRITES_PER_CLIENT 1024
#define KV_MAP_MIN (G_GUINT64_CONSTANT (64) << 20)
#define KV_MAP_MAX (G_GUINT64_CONSTANT (64) << 30)

static const ThriftHintSet *
find (const ThriftHintSet *const *sets, const gchar *function, ThriftHintSide side)
{
  for (; sets != NULL && *sets != NULL; sets++)
    if ((*sets)->side == side && g_strcmp0 ((*sets)->function, function) == 0)
      return *sets;
  return NULL;
}

void
kv_tuning_from_hints (const ThriftHintSet *const *sets, guint listeners, KvTuning *out,
                      GString *why)
{
  const ThriftHintSet *put = find (sets, "put", THRIFT_HINT_SIDE_SERVER);
  const gchar *writes[] = { "put", "multi_put" };
  guint64 concurrency = 0, largest = 0;
  const gchar *largest_from = NULL;

  out->sync = KV_SYNC_DURABLE;
  if (put != NULL && (put->set & THRIFT_HINT_HAS_PERF_GOAL))
  {
    if (put->perf_goal == THRIFT_HINT_PERF_GOAL_THROUGHPUT)
      out->sync = KV_SYNC_GROUP;
    else if (put->perf_goal == THRIFT_HINT_PERF_GOAL_RES_UTIL)
      out->sync = KV_SYNC_NOSYNC;
  }
  if (why != NULL)
    g_string_append_printf (why, "sync %s: %s\n", kv_sync_name (out->sync),
                            put != NULL && (put->set & THRIFT_HINT_HAS_PERF_GOAL)
                                ? thrift_hint_perf_goal_to_string (put->perf_goal)
                                : "no perf_goal");

  for (const ThriftHintSet *const *s = sets; s != NULL && *s != NULL; s++)
    if ((*s)->side == THRIFT_HINT_SIDE_SERVER && ((*s)->set & THRIFT_HINT_HAS_CONCURRENCY))
      concurrency = MAX (concurrency, (guint64) (*s)->concurrency);
  listeners = MAX (1, listeners);
  out->max_readers = (guint) MIN (
      (concurrency > 0 ? concurrency : KV_DEFAULT_READERS) * listeners + 8, 65536);
  if (why != NULL)
    g_string_append_printf (why, "max readers %u: %s x %u listener%s + 8\n", out->max_readers,
                            concurrency > 0 ? "concurrency hint" : "no concurrency hint, 126",
                            listeners, listeners == 1 ? "" : "s");

  for (guint i = 0; i < G_N_ELEMENTS (writes); i++)
  {
    const ThriftHintSet *w = find (sets, writes[i], THRIFT_HINT_SIDE_CLIENT);
    if (w != NULL && (w->set & THRIFT_HINT_HAS_PAYLOAD_SIZE) && w->payload_size > largest)
    {
      largest = w->payload_size;
      largest_from = writes[i];
    }
  }
  out->map_size = CLAMP ((largest > 0 ? largest : KV_DEFAULT_WRITE) * 2 * KV_WRITES_PER_CLIENT
                             * (concurrency > 0 ? concurrency : KV_DEFAULT_READERS),
                         KV_MAP_MIN, KV_MAP_MAX);
  if (why != NULL)
  {
    if (largest_from != NULL)
      g_string_append_printf (
          why, "map size %" G_GUINT64_FORMAT " MiB: %s's payload_size=%" G_GUINT64_FORMAT,
          out->map_size >> 20, largest_from, largest);
    else
      g_string_append_printf (why,
                              "map size %" G_GUINT64_FORMAT " MiB: no payload_size on "
                              "the writes, 4096",
                              out->map_size >> 20);
    g_string_append_printf (why, " x 2 x %d writes x %s\n", KV_WRITES_PER_CLIENT,
                            concurrency > 0 ? "concurrency" : "126");
  }
}
