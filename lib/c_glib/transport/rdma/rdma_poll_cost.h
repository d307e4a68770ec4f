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
 * rdma_poll_cost.h: spinning or blocking, chosen by what each measures, for a wait whose plan
 * leaves the choice to measurement (the table's event polling under a throughput or resource
 * goal: RdmaMeasure, rdma_plan.h).
 *
 * A wait either blocks at once (arm the CQ, poll(2), the wake-up) or spins until its
 * completion, then blocks if it has not come: by CPU after twice what a blocked wait costs,
 * so that a spin that fails costs at most three times the better way (the ski-rental bound
 * of spinning before blocking); by wait time after four times a typical spun wait (or twice
 * a blocked one), since blocking late only adds the wake-up to the time already spun.  Each way's cost is a moving average over the waits that took it: a spun
 * wait's wall time, which is also its CPU time; a blocked wait's wall time and the CPU time
 * its thread spent in it (the mean of the first eight samples, then an eighth per sample, so
 * that a connection's first slow calls do not linger in it) (the arming, poll(2), the event's read and the switches; sampled,
 * since reading a thread's clock is a system call).  The way in use changes only when the
 * other measures a fifth cheaper, and every RDMA_POLL_COST_TRY_EVERY-th wait takes the other
 * way, so both stay current.  Until both are measured the wait blocks (the table's prior),
 * but for the first, which spins to measure that way.
 *
 * Counted per poller (a connection's waits), without locks: one thread waits at a time.
 */
#ifndef _RDMA_POLL_COST_H
#define _RDMA_POLL_COST_H

#include <glib.h>

#include "rdma_plan.h"

G_BEGIN_DECLS

#define RDMA_POLL_COST_TRY_EVERY 32
/* A blocked wait's CPU is read on every this-many-th of the first 32 samples' worth, then
 * on every eighth as many. */
#define RDMA_POLL_COST_SAMPLE_EVERY 4
/* The longest spin, and the longest sample (one stall must not swamp the average). */
#define RDMA_POLL_COST_SPIN_MAX_US 8000
/* A spin's budget before the blocked way is measured. */
#define RDMA_POLL_COST_SPIN_FIRST_US 1000

typedef enum
{
  RDMA_POLL_COST_BLOCK = 0,
  RDMA_POLL_COST_SPIN
} RdmaPollCostWay;

typedef struct
{
  guint spin_us;           /* a spun wait: wall (= CPU) time; 0: none yet */
  guint block_wall_us;     /* a blocked wait: wall time; 0: none yet */
  guint block_cpu_us;      /* ... and its thread's CPU time; 0: none yet */
  guint spin_n, block_n, cpu_n;   /* the samples in each (counted up to the average's reach) */
  guint waits;             /* waits that chose a way */
  guint blocked;           /* blocked waits (the CPU sampling's turn) */
  gboolean spinning;       /* the way in use */
  guint switches;          /* times the way in use changed */
} RdmaPollCost;

/* The way of the next wait measured by @m (not RDMA_MEASURE_NONE), and for a spin its budget
 * (*@budget_us). */
RdmaPollCostWay rdma_poll_cost_choose (RdmaPollCost *c, RdmaMeasure m, guint *budget_us);
/* A blocked wait begins: whether it should read its thread's CPU time (by @m). */
gboolean rdma_poll_cost_sample_cpu (RdmaPollCost *c, RdmaMeasure m);
/* A wait of @way found its completion after @wall_us, having spent @cpu_us of its thread's
 * CPU time (-1: not read). */
void rdma_poll_cost_learn (RdmaPollCost *c, RdmaPollCostWay way, gint64 wall_us,
                           gint64 cpu_us);
/* What @c measured and does by @m, for explain: "spun wait S us, blocked B us (C us of
 * CPU, by ...): spins, N changes" (no newline).  Free with g_free (). */
gchar *rdma_poll_cost_describe (const RdmaPollCost *c, RdmaMeasure m);

/* One more sample into a moving average of an eighth (*@avg 0: none yet). */
void rdma_poll_average (guint *avg, gint64 sample);
/* The calling thread's CPU time (user and system), us; -1 if it cannot be read. */
gint64 rdma_poll_cost_thread_cpu_us (void);

G_END_DECLS

#endif /* _RDMA_POLL_COST_H */
