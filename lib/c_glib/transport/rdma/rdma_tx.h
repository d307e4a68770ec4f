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
 * rdma_tx.h: transmit buffers.  ThriftRdma writes a message straight into registered memory,
 * so protocols post it as it is (SEND with a header gathered from a slot, WRITE, WRITE_WITH_IMM)
 * and the CPU copies it once, from Thrift's serializer into the buffer.  A connection has two,
 * used in turn, so the next message can be written while the NIC still reads the last one;
 * a buffer is reused only when every WR reading it has completed (`busy` back at 0).  A buffer
 * grows (registered anew) to the largest message written and is mapped, not malloc'ed, so it
 * goes back to the system on close.
 */
#ifndef _RDMA_TX_H
#define _RDMA_TX_H

#include <glib.h>
#include <infiniband/verbs.h>

#include "rdma_op.h"

G_BEGIN_DECLS

/* A transmit buffer's first size: one page, which the messages of most calls fit; it
 * doubles (registered again) when a message does not. */
#define RDMA_TX_MIN_CAP (4u << 10)

struct _RdmaTx
{
  guint8 *base;
  gsize cap;
  gsize len; /* bytes of the message written so far */
  struct ibv_mr *mr;
  guint busy; /* posted WRs that read it and have not completed */
};

/* Makes room for @need bytes in all (keeps the first len bytes), placed on @numa_node
 * (RDMA_NUMA_NONE: anywhere); @tx must not be busy.  Adds the change of pinned bytes to
 * *@pinned. */
gboolean rdma_tx_reserve (RdmaTx *tx, struct ibv_pd *pd, gsize need, gint numa_node,
                          guint64 *pinned, GError **error);
/* Idempotent. */
void rdma_tx_clear (RdmaTx *tx, guint64 *pinned);

G_END_DECLS

#endif
