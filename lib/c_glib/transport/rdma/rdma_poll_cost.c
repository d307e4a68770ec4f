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

/* rdma_poll_cost.c: spinning or blocking by measured cost (see rdma_poll_cost.h). */
#include "config.h"

#include <time.h>

#include "rdma_poll_cost.h"

void
rdma_poll_average (guint *avg, gint64 sample)
{
  if (*avg == 0)
    *avg = (guint) MAX (sample, 1);
  else
    *avg = (guint) MAX ((gint64) *avg + (sample - (gint64) *avg) / 8, 1);
}

/* The mean of the first RDMA_POLL_COST_REACH samples, then a moving average of an eighth:
 * the first calls of a connection (its ring made, pages touched) are not its typical ones.
 * A sample counts for at most twice the average: a wait stalled by a preemption or a
 * retransmission (8 ms against 150 us under emulation) would otherwise move an eighth-average
 * past the other way's for a long time, and the way in use would change for one stall; a
 * real change of cost still doubles the average within a few samples. */
#define RDMA_POLL_COST_REACH 8

static void
learn (guint *avg, guint *n, gint64 sample)
{
  sample = CLAMP (sample, 1, (gint64) RDMA_POLL_COST_SPIN_MAX_US);
  if (*n > 0)
    sample = MIN (sample, 2 * (gint64) *avg);
  if (*n < RDMA_POLL_COST_REACH)
    (*n)++;
  *avg = (guint) MAX ((gint64) *avg + (sample - (gint64) *avg) / (gint64) *n, 1);
}

/* A blocked wait's cost by @m; 0: not measured yet. */
static guint
block_cost (const RdmaPollCost *c, RdmaMeasure m)
{
  return m == RDMA_MEASURE_CPU ? c->block_cpu_us : c->block_wall_us;
}

/* How long a spin may last before it blocks.  By CPU, twice a blocked wait's: a completion
 * later than that costs the spin more than it could save.  By wait time, blocking late adds
 * the wake-up to the time already spun, so the spin lasts as long as a spun wait typically
 * takes, with room (four times), or twice a blocked wait's time if that is longer. */
static guint
spin_budget (const RdmaPollCost *c, RdmaMeasure m, guint block)
{
  guint64 b;

  if (block == 0)
    return RDMA_POLL_COST_SPIN_FIRST_US;
  b = 2 * (guint64) block;
  if (m == RDMA_MEASURE_WALL)
    b = MAX (b, 4 * (guint64) c->spin_us);
  return (guint) MIN (b, (guint64) RDMA_POLL_COST_SPIN_MAX_US);
}

RdmaPollCostWay
rdma_poll_cost_choose (RdmaPollCost *c, RdmaMeasure m, guint *budget_us)
{
  guint block = block_cost (c, m);
  gboolean spin;

  /* hysteresis: the other way must measure a fifth cheaper, so that two ways of about the
   * same cost do not take turns */
  if (c->spin_us > 0 && block > 0) {
    gboolean cheaper = c->spinning ? 5 * (guint64) block < 4 * (guint64) c->spin_us
                                   : 5 * (guint64) c->spin_us < 4 * (guint64) block;

    if (cheaper) {
      c->spinning = !c->spinning;
      c->switches++;
    }
  }
  spin = c->spinning;
  if (c->waits++ % RDMA_POLL_COST_TRY_EVERY == 0)
    spin = !spin;
  if (!spin) {
    *budget_us = 0;
    return RDMA_POLL_COST_BLOCK;
  }
  *budget_us = spin_budget (c, m, block);
  return RDMA_POLL_COST_SPIN;
}

gboolean
rdma_poll_cost_sample_cpu (RdmaPollCost *c, RdmaMeasure m)
{
  /* often while the average forms, then seldom: a wake-up's cost changes with the machine,
   * not from call to call */
  guint every = c->blocked < 32 * RDMA_POLL_COST_SAMPLE_EVERY ? RDMA_POLL_COST_SAMPLE_EVERY
                                                                : 8 * RDMA_POLL_COST_SAMPLE_EVERY;

  return m == RDMA_MEASURE_CPU && c->blocked++ % every == 0;
}

void
rdma_poll_cost_learn (RdmaPollCost *c, RdmaPollCostWay way, gint64 wall_us, gint64 cpu_us)
{
  if (way == RDMA_POLL_COST_SPIN) {
    /* a spin that ran out and blocked counts with all it took: it cost that much */
    learn (&c->spin_us, &c->spin_n, wall_us);
    return;
  }
  learn (&c->block_wall_us, &c->block_n, wall_us);
  if (cpu_us >= 0)
    learn (&c->block_cpu_us, &c->cpu_n, cpu_us);
}

gint64
rdma_poll_cost_thread_cpu_us (void)
{
  struct timespec ts;

  if (clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return -1;
  return (gint64) ts.tv_sec * G_USEC_PER_SEC + ts.tv_nsec / 1000;
}

static void
append_us (GString *s, const gchar *what, guint us)
{
  if (us > 0)
    g_string_append_printf (s, "%s %u us", what, us);
  else
    g_string_append_printf (s, "%s not measured yet", what);
}

gchar *
rdma_poll_cost_describe (const RdmaPollCost *c, RdmaMeasure m)
{
  GString *s = g_string_new (NULL);

  append_us (s, "a spun wait", c->spin_us);
  append_us (s, ", a blocked one", c->block_wall_us);
  if (m == RDMA_MEASURE_CPU)
    append_us (s, ", its CPU", c->block_cpu_us);
  g_string_append_printf (s, " (%s, over %u waits): %s, %u change%s",
                          m == RDMA_MEASURE_CPU ? "by CPU per wait" : "by wait time", c->waits,
                          c->spinning ? "spins" : "blocks", c->switches,
                          c->switches == 1 ? "" : "s");
  return g_string_free (s, FALSE);
}
