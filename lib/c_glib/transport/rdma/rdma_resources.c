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

/* rdma_resources.c: create/destroy pairs for verbs and CM objects, with live counters. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>

#include "rdma_resources.h"
#include "rdma_status.h"
#include "rdma_verbs.h"

static gint live_qps, live_cqs, live_mrs, live_pds, live_comp_channels, live_cm_ids,
    live_cm_channels;
static gint64 live_pinned;
G_LOCK_DEFINE_STATIC (pinned);

void
rdma_res_counts (RdmaResCounts *out)
{
  out->qps = g_atomic_int_get (&live_qps);
  out->cqs = g_atomic_int_get (&live_cqs);
  out->mrs = g_atomic_int_get (&live_mrs);
  out->pds = g_atomic_int_get (&live_pds);
  out->comp_channels = g_atomic_int_get (&live_comp_channels);
  out->cm_ids = g_atomic_int_get (&live_cm_ids);
  out->cm_channels = g_atomic_int_get (&live_cm_channels);
  G_LOCK (pinned);
  out->pinned_bytes = live_pinned;
  G_UNLOCK (pinned);
}

static gboolean
set_nonblocking (int fd, const gchar *what, GError **error)
{
  int flags = fcntl (fd, F_GETFL);
  if (flags < 0 || fcntl (fd, F_SETFL, flags | O_NONBLOCK) < 0)
  {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_SYSTEM, "fcntl", err, -1,
                           "cannot make the %s fd non-blocking", what);
    return FALSE;
  }
  return TRUE;
}

struct rdma_event_channel *
rdma_res_channel_create (GError **error)
{
  struct rdma_event_channel *ch;

  errno = 0;
  ch = rdma_verbs->create_event_channel ();
  if (ch == NULL)
  {
    int err = errno;
    rdma_status_set_error (
        error, err == ENODEV || err == ENOENT ? RDMA_ERR_NO_DEVICE : rdma_status_from_errno (err),
        "rdma_create_event_channel", err, -1,
        err == EMFILE || err == ENFILE ? "cannot open the RDMA CM: out of file descriptors (each "
                                         "connection holds a few; raise the limit, ulimit -n)"
                                       : "cannot open the RDMA CM (is rdma_ucm loaded, "
                                         "/dev/infiniband/rdma_cm present?)");
    return NULL;
  }
  if (!set_nonblocking (ch->fd, "CM event channel", error))
  {
    rdma_verbs->destroy_event_channel (ch);
    return NULL;
  }
  g_atomic_int_inc (&live_cm_channels);
  return ch;
}

void
rdma_res_channel_destroy (struct rdma_event_channel **channel)
{
  if (*channel == NULL)
    return;
  rdma_verbs->destroy_event_channel (*channel);
  *channel = NULL;
  g_atomic_int_add (&live_cm_channels, -1);
}

struct rdma_cm_id *
rdma_res_id_create (struct rdma_event_channel *channel, gpointer context, GError **error)
{
  struct rdma_cm_id *id = NULL;

  if (rdma_create_id (channel, &id, context, RDMA_PS_TCP) != 0)
  {
    int err = errno;
    rdma_status_set_error (error, rdma_status_from_errno (err), "rdma_create_id", err, -1, NULL);
    return NULL;
  }
  g_atomic_int_inc (&live_cm_ids);
  return id;
}

void
rdma_res_id_adopt (struct rdma_cm_id *id)
{
  if (id != NULL)
    g_atomic_int_inc (&live_cm_ids);
}

void
rdma_res_id_destroy (struct rdma_cm_id **id)
{
  if (*id == NULL)
    return;
  rdma_res_qp_destroy (*id);
  if (rdma_verbs->destroy_id (*id) != 0)
    g_warning ("rdma_destroy_id: %s", g_strerror (errno));
  *id = NULL;
  g_atomic_int_add (&live_cm_ids, -1);
}

struct ibv_pd *
rdma_res_pd_alloc (struct ibv_context *verbs, GError **error)
{
  struct ibv_pd *pd;

  errno = 0;
  pd = rdma_verbs->alloc_pd (verbs);
  if (pd == NULL)
  {
    int err = errno ? errno : ENOMEM;
    rdma_status_set_error (error, rdma_status_from_errno (err), "ibv_alloc_pd", err, -1, NULL);
    return NULL;
  }
  g_atomic_int_inc (&live_pds);
  return pd;
}

void
rdma_res_pd_destroy (struct ibv_pd **pd)
{
  if (*pd == NULL)
    return;
  if (rdma_verbs->dealloc_pd (*pd) != 0)
    g_warning ("ibv_dealloc_pd: %s", g_strerror (errno));
  *pd = NULL;
  g_atomic_int_add (&live_pds, -1);
}

gboolean
rdma_res_cq_create (struct ibv_context *verbs, gint depth, struct ibv_comp_channel **channel,
                    struct ibv_cq **cq, GError **error)
{
  int err;

  errno = 0;
  *channel = rdma_verbs->create_comp_channel (verbs);
  if (*channel == NULL)
  {
    err = errno ? errno : ENOMEM;
    rdma_status_set_error (error, rdma_status_from_errno (err), "ibv_create_comp_channel", err, -1,
                           NULL);
    return FALSE;
  }
  g_atomic_int_inc (&live_comp_channels);
  if (!set_nonblocking ((*channel)->fd, "completion channel", error))
    goto clean_channel;
  errno = 0;
  *cq = rdma_verbs->create_cq (verbs, depth, NULL, *channel, 0);
  if (*cq == NULL)
  {
    err = errno ? errno : ENOMEM;
    rdma_status_set_error (error, rdma_status_from_errno (err), "ibv_create_cq", err, -1,
                           "%d entries", depth);
    goto clean_channel;
  }
  g_atomic_int_inc (&live_cqs);
  return TRUE;

clean_channel:
  rdma_verbs->destroy_comp_channel (*channel);
  *channel = NULL;
  g_atomic_int_add (&live_comp_channels, -1);
  return FALSE;
}

void
rdma_res_cq_destroy (struct ibv_cq **cq, struct ibv_comp_channel **channel, guint *unacked_events)
{
  if (*cq != NULL)
  {
    if (*unacked_events > 0)
      rdma_verbs->ack_cq_events (*cq, *unacked_events);
    *unacked_events = 0;
    if (rdma_verbs->destroy_cq (*cq) != 0)
      g_warning ("ibv_destroy_cq: %s", g_strerror (errno));
    *cq = NULL;
    g_atomic_int_add (&live_cqs, -1);
  }
  if (*channel != NULL)
  {
    if (rdma_verbs->destroy_comp_channel (*channel) != 0)
      g_warning ("ibv_destroy_comp_channel: %s", g_strerror (errno));
    *channel = NULL;
    g_atomic_int_add (&live_comp_channels, -1);
  }
}

gboolean
rdma_res_qp_create (struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_cq *cq,
                    struct ibv_srq *srq, guint send_wr, guint recv_wr, GError **error)
{
  struct ibv_qp_init_attr attr = {
    .send_cq = cq,
    .recv_cq = cq,
    .srq = srq,
    .qp_type = IBV_QPT_RC,
    .cap = { .max_send_wr = send_wr,
             .max_recv_wr = srq != NULL ? 0 : recv_wr,
             .max_send_sge = 3,
             .max_recv_sge = 1 },
    .sq_sig_all = 0,
  };

  if (rdma_verbs->create_qp (id, pd, &attr) != 0)
  {
    int err = errno;
    rdma_status_set_error (error, rdma_status_from_errno (err), "rdma_create_qp", err, -1,
                           "RC QP with %u send and %u receive WRs", send_wr, recv_wr);
    return FALSE;
  }
  g_atomic_int_inc (&live_qps);
  return TRUE;
}

void
rdma_res_qp_destroy (struct rdma_cm_id *id)
{
  if (id == NULL || id->qp == NULL)
    return;
  rdma_verbs->destroy_qp (id);
  id->qp = NULL;
  g_atomic_int_add (&live_qps, -1);
}

struct ibv_mr *
rdma_res_mr_reg (struct ibv_pd *pd, gpointer addr, gsize len, gint access, GError **error)
{
  struct ibv_mr *mr;

  errno = 0;
  mr = rdma_verbs->reg_mr (pd, addr, len, access);
  if (mr == NULL)
  {
    int err = errno ? errno : ENOMEM;
    if (err == ENOMEM || err == EAGAIN || err == EPERM)
      rdma_status_set_error (error, RDMA_ERR_NO_MEMORY, "ibv_reg_mr", err, -1,
                             "cannot pin %" G_GSIZE_FORMAT " bytes: the locked-memory limit "
                             "(ulimit -l, RLIMIT_MEMLOCK) is too small",
                             len);
    else
      rdma_status_set_error (error, rdma_status_from_errno (err), "ibv_reg_mr", err, -1,
                             "%" G_GSIZE_FORMAT " bytes", len);
    return NULL;
  }
  g_atomic_int_inc (&live_mrs);
  G_LOCK (pinned);
  live_pinned += (gint64) len;
  G_UNLOCK (pinned);
  return mr;
}

void
rdma_res_mr_dereg (struct ibv_mr **mr)
{
  gsize len;

  if (*mr == NULL)
    return;
  len = (*mr)->length;
  if (rdma_verbs->dereg_mr (*mr) != 0)
    g_warning ("ibv_dereg_mr: %s", g_strerror (errno));
  *mr = NULL;
  g_atomic_int_add (&live_mrs, -1);
  G_LOCK (pinned);
  live_pinned -= (gint64) len;
  G_UNLOCK (pinned);
}
