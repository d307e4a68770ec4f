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
 * rdma_pool.h: a registered pool of equal slots (receive slots, send slots).  One allocation,
 * one memory region, registered once when the connection is set up; a free stack hands out
 * slot indexes.
 */
#ifndef _RDMA_POOL_H
#define _RDMA_POOL_H

#include <glib.h>
#include <infiniband/verbs.h>

G_BEGIN_DECLS

typedef struct
{
  guint8 *base; /* mmap'ed, len bytes */
  gsize len;
  guint32 slot_size;
  guint32 count;
  struct ibv_mr *mr;
  guint32 *free_stack;
  guint32 n_free;
} RdmaPool;

/* The slots are placed on @numa_node (RDMA_NUMA_NONE: anywhere) before they are touched. */
gboolean rdma_pool_init (RdmaPool *pool, struct ibv_pd *pd, guint32 count, guint32 slot_size,
                         gint access, gint numa_node, GError **error);
/* Idempotent. */
void rdma_pool_clear (RdmaPool *pool);

static inline guint8 *
rdma_pool_slot (const RdmaPool *pool, guint32 index)
{
  return pool->base + (gsize) index * pool->slot_size;
}

/* Takes a free slot; FALSE if all are in use. */
gboolean rdma_pool_get (RdmaPool *pool, guint32 *index);
void rdma_pool_put (RdmaPool *pool, guint32 index);

G_END_DECLS

#endif
