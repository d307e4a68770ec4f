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
 * rdma_poll_cost.h: spinning or blocking, chosen by what each measures, for the waits of a
 * connection whose plan leaves the choice to measurement (the table's event polling under a
 * throughput or resource goal: RdmaMeasure, rdma_plan.h).
 *
 * What is measured is a round: the time from one call's first look that finds nothing (its
 * choice of a way) to the next call's (the reply's wait, the handling of the reply, the next
 * request), and the CPU its thread spent in that time.  Not the wait alone: under emulation
 * a blocked wait was measured shorter than a spun one (250 against 310 us) while the calls
 * that blocked were slower (2,300 against 2,900 RPC/s), the cost of the wake-up falling
 * after the wait.  A server's read of the request its linger waited for finds it at once
 * and chooses nothing: timed from call to call, its rounds were the linger's wait alone
 * (208 against 236 us, so it kept blocking while its client's calls took 353 us, not 304).
 * Each call takes one way for all its waits: blocking at once (arm the CQ, poll(2), the wake-up),
 * or spinning until the message comes, and then blocking if it has not: by CPU after twice a
 * blocked call's CPU (a spin that fails costs a bounded multiple of the better way, the
 * ski-rental bound of spinning before blocking); by wait time after four times a spun call
 * (or twice a blocked one), since blocking late only adds the wake-up to the time spun.
 *
 * Each way's cost is an average over the calls that took it; runs of the other way, and
 * when the way in use changes, are rdma_choice.h's.  The prior, the way before both are
 * measured, depends on the measure: by CPU, blocking (the table's event polling: a blocked
 * wait leaves its core to others); by call time, spinning, the default's hybrid way, since a
 * measure by call time is chosen while there are cores to spare and a spin then takes no core
 * another thread needs (with blocking the prior, the plan ran at 0.91-0.98x of no hints at one
 * client in the guest, its first and later runs of blocked calls and a spin that had to
 * measure a tenth shorter before it was taken).  The first run takes the other way.  (A run
 * of blocked calls costs each a wake-up: 8 calls of every 256 at 270 us more in the guest, 3%
 * of a connection's time on each side; hence the runs that come more seldom while the way in
 * use stays the cheaper.)
 * CPU is read from the thread's clock on a sample of calls (it is a system call).
 *
 * Counted per poller (a connection's waits), without locks: one thread waits at a time.
 */
#ifndef _RDMA_POLL_COST_H
#define _RDMA_POLL_COST_H

#include <glib.h>

#include "rdma_choice.h"
#include "rdma_plan.h"

G_BEGIN_DECLS

#define RDMA_POLL_COST_TRY_EVERY RDMA_CHOICE_TRY_EVERY
#define RDMA_POLL_COST_TRY_MAX RDMA_CHOICE_TRY_MAX
#define RDMA_POLL_COST_RUN RDMA_CHOICE_RUN
#define RDMA_POLL_COST_PERSIST RDMA_CHOICE_PERSIST
/* A call's CPU is read on every this-many-th call while the averages form (32 samples), then
 * on every eighth as many. */
#define RDMA_POLL_COST_SAMPLE_EVERY 4
/* The longest spin, and the longest sample. */
#define RDMA_POLL_COST_SPIN_MAX_US 8000
/* A spin's budget before the blocked way is measured. */
#define RDMA_POLL_COST_SPIN_FIRST_US 1000

typedef enum
{
  RDMA_POLL_COST_BLOCK = 0,
  RDMA_POLL_COST_SPIN,
  RDMA_POLL_COST_WAYS
} RdmaPollCostWay;

typedef struct
{
  guint wall_us[RDMA_POLL_COST_WAYS]; /* a call by each way: its time; 0: none yet */
  guint cpu_us[RDMA_POLL_COST_WAYS];  /* ... and its thread's CPU; 0: none yet */
  guint wall_n[RDMA_POLL_COST_WAYS], cpu_n[RDMA_POLL_COST_WAYS]; /* samples (up to 8) */
  guint sampled;         /* calls asked whether to read the CPU (the sampling's turn) */
  RdmaChoice choice;     /* the prior way, and the other its alternative */
  RdmaPollCostWay prior; /* set by the measure of the first choice (rdma_poll_cost_prior) */
} RdmaPollCost;

/* The way taken by @m before both are measured: spinning by call time, blocking by CPU. */
RdmaPollCostWay rdma_poll_cost_prior (RdmaMeasure m);

/* The way of the next call measured by @m (not RDMA_MEASURE_NONE), and for a spin its budget
 * (*@budget_us); c->choice.settling says whether the call is to be learnt from. */
RdmaPollCostWay rdma_poll_cost_choose (RdmaPollCost *c, RdmaMeasure m, guint *budget_us);
/* The way in use and its spin budget, without a turn of trying the other way: for a wait
 * outside a measured call (one for a send slot, say). */
RdmaPollCostWay rdma_poll_cost_current (const RdmaPollCost *c, RdmaMeasure m, guint *budget_us);
/* A call begins: whether it should read its thread's CPU time (by @m). */
gboolean rdma_poll_cost_sample_cpu (RdmaPollCost *c, RdmaMeasure m);
/* A call of @way took @wall_us, and @cpu_us of its thread's CPU time (-1: not read). */
void rdma_poll_cost_learn (RdmaPollCost *c, RdmaPollCostWay way, gint64 wall_us, gint64 cpu_us);
/* What @c measured and does by @m, for explain: "a spun call S us[ (CPU C us)], a blocked one
 * B us[ (CPU D us)] (by call time|by CPU per call, over N calls): spins|blocks, K changes"
 * (no newline).  Free with g_free (). */
gchar *rdma_poll_cost_describe (const RdmaPollCost *c, RdmaMeasure m);

/* Whether the way in use is spinning. */
static inline gboolean
rdma_poll_cost_spins (const RdmaPollCost *c)
{
  return (c->choice.alt != (c->prior == RDMA_POLL_COST_SPIN));
}

/* The calling thread's CPU time (user and system), us; -1 if it cannot be read. */
gint64 rdma_poll_cost_thread_cpu_us (void);

G_END_DECLS

#endif /* _RDMA_POLL_COST_H */
