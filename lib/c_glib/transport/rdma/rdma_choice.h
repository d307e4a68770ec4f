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
 * rdma_choice.h: one of two ways, kept by what each measured, with trials of the other.
 *
 * The engine leaves some choices to measurement, since what they cost differs by an order of
 * magnitude between fabrics: spinning or blocking in a wait (rdma_poll_cost.h), lending a
 * large field or copying it (rdma_lend_cost.h).  Each has a prior, the way taken until the
 * other is known to be cheaper, and the same rule for when to try the other and when to change:
 *
 * - the first RDMA_CHOICE_RUN choices take the other way; then every RDMA_CHOICE_TRY_EVERY
 *   choices a run of RDMA_CHOICE_RUN does, the first half of it not learnt from (it settles
 *   what the way in use left behind); after each run that finds the way in use still the
 *   cheaper, twice as seldom, up to every RDMA_CHOICE_TRY_MAX, and as often as at first again
 *   once the other measures cheaper or the way changes;
 * - the way in use changes only when the other has measured a tenth cheaper at
 *   RDMA_CHOICE_PERSIST choices in a row, and after each change by a further fifth (up to 0.46
 *   of the way in use) for twice as many, so that two ways of about the same cost, or a
 *   passing stall, do not make it change back and forth.  (With a fifth from the start, a spin
 *   a fifth to a quarter cheaper than blocking was taken only after half a benchmark's calls.)
 *   And only on a figure of the other way measured since it began to measure cheaper: the
 *   way in use is measured on every choice, the other only in runs, so a load that makes
 *   both dearer at once first shows as the way in use dearer than the other's figure from
 *   before the load.  Leaning that long without a run since, a run begins at once, and the
 *   way changes only if the other still measures cheaper after it (a test in the guest saw
 *   the way change twice in 10,000 calls on a loaded host before this).
 *
 * Where many calls are in flight at once (one device's book for all of a process's
 * connections, rdma_lend_cost.h), a call's time is mostly the calls ahead of it: a run of 8
 * among 16 calls in flight measures the way in use as much as its own.  So the owner says how
 * many calls are in flight (rdma_choice_set_in_flight) and a run is twice as long as that (up
 * to RDMA_CHOICE_RUN_MAX), its first half again settling, and runs come at least
 * RDMA_CHOICE_RUN_SPACING runs apart so that trying costs as small a share of the calls.
 *
 * A cost is an average over the samples of its way: the mean of the first RDMA_CHOICE_REACH,
 * then a REACH-th per sample, each sample counted for at most twice the average, so that one
 * stall does not move it far.  Not thread-safe: the owner serialises.
 */
#ifndef _RDMA_CHOICE_H
#define _RDMA_CHOICE_H

#include <glib.h>

G_BEGIN_DECLS

#define RDMA_CHOICE_TRY_EVERY 256
#define RDMA_CHOICE_TRY_MAX 4096
#define RDMA_CHOICE_RUN 8
#define RDMA_CHOICE_RUN_MAX 128
#define RDMA_CHOICE_RUN_SPACING 16
/* Choices in a row before the way in use changes (doubled after each change, up to 1024
 * times as many). */
#define RDMA_CHOICE_PERSIST 32
#define RDMA_CHOICE_REACH 8

typedef struct
{
  guint calls;         /* choices made */
  guint every;         /* choices from one run of the other way to the next (0: not yet) */
  guint since;         /* choices since the last run began */
  guint switches_then; /* switches when the last run ended */
  gboolean settling;   /* the choice just made begins a run of the other way: not learnt */
  gboolean alt;        /* the way in use is the alternative, not the prior */
  guint leaning;       /* choices in a row at which the other way measured cheaper */
  guint switches;      /* times the way in use changed */
  guint run;           /* choices in the run under way or the last (0: none yet) */
  guint run_next;      /* in the next run (0: RDMA_CHOICE_RUN) */
  guint other_at;      /* choices made when the other way was last measured (a run
                              ended, or it was the way in use) */
} RdmaChoice;

/* The next choice, given what the prior and the alternative cost now (0: not measured yet):
 * TRUE for the alternative.  c->settling says whether it is to be learnt from. */
gboolean rdma_choice_next (RdmaChoice *c, guint prior_cost, guint alt_cost);
/* Before the first choice: the first run of the other way waits for the regular schedule
 * (RDMA_CHOICE_TRY_EVERY choices on), for an owner that knows the prior to be the cheaper
 * from elsewhere (rdma_lend_cost.h: lending measured cheaper at a smaller size).  Nothing
 * after the first choice. */
void rdma_choice_defer_first_run (RdmaChoice *c);
/* About @calls calls are in flight at once: the next run of the other way is twice as long
 * (RDMA_CHOICE_RUN to RDMA_CHOICE_RUN_MAX). */
void rdma_choice_set_in_flight (RdmaChoice *c, guint calls);
/* One more @sample (clamped to 1..@max) into the average *@avg of *@n samples: the mean of
 * the first @reach, then a @reach-th per sample (RDMA_CHOICE_REACH for single calls). */
void rdma_choice_average (guint *avg, guint *n, gint64 sample, gint64 max, guint reach);

G_END_DECLS

#endif /* _RDMA_CHOICE_H */
