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
 * rdma_conn_wait.c: how a connection waits.  It gives its poller (rdma_poll.h) a sink that
 * says what completions, CM events and turns of progress mean for it, and builds its waits
 * on the poller: rdma_conn_progress, and waiting in a server's poll set (the idle API).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>

#include "rdma_conn_private.h"
#include "rdma_conn_window.h"
#include "rdma_helper.h"
#include "rdma_verbs.h"

static gboolean
sink_completion (gpointer owner, const struct ibv_wc *wc, GError **error)
{
  return rdma_conn_handle_wc (owner, wc, error);
}

/* The protocols' own progress (RFP's client fetching by READ): what they did. */
static gint
sink_progress (gpointer owner, GError **error)
{
  RdmaConn *conn = owner;
  gint n = 0;

  /* nothing goes while a window operation is prepared or in flight (rdma_conn_window.h), or while
   * the connection closes: a READ posted on every turn would keep its send queue from
   * draining */
  if (conn->closing || rdma_window_busy (conn))
    return 0;
  for (guint i = 0; i < RDMA_PROTO_COUNT; i++)
  {
    const RdmaProtoOps *ops = rdma_proto_registry[i];
    gint done;

    if (!(conn->poller.progress_mask & (1u << i)) || ops == NULL || ops->progress == NULL)
      continue;
    done = ops->progress (conn, error);
    if (done < 0)
      return -1;
    n += done;
  }
  return n;
}

/* Something happened: completions or CM events.  Give credits back if they piled up. */
static gboolean
sink_progressed (gpointer owner, GError **error)
{
  RdmaConn *conn = owner;

  if (conn->state == RDMA_CONN_CONNECTED && !rdma_conn_return_credits (conn, error))
    return FALSE;
  return TRUE;
}

static void
sink_fail (gpointer owner, const GError *cause)
{
  rdma_conn_fail (owner, cause);
}

static gint
sink_cm_events (gpointer owner, GError **error)
{
  return rdma_conn_handle_cm_events (owner, error);
}

static gint
sink_state (gpointer owner)
{
  return ((RdmaConn *) owner)->state;
}

gint64
rdma_conn_timer_due (RdmaConn *conn)
{
  return rdma_helpers_due (conn);
}

static gint64
sink_timer_due (gpointer owner)
{
  return rdma_conn_timer_due (owner);
}

static gboolean
sink_timer_tick (gpointer owner, gint64 now, GError **error)
{
  return rdma_helpers_tick (owner, now, error);
}

static const RdmaPollSink conn_sink = {
  .completion = sink_completion,
  .progress = sink_progress,
  .progressed = sink_progressed,
  .fail = sink_fail,
  .cm_events = sink_cm_events,
  .state = sink_state,
  .timer_due = sink_timer_due,
  .timer_tick = sink_timer_tick,
};

void
rdma_conn_poller_init (RdmaConn *conn)
{
  rdma_poller_init (&conn->poller, &conn_sink, conn, conn->settings.polling, conn->settings.spin_us,
                    &conn->stats.cq_events);
  conn->poller.spins_declined = &conn->stats.spins_declined;
  conn->poller.poll_waits = &conn->stats.poll_waits;
  conn->poller.read_waits = &conn->stats.read_waits;
}

/* ---- blocking in the read, the watcher standing in (rdma_block.h) ---- */

/* The timers, run by the watcher while the owner is blocked: what they post (a probe, whose
 * completion is not solicited) must wake the owner, so the CQ is armed for all first. */
static gboolean
block_tick (gpointer owner, gint64 now, GError **error)
{
  RdmaConn *conn = owner;

  if (conn->poller.armed < RDMA_ARM_ALL && rdma_verbs->req_notify_cq (conn->poller.cq, 0) == 0)
    conn->poller.armed = RDMA_ARM_ALL;
  return rdma_helpers_tick (conn, now, error);
}

/* Wakes the blocked owner at once, whatever the peer does: the QP to the error state flushes
 * a zero-byte WRITE (posted first: a provider may refuse a post to a QP in the error state),
 * as qp_failed does for the device's events (rdma_conn.c), and raises an event: the wait's
 * end is terminal, so the QP's is too. */
static void
block_force (gpointer owner)
{
  RdmaConn *conn = owner;
  struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
  struct ibv_send_wr wr = {
    .wr_id = rdma_op_wr_id (&conn->fatal_op),
    .opcode = IBV_WR_RDMA_WRITE,
    .send_flags = IBV_SEND_SIGNALED,
  };
  struct ibv_send_wr *bad = NULL;
  int rc;

  (void) rdma_verbs->req_notify_cq (conn->poller.cq, 0);
  conn->poller.armed = RDMA_ARM_ALL;
  if ((rc = rdma_verbs->post_send (conn->id->qp, &wr, &bad)) != 0)
    g_debug ("ThriftRdma: waking a blocked wait, ibv_post_send: %s", g_strerror (rc));
  if ((rc = rdma_verbs->modify_qp (conn->id->qp, &attr, IBV_QP_STATE)) != 0)
    g_debug ("ThriftRdma: waking a blocked wait, ibv_modify_qp: %s", g_strerror (rc));
}

static const RdmaBlockOps block_ops = {
  .tick = block_tick,
  .timer_due = sink_timer_due,
  .force = block_force,
};

/* Whether the next wait may block in the read: a client's connection, not busy-polled, whose
 * completion channel can block and which the watcher took (once; else it polls). */
static gboolean
block_ready (RdmaConn *conn)
{
  GError *e = NULL;
  int flags;

  if (!conn->is_client || conn->poller.polling == THRIFT_RDMA_POLLING_BUSY
      || conn->state != RDMA_CONN_CONNECTED || conn->block_refused)
    return FALSE;
  if (conn->poller.block != NULL)
    return TRUE;
  conn->block_refused = TRUE;
  flags = fcntl (conn->poller.comp_channel->fd, F_GETFL);
  if (flags < 0 || fcntl (conn->poller.comp_channel->fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
  {
    g_debug ("ThriftRdma: the completion channel cannot block (%s): waits poll",
             g_strerror (errno));
    return FALSE;
  }
  conn->poller.block = rdma_block_register (conn->poller.cm_fd, conn->poller.wake_fd, &block_ops,
                                            conn, &e);
  if (conn->poller.block == NULL)
  {
    g_debug ("ThriftRdma: %s: waits poll", e->message);
    g_error_free (e);
    (void) fcntl (conn->poller.comp_channel->fd, F_SETFL, flags);
    return FALSE;
  }
  conn->block_refused = FALSE;
  return TRUE;
}

RdmaMessage *
rdma_conn_wait_reply (RdmaConn *conn, gint64 deadline_us, GError **error)
{
  RdmaMessage *msg;

  conn->poller.block_ok = block_ready (conn);
  msg = rdma_conn_wait_message (conn, deadline_us, error);
  conn->poller.block_ok = FALSE;
  return msg;
}

void
rdma_conn_block_forget (RdmaConn *conn)
{
  rdma_block_unregister (conn->poller.block);
  conn->poller.block = NULL;
}

/* What a wait for a peer's message arms the CQ for: an idle connection in a server's poll
 * set, a client waiting for its reply.  A peer's message is what ends the wait, and it raises
 * a solicited event (RDMA_WIRE_HELLO_SOLICITED): the completion of our own message would
 * otherwise wake us a second time for many (a server for every request; a client for 16% of
 * its calls at 4 to 64 clients in the guest, whose request's completion came after it
 * blocked).  Unless something of ours waits for a send's completion to go on: a message still
 * arriving (the READs that pull a Read-RNDV message), a control or credit message for a send
 * slot, a window operation, a protocol's progress (RFP's polling). */
static RdmaArm
message_arm (RdmaConn *conn)
{
  if (!(conn->peer.flags & RDMA_WIRE_HELLO_SOLICITED) || conn->poller.progress_mask != 0
      || rdma_conn_head_message (conn) != NULL || !g_queue_is_empty (&conn->control_out)
      || rdma_window_busy (conn) || rdma_credit_need_explicit (&conn->credits)
      || rdma_helpers_need_report (conn))
    return RDMA_ARM_ALL;
  return RDMA_ARM_SOLICITED;
}

gboolean
rdma_conn_progress (RdmaConn *conn, gint64 deadline_us, GError **error)
{
  return rdma_poller_wait (&conn->poller, deadline_us, RDMA_ARM_ALL, error);
}

gboolean
rdma_conn_progress_message (RdmaConn *conn, gint64 deadline_us, GError **error)
{
  return rdma_poller_wait (&conn->poller, deadline_us, message_arm (conn), error);
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

static gboolean
idle_over (gpointer owner)
{
  return idle_state (owner) != RDMA_IDLE_WAIT;
}

RdmaIdle
rdma_conn_idle_prepare (RdmaConn *conn, GError **error)
{
  /* CM events (a disconnect) are not read here: the CM channel is in the poll set and check
   * reads it when it fires, which saves a system call per request */
  RdmaIdle st;
  RdmaArm how = message_arm (conn), now;

  /* what the settle's completions started (a window operation after a DONE) may need more
   * than the arming it began with: settled again, armed for all */
  for (;;)
  {
    if (!rdma_poller_settle (&conn->poller, idle_over, how, error))
      return RDMA_IDLE_GONE;
    now = message_arm (conn);
    if (now <= how || idle_over (conn))
      break;
    how = now;
  }
  st = idle_state (conn);
  /* the connection goes back to its server's poll set: a measured round ends here */
  if (st == RDMA_IDLE_WAIT)
    rdma_poller_call_idle (&conn->poller);
  /* a failure found while nobody was reading (a completion handler's) is the reason */
  if (st == RDMA_IDLE_GONE && conn->state == RDMA_CONN_FAILED && conn->failure != NULL
      && error != NULL && *error == NULL)
    *error = g_error_copy (conn->failure);
  return st;
}

RdmaIdle
rdma_conn_idle_check (RdmaConn *conn, gboolean cq_event, gboolean cm_event, gint64 now,
                      GError **error)
{
  gint64 due = rdma_conn_timer_due (conn);

  if (cq_event && !rdma_poller_take_event (&conn->poller, error))
    return RDMA_IDLE_GONE;
  if (cm_event && rdma_conn_handle_cm_events (conn, error) < 0)
    return RDMA_IDLE_GONE;
  /* what completed (a probe's answer among it) counts before the tick judges */
  if (!rdma_poller_drain_all (&conn->poller, error))
    return RDMA_IDLE_GONE;
  if (due != 0 && now >= due && !sink_timer_tick (conn, now, error))
    return RDMA_IDLE_GONE;
  return rdma_conn_idle_prepare (conn, error);
}

RdmaIdle
rdma_conn_idle_look (RdmaConn *conn, gint64 now, GError **error)
{
  guint64 events = conn->stats.cq_events;

  if (!rdma_poller_take_event (&conn->poller, error))
    return RDMA_IDLE_GONE;
  return rdma_conn_idle_check (conn, FALSE, conn->stats.cq_events == events, now, error);
}
