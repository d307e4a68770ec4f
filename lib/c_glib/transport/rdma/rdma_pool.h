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
  guint8 *base;
  guint32 slot_size;
  guint32 count;
  struct ibv_mr *mr;
  guint32 *free_stack;
  guint32 n_free;
} RdmaPool;

gboolean rdma_pool_init (RdmaPool *pool, struct ibv_pd *pd, guint32 count, guint32 slot_size,
                         gint access, GError **error);
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
