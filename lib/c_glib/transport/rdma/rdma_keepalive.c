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

/* rdma_keepalive.c: probing a quiet peer (see rdma_keepalive.h). */
#include "config.h"

#include "rdma_conn_private.h"
#include "rdma_conn_window.h"
#include "rdma_helper.h"
#include "rdma_keepalive.h"
#include "rdma_status.h"
#include "rdma_verbs.h"

static gint64
probe_interval_us (const RdmaConn *conn)
{
  return (gint64) conn->settings.keepalive_ms * 1000 / 4;
}

void
rdma_keepalive_start (RdmaConn *conn, gint64 now)
{
  conn->alive_seen = FALSE;
  conn->probe_outstanding = FALSE;
  conn->last_alive_us = now;
  conn->keepalive_due_us = conn->settings.keepalive_ms > 0 ? now + probe_interval_us (conn) : 0;
}

void
rdma_keepalive_set (RdmaConn *conn, guint keepalive_ms, gint64 now)
{
  /* a probe in flight stays counted: the send queue has room for one */
  conn->settings.keepalive_ms = keepalive_ms;
  conn->keepalive_due_us = keepalive_ms > 0 ? now + probe_interval_us (conn) : 0;
}

gint64
rdma_keepalive_due (const RdmaConn *conn)
{
  return conn->state == RDMA_CONN_CONNECTED ? conn->keepalive_due_us : 0;
}

static gboolean
post_probe (RdmaConn *conn, GError **error)
{
  if (!rdma_conn_post_empty_write (conn, &conn->probe_op, "keepalive probe", error))
    return FALSE;
  conn->stats.keepalive_probes++;
  conn->probe_outstanding = TRUE;
  return TRUE;
}

/* TRUE if our own QP is in the error state.  A device may fail it without a completion (rxe
 * was seen to, on a replayed window bind): the probe then goes unanswered because of us, and
 * blaming the peer would send the user to look at the wrong host. */
static gboolean
local_qp_failed (RdmaConn *conn)
{
  struct ibv_qp_attr attr;
  struct ibv_qp_init_attr init;

  if (conn->id == NULL || conn->id->qp == NULL
      || rdma_verbs->query_qp (conn->id->qp, &attr, IBV_QP_STATE, &init) != 0)
    return FALSE;
  return attr.qp_state == IBV_QPS_ERR || attr.qp_state == IBV_QPS_SQE;
}

gboolean
rdma_keepalive_tick (RdmaConn *conn, gint64 now, GError **error)
{
  gint64 interval = probe_interval_us (conn);
  gint64 quiet;

  if (conn->keepalive_due_us == 0 || now < conn->keepalive_due_us
      || conn->state != RDMA_CONN_CONNECTED)
    return TRUE;
  if (conn->alive_seen)
  {
    conn->alive_seen = FALSE;
    conn->last_alive_us = now;
  }
  quiet = now - conn->last_alive_us;
  /* Only an unanswered probe proves anything: after a long time without a wait (a slow
   * handler, an idle client) the last sign of life is old, and the peer may well be there. */
  if (conn->probe_outstanding && now - conn->probe_sent_us >= interval)
  {
    GError *e = NULL;
    if (local_qp_failed (conn))
      rdma_status_set_error (&e, RDMA_ERR_COMPLETION, "keepalive", 0, -1,
                             "this side's queue pair is in the error state, put there by the "
                             "local device without a completion to say why; the peer may well "
                             "be there (no sign of it for %" G_GINT64_FORMAT " ms)",
                             quiet / 1000);
    else
      rdma_status_set_error (&e, RDMA_ERR_PEER_GONE, "keepalive", 0, -1,
                             "no sign of life from the peer for %" G_GINT64_FORMAT " ms, and a "
                             "probe was not acknowledged (its host or link went down, or its "
                             "packets are lost)",
                             quiet / 1000);
    rdma_conn_fail (conn, e);
    g_propagate_error (error, e);
    return FALSE;
  }
  /* a probe waits while a window op is in flight (rdma_window_busy) */
  if (quiet >= interval && !conn->probe_outstanding && !rdma_window_busy (conn))
  {
    if (!post_probe (conn, error))
      return FALSE;
    conn->probe_sent_us = now;
  }
  conn->keepalive_due_us = now + interval;
  return TRUE;
}

void
rdma_keepalive_probe_done (RdmaConn *conn)
{
  conn->probe_outstanding = FALSE;
}

/* ---- as a helper of the connection (rdma_helper.h) ---- */

static gint64
keepalive_due (RdmaConn *conn)
{
  return rdma_keepalive_due (conn);
}

const RdmaHelperOps rdma_keepalive_helper = {
  .name = "keepalive",
  .connected = rdma_keepalive_start,
  .due = keepalive_due,
  .tick = rdma_keepalive_tick,
  .probe_done = rdma_keepalive_probe_done,
};
