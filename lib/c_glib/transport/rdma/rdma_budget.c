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

/* rdma_budget.c: the process's pinned-memory budget (see rdma_budget.h). */
#include "config.h"

#include <sys/resource.h>
#include <unistd.h>

#include "rdma_budget.h"
#include "rdma_resources.h"

G_LOCK_DEFINE_STATIC (budget);
static guint64 requested; /* the smallest max-pinned-bytes asked for (0: none) */
static guint64 refusals;
static gboolean warned;

static guint64
default_limit (void)
{
  static gsize limit = 0;

  if (g_once_init_enter (&limit))
  {
    long pages = sysconf (_SC_PHYS_PAGES), page = sysconf (_SC_PAGESIZE);
    guint64 v = pages > 0 && page > 0 ? (guint64) pages * (guint64) page / 8 : 0;
    struct rlimit rl;

    v = MAX (v, RDMA_BUDGET_MIN);
    /* root pins past RLIMIT_MEMLOCK (CAP_IPC_LOCK); anyone else cannot */
    if (geteuid () != 0 && getrlimit (RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
      v = MIN (v, (guint64) rl.rlim_cur);
    g_once_init_leave (&limit, (gsize) MAX (v, 1));
  }
  return limit;
}

void
rdma_budget_request (guint64 max_pinned_bytes, const gchar *who)
{
  guint64 kept = 0;

  if (max_pinned_bytes == 0)
    return;
  G_LOCK (budget);
  if (requested == 0 || max_pinned_bytes < requested)
    requested = max_pinned_bytes;
  else if (max_pinned_bytes > requested)
    kept = requested;
  G_UNLOCK (budget);
  if (kept != 0)
    g_warning ("ThriftRdma: %s asks for max-pinned-bytes %" G_GUINT64_FORMAT ", but another "
               "transport of this process asked for %" G_GUINT64_FORMAT " already: the budget "
               "is the process's, and it keeps the smaller",
               who, max_pinned_bytes, kept);
}

guint64
rdma_budget_limit (void)
{
  guint64 v;

  G_LOCK (budget);
  v = requested;
  G_UNLOCK (budget);
  return v != 0 ? v : default_limit ();
}

gboolean
rdma_budget_admit (guint64 bytes, const gchar *what)
{
  guint64 limit = rdma_budget_limit ();
  gboolean first;
  RdmaResCounts c;

  rdma_res_counts (&c);
  if ((guint64) MAX (c.pinned_bytes, 0) + bytes <= limit)
    return TRUE;
  G_LOCK (budget);
  refusals++;
  first = !warned;
  warned = TRUE;
  G_UNLOCK (budget);
  if (first)
    g_warning ("ThriftRdma: the process pins %" G_GINT64_FORMAT
               " bytes, and %s of %" G_GUINT64_FORMAT
               " more would pass max-pinned-bytes (%" G_GUINT64_FORMAT "): it "
               "is not made, nor further buffers that only speed connections up; their "
               "messages go by Eager-SendRecv (said once per process; explain counts them)",
               c.pinned_bytes, what, bytes, limit);
  return FALSE;
}

guint64
rdma_budget_refusals (void)
{
  guint64 v;

  G_LOCK (budget);
  v = refusals;
  G_UNLOCK (budget);
  return v;
}

void
rdma_budget_reset (void)
{
  G_LOCK (budget);
  requested = refusals = 0;
  warned = FALSE;
  G_UNLOCK (budget);
}
