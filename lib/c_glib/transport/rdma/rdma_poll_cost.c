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

/* The mean of the first RDMA_POLL_COST_REACH samples, then a moving average of an eighth:
 * the first calls of a connection (its ring made, pages touched) are not its typical ones.
 * A sample counts for at most twice the average: a call stalled by a preemption or a
 * retransmission (8 ms against 300 us under emulation) would otherwise move an eighth-average
 * past the other way's for a long while; a real change of cost still doubles the average
 * within a few samples. */
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

/* A call's cost by way @w and measure @m; 0: not measured yet.  A spun call's CPU is its time
 * where it was not read. */
static guint
cost_of (const RdmaPollCost *c, RdmaPollCostWay w, RdmaMeasure m)
{
  if (m != RDMA_MEASURE_CPU)
    return c->wall_us[w];
  if (c->cpu_us[w] == 0 && w == RDMA_POLL_COST_SPIN)
    return c->wall_us[w];
  return c->cpu_us[w];
}

/* How long a spin may last before it blocks.  By CPU, twice a blocked call's: a message later
 * than that costs the spin more than it could save.  By time, blocking late only adds the
 * wake-up to the time already spun, so the spin lasts four times a spun call (room for the
 * usual spread), or twice a blocked one if that is longer. */
static guint
spin_budget (const RdmaPollCost *c, RdmaMeasure m)
{
  guint block = cost_of (c, RDMA_POLL_COST_BLOCK, m);
  guint64 b;

  if (block == 0)
    return RDMA_POLL_COST_SPIN_FIRST_US;
  b = 2 * (guint64) block;
  if (m == RDMA_MEASURE_WALL)
    b = MAX (b, 4 * (guint64) c->wall_us[RDMA_POLL_COST_SPIN]);
  return (guint) MIN (b, (guint64) RDMA_POLL_COST_SPIN_MAX_US);
}

RdmaPollCostWay
rdma_poll_cost_choose (RdmaPollCost *c, RdmaMeasure m, guint *budget_us)
{
  guint spin = cost_of (c, RDMA_POLL_COST_SPIN, m), block = cost_of (c, RDMA_POLL_COST_BLOCK, m);
  guint phase = c->since;
  RdmaPollCostWay way;

  /* hysteresis: the other way must measure a tenth cheaper, and for a while, so that two
   * ways of about the same cost, or a passing stall, do not make the way take turns; after
   * each change the margin is a fifth more (0.9, 0.72, 0.58, 0.46 of the way in use).  With
   * a fifth from the start, a spin a fifth to a quarter cheaper than the prior's blocking
   * (285 against 373 us in the guest) was taken only after half a benchmark's calls. */
  if (spin > 0 && block > 0) {
    guint64 cur = c->spinning ? spin : block, other = c->spinning ? block : spin;
    gboolean cheaper;

    other *= 10;
    cur *= 9;
    for (guint k = 0; k < MIN (c->switches, 3); k++) {
      other *= 5;
      cur *= 4;
    }
    cheaper = other < cur;

    c->leaning = cheaper ? c->leaning + 1 : 0;
    if (c->leaning >= (guint) RDMA_POLL_COST_PERSIST << MIN (c->switches, 10)) {
      c->spinning = !c->spinning;
      c->switches++;
      c->leaning = 0;
      c->every = RDMA_POLL_COST_TRY_EVERY;
    }
  }
  /* a run just ended: the next comes twice as late if the way in use is still the cheaper,
   * as early as at first if the other measured cheaper or the way changed */
  if (c->every == 0)
    c->every = RDMA_POLL_COST_TRY_EVERY;
  if (phase == RDMA_POLL_COST_RUN) {
    gboolean confirmed = spin > 0 && block > 0 && c->leaning == 0
                         && c->switches == c->switches_then;

    c->every = confirmed ? MIN (2 * c->every, RDMA_POLL_COST_TRY_MAX) : RDMA_POLL_COST_TRY_EVERY;
    c->switches_then = c->switches;
  }
  c->calls++;
  c->since = phase + 1 >= c->every ? 0 : phase + 1;
  /* a run of the other way, its first half settling */
  way = (phase < RDMA_POLL_COST_RUN) != c->spinning ? RDMA_POLL_COST_SPIN : RDMA_POLL_COST_BLOCK;
  c->settling = phase < RDMA_POLL_COST_RUN / 2;
  *budget_us = way == RDMA_POLL_COST_SPIN ? spin_budget (c, m) : 0;
  return way;
}

RdmaPollCostWay
rdma_poll_cost_current (const RdmaPollCost *c, RdmaMeasure m, guint *budget_us)
{
  *budget_us = c->spinning ? spin_budget (c, m) : 0;
  return c->spinning ? RDMA_POLL_COST_SPIN : RDMA_POLL_COST_BLOCK;
}

gboolean
rdma_poll_cost_sample_cpu (RdmaPollCost *c, RdmaMeasure m)
{
  /* often while the averages form, then seldom: what a wake-up costs changes with the
   * machine, not from call to call */
  guint every = c->sampled < 32 * RDMA_POLL_COST_SAMPLE_EVERY ? RDMA_POLL_COST_SAMPLE_EVERY
                                                                : 8 * RDMA_POLL_COST_SAMPLE_EVERY;

  return m == RDMA_MEASURE_CPU && c->sampled++ % every == 0;
}

void
rdma_poll_cost_learn (RdmaPollCost *c, RdmaPollCostWay way, gint64 wall_us, gint64 cpu_us)
{
  learn (&c->wall_us[way], &c->wall_n[way], wall_us);
  if (cpu_us >= 0)
    learn (&c->cpu_us[way], &c->cpu_n[way], cpu_us);
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
append_way (GString *s, const gchar *what, const RdmaPollCost *c, RdmaPollCostWay w,
            RdmaMeasure m)
{
  if (c->wall_us[w] == 0) {
    g_string_append_printf (s, "%s not measured yet", what);
    return;
  }
  g_string_append_printf (s, "%s %u us", what, c->wall_us[w]);
  if (m == RDMA_MEASURE_CPU && c->cpu_us[w] > 0)
    g_string_append_printf (s, " (CPU %u us)", c->cpu_us[w]);
}

gchar *
rdma_poll_cost_describe (const RdmaPollCost *c, RdmaMeasure m)
{
  GString *s = g_string_new (NULL);

  append_way (s, "a spun call", c, RDMA_POLL_COST_SPIN, m);
  append_way (s, ", a blocked one", c, RDMA_POLL_COST_BLOCK, m);
  g_string_append_printf (s, " (%s, over %u calls): %s, %u change%s",
                          m == RDMA_MEASURE_CPU ? "by CPU per call" : "by call time", c->calls,
                          c->spinning ? "spins" : "blocks", c->switches,
                          c->switches == 1 ? "" : "s");
  return g_string_free (s, FALSE);
}
