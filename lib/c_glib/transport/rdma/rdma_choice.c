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

/* rdma_choice.c: one of two ways by what each measured (see rdma_choice.h). */
#include "config.h"

#include "rdma_choice.h"

/* The mean of the first @reach samples, then a moving average of a @reach-th (an eighth for
 * single calls):
 * the first calls of a connection (its ring made, pages touched) are not its typical ones.
 * A sample counts for at most twice the average: a call stalled by a preemption or a
 * retransmission (8 ms against 300 us under emulation) would otherwise move an eighth-average
 * past the other way's for a long while; a real change of cost still doubles the average
 * within a few samples. */
void
rdma_choice_average (guint *avg, guint *n, gint64 sample, gint64 max, guint reach)
{
  sample = CLAMP (sample, 1, max);
  if (*n > 0)
    sample = MIN (sample, 2 * (gint64) *avg);
  if (*n < reach)
    (*n)++;
  *avg = (guint) MAX ((gint64) *avg + (sample - (gint64) *avg) / (gint64) *n, 1);
}

void
rdma_choice_set_in_flight (RdmaChoice *c, guint calls)
{
  c->run_next = CLAMP (2 * calls, RDMA_CHOICE_RUN, RDMA_CHOICE_RUN_MAX);
}

/* Choices from the start of one run to the next before any doubling. */
static guint
every_first (const RdmaChoice *c)
{
  return MAX (RDMA_CHOICE_TRY_EVERY, RDMA_CHOICE_RUN_SPACING * c->run);
}

void
rdma_choice_defer_first_run (RdmaChoice *c)
{
  if (c->calls > 0)
    return;
  /* as if the first run had just ended: the next comes a full interval on */
  c->run = c->run_next > 0 ? c->run_next : RDMA_CHOICE_RUN;
  c->since = c->run;
}

gboolean
rdma_choice_next (RdmaChoice *c, guint prior_cost, guint alt_cost)
{
  guint phase = c->since;

  /* a run's length is fixed at its start */
  if (phase == 0)
    c->run = c->run_next > 0 ? c->run_next : RDMA_CHOICE_RUN;
  /* a run just ended: the other way's figure is as of now */
  if (phase == c->run)
    c->other_at = c->calls;

  if (prior_cost > 0 && alt_cost > 0)
  {
    guint64 cur = c->alt ? alt_cost : prior_cost, other = c->alt ? prior_cost : alt_cost;
    gboolean cheaper;

    other *= 10;
    cur *= 9;
    for (guint k = 0; k < MIN (c->switches, 3); k++)
    {
      other *= 5;
      cur *= 4;
    }
    cheaper = other < cur;

    c->leaning = cheaper ? c->leaning + 1 : 0;
    if (c->leaning >= (guint) RDMA_CHOICE_PERSIST << MIN (c->switches, 10))
    {
      if (c->other_at > c->calls - c->leaning)
      {
        /* the way in use becomes the other, measured as of now */
        c->alt = !c->alt;
        c->switches++;
        c->leaning = 0;
        c->every = every_first (c);
        c->other_at = c->calls;
      }
      else if (phase >= c->run)
      {
        /* the other's figure is older than the leaning: measure it again first */
        phase = 0;
        c->run = c->run_next > 0 ? c->run_next : RDMA_CHOICE_RUN;
      }
    }
  }
  /* a run just ended: the next comes twice as late if the way in use is still the cheaper,
   * as early as at first if the other measured cheaper or the way changed */
  if (c->every == 0)
    c->every = every_first (c);
  if (phase == c->run)
  {
    gboolean confirmed = prior_cost > 0 && alt_cost > 0 && c->leaning == 0
                         && c->switches == c->switches_then;

    c->every = confirmed ? MIN (MAX (2 * c->every, every_first (c)),
                                MAX (RDMA_CHOICE_TRY_MAX, every_first (c)))
                         : every_first (c);
    c->switches_then = c->switches;
  }
  c->calls++;
  c->since = phase + 1 >= c->every ? 0 : phase + 1;
  /* a run of the other way, its first half settling */
  c->settling = phase < c->run / 2;
  return (phase < c->run) != c->alt;
}
