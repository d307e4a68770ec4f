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
 * rdma_resources.h: every ibv_* / rdma_* create call of the engine, each with its idempotent
 * destroy (frees the object if the pointer is set, then sets it to NULL), and live counters of
 * what exists, so tests can assert that a closed connection left nothing behind.
 */
#ifndef _RDMA_RESOURCES_H
#define _RDMA_RESOURCES_H

#include <glib.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

G_BEGIN_DECLS

/* Live verbs and CM objects of the whole process. */
typedef struct
{
  gint qps;
  gint cqs;
  gint mrs;
  gint pds;
  gint comp_channels;
  gint cm_ids;
  gint cm_channels;
  gint64 pinned_bytes;
} RdmaResCounts;

void rdma_res_counts (RdmaResCounts *out);

/* CM event channel, non-blocking fd. */
struct rdma_event_channel *rdma_res_channel_create (GError **error);
void rdma_res_channel_destroy (struct rdma_event_channel **channel);

struct rdma_cm_id *rdma_res_id_create (struct rdma_event_channel *channel, gpointer context,
                                       GError **error);
/* Counts an id the CM created for us (a connection request). */
void rdma_res_id_adopt (struct rdma_cm_id *id);
/* Destroys the QP first if it is still there. */
void rdma_res_id_destroy (struct rdma_cm_id **id);

struct ibv_pd *rdma_res_pd_alloc (struct ibv_context *verbs, GError **error);
void rdma_res_pd_destroy (struct ibv_pd **pd);

/* A CQ of @depth entries with its own completion channel (non-blocking fd). */
gboolean rdma_res_cq_create (struct ibv_context *verbs, gint depth,
                             struct ibv_comp_channel **channel, struct ibv_cq **cq, GError **error);
/* Acks @unacked_events CQ events, then destroys the CQ and the channel. */
void rdma_res_cq_destroy (struct ibv_cq **cq, struct ibv_comp_channel **channel,
                          guint *unacked_events);

/* An RC QP on @id with both queues on @cq, up to three SGEs per send WR (header, payload
 * and Batched-Write's trailer), unsignalled-capable; receives from @srq if not NULL. */
gboolean rdma_res_qp_create (struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_cq *cq,
                             struct ibv_srq *srq, guint send_wr, guint recv_wr, GError **error);
void rdma_res_qp_destroy (struct rdma_cm_id *id);

struct ibv_mr *rdma_res_mr_reg (struct ibv_pd *pd, gpointer addr, gsize len, gint access,
                                GError **error);
void rdma_res_mr_dereg (struct ibv_mr **mr);

G_END_DECLS

#endif
