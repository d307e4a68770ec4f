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

/* rdma_bulk_stage.c: reply fields lent from a copy (see rdma_bulk_stage.h). */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "rdma_bulk_stage.h"
#include "rdma_budget.h"
#include "rdma_conn_private.h"
#include "rdma_numa.h"
#include "rdma_resources.h"
#include "rdma_status.h"

static void
stage_release (RdmaConn *conn, RdmaBulkStage *s)
{
  rdma_window_free (conn, &s->win); /* (first: a registration with a bound window stays) */
  if (s->mr != NULL)
  {
    rdma_res_mr_dereg (&s->mr);
    conn->stats.pinned_bytes -= s->size;
  }
  if (s->base != NULL)
    munmap (s->base, s->size);
  s->base = NULL;
  s->size = 0;
  s->idle_due = 0;
}

/* A stage of at least @need bytes, holding the @s->used bytes staged so far.  FALSE with
 * @error unset if the budget refuses it. */
static gboolean
stage_grow (RdmaConn *conn, RdmaBulkStage *s, gsize need, GError **error)
{
  gsize size = RDMA_BULK_STAGE_MIN;
  guint8 *mem;
  struct ibv_mr *mr;

  while (size < need)
    size <<= 1;
  if (!rdma_budget_admit (size, "a stage for large reply fields"))
  {
    conn->stats.budget_refusals++;
    return FALSE;
  }
  /* fresh pages are zeroed: the window over all of it shows nothing that was not sent */
  mem = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED)
  {
    rdma_status_set_error (error, RDMA_ERR_NO_MEMORY, "mmap", errno, -1,
                           "a %" G_GSIZE_FORMAT "-byte stage for reply fields", size);
    return FALSE;
  }
  rdma_numa_place (mem, size, conn->settings.numa_node);
  mr = rdma_res_mr_reg (conn->pd, mem, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND, error);
  if (mr == NULL)
  {
    munmap (mem, size);
    return FALSE;
  }
  if (s->used > 0)
    memcpy (mem, s->base, s->used);
  stage_release (conn, s);
  s->base = mem;
  s->size = size;
  s->mr = mr;
  conn->stats.pinned_bytes += size;
  return TRUE;
}

static gboolean
stage_back (RdmaConn *conn, gpointer data)
{
  return !((RdmaBulkStage *) data)->out;
}

gboolean
rdma_bulk_stage_copy (RdmaConn *conn, RdmaBulkStage *s, gconstpointer ptr, gsize len,
                      RdmaBulkDesc *desc, gint64 deadline_us, GError **error)
{
  GError *e = NULL;

  g_return_val_if_fail (len > 0 && len <= G_MAXUINT32, FALSE);
  if (!rdma_window_supported (conn))
    return FALSE;
  /* the reader sent the DONE of the message before with (or before) its next request: it
   * is here by now, unless the peer is still reading */
  if (s->used == 0 && s->out && !rdma_conn_wait_for (conn, stage_back, s, deadline_us, error))
    return FALSE;
  if (s->used + len > s->size && !stage_grow (conn, s, s->used + len, &e))
  {
    if (e == NULL)
      return FALSE;
    g_propagate_error (error, e);
    return FALSE;
  }
  s->idle_due = 0;
  memcpy (s->base + s->used, ptr, len);
  conn->stats.bytes_copied += len;
  desc->len = (guint32) len;
  desc->addr = s->used;
  s->used += len;
  return TRUE;
}

gboolean
rdma_bulk_stage_seal (RdmaConn *conn, RdmaBulkStage *s, RdmaBulkDesc *desc, guint n,
                      gint64 deadline_us, GError **error)
{
  if (s->win == NULL || !rdma_window_bound (s->win))
  {
    if (!rdma_window_bind_wait (conn, &s->win, s->mr, s->base, s->size, IBV_ACCESS_REMOTE_READ,
                                deadline_us, error))
      return FALSE;
  }
  for (guint i = 0; i < n; i++)
  {
    desc[i].addr += (guint64) (uintptr_t) s->base;
    desc[i].rkey = rdma_window_rkey (s->win);
  }
  return TRUE;
}

void
rdma_bulk_stage_finish (RdmaConn *conn, RdmaBulkStage *s, gboolean sent, guint32 seq)
{
  if (s->used == 0)
    return;
  s->out = sent;
  s->seq = seq;
  s->out_bytes = sent ? s->used : 0;
  s->used = 0;
}

gboolean
rdma_bulk_stage_returned (RdmaConn *conn, RdmaBulkStage *s, guint32 seq)
{
  if (!s->out || seq != s->seq)
    return FALSE;
  s->out = FALSE;
  conn->stats.bulk_sent += s->out_bytes;
  if (conn->settings.ring_idle_ms > 0)
    s->idle_due = g_get_monotonic_time () + (gint64) conn->settings.ring_idle_ms * 1000;
  return TRUE;
}

gint64
rdma_bulk_stage_due (const RdmaBulkStage *s)
{
  return s->base != NULL && !s->out && s->used == 0 ? s->idle_due : 0;
}

void
rdma_bulk_stage_tick (RdmaConn *conn, RdmaBulkStage *s, gint64 now)
{
  gint64 due = rdma_bulk_stage_due (s);

  if (due != 0 && now >= due)
    stage_release (conn, s);
}

void
rdma_bulk_stage_free (RdmaConn *conn, RdmaBulkStage *s)
{
  stage_release (conn, s);
  s->used = 0;
  s->out = FALSE;
}
