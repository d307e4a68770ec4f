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
 * rdma_poll.c: waiting for completions, by the connection's polling mode.
 *
 *   BUSY:   spin on ibv_poll_cq until something completes or the deadline passes; every
 *           RDMA_POLL_CM_US of spinning, look at the CM channel (non-blocking) for a
 *           disconnect.  By time, not by turns: each look is a system call, and a reply that
 *           takes long in turns (soft-RoCE) must not cost several per call.
 *   EVENT:  poll the CQ; arm it (ibv_req_notify_cq); poll again (a completion that arrived
 *           before the arm raises no event); only then block in poll(2) on the completion
 *           channel and the CM channel together, so a peer's DISCONNECTED wakes us too.
 *           The owner's wake-up eventfd (thrift_rdma_interrupt) is in the same poll set.
 *   HYBRID: spin as BUSY for settings.spin_us, then block as EVENT.
 *
 * Deadlines are monotonic microseconds (0: none); poll(2) is restarted after EINTR with the
 * time left, unless a caught signal's handler lacks SA_RESTART: then the wait fails with
 * RDMA_ERR_INTERRUPTED, as recv (2) would (rdma_signal.h).  CQ events are acknowledged in batches and before the CQ is destroyed.
 * Waits also wake for the keepalive's ticks (rdma_keepalive.h).
 * Once the owner is interrupted (conn->interrupted set), a wait that finds nothing completed
 * fails with RDMA_ERR_INTERRUPTED; spinning checks the flag on every turn.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>

#include "rdma_conn.h"
#include "rdma_keepalive.h"
#include "rdma_signal.h"
#include "rdma_status.h"

#define RDMA_POLL_BATCH 16
#define RDMA_POLL_CM_US 1000
#define RDMA_POLL_ACK_BATCH 32

/* Polls one batch; returns the number of completions handled, or -1 with @error. */
static gint
drain (RdmaConn *conn, GError **error)
{
  struct ibv_wc wc[RDMA_POLL_BATCH];
  int n = ibv_poll_cq (conn->cq, RDMA_POLL_BATCH, wc);

  if (n < 0) {
    GError *e = NULL;
    rdma_status_set_error (&e, RDMA_ERR_SYSTEM, "ibv_poll_cq", -n, -1, NULL);
    rdma_conn_fail (conn, e);
    g_propagate_error (error, e);
    return -1;
  }
  for (int i = 0; i < n; i++)
    if (!rdma_conn_handle_wc (conn, &wc[i], error))
      return -1;
  return n;
}

/* The protocols' own progress (RFP's client fetching by READ): @n plus what they did. */
static gint
run_progress (RdmaConn *conn, gint n, GError **error)
{
  for (guint i = 0; i < RDMA_PROTO_COUNT; i++) {
    const RdmaProtoOps *ops = rdma_proto_registry[i];
    gint done;

    if (!(conn->progress_mask & (1u << i)) || ops == NULL || ops->progress == NULL)
      continue;
    done = ops->progress (conn, error);
    if (done < 0)
      return -1;
    n += done;
  }
  return n;
}

static gboolean
arm (RdmaConn *conn, GError **error)
{
  int rc = ibv_req_notify_cq (conn->cq, 0);
  if (rc != 0) {
    GError *e = NULL;
    rdma_status_set_error (&e, RDMA_ERR_SYSTEM, "ibv_req_notify_cq", rc, -1, NULL);
    rdma_conn_fail (conn, e);
    g_propagate_error (error, e);
    return FALSE;
  }
  conn->armed = TRUE;
  return TRUE;
}

static gboolean
take_cq_event (RdmaConn *conn, GError **error)
{
  struct ibv_cq *cq;
  void *ctx;

  if (ibv_get_cq_event (conn->comp_channel, &cq, &ctx) != 0) {
    if (errno == EAGAIN || errno == EINTR)
      return TRUE;
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_SYSTEM, "ibv_get_cq_event", err, -1, NULL);
    return FALSE;
  }
  conn->armed = FALSE;
  conn->stats.cq_events++;
  if (++conn->unacked_events >= RDMA_POLL_ACK_BATCH) {
    ibv_ack_cq_events (conn->cq, conn->unacked_events);
    conn->unacked_events = 0;
  }
  return TRUE;
}

/* Something happened: completions or CM events.  Give credits back if they piled up. */
static gboolean
progressed (RdmaConn *conn, GError **error)
{
  if (conn->state == RDMA_CONN_CONNECTED && !rdma_conn_return_credits (conn, error))
    return FALSE;
  return TRUE;
}

gboolean
rdma_conn_progress (RdmaConn *conn, gint64 deadline_us, GError **error)
{
  RdmaConnState before = conn->state;
  gint64 spin_until, wake, cm_next;

  if (conn->cq == NULL) {
    rdma_status_set_error (error, RDMA_ERR_NOT_OPEN, NULL, 0, -1, "no completion queue");
    return FALSE;
  }
  cm_next = g_get_monotonic_time () + RDMA_POLL_CM_US;
  switch (conn->polling) {
  case THRIFT_RDMA_POLLING_BUSY:
    spin_until = G_MAXINT64;
    break;
  case THRIFT_RDMA_POLLING_HYBRID:
    spin_until = g_get_monotonic_time () + conn->settings.spin_us;
    break;
  default:
    spin_until = 0;
    break;
  }

  for (;;) {
    gint n = drain (conn, error);
    gint64 now;

    if (n >= 0 && conn->progress_mask != 0)
      n = run_progress (conn, n, error);
    if (n < 0)
      return FALSE;
    if (n > 0)
      return progressed (conn, error);
    if (conn->interrupted != NULL && g_atomic_int_get (conn->interrupted)) {
      rdma_status_set_error (error, RDMA_ERR_INTERRUPTED, "waiting for the peer", 0, -1,
                             "thrift_rdma_interrupt was called");
      return FALSE;
    }
    if (deadline_us < 0) {
      /* one look only */
      n = rdma_conn_handle_cm_events (conn, error);
      return n > 0 && progressed (conn, error);
    }
    now = g_get_monotonic_time ();
    if (spin_until == 0 || now >= cm_next) {
      cm_next = now + RDMA_POLL_CM_US;
      n = rdma_conn_handle_cm_events (conn, error);
      if (n < 0)
        return FALSE;
      if (conn->state != before)
        return TRUE;
    }
    wake = rdma_keepalive_due (conn);
    if (wake != 0 && now >= wake) {
      if (!rdma_keepalive_tick (conn, now, error))
        return FALSE;
      wake = rdma_keepalive_due (conn);
    }
    if (deadline_us > 0 && (wake == 0 || deadline_us < wake))
      wake = deadline_us;
    if (deadline_us > 0 && now >= deadline_us) {
      rdma_status_set_error (error, RDMA_ERR_TIMED_OUT, "waiting for the peer", 0, -1,
                             "no message within the call timeout");
      return FALSE;
    }
    if (now < spin_until)
      continue;

    /* poll, arm, poll again, then block */
    if (!conn->armed) {
      if (!arm (conn, error))
        return FALSE;
      continue;
    }
    {
      struct pollfd pfd[3] = {
        { .fd = conn->comp_channel->fd, .events = POLLIN },
        { .fd = conn->cm_channel->fd, .events = POLLIN },
        { .fd = conn->wake_fd, .events = POLLIN },   /* -1: ignored by poll(2) */
      };
      int timeout = wake > 0 ? (int) MIN ((wake - now + 999) / 1000, G_MAXINT) : -1;
      int r = poll (pfd, 3, timeout);

      if (r < 0) {
        int err = errno;
        if (err == EINTR && !rdma_signal_interrupts_waits ())
          continue;
        if (err == EINTR) {
          rdma_status_set_error (error, RDMA_ERR_INTERRUPTED, "poll", EINTR, -1,
                                 "a signal interrupted the wait (its handler was installed "
                                 "without SA_RESTART, which would end recv (2) as well)");
          return FALSE;
        }
        rdma_status_set_error (error, RDMA_ERR_SYSTEM, "poll", err, -1,
                               "waiting on the completion channel");
        return FALSE;
      }
      if (pfd[0].revents & POLLIN && !take_cq_event (conn, error))
        return FALSE;
      if (pfd[1].revents & POLLIN) {
        n = rdma_conn_handle_cm_events (conn, error);
        if (n < 0)
          return FALSE;
        if (conn->state != before) {
          /* drain what arrived before the disconnect */
          if (drain (conn, error) < 0)
            return FALSE;
          return TRUE;
        }
      }
    }
  }
}

/* ---- waiting in someone else's poll set (ThriftIdleWatch) ---- */

static RdmaIdle
idle_state (RdmaConn *conn)
{
  if (rdma_conn_ready_message (conn) != NULL)
    return RDMA_IDLE_READY;
  if (conn->state != RDMA_CONN_CONNECTED)
    return RDMA_IDLE_GONE;
  return RDMA_IDLE_WAIT;
}

/* Takes every completion there is (an armed CQ raises no event for those already in it). */
static gboolean
drain_all (RdmaConn *conn, GError **error)
{
  gint n;

  while ((n = drain (conn, error)) == RDMA_POLL_BATCH)
    ;
  return n >= 0;
}

RdmaIdle
rdma_conn_idle_prepare (RdmaConn *conn, GError **error)
{
  for (;;) {
    RdmaIdle st;

    /* CM events (a disconnect) are not read here: the CM channel is in the poll set and
     * check reads it when it fires, which saves a system call per request */
    if (!drain_all (conn, error))
      return RDMA_IDLE_GONE;
    if (conn->state == RDMA_CONN_CONNECTED && !progressed (conn, error))
      return RDMA_IDLE_GONE;
    if ((st = idle_state (conn)) != RDMA_IDLE_WAIT)
      return st;
    /* poll, arm, poll again: a completion before the arm raises no event */
    if (conn->armed)
      return RDMA_IDLE_WAIT;
    if (!arm (conn, error))
      return RDMA_IDLE_GONE;
  }
}

RdmaIdle
rdma_conn_idle_check (RdmaConn *conn, gboolean cq_event, gboolean cm_event, gint64 now,
                      GError **error)
{
  gint64 due = rdma_keepalive_due (conn);

  if (cq_event && !take_cq_event (conn, error))
    return RDMA_IDLE_GONE;
  if (cm_event && rdma_conn_handle_cm_events (conn, error) < 0)
    return RDMA_IDLE_GONE;
  /* what completed (a probe's answer among it) counts before the tick judges */
  if (!drain_all (conn, error))
    return RDMA_IDLE_GONE;
  if (due != 0 && now >= due && !rdma_keepalive_tick (conn, now, error))
    return RDMA_IDLE_GONE;
  return rdma_conn_idle_prepare (conn, error);
}
