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
 * rdma_domain.h: one protection domain per device for the whole process.
 *
 * The connections of a process on one device share a protection domain, so that memory
 * registered once (receive buffers, the registration cache) serves all of them; a peer still
 * reaches only what its own connection exposed, since every remotely accessible buffer is
 * behind a type-2 memory window bound on that connection's QP (rdma_conn_window.h).  A device
 * without type-2 windows could not keep its connections apart in one domain: each connection
 * gets a domain of its own there, as before.  Whether a device has windows is asked once,
 * when its shared domain is made; the domain goes with its last connection (and the
 * question is asked again with the next).  Thread-safe.
 */
#ifndef _RDMA_DOMAIN_H
#define _RDMA_DOMAIN_H

#include <glib.h>
#include <infiniband/verbs.h>

#include "rdma_lend_cost.h"
#include "rdma_rcache.h"
#include "rdma_srq.h"

G_BEGIN_DECLS

/* A protection domain on @verbs for one connection: the device's shared one, or one of its
 * own when the device has no type-2 windows.  NULL with @error. */
struct ibv_pd *rdma_domain_acquire (struct ibv_context *verbs, GError **error);
/* Gives back what rdma_domain_acquire returned; sets *@pd to NULL.  Idempotent. */
void rdma_domain_release (struct ibv_pd **pd);
/* Whether @pd is a device's shared domain (so its device has type-2 windows). */
gboolean rdma_domain_shared (struct ibv_pd *pd);
/* The most slots of a device's shared receive queue: 64 MiB of 4 KiB slots. */
#define RDMA_DOMAIN_SRQ_MAX 16384u

/* The shared receive queue of @pd's device for connections of @slot_size-byte slots, made
 * (with the thread that grows it) by the first connection that asks; NULL if the domain is
 * not shared, if the device has none, or for another slot size than the first asked (such
 * connections keep receive slots of their own). */
RdmaSrq *rdma_domain_srq (struct ibv_pd *pd, guint32 slot_size, gint numa_node);
/* The device put a watched QP in the error state (an async event: from an SRQ, no receive
 * of its own is flushed to say so).  Runs on the domain's event thread, under its lock. */
typedef void (*RdmaDomainQpFailed) (gpointer data, enum ibv_event_type what);
/* @failed (@data) runs when the device reports @qp (on @pd's SRQ) failed; until unwatched,
 * which must come before @qp is destroyed. */
void rdma_domain_watch (struct ibv_pd *pd, struct ibv_qp *qp, RdmaDomainQpFailed failed,
                        gpointer data);
void rdma_domain_unwatch (struct ibv_pd *pd, struct ibv_qp *qp);
/* The registration cache of @pd's device, shared by the process's connections on it (so its
 * bounds hold for the process, not per connection: the largest @max_entries and @max_bytes
 * any of them asked), made by the first that asks; NULL if the domain is not shared (the
 * connection keeps a cache of its own).  It goes with the domain. */
RdmaRcache *rdma_domain_rcache (struct ibv_pd *pd, guint max_entries, guint64 max_bytes);
/* What lending (@staged: staging, rdma_bulk_stage.h) and copying large fields cost on @pd's
 * device (rdma_lend_cost.h), made by the first connection that asks; NULL if the domain is
 * not shared (its device cannot lend).  It goes with the domain. */
RdmaLendCost *rdma_domain_lend_cost (struct ibv_pd *pd, gboolean staged);
/* The threads the domains run (one per device with a shared receive queue, while a
 * connection holds it). */
guint rdma_domain_threads (void);
/* The connections holding @pd (0 for a domain of one connection's own); for tests. */
guint rdma_domain_users (struct ibv_pd *pd);

G_END_DECLS

#endif
