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
 * rdma_poll.h: waiting for completions by a polling mode (engine-internal).  The poller knows
 * a CQ, its completion channel, a few fds, an interrupt flag and deadlines; what a completion
 * or a CM event means is its owner's business, reached through an RdmaPollSink.  So the
 * poller does not depend on the connection (rdma_conn_private.h embeds one RdmaPoller and
 * registers itself as the sink).
 */
#ifndef _RDMA_POLL_H
#define _RDMA_POLL_H

#include <glib.h>
#include <infiniband/verbs.h>

#include <thrift/c_glib/transport/thrift_rdma.h>

#include "rdma_block.h"
#include "rdma_poll_cost.h"

G_BEGIN_DECLS

/* What the poller calls back; @owner is RdmaPoller.owner.  Every slot is required. */
typedef struct
{
  /* Handles one work completion.  FALSE with @error ends the wait. */
  gboolean (*completion) (gpointer owner, const struct ibv_wc *wc, GError **error);
  /* One turn of the owner's own progress (called on every turn while progress_mask is
   * non-zero): how much it did (> 0 ends the wait), or -1 with @error. */
  gint (*progress) (gpointer owner, GError **error);
  /* Something happened (completions, progress, CM events): the owner's follow-up (giving
   * credits back).  FALSE with @error ends the wait. */
  gboolean (*progressed) (gpointer owner, GError **error);
  /* The CQ failed (polling or arming it): the owner fails with @cause. */
  void (*fail) (gpointer owner, const GError *cause);
  /* Handles the pending events of cm_fd: their number, or -1 with @error. */
  gint (*cm_events) (gpointer owner, GError **error);
  /* The owner's state, as a number that changes when it does (a disconnect): a wait that
   * sees it change after CM events ends. */
  gint (*state) (gpointer owner);
  /* The owner's next timer (the keepalive's tick), monotonic us, 0 for none, and running it
   * (FALSE with @error ends the wait). */
  gint64 (*timer_due) (gpointer owner);
  gboolean (*timer_tick) (gpointer owner, gint64 now, GError **error);
} RdmaPollSink;

/* How the CQ is armed (ibv_req_notify_cq).  A CQ armed for every completion stays so until
 * its event, whatever is asked later (IBA's rule, which rxe and mlx5 keep): only an arming
 * for more than the CQ has counts. */
typedef enum
{
  RDMA_ARM_NONE,      /* no event will come */
  RDMA_ARM_SOLICITED, /* the next solicited completion (a peer's message) raises one */
  RDMA_ARM_ALL        /* the next completion of any kind raises one */
} RdmaArm;

typedef struct
{
  /* set by the owner */
  struct ibv_cq *cq;
  struct ibv_comp_channel *comp_channel;
  int cm_fd;                 /* the CM event channel's fd (-1: none yet) */
  int wake_fd;               /* the owner's eventfd (-1: none); readable once the
                                         owner was interrupted: poll(2) watches it */
  const gint *interrupted;   /* the owner's atomic flag (NULL: none): a wait that
                                         finds it set fails with RDMA_ERR_INTERRUPTED */
  ThriftRdmaPolling polling; /* the mode of the current wait */
  RdmaMeasure measure;       /* EVENT: spin or block by this measure
                                         (rdma_poll_cost.h); RDMA_MEASURE_NONE: block */
  guint spin_us;             /* hybrid: how long to spin before blocking */
  guint progress_mask;       /* non-zero: sink->progress runs on every turn */
  guint64 *cq_events;        /* counts the CQ events taken (a statistic) */
  guint64 *spins_declined;   /* (nullable) counts hybrid waits refused a spin */
  guint64 *poll_waits;       /* (nullable) counts the waits blocked in poll (2) */
  guint64 *read_waits;       /* (nullable) ... and in the channel's read */
  RdmaBlock *block;          /* (nullable) the owner's registration with the
                                         watcher (rdma_block.h) */
  gboolean block_ok;         /* the current wait may block in the read: its
                                         deadline and interrupt end the owner */
  const RdmaPollSink *sink;
  gpointer owner;

  /* the poller's own */
  guint typical_us;  /* how long recent waits took to a completion (a
                                         moving average, at most RDMA_POLL_SPIN_MAX_US; 0:
                                         none yet): hybrid spins twice that when it is
                                         short */
  guint through_us;  /* long waits: how long they took when spun through */
  guint blocking_us; /* ... and when the wait blocked early (0: none yet) */
  guint long_waits;  /* long waits so far (every RDMA_POLL_TRY_EVERY-th
                                         tries the way not chosen) */
  RdmaPollCost cost; /* the measured ways of an EVENT wait with a measure */
  /* a measured wait for a message (rdma_poller_call_begin): the way its first look that found
   * nothing chose, which all its waits keep, and when its spin ends */
  gboolean in_call, call_chosen;
  RdmaPollCostWay call_way;
  gint64 call_spin_until;
  /* the period being timed, from one call's choice of a way to the next's (rdma_poll_cost.h):
   * its way, whether it is learnt from, its start and its thread's CPU then (-1: not read) */
  gboolean period_open, period_learn;
  guint64 call_received, period_received; /* messages received when the call / the period
                                              began */
  gboolean call_resumes;                  /* the last call timed out: the next continues it */
  RdmaPollCostWay period_way;
  gint64 period_start, period_cpu;
  gpointer period_thread; /* whose clock period_cpu is (a server's connection
                                         moves between dispatchers) */
  guint unacked_events;   /* CQ events taken, not yet acknowledged */
  RdmaArm armed;          /* which completion raises the CQ's next event */
} RdmaPoller;

/* Hybrid polling spins through a wait whose typical time is at most half this. */
#define RDMA_POLL_SPIN_MAX_US 1000
/* A longer wait (up to half this) is spun through only where the poller measured that this
 * makes it notably shorter than blocking early: where a wake-up through the kernel costs more
 * than the wait itself (soft-RoCE under emulation: a blocked 64 B round trip took 3.5x a spun
 * one in the guest).  Each way's time is measured on the waits that took it, and every
 * RDMA_POLL_TRY_EVERY-th long wait tries the way not chosen, so both stay current. */
#define RDMA_POLL_SPIN_LONG_US 8000
#define RDMA_POLL_TRY_EVERY 16

/* How a hybrid wait spends the time before its completion. */
typedef enum
{
  RDMA_SPIN_SHORT,  /* a short wait: spun through (typical_us) */
  RDMA_SPIN_BLOCK,  /* a long wait: spin_us, then block */
  RDMA_SPIN_THROUGH /* a long wait spun through (through_us) */
} RdmaSpinWay;

/* A wait took @took_us to find a completion: into the moving average (typical_us). */
void rdma_poller_learn (RdmaPoller *p, gint64 took_us);
/* ... and, for a long wait, into the time of the way it took. */
void rdma_poller_learn_way (RdmaPoller *p, RdmaSpinWay way, gint64 took_us);
/* How long a hybrid wait spins before it blocks, by the way chosen (without trying the
 * other): spin_us, or twice typical_us when that is at most RDMA_POLL_SPIN_MAX_US, or twice
 * through_us when spinning through long waits was measured to pay. */
guint rdma_poller_spin_budget (const RdmaPoller *p);
/* The next hybrid wait's way and spin (*@budget_us), trying the way not chosen now and
 * then. */
RdmaSpinWay rdma_poller_choose (RdmaPoller *p, guint *budget_us);

/* How a wait for a message ended. */
typedef enum
{
  RDMA_CALL_MESSAGE,   /* with a message */
  RDMA_CALL_TIMED_OUT, /* its deadline passed: a wait that follows continues it (a
                               linger in slices, thrift_hybrid.c) */
  RDMA_CALL_FAILED     /* an error */
} RdmaCallEnd;

/* A wait for a message begins (@received: the messages the connection has received so far)
 * and ends.  With a measure (EVENT polling), all its waits take the way its first that finds
 * nothing chooses (rdma_poll_cost.h), and the time from that choice to the next call's, per
 * message received in between, is learnt: the wait, the wake-up's aftermath, the handling
 * and the next request, which is what a thread's throughput is one over. */
void rdma_poller_call_begin (RdmaPoller *p, guint64 received);
void rdma_poller_call_end (RdmaPoller *p, RdmaCallEnd how);
/* The owner stops waiting for a while (its connection goes back to a server's poll set):
 * what follows is idle time, not a round. */
void rdma_poller_call_idle (RdmaPoller *p);

/* Sets up @p with no CQ and no fds; the owner fills in the rest. */

void rdma_poller_init (RdmaPoller *p, const RdmaPollSink *sink, gpointer owner,
                       ThriftRdmaPolling polling, guint spin_us, guint64 *cq_events);

/*
 * Waits by p->polling until something happens (a completion, a turn of progress that did
 * something, a change of the owner's state after CM events) or @deadline_us (monotonic us;
 * 0: none; < 0: one look only, which is TRUE only if a CM event came).  Fails with
 * RDMA_ERR_TIMED_OUT, RDMA_ERR_INTERRUPTED (p->interrupted, or a signal whose handler lacks
 * SA_RESTART: rdma_signal.h), or what the sink failed with.  Runs the owner's timer when due.
 * A wait that blocks arms the CQ for @how (RDMA_ARM_SOLICITED: only a peer's message ends it).
 */
gboolean rdma_poller_wait (RdmaPoller *p, gint64 deadline_us, RdmaArm how, GError **error);

/* Waiting in a poll set owned by someone else: */
/* Takes every completion there is (an armed CQ raises no event for those already in it). */
gboolean rdma_poller_drain_all (RdmaPoller *p, GError **error);
/* Takes a CQ event after the completion channel's fd was readable. */
gboolean rdma_poller_take_event (RdmaPoller *p, GError **error);
/* Takes every completion and runs the sink's progressed; then, unless @over (owner) says the
 * wait is over, arms the CQ (for @arm: RDMA_ARM_SOLICITED when only a peer's message can end
 * the wait) and does it again (poll, arm, poll again: a completion that came before the arm
 * raises no event), until the CQ is armed and empty or @over.  FALSE with @error: the poller
 * or the sink failed. */
gboolean rdma_poller_settle (RdmaPoller *p, gboolean (*over) (gpointer owner), RdmaArm arm,
                             GError **error);

G_END_DECLS

#endif
