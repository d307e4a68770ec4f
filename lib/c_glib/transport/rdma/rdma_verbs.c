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

/* rdma_verbs.c: the table of the real libraries (see rdma_verbs.h). */
#include "config.h"

#include "rdma_verbs.h"

/* verbs.h makes these inline functions (or macros): the table needs functions */
static int
real_post_send (struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
  return ibv_post_send (qp, wr, bad_wr);
}

static int
real_post_recv (struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
  return ibv_post_recv (qp, wr, bad_wr);
}

static int
real_post_srq_recv (struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
  return ibv_post_srq_recv (srq, wr, bad_wr);
}

static int
real_poll_cq (struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
  return ibv_poll_cq (cq, num_entries, wc);
}

static int
real_req_notify_cq (struct ibv_cq *cq, int solicited_only)
{
  return ibv_req_notify_cq (cq, solicited_only);
}

/* Regions and windows alive, whoever made them through the real table (rdma_verbs_live). */
static gint live_mrs, live_mws;

static struct ibv_mr *
real_reg_mr (struct ibv_pd *pd, void *addr, size_t length, int access)
{
  struct ibv_mr *mr = ibv_reg_mr (pd, addr, length, access);

  if (mr != NULL)
    g_atomic_int_inc (&live_mrs);
  return mr;
}

static int
real_dereg_mr (struct ibv_mr *mr)
{
  int rc = ibv_dereg_mr (mr);

  if (rc == 0)
    g_atomic_int_add (&live_mrs, -1);
  return rc;
}

static struct ibv_mw *
real_alloc_mw (struct ibv_pd *pd, enum ibv_mw_type type)
{
  struct ibv_mw *mw = ibv_alloc_mw (pd, type);

  if (mw != NULL)
    g_atomic_int_inc (&live_mws);
  return mw;
}

static int
real_dealloc_mw (struct ibv_mw *mw)
{
  int rc = ibv_dealloc_mw (mw);

  if (rc == 0)
    g_atomic_int_add (&live_mws, -1);
  return rc;
}

void
rdma_verbs_live (gint *mrs, gint *mws)
{
  *mrs = g_atomic_int_get (&live_mrs);
  *mws = g_atomic_int_get (&live_mws);
}

const RdmaVerbs rdma_verbs_real = {
  .post_send = real_post_send,
  .post_recv = real_post_recv,
  .post_srq_recv = real_post_srq_recv,
  .poll_cq = real_poll_cq,
  .req_notify_cq = real_req_notify_cq,
  .get_cq_event = ibv_get_cq_event,
  .ack_cq_events = ibv_ack_cq_events,
  .reg_mr = real_reg_mr,
  .dereg_mr = real_dereg_mr,
  .alloc_mw = real_alloc_mw,
  .dealloc_mw = real_dealloc_mw,
  .alloc_pd = ibv_alloc_pd,
  .dealloc_pd = ibv_dealloc_pd,
  .create_comp_channel = ibv_create_comp_channel,
  .destroy_comp_channel = ibv_destroy_comp_channel,
  .create_cq = ibv_create_cq,
  .destroy_cq = ibv_destroy_cq,
  .create_qp = rdma_create_qp,
  .destroy_qp = rdma_destroy_qp,
  .query_qp = ibv_query_qp,
  .modify_qp = ibv_modify_qp,
  .create_srq = ibv_create_srq,
  .modify_srq = ibv_modify_srq,
  .destroy_srq = ibv_destroy_srq,
  .get_async_event = ibv_get_async_event,
  .ack_async_event = ibv_ack_async_event,
  .create_event_channel = rdma_create_event_channel,
  .destroy_event_channel = rdma_destroy_event_channel,
  .migrate_id = rdma_migrate_id,
  .get_cm_event = rdma_get_cm_event,
  .ack_cm_event = rdma_ack_cm_event,
  .disconnect = rdma_disconnect,
  .destroy_id = rdma_destroy_id,
};

const RdmaVerbs *rdma_verbs = &rdma_verbs_real;

void
rdma_verbs_set (const RdmaVerbs *verbs)
{
  rdma_verbs = verbs != NULL ? verbs : &rdma_verbs_real;
}
