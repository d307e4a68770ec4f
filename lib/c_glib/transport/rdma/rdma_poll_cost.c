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
rdma_poll_cost_prior (RdmaMeasure m)
{
  return m == RDMA_MEASURE_WALL ? RDMA_POLL_COST_SPIN : RDMA_POLL_COST_BLOCK;
}

RdmaPollCostWay
rdma_poll_cost_choose (RdmaPollCost *c, RdmaMeasure m, guint *budget_us)
{
  RdmaPollCostWay other, way;

  /* (a connection's functions may measure differently: the first to choose sets the prior) */
  if (c->choice.calls == 0)
    c->prior = rdma_poll_cost_prior (m);
  other = c->prior == RDMA_POLL_COST_SPIN ? RDMA_POLL_COST_BLOCK : RDMA_POLL_COST_SPIN;
  way = rdma_choice_next (&c->choice, cost_of (c, c->prior, m), cost_of (c, other, m)) ? other
                                                                                       : c->prior;
  *budget_us = way == RDMA_POLL_COST_SPIN ? spin_budget (c, m) : 0;
  return way;
}

RdmaPollCostWay
rdma_poll_cost_current (const RdmaPollCost *c, RdmaMeasure m, guint *budget_us)
{
  *budget_us = rdma_poll_cost_spins (c) ? spin_budget (c, m) : 0;
  return rdma_poll_cost_spins (c) ? RDMA_POLL_COST_SPIN : RDMA_POLL_COST_BLOCK;
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
  rdma_choice_average (&c->wall_us[way], &c->wall_n[way], wall_us, RDMA_POLL_COST_SPIN_MAX_US,
                       RDMA_CHOICE_REACH);
  if (cpu_us >= 0)
    rdma_choice_average (&c->cpu_us[way], &c->cpu_n[way], cpu_us, RDMA_POLL_COST_SPIN_MAX_US,
                         RDMA_CHOICE_REACH);
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
append_way (GString *s, const gchar *what, const RdmaPollCost *c, RdmaPollCostWay w, RdmaMeasure m)
{
  if (c->wall_us[w] == 0)
  {
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
  gboolean spins;

  append_way (s, "a spun call", c, RDMA_POLL_COST_SPIN, m);
  append_way (s, ", a blocked one", c, RDMA_POLL_COST_BLOCK, m);
  /* (before its first choice, the way it will take: the measure's prior) */
  spins = c->choice.calls > 0 ? rdma_poll_cost_spins (c)
                              : rdma_poll_cost_prior (m) == RDMA_POLL_COST_SPIN;
  g_string_append_printf (s, " (%s, over %u calls): %s, %u change%s",
                          m == RDMA_MEASURE_CPU ? "by CPU per call" : "by call time",
                          c->choice.calls, spins ? "spins" : "blocks", c->choice.switches,
                          c->choice.switches == 1 ? "" : "s");
  return g_string_free (s, FALSE);
}
