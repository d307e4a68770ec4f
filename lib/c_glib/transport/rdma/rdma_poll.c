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
 * rdma_poll.c: waiting for completions, by the polling mode (rdma_poll.h).
 *
 *   BUSY:   spin on ibv_poll_cq until something completes or the deadline passes; every
 *           RDMA_POLL_CM_US of spinning, look at the CM channel (non-blocking) for a
 *           disconnect.  By time, not by turns: each look is a system call, and a reply that
 *           takes long in turns (soft-RoCE) must not cost several per call.
 *   EVENT:  poll the CQ; arm it (ibv_req_notify_cq); poll again (a completion that arrived
 *           before the arm raises no event); only then block in poll(2) on the completion
 *           channel and the CM channel together, so a peer's DISCONNECTED wakes us too.
 *           The owner's wake-up eventfd (thrift_rdma_interrupt) is in the same poll set.
 *   HYBRID: spin as BUSY, then block as EVENT.  Spin for spin_us, or for twice the time
 *           recent waits took when that is under RDMA_POLL_SPIN_MAX_US: a reply that comes
 *           about when the last ones did is caught spinning, without the wake-up through the
 *           kernel (two per ping-pong RPC, one per side); a wait that is long anyway blocks
 *           early, unless spinning through long waits was measured to make them shorter
 *           (rdma_poller_choose: where a wake-up costs more than the wait itself).  It
 *           spins only while the process's waiters do not outnumber its cores (rdma_spin.h);
 *           else it blocks at once.  BUSY, asked for explicitly, spins regardless.
 *   EVENT with a measure (a plan's, rdma_plan.h): spins or blocks at once, whichever the
 *           connection's calls measured cheaper by it (rdma_poll_cost.h; all the waits of a
 *           message take one way: rdma_poller_call_begin), with the same admission.
 *
 * Deadlines are monotonic microseconds (0: none); poll(2) is restarted after EINTR with the
 * time left, unless a caught signal's handler lacks SA_RESTART: then the wait fails with
 * RDMA_ERR_INTERRUPTED, as recv (2) would (rdma_signal.h).  CQ events are acknowledged in
 * batches and before the CQ is destroyed (by its owner, with unacked_events).
 * Waits also wake for the owner's timer (the keepalive's ticks, rdma_keepalive.h).
 * Once the owner is interrupted (p->interrupted set), a wait that finds nothing completed
 * fails with RDMA_ERR_INTERRUPTED; spinning checks the flag on every turn.
 *
 * A wait whose deadline and interrupt end its owner (p->block_ok, with a registration,
 * p->block) blocks in the completion channel's read instead of poll (2): one system call
 * less per wait.  The watcher (rdma_block.h) stands in for what poll (2) watched: it runs the
 * timer, and makes a completion arrive for a CM event, an interrupt or the deadline, which
 * the wait then reports as poll (2)'s did, before it looks at the CQ.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>

#include "rdma_poll.h"
#include "rdma_signal.h"
#include "rdma_spin.h"
#include "rdma_status.h"
#include "rdma_verbs.h"

#define RDMA_POLL_BATCH 16
#define RDMA_POLL_CM_US 1000
#define RDMA_POLL_ACK_BATCH 32

void
rdma_poller_init (RdmaPoller *p, const RdmaPollSink *sink, gpointer owner,
                  ThriftRdmaPolling polling, guint spin_us, guint64 *cq_events)
{
  *p = (RdmaPoller){
    .cm_fd = -1,
    .wake_fd = -1,
    .polling = polling,
    .spin_us = spin_us,
    .cq_events = cq_events,
    .sink = sink,
    .owner = owner,
  };
}

/* Polls one batch; returns the number of completions handled, or -1 with @error (the first
 * failure's).  Every completion of the batch is handled, those after a failure too: they
 * are off the CQ, and what they hold (a shared receive slot, a send slot, an op) would
 * otherwise never be given back or counted. */
static gint
drain (RdmaPoller *p, GError **error)
{
  struct ibv_wc wc[RDMA_POLL_BATCH];
  int n = rdma_verbs->poll_cq (p->cq, RDMA_POLL_BATCH, wc);
  gboolean ok = TRUE;

  if (n < 0)
  {
    GError *e = NULL;
    rdma_status_set_error (&e, RDMA_ERR_SYSTEM, "ibv_poll_cq", -n, -1, NULL);
    p->sink->fail (p->owner, e);
    g_propagate_error (error, e);
    return -1;
  }
  for (int i = 0; i < n; i++)
  {
    GError *later = NULL;

    if (ok)
      ok = p->sink->completion (p->owner, &wc[i], error);
    else if (!p->sink->completion (p->owner, &wc[i], &later))
      g_error_free (later); /* the connection failed already, for the first reason */
  }
  return ok ? n : -1;
}

static gboolean
arm (RdmaPoller *p, RdmaArm how, GError **error)
{
  int rc = rdma_verbs->req_notify_cq (p->cq, how == RDMA_ARM_SOLICITED);
  if (rc != 0)
  {
    GError *e = NULL;
    rdma_status_set_error (&e, RDMA_ERR_SYSTEM, "ibv_req_notify_cq", rc, -1, NULL);
    p->sink->fail (p->owner, e);
    g_propagate_error (error, e);
    return FALSE;
  }
  p->armed = how;
  return TRUE;
}

/* An event was taken: the CQ is no longer armed, and events are acknowledged in batches. */
static void
took_event (RdmaPoller *p)
{
  p->armed = RDMA_ARM_NONE;
  (*p->cq_events)++;
  if (++p->unacked_events >= RDMA_POLL_ACK_BATCH)
  {
    rdma_verbs->ack_cq_events (p->cq, p->unacked_events);
    p->unacked_events = 0;
  }
}

gboolean
rdma_poller_take_event (RdmaPoller *p, GError **error)
{
  struct ibv_cq *cq;
  void *ctx;

  if (rdma_verbs->get_cq_event (p->comp_channel, &cq, &ctx) != 0)
  {
    if (errno == EAGAIN || errno == EINTR)
      return TRUE;
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_SYSTEM, "ibv_get_cq_event", err, -1, NULL);
    return FALSE;
  }
  took_event (p);
  return TRUE;
}

/* One more sample into a moving average of an eighth. */
static void
average (guint *avg, gint64 sample)
{
  if (*avg == 0)
    *avg = (guint) sample;
  else
    *avg = (guint) MAX ((gint64) *avg + (sample - (gint64) *avg) / 8, 1);
}

void
rdma_poller_learn (RdmaPoller *p, gint64 took_us)
{
  /* clamped: one slow call among fast ones moves the average by an eighth of the cap, not
   * of its own time */
  average (&p->typical_us, CLAMP (took_us, 1, (gint64) RDMA_POLL_SPIN_MAX_US));
}

void
rdma_poller_learn_way (RdmaPoller *p, RdmaSpinWay way, gint64 took_us)
{
  took_us = CLAMP (took_us, 1, (gint64) RDMA_POLL_SPIN_LONG_US);
  if (way == RDMA_SPIN_THROUGH)
    average (&p->through_us, took_us);
  else if (way == RDMA_SPIN_BLOCK)
    average (&p->blocking_us, took_us);
}

static gboolean
short_waits (const RdmaPoller *p)
{
  return p->typical_us > 0 && 2 * (guint64) p->typical_us <= RDMA_POLL_SPIN_MAX_US;
}

/* Spinning through long waits makes them at least a fifth shorter than blocking early, and
 * they fit the long spin. */
static gboolean
through_pays (const RdmaPoller *p)
{
  return p->through_us > 0 && p->blocking_us > 0
         && 5 * (guint64) p->through_us <= 4 * (guint64) p->blocking_us
         && 2 * (guint64) p->through_us <= RDMA_POLL_SPIN_LONG_US;
}

guint
rdma_poller_spin_budget (const RdmaPoller *p)
{
  if (short_waits (p))
    return MAX (p->spin_us, 2 * p->typical_us);
  if (p->typical_us > 0 && through_pays (p))
    return MAX (p->spin_us, 2 * p->through_us);
  return p->spin_us;
}

RdmaSpinWay
rdma_poller_choose (RdmaPoller *p, guint *budget_us)
{
  gboolean through;

  if (p->typical_us == 0 || short_waits (p))
  {
    *budget_us = rdma_poller_spin_budget (p);
    return RDMA_SPIN_SHORT;
  }
  through = through_pays (p);
  if (p->long_waits++ % RDMA_POLL_TRY_EVERY == 0)
    through = !through;
  if (!through)
  {
    *budget_us = p->spin_us;
    return RDMA_SPIN_BLOCK;
  }
  /* trying it: long enough to catch what the typical time (capped) says */
  *budget_us = (guint) MIN ((guint64) RDMA_POLL_SPIN_LONG_US,
                            MAX (2 * (guint64) p->through_us, 4 * (guint64) p->typical_us));
  return RDMA_SPIN_THROUGH;
}

/* An EVENT wait with a measure spins or blocks by what each way measured. */
static inline gboolean
measured (const RdmaPoller *p)
{
  return p->polling == THRIFT_RDMA_POLLING_EVENT && p->measure != RDMA_MEASURE_NONE;
}

/* The period since the last choice ends at @now: learnt from, per message received in it, if
 * it is to be; returns the thread's CPU time read for it (-1: not read). */
static gint64
period_close (RdmaPoller *p, gint64 now, gpointer self)
{
  gint64 cpu = -1, n;

  if (!p->period_open || !p->period_learn)
    return -1;
  /* (a reset of the counters makes it go back: one round) */
  n = p->call_received > p->period_received ? (gint64) (p->call_received - p->period_received) : 1;
  /* a CPU time read on another thread's clock says nothing of this period */
  if (p->period_cpu >= 0 && p->period_thread == self)
    cpu = rdma_poll_cost_thread_cpu_us ();
  rdma_poll_cost_learn (&p->cost, p->period_way, (now - p->period_start) / n,
                        cpu >= 0 ? (cpu - p->period_cpu) / n : -1);
  return cpu;
}

/* A measured EVENT wait found nothing at once: spin (until the time returned) or block (0).
 * In a measured wait for a message, the way its first such wait chose (a spin not admitted,
 * rdma_spin.h, blocks, and the call counts as blocked); in any other wait, the way in use.
 * A choice also ends the period timed since the last one and begins the next: from one call
 * that waits to the next, whatever calls found their message at once in between (a
 * server's read of the request its linger waited for, or the next requests of a client
 * quicker than the server), so that the period is made of whole rounds: the wait, the
 * wake-up's aftermath, the handling, the next message. */
static gint64
choose_cost (RdmaPoller *p, RdmaSpinTicket *ticket, gint64 start)
{
  guint budget = 0;

  if (!p->in_call)
  {
    if (ticket->spinning
        && rdma_poll_cost_current (&p->cost, p->measure, &budget) == RDMA_POLL_COST_SPIN)
      return start + budget;
    rdma_spin_stop (ticket);
    return 0;
  }
  if (!p->call_chosen)
  {
    gpointer self = g_thread_self ();
    gint64 cpu = period_close (p, start, self);

    p->call_chosen = TRUE;
    p->call_way = RDMA_POLL_COST_BLOCK;
    p->period_learn = TRUE;
    if (ticket->spinning)
    {
      p->call_way = rdma_poll_cost_choose (&p->cost, p->measure, &budget);
      p->period_learn = !p->cost.choice.settling;
    }
    p->call_spin_until = start + budget;
    p->period_way = p->call_way;
    p->period_open = TRUE;
    p->period_received = p->call_received;
    p->period_start = start;
    /* (the reading that ended the last period serves this one's start) */
    if (!rdma_poll_cost_sample_cpu (&p->cost, p->measure))
      cpu = -1;
    else if (cpu < 0)
      cpu = rdma_poll_cost_thread_cpu_us ();
    p->period_cpu = cpu;
    p->period_thread = self;
  }
  if (p->call_way == RDMA_POLL_COST_SPIN && ticket->spinning)
    return p->call_spin_until;
  rdma_spin_stop (ticket);
  return 0;
}

void
rdma_poller_call_begin (RdmaPoller *p, guint64 received)
{
  p->in_call = measured (p);
  p->call_received = received;
  /* a wait without a measure between two that have one: the period is not one of ours */
  if (!p->in_call)
  {
    p->period_open = FALSE;
    p->call_resumes = FALSE;
    return;
  }
  /* a call that follows one that timed out continues it: its way, its period */
  if (!p->call_resumes)
    p->call_chosen = FALSE;
  p->call_resumes = FALSE;
}

void
rdma_poller_call_end (RdmaPoller *p, RdmaCallEnd how)
{
  p->in_call = FALSE;
  p->call_resumes = how == RDMA_CALL_TIMED_OUT && p->call_chosen;
  if (how == RDMA_CALL_FAILED)
    p->period_open = FALSE;
}

void
rdma_poller_call_idle (RdmaPoller *p)
{
  p->period_open = FALSE;
  p->call_resumes = FALSE;
}

/* TRUE, with RDMA_ERR_TIMED_OUT, if @deadline_us (0: none) has passed at @now. */
static gboolean
deadline_passed (gint64 deadline_us, gint64 now, GError **error)
{
  if (deadline_us <= 0 || now < deadline_us)
    return FALSE;
  rdma_status_set_error (error, RDMA_ERR_TIMED_OUT, "waiting for the peer", 0, -1,
                         "no message within the call timeout");
  return TRUE;
}

static void
interrupted_error (GError **error)
{
  rdma_status_set_error (error, RDMA_ERR_INTERRUPTED, "waiting for the peer", 0, -1,
                         "thrift_rdma_interrupt was called");
}

static void
signal_error (const gchar *call, GError **error)
{
  rdma_status_set_error (error, RDMA_ERR_INTERRUPTED, call, EINTR, -1,
                         "a signal interrupted the wait (its handler was installed "
                         "without SA_RESTART, which would end recv (2) as well)");
}

/* Blocks in the completion channel's read (the CQ armed, found empty).  Returns -1 with
 * @error, 1 when the owner's state changed (a CM event), 0 to look at the CQ again.  What
 * the watcher woke us for is handled before the CQ is looked at: the flushed completions
 * that woke us would otherwise be taken for the reason. */
static gint
block_in_read (RdmaPoller *p, gint64 deadline_us, gint before, GError **error)
{
  const RdmaPollSink *sink = p->sink;
  GError *failure = NULL;
  struct ibv_cq *cq;
  void *ctx;
  int rc = -1, err = 0;
  guint why = rdma_block_enter (p->block, deadline_us, sink->timer_due (p->owner));

  if (why == 0)
  {
    if (p->read_waits != NULL)
      (*p->read_waits)++;
    rc = rdma_verbs->get_cq_event (p->comp_channel, &cq, &ctx);
    err = errno;
  }
  why |= rdma_block_leave (p->block, &failure);
  if (rc == 0)
    took_event (p);
  if (failure != NULL)
  {
    g_propagate_error (error, failure);
    return -1;
  }
  /* a signal first, as poll (2)'s EINTR was (a handler that interrupts sets the flag too) */
  if (rc != 0 && err == EINTR && why == 0)
  {
    if (!rdma_signal_interrupts_waits ())
      return 0;
    signal_error ("ibv_get_cq_event", error);
    return -1;
  }
  if (why & RDMA_BLOCK_INTERRUPT || (p->interrupted != NULL && g_atomic_int_get (p->interrupted)))
  {
    interrupted_error (error);
    return -1;
  }
  if (why & RDMA_BLOCK_DEADLINE)
  {
    deadline_passed (deadline_us, G_MAXINT64, error);
    return -1;
  }
  if (why & RDMA_BLOCK_CM)
  {
    gint n = sink->cm_events (p->owner, error);

    rdma_block_rearm_cm (p->block);
    if (n < 0)
      return -1;
    if (sink->state (p->owner) != before)
      return 1; /* (what arrived before the disconnect: the caller looks) */
  }
  if (rc != 0 && why == 0 && err != EAGAIN)
  {
    rdma_status_set_error (error, RDMA_ERR_SYSTEM, "ibv_get_cq_event", err, -1,
                           "waiting on the completion channel");
    return -1;
  }
  return 0;
}

static gboolean
poller_wait (RdmaPoller *p, gint64 deadline_us, RdmaArm how, RdmaSpinTicket *ticket, GError **error)
{
  const RdmaPollSink *sink = p->sink;
  gint before = sink->state (p->owner);
  gint64 spin_until, wake, cm_next, start;
  gboolean waited = FALSE; /* found nothing at once: the wait's time is worth learning */
  RdmaSpinWay way = RDMA_SPIN_SHORT;

  start = g_get_monotonic_time ();
  cm_next = start + RDMA_POLL_CM_US;
  /* hybrid: the way is chosen at the first look that finds nothing, so that only waits
   * that wait count (a wait that finds its completion at once, as for a send's own, would
   * otherwise take the turn of trying the other way: with two waits per call, every
   * RDMA_POLL_TRY_EVERY-th try fell on the same one and spinning through was never tried) */
  spin_until = p->polling == THRIFT_RDMA_POLLING_BUSY ? G_MAXINT64 : 0;

  for (;;)
  {
    gint n = drain (p, error);
    gint64 now;

    if (n >= 0 && p->progress_mask != 0)
    {
      gint done = sink->progress (p->owner, error);
      n = done < 0 ? -1 : n + done;
    }
    if (n < 0)
      return FALSE;
    if (n > 0)
    {
      /* (a wait that found work at once says nothing of the peer) */
      if (waited)
      {
        gint64 took = g_get_monotonic_time () - start;

        rdma_poller_learn (p, took);
        rdma_poller_learn_way (p, way, took);
      }
      return sink->progressed (p->owner, error);
    }
    if (!waited && p->polling == THRIFT_RDMA_POLLING_HYBRID && ticket->spinning)
    {
      guint budget;

      way = rdma_poller_choose (p, &budget);
      spin_until = start + budget;
    }
    if (!waited && measured (p) && deadline_us >= 0)
      spin_until = choose_cost (p, ticket, start);
    waited = TRUE;
    if (p->interrupted != NULL && g_atomic_int_get (p->interrupted))
    {
      interrupted_error (error);
      return FALSE;
    }
    if (deadline_us < 0)
    {
      /* one look only */
      n = sink->cm_events (p->owner, error);
      return n > 0 && sink->progressed (p->owner, error);
    }
    now = g_get_monotonic_time ();
    /* Busy polling looks at the CM channel every RDMA_POLL_CM_US (a system call each,
     * rdma_get_cm_event's EAGAIN): a disconnect must end a wait that never blocks.  Others
     * do not look: a wait that blocks has the channel in its poll(2), and a hybrid one
     * spins for at most RDMA_POLL_SPIN_LONG_US before it does (it looked every millisecond,
     * about once per call under emulation; and a blocked wait looked twice first: strace of
     * 300 event-polled calls in the guest) */
    if (p->polling == THRIFT_RDMA_POLLING_BUSY && now >= cm_next)
    {
      cm_next = now + RDMA_POLL_CM_US;
      n = sink->cm_events (p->owner, error);
      if (n < 0)
        return FALSE;
      if (sink->state (p->owner) != before)
        return TRUE;
    }
    wake = sink->timer_due (p->owner);
    if (wake != 0 && now >= wake)
    {
      if (!sink->timer_tick (p->owner, now, error))
        return FALSE;
      wake = sink->timer_due (p->owner);
    }
    if (deadline_us > 0 && (wake == 0 || deadline_us < wake))
      wake = deadline_us;
    if (deadline_passed (deadline_us, now, error))
      return FALSE;
    if (now < spin_until)
      continue;

    /* poll, arm, poll again, then block */
    rdma_spin_stop (ticket);
    if (p->armed < how)
    {
      if (!arm (p, how, error))
        return FALSE;
      continue;
    }
    if (p->block_ok && p->block != NULL)
    {
      n = block_in_read (p, deadline_us, before, error);
      if (n != 0)
        return n > 0;
      continue;
    }
    if (p->poll_waits != NULL)
      (*p->poll_waits)++;
    {
      struct pollfd pfd[3] = {
        { .fd = p->comp_channel->fd, .events = POLLIN },
        { .fd = p->cm_fd, .events = POLLIN },
        { .fd = p->wake_fd, .events = POLLIN }, /* -1: ignored by poll(2) */
      };
      int timeout = wake > 0 ? (int) MIN ((wake - now + 999) / 1000, G_MAXINT) : -1;
      int r = poll (pfd, 3, timeout);

      if (r < 0)
      {
        int err = errno;
        if (err == EINTR && !rdma_signal_interrupts_waits ())
          continue;
        if (err == EINTR)
        {
          signal_error ("poll", error);
          return FALSE;
        }
        rdma_status_set_error (error, RDMA_ERR_SYSTEM, "poll", err, -1,
                               "waiting on the completion channel");
        return FALSE;
      }
      if (pfd[0].revents & POLLIN && !rdma_poller_take_event (p, error))
        return FALSE;
      if (pfd[1].revents & POLLIN)
      {
        n = sink->cm_events (p->owner, error);
        if (n < 0)
          return FALSE;
        if (sink->state (p->owner) != before)
        {
          /* drain what arrived before the disconnect */
          if (drain (p, error) < 0)
            return FALSE;
          return TRUE;
        }
      }
    }
  }
}

gboolean
rdma_poller_wait (RdmaPoller *p, gint64 deadline_us, RdmaArm how, GError **error)
{
  RdmaSpinTicket ticket;
  gboolean wants_spin, ok;

  if (p->cq == NULL)
  {
    rdma_status_set_error (error, RDMA_ERR_NOT_OPEN, NULL, 0, -1, "no completion queue");
    return FALSE;
  }
  /* poller_wait returns as soon as something completed, without looking at the clock; a
   * caller's loop whose goal never comes while completions keep coming (RFP's polling READs
   * complete on every turn) ends here */
  if (deadline_passed (deadline_us, g_get_monotonic_time (), error))
    return FALSE;
  wants_spin = (p->polling == THRIFT_RDMA_POLLING_HYBRID || measured (p)) && deadline_us >= 0;
  if (!rdma_spin_begin (&ticket, wants_spin) && wants_spin && p->spins_declined != NULL)
    (*p->spins_declined)++;
  ok = poller_wait (p, deadline_us, how, &ticket, error);
  rdma_spin_end (&ticket);
  return ok;
}

/* ---- waiting in someone else's poll set (ThriftIdleWatch) ---- */

gboolean
rdma_poller_drain_all (RdmaPoller *p, GError **error)
{
  gint n;

  while ((n = drain (p, error)) == RDMA_POLL_BATCH)
    ;
  return n >= 0;
}

gboolean
rdma_poller_settle (RdmaPoller *p, gboolean (*over) (gpointer owner), RdmaArm how, GError **error)
{
  for (;;)
  {
    if (!rdma_poller_drain_all (p, error))
      return FALSE;
    if (!p->sink->progressed (p->owner, error))
      return FALSE;
    if (over (p->owner))
      return TRUE;
    /* poll, arm, poll again: a completion before the arm raises no event */
    if (p->armed >= how)
      return TRUE;
    if (!arm (p, how, error))
      return FALSE;
  }
}
