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

/* rdma_srq.c: a device's shared receive queue (see rdma_srq.h). */
#include "config.h"

#include <errno.h>

#include "rdma_pool.h"
#include "rdma_budget.h"
#include "rdma_srq.h"
#include "rdma_status.h"
#include "rdma_verbs.h"
#include "rdma_wire.h"

typedef struct
{
  RdmaPool pool; /* RDMA_SRQ_CHUNK slots, one registration */
  RdmaOp ops[RDMA_SRQ_CHUNK];
} Chunk;

struct _RdmaSrq
{
  GMutex lock;         /* chunks and growth; posting is the verbs' own */
  struct ibv_srq *srq; /* (owned) */
  struct ibv_pd *pd;   /* (unowned): the domain's, which frees the queue */
  guint32 slot_size;
  guint32 max_slots;
  gint numa_node;
  GPtrArray *chunks; /* (owned): Chunk * (owned) */
  gint posted;       /* atomic */
};

static gboolean
post_slots (RdmaSrq *srq, Chunk *c, guint32 from, guint32 n, GError **error)
{
  struct ibv_recv_wr *wr = g_new0 (struct ibv_recv_wr, n), *bad = NULL;
  struct ibv_sge *sge = g_new0 (struct ibv_sge, n);
  int rc;

  for (guint32 i = 0; i < n; i++)
  {
    sge[i] = (struct ibv_sge){
      .addr = (uintptr_t) rdma_pool_slot (&c->pool, from + i),
      .length = srq->slot_size,
      .lkey = c->pool.mr->lkey,
    };
    wr[i] = (struct ibv_recv_wr){
      .wr_id = rdma_op_wr_id (&c->ops[from + i]),
      .sg_list = &sge[i],
      .num_sge = 1,
      .next = i + 1 < n ? &wr[i + 1] : NULL,
    };
  }
  rc = rdma_verbs->post_srq_recv (srq->srq, wr, &bad);
  g_free (wr);
  g_free (sge);
  if (rc != 0)
  {
    rdma_status_set_error (error, rdma_status_from_errno (rc), "ibv_post_srq_recv", rc, -1,
                           "%u receives", n);
    return FALSE;
  }
  g_atomic_int_add (&srq->posted, (gint) n);
  return TRUE;
}

/* Another chunk, registered and posted; FALSE without @error at the most. */
static gboolean
add_chunk (RdmaSrq *srq, GError **error)
{
  guint32 first = srq->chunks->len * RDMA_SRQ_CHUNK;
  Chunk *c;

  if (first + RDMA_SRQ_CHUNK > srq->max_slots)
    return FALSE;
  /* the first chunk is the minimal footprint; growth asks the budget */
  if (first > 0
      && !rdma_budget_admit ((guint64) RDMA_SRQ_CHUNK * srq->slot_size,
                             "another chunk of the shared receive queue"))
    return FALSE;
  c = g_new0 (Chunk, 1);
  if (!rdma_pool_init (&c->pool, srq->pd, RDMA_SRQ_CHUNK, srq->slot_size, IBV_ACCESS_LOCAL_WRITE,
                       srq->numa_node, error))
  {
    g_free (c);
    return FALSE;
  }
  for (guint32 i = 0; i < RDMA_SRQ_CHUNK; i++)
    c->ops[i] = (RdmaOp){
      .kind = RDMA_OP_RECV, .proto = RDMA_WIRE_PROTO_ENGINE, .slot = first + i, .data = srq
    };
  g_ptr_array_add (srq->chunks, c);
  return post_slots (srq, c, 0, RDMA_SRQ_CHUNK, error);
}

/* The limit event comes once fewer than a quarter of the slots made are posted. */
static gboolean
arm (RdmaSrq *srq, GError **error)
{
  struct ibv_srq_attr attr = { .srq_limit = MAX (srq->chunks->len * RDMA_SRQ_CHUNK / 4, 1u) };
  int rc = rdma_verbs->modify_srq (srq->srq, &attr, IBV_SRQ_LIMIT);

  if (rc != 0)
  {
    rdma_status_set_error (error, rdma_status_from_errno (rc), "ibv_modify_srq", rc, -1,
                           "arming the limit at %u receives", attr.srq_limit);
    return FALSE;
  }
  return TRUE;
}

RdmaSrq *
rdma_srq_new (struct ibv_pd *pd, guint32 slot_size, guint32 max_slots, gint numa_node,
              GError **error)
{
  struct ibv_srq_init_attr attr = { .attr = { .max_wr = max_slots, .max_sge = 1 } };
  RdmaSrq *srq;

  g_return_val_if_fail (max_slots >= RDMA_SRQ_CHUNK, NULL);
  srq = g_new0 (RdmaSrq, 1);
  g_mutex_init (&srq->lock);
  srq->pd = pd;
  srq->slot_size = slot_size;
  srq->max_slots = max_slots;
  srq->numa_node = numa_node;
  srq->chunks = g_ptr_array_new ();
  errno = 0;
  srq->srq = rdma_verbs->create_srq (pd, &attr);
  if (srq->srq == NULL)
  {
    int err = errno ? errno : ENOSYS;
    rdma_status_set_error (error, rdma_status_from_errno (err), "ibv_create_srq", err, -1,
                           "a shared receive queue of %u receives", max_slots);
    rdma_srq_free (srq);
    return NULL;
  }
  if (!add_chunk (srq, error) || !arm (srq, error))
  {
    rdma_srq_free (srq);
    return NULL;
  }
  return srq;
}

void
rdma_srq_free (RdmaSrq *srq)
{
  if (srq == NULL)
    return;
  if (srq->srq != NULL && rdma_verbs->destroy_srq (srq->srq) != 0)
    g_warning ("ibv_destroy_srq: %s", g_strerror (errno));
  for (guint i = 0; i < srq->chunks->len; i++)
  {
    Chunk *c = g_ptr_array_index (srq->chunks, i);
    rdma_pool_clear (&c->pool);
    g_free (c);
  }
  g_ptr_array_unref (srq->chunks);
  g_mutex_clear (&srq->lock);
  g_free (srq);
}

struct ibv_srq *
rdma_srq_verbs (const RdmaSrq *srq)
{
  return srq->srq;
}

static Chunk *
chunk_of (RdmaSrq *srq, guint32 slot)
{
  Chunk *c;

  g_mutex_lock (&srq->lock);
  c = slot / RDMA_SRQ_CHUNK < srq->chunks->len
          ? g_ptr_array_index (srq->chunks, slot / RDMA_SRQ_CHUNK)
          : NULL;
  g_mutex_unlock (&srq->lock);
  return c;
}

guint8 *
rdma_srq_slot (RdmaSrq *srq, guint32 slot)
{
  Chunk *c = chunk_of (srq, slot);

  g_return_val_if_fail (c != NULL, NULL);
  return rdma_pool_slot (&c->pool, slot % RDMA_SRQ_CHUNK);
}

RdmaOp *
rdma_srq_op (RdmaSrq *srq, guint32 slot)
{
  Chunk *c = chunk_of (srq, slot);

  g_return_val_if_fail (c != NULL, NULL);
  return &c->ops[slot % RDMA_SRQ_CHUNK];
}

gboolean
rdma_srq_repost (RdmaSrq *srq, guint32 slot, GError **error)
{
  Chunk *c = chunk_of (srq, slot);

  g_return_val_if_fail (c != NULL, FALSE);
  return post_slots (srq, c, slot % RDMA_SRQ_CHUNK, 1, error);
}

void
rdma_srq_taken (RdmaSrq *srq)
{
  g_atomic_int_add (&srq->posted, -1);
}

gboolean
rdma_srq_limit_reached (RdmaSrq *srq, GError **error)
{
  gboolean ok;
  GError *e = NULL;

  g_mutex_lock (&srq->lock);
  ok = add_chunk (srq, &e) || e == NULL;
  ok = ok && arm (srq, &e);
  g_mutex_unlock (&srq->lock);
  if (e != NULL)
    g_propagate_error (error, e);
  return ok;
}

guint32
rdma_srq_slots (RdmaSrq *srq)
{
  guint32 n;

  g_mutex_lock (&srq->lock);
  n = srq->chunks->len * RDMA_SRQ_CHUNK;
  g_mutex_unlock (&srq->lock);
  return n;
}

guint32
rdma_srq_posted (RdmaSrq *srq)
{
  return (guint32) g_atomic_int_get (&srq->posted);
}

guint64
rdma_srq_pinned (RdmaSrq *srq)
{
  return (guint64) rdma_srq_slots (srq) * srq->slot_size;
}
