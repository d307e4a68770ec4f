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
 * rdma_srq.h: the receive slots of a device's connections, in one shared receive queue.
 *
 * A connection's own receive slots (credits plus control slots, 4 KiB each) pin 160 KiB per
 * connection whether it is busy or idle.  Here the slots of every connection of the process
 * on one device are in one SRQ, registered in the device's shared protection domain
 * (rdma_domain.h), in chunks of RDMA_SRQ_CHUNK slots: a first chunk when the queue is made,
 * another each time the queue runs low (the SRQ's limit event, armed at a quarter of what is
 * posted), up to a most that the caller's budget sets.  A slot that a receive completion
 * names belongs to the connection whose CQ had it until that connection gives it back
 * (rdma_srq_repost); credits stay per connection, as a cap of messages in flight, so the
 * queue is overcommitted, and a SEND that finds it empty waits in the sender's RNR retries
 * for the slots the readers give back.  Thread-safe: connections on several threads repost.
 */
#ifndef _RDMA_SRQ_H
#define _RDMA_SRQ_H

#include <glib.h>
#include <infiniband/verbs.h>

#include "rdma_op.h"

G_BEGIN_DECLS

/* Slots per chunk (one registration, one post). */
#define RDMA_SRQ_CHUNK 256u

typedef struct _RdmaSrq RdmaSrq;

/* An SRQ on @pd of at most @max_slots slots of @slot_size bytes, the first chunk posted and
 * the limit armed; memory placed on @numa_node (RDMA_NUMA_NONE: anywhere).  NULL with
 * @error (the device has no SRQ, or no memory). */
RdmaSrq *rdma_srq_new (struct ibv_pd *pd, guint32 slot_size, guint32 max_slots, gint numa_node,
                       GError **error);
/* After every QP that used it is gone.  Idempotent on NULL. */
void rdma_srq_free (RdmaSrq *srq);

/* What the QPs are created with. */
struct ibv_srq *rdma_srq_verbs (const RdmaSrq *srq);
/* Slot @slot's bytes, and the op its receives complete with (kind RDMA_OP_RECV, its slot
 * @slot, its data the SRQ). */
guint8 *rdma_srq_slot (RdmaSrq *srq, guint32 slot);
RdmaOp *rdma_srq_op (RdmaSrq *srq, guint32 slot);
/* A receive completed into one of the slots (for the count of those posted). */
void rdma_srq_taken (RdmaSrq *srq);
/* Gives slot @slot back: posted again. */
gboolean rdma_srq_repost (RdmaSrq *srq, guint32 slot, GError **error);
/* The SRQ's limit event arrived: another chunk is posted (if the most allows) and the limit
 * armed again.  FALSE with @error if that failed (what was posted stays). */
gboolean rdma_srq_limit_reached (RdmaSrq *srq, GError **error);

/* Slots made, slots posted (waiting for a message), bytes pinned. */
guint32 rdma_srq_slots (RdmaSrq *srq);
guint32 rdma_srq_posted (RdmaSrq *srq);
guint64 rdma_srq_pinned (RdmaSrq *srq);

G_END_DECLS

#endif
