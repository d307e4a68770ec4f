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
 * rdma_budget.h: how much memory the process may pin (max-pinned-bytes).
 *
 * A connection's minimal footprint (its send slots and transmit buffers, the device's shared
 * receive queue at its first size, the buffers a message in flight needs) is never refused
 * for the budget: a connection works whatever else is pinned.  What only makes a connection
 * faster asks first (rdma_budget_admit): a direct ring, batched-write slots and mirror, an
 * RFP response region, the shared receive queue's growth.  Refused, it is not made and the
 * connection sends by Eager-SendRecv (one warning per process; explain says why).
 *
 * The budget is the process's: the smallest max-pinned-bytes any transport asked for, or by
 * default an eighth of the machine's memory (at least RDMA_BUDGET_MIN), and for a process
 * other than root's never more than RLIMIT_MEMLOCK, past which it could not pin anyway.
 * Pinned bytes are counted by rdma_resources.
 */
#ifndef _RDMA_BUDGET_H
#define _RDMA_BUDGET_H

#include <glib.h>

G_BEGIN_DECLS

#define RDMA_BUDGET_MIN (64u << 20)

/* A transport's max-pinned-bytes (0: the default).  The process keeps the smallest asked
 * for; a larger one is said to be ignored. */
void rdma_budget_request (guint64 max_pinned_bytes, const gchar *who);
/* The process's budget in bytes. */
guint64 rdma_budget_limit (void);
/* Whether @bytes more of optional memory (@what, for the warning) fit the budget; counts a
 * refusal. */
gboolean rdma_budget_admit (guint64 bytes, const gchar *what);
/* Optional buffers refused so far in the process. */
guint64 rdma_budget_refusals (void);
/* Tests: forget every request and refusal. */
void rdma_budget_reset (void);

G_END_DECLS

#endif
