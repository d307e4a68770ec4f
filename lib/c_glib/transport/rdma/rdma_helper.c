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

/* rdma_helper.c: the helpers' list, and the connection's calls over it (rdma_helper.h). */
#include "config.h"

#include "rdma_helper.h"
#include "rdma_status.h"

extern const RdmaHelperOps rdma_ring_helper;
extern const RdmaHelperOps rdma_bulk_helper;
extern const RdmaHelperOps rdma_keepalive_helper;

const RdmaHelperOps *const rdma_helpers[] = {
  &rdma_keepalive_helper,
  &rdma_ring_helper,
  &rdma_bulk_helper,
  NULL,
};

#define EACH(h) for (const RdmaHelperOps *const *h = rdma_helpers; *h != NULL; h++)

gboolean
rdma_helpers_control (RdmaConn *conn, guint8 kind, const guint8 *payload, guint32 len,
                      GError **error)
{
  EACH (h)
  if ((*h)->owns_control != NULL && (*h)->owns_control (kind))
    return (*h)->control (conn, kind, payload, len, error);
  rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                         "garbage framing: an engine control message of kind %u", kind);
  return FALSE;
}

void
rdma_helpers_connected (RdmaConn *conn, gint64 now)
{
  EACH (h)
  if ((*h)->connected != NULL)
    (*h)->connected (conn, now);
}

gint64
rdma_helpers_due (RdmaConn *conn)
{
  gint64 due = 0;

  EACH (h)
  if ((*h)->due != NULL)
  {
    gint64 t = (*h)->due (conn);
    if (t != 0 && (due == 0 || t < due))
      due = t;
  }
  return due;
}

gboolean
rdma_helpers_tick (RdmaConn *conn, gint64 now, GError **error)
{
  EACH (h)
  if ((*h)->tick != NULL && !(*h)->tick (conn, now, error))
    return FALSE;
  return TRUE;
}

void
rdma_helpers_probe_done (RdmaConn *conn)
{
  EACH (h)
  if ((*h)->probe_done != NULL)
    (*h)->probe_done (conn);
}

guint
rdma_helpers_take_freed (RdmaConn *conn, guint max)
{
  guint n = 0;

  EACH (h)
  if ((*h)->take_freed != NULL)
    n += (*h)->take_freed (conn, max - n);
  return n;
}

gboolean
rdma_helpers_need_report (RdmaConn *conn)
{
  EACH (h)
  if ((*h)->need_report != NULL && (*h)->need_report (conn))
    return TRUE;
  return FALSE;
}

gboolean
rdma_helpers_peer_freed (RdmaConn *conn, guint n, GError **error)
{
  EACH (h)
  if ((*h)->peer_freed != NULL)
    return (*h)->peer_freed (conn, n, error);
  return TRUE;
}

void
rdma_helpers_free (RdmaConn *conn)
{
  EACH (h)
  if ((*h)->free != NULL)
    (*h)->free (conn);
}
