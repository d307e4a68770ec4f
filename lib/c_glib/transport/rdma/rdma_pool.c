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
 * rdma_pool.c: registered slot pools.  The slots are mapped, not allocated: a pool is whole
 * pages (as registration pins them) and goes back to the system when the connection closes,
 * where memory from malloc would stay in the heap (a server that had a thousand connections
 * would keep their slots' worth of RSS for good).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "rdma_numa.h"
#include "rdma_pool.h"
#include "rdma_resources.h"
#include "rdma_status.h"

gboolean
rdma_pool_init (RdmaPool *pool, struct ibv_pd *pd, guint32 count, guint32 slot_size, gint access,
                gint numa_node, GError **error)
{
  gsize len = (gsize) count * slot_size;
  void *mem;

  memset (pool, 0, sizeof *pool);
  mem = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED)
  {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_NO_MEMORY, "mmap", err, -1,
                           "%" G_GSIZE_FORMAT " bytes of slots", len);
    return FALSE;
  }
  /* before registration, which touches (pins) the pages */
  rdma_numa_place (mem, len, numa_node);
  pool->base = mem;
  pool->len = len;
  pool->slot_size = slot_size;
  pool->count = count;
  pool->mr = rdma_res_mr_reg (pd, mem, len, access, error);
  if (pool->mr == NULL)
  {
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
  if (pool->base != NULL)
    munmap (pool->base, pool->len);
  pool->base = NULL;
  pool->len = 0;
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
