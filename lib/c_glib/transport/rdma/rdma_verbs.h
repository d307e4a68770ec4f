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
 * rdma_verbs.h: the calls the engine makes into the RDMA libraries for a connection, through
 * one table: posting and polling, the completion channel, memory registration, the verbs
 * resources, and the CM calls on a connection's own id and event channel.  The table is
 * libibverbs and librdmacm (rdma_verbs_real) unless a test installs another: the host tests
 * run connections over an in-memory provider (test/unit/fake_verbs.c) this way, with no
 * device.  A call through the table costs one indirect call more than a direct one (posting
 * and polling are inline functions of verbs.h that call the provider through the device's
 * own table); nothing else changes for a real device.
 *
 * Not in the table: what only a real connect or accept does (address and route resolution,
 * rdma_connect, rdma_accept, rdma_reject, options) and ThriftServerRdma's listener.  Tests
 * connect two connections with rdma_conn_pair (rdma_conn_private.h) instead.
 */
#ifndef _RDMA_VERBS_H
#define _RDMA_VERBS_H

#include <glib.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

G_BEGIN_DECLS

/* Each slot has the signature and the meaning of the library call it is named after. */
typedef struct
{
  /* the data path */
  int (*post_send) (struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
  int (*post_recv) (struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
  int (*post_srq_recv) (struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
  int (*poll_cq) (struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
  int (*req_notify_cq) (struct ibv_cq *cq, int solicited_only);
  int (*get_cq_event) (struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context);
  void (*ack_cq_events) (struct ibv_cq *cq, unsigned int nevents);

  /* memory */
  struct ibv_mr *(*reg_mr) (struct ibv_pd *pd, void *addr, size_t length, int access);
  int (*dereg_mr) (struct ibv_mr *mr);
  /* memory windows (bulk transfer, rdma_bulk.h): bound and invalidated by post_send
   * (IBV_WR_BIND_MW, IBV_WR_LOCAL_INV) */
  struct ibv_mw *(*alloc_mw) (struct ibv_pd *pd, enum ibv_mw_type type);
  int (*dealloc_mw) (struct ibv_mw *mw);

  /* a connection's resources */
  struct ibv_pd *(*alloc_pd) (struct ibv_context *context);
  int (*dealloc_pd) (struct ibv_pd *pd);
  struct ibv_comp_channel *(*create_comp_channel) (struct ibv_context *context);
  int (*destroy_comp_channel) (struct ibv_comp_channel *channel);
  struct ibv_cq *(*create_cq) (struct ibv_context *context, int cqe, void *cq_context,
                               struct ibv_comp_channel *channel, int comp_vector);
  int (*destroy_cq) (struct ibv_cq *cq);
  int (*create_qp) (struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
  void (*destroy_qp) (struct rdma_cm_id *id);
  int (*query_qp) (struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
                   struct ibv_qp_init_attr *init_attr);
  /* (only RTS -> RTS changes: the CM moves the QP through its states) */
  int (*modify_qp) (struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);

  /* receive queues shared by QPs of one PD, and the device's async events (among them an
   * SRQ's limit reached: ibv_modify_srq with IBV_SRQ_LIMIT arms it) */
  struct ibv_srq *(*create_srq) (struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
  int (*modify_srq) (struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask);
  int (*destroy_srq) (struct ibv_srq *srq);
  int (*get_async_event) (struct ibv_context *context, struct ibv_async_event *event);
  void (*ack_async_event) (struct ibv_async_event *event);

  /* a connection's CM id and event channel */
  struct rdma_event_channel *(*create_event_channel) (void);
  void (*destroy_event_channel) (struct rdma_event_channel *channel);
  int (*migrate_id) (struct rdma_cm_id *id, struct rdma_event_channel *channel);
  int (*get_cm_event) (struct rdma_event_channel *channel, struct rdma_cm_event **event);
  int (*ack_cm_event) (struct rdma_cm_event *event);
  int (*disconnect) (struct rdma_cm_id *id);
  int (*destroy_id) (struct rdma_cm_id *id);
} RdmaVerbs;

/* libibverbs and librdmacm. */
G_GNUC_INTERNAL extern const RdmaVerbs rdma_verbs_real;
/* The table in use (never NULL). */
G_GNUC_INTERNAL extern const RdmaVerbs *rdma_verbs;

/* Installs @verbs (NULL: rdma_verbs_real again).  For tests, before any connection exists
 * and while none does: objects of one table must not reach the other. */
G_GNUC_INTERNAL void rdma_verbs_set (const RdmaVerbs *verbs);

/* Memory regions and windows made through rdma_verbs_real and not yet freed, by every user
 * (the engine's own buffers, the registration cache, bulk transfer's windows): for tests that
 * everything is given back. */
G_GNUC_INTERNAL void rdma_verbs_live (gint *mrs, gint *mws);

G_END_DECLS

#endif
