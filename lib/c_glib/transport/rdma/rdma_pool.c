/* rdma_pool.c: registered slot pools. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "rdma_pool.h"
#include "rdma_resources.h"
#include "rdma_status.h"

gboolean
rdma_pool_init (RdmaPool *pool, struct ibv_pd *pd, guint32 count, guint32 slot_size,
                gint access, GError **error)
{
  gsize len = (gsize) count * slot_size;
  void *mem = NULL;

  memset (pool, 0, sizeof *pool);
  if (posix_memalign (&mem, 4096, len) != 0) {
    rdma_status_set_error (error, RDMA_ERR_NO_MEMORY, "posix_memalign", 0, -1,
                           "%" G_GSIZE_FORMAT " bytes of slots", len);
    return FALSE;
  }
  memset (mem, 0, len);
  pool->base = mem;
  pool->slot_size = slot_size;
  pool->count = count;
  pool->mr = rdma_res_mr_reg (pd, mem, len, access, error);
  if (pool->mr == NULL) {
    rdma_pool_clear (pool);
    return FALSE;
  }
  pool->free_stack = g_new (guint32, count);
  for (guint32 i = 0; i < count; i++)
    pool->free_stack[i] = count - 1 - i;
  pool->n_free = count;
  return TRUE;
}

void
rdma_pool_clear (RdmaPool *pool)
{
  rdma_res_mr_dereg (&pool->mr);
  free (pool->base);
  pool->base = NULL;
  g_clear_pointer (&pool->free_stack, g_free);
  pool->n_free = 0;
  pool->count = 0;
}

gboolean
rdma_pool_get (RdmaPool *pool, guint32 *index)
{
  if (pool->n_free == 0)
    return FALSE;
  *index = pool->free_stack[--pool->n_free];
  return TRUE;
}

void
rdma_pool_put (RdmaPool *pool, guint32 index)
{
  g_return_if_fail (index < pool->count && pool->n_free < pool->count);
  pool->free_stack[pool->n_free++] = index;
}
