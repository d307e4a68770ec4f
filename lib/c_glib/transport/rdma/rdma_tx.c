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

/* rdma_tx.c: transmit buffers (see rdma_tx.h). */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "rdma_numa.h"
#include "rdma_resources.h"
#include "rdma_status.h"
#include "rdma_tx.h"

gboolean
rdma_tx_reserve (RdmaTx *tx, struct ibv_pd *pd, gsize need, gint numa_node, guint64 *pinned,
                 GError **error)
{
  gsize cap = RDMA_TX_MIN_CAP;
  struct ibv_mr *mr;
  void *mem;

  if (need <= tx->cap)
    return TRUE;
  g_return_val_if_fail (tx->busy == 0, FALSE);
  while (cap < need)
    cap *= 2;
  mem = mmap (NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED)
  {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_NO_MEMORY, "mmap", err, -1,
                           "a %" G_GSIZE_FORMAT "-byte transmit buffer", cap);
    return FALSE;
  }
  rdma_numa_place (mem, cap, numa_node);
  mr = rdma_res_mr_reg (pd, mem, cap, IBV_ACCESS_LOCAL_WRITE, error);
  if (mr == NULL)
  {
    munmap (mem, cap);
    return FALSE;
  }
  if (tx->len > 0)
    memcpy (mem, tx->base, tx->len);
  rdma_tx_clear (tx, pinned);
  tx->base = mem;
  tx->cap = cap;
  tx->mr = mr;
  *pinned += cap;
  return TRUE;
}

void
rdma_tx_clear (RdmaTx *tx, guint64 *pinned)
{
  gsize len = tx->len;

  if (tx->mr != NULL)
  {
    rdma_res_mr_dereg (&tx->mr);
    *pinned -= tx->cap;
  }
  if (tx->base != NULL)
    munmap (tx->base, tx->cap);
  tx->base = NULL;
  tx->cap = 0;
  tx->len = len;
}
