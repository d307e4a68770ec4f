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
 * rdma_bulk.h: bulk transfer of large fields (Mercury, seed 002 Sec. III-D): a field is not
 * copied into the message; its owner lends it and the reader pulls it with RDMA READ straight
 * into its own buffer.
 *
 *   lender                                        reader
 *   registers the field (registration cache,
 *   local access only), binds a memory window
 *   over exactly its bytes (remote READ only)
 *   the message: inline bytes + descriptors  ->   (rdma_bulk_wire.h)
 *                                                 registers its buffer (cache), READs the
 *                                      (READ) <-  field in chunks, pipelined
 *                                             <-  DONE (engine control: the message's number)
 *   invalidates the windows (LOCAL_INV), then
 *   releases the registrations; the call returns
 *
 * So a key is valid from the bind to the DONE, never after the call that lent it returns
 * (rdma_bulk_settle), and it reaches only the bytes lent: a window is the only remote access
 * to the registration, and a type-2 window answers only on the QP it was bound on.  A call
 * that fails before the DONE deallocates its windows (rdma_bulk_abandon), which revokes them
 * at once.  The registration cache (rdma_rcache.h) is the connection's, made on first use.
 */
#ifndef _RDMA_BULK_H
#define _RDMA_BULK_H

#include "rdma_bulk_stage.h"
#include "rdma_bulk_wire.h"
#include "rdma_conn.h"
#include "rdma_lend_cost.h"

G_BEGIN_DECLS

/* Engine control kinds (RDMA_WIRE_PROTO_ENGINE) of bulk transfer (the others are the
 * ring's, rdma_ring.h). */
enum
{
  RDMA_BULK_DONE = 3 /* reader -> lender: le32 seq, the message's fields were read */
};

/* (The defaults of its settings are in rdma_conn.h.) */
/* The largest registration window of a pipelined pull (rdma_bulk_pull). */
#define RDMA_BULK_WINDOW_MAX (4u << 20)
/* Their ranges (the rcache-entries and rcache-bytes properties): a bound under what one
 * call holds at once fails that call (docs/bulk.md, sizing the cache). */
#define RDMA_BULK_RCACHE_ENTRIES_MIN 1u
#define RDMA_BULK_RCACHE_ENTRIES_MAX 65536u
#define RDMA_BULK_RCACHE_BYTES_MIN G_GUINT64_CONSTANT (4096)
#define RDMA_BULK_RCACHE_BYTES_MAX (G_GUINT64_CONSTANT (1) << 40)

typedef struct _RdmaBulk RdmaBulk;

/* Lender, for the message being written: lends the @len bytes at @ptr (they must stay as they
 * are until rdma_bulk_settle or rdma_bulk_abandon); @desc gets address, length and key (its
 * `at` is the caller's).  The bind is posted before the message, so the device makes the
 * window before the message can reach the reader, and awaited here (a soft-RoCE
 * retransmission could run it again while a newer WR is unacknowledged: rdma_bulk.c).
 * FALSE with RDMA_ERR_SYSTEM when the device has no type-2 memory windows:
 * copy the field instead (rdma_bulk_can_lend says so before). */
gboolean rdma_bulk_lend (RdmaConn *conn, gconstpointer ptr, gsize len, RdmaBulkDesc *desc,
                         gint64 deadline_us, GError **error);
/* Whether this connection's device can lend (type-2 memory windows); asks it once. */
gboolean rdma_bulk_can_lend (RdmaConn *conn);
/* What lending (@staged: staging, rdma_bulk_stage.h) and copying cost on the connection's
 * device (rdma_lend_cost.h); NULL where the connection cannot lend. */
RdmaLendCost *rdma_bulk_lend_cost (RdmaConn *conn, gboolean staged);
/* The connection's stage (rdma_bulk_stage.h). */
RdmaBulkStage *rdma_bulk_stage_of (RdmaConn *conn);
/* The message that staged fields was sent (@sent) or not: numbered, it waits for its DONE. */
void rdma_bulk_stage_sent (RdmaConn *conn, gboolean sent);
/* The number the table of the message being written carries. */
guint32 rdma_bulk_seq (RdmaConn *conn);
/* Lender, once the message went out: waits for the reader's DONE, invalidates the windows and
 * releases the registrations.  FALSE if the DONE did not come (the windows are abandoned);
 * once it came, TRUE even if the invalidation failed (the windows are deallocated then). */
gboolean rdma_bulk_settle (RdmaConn *conn, gint64 deadline_us, GError **error);
/* Lender: revokes every window of the message being written and releases its registrations
 * (the message was not sent, or its call failed).  Idempotent. */
void rdma_bulk_abandon (RdmaConn *conn);
/* Reader: pulls @n bytes from offset @off of the peer's field @desc into @dst, in chunks of
 * settings.bulk_chunk bytes with settings.bulk_depth READs in flight (1: the whole of @dst is
 * registered first and the chunks read one after another).  Returns when they are there. */
gboolean rdma_bulk_pull (RdmaConn *conn, const RdmaBulkDesc *desc, gsize off, guint8 *dst, gsize n,
                         gint64 deadline_us, GError **error);
/* Reader: the peer's message @seq is read; its fields may go. */
gboolean rdma_bulk_done (RdmaConn *conn, guint32 seq, GError **error);

/* The engine: a control message of bulk transfer (RDMA_WIRE_PROTO_ENGINE). */
gboolean rdma_bulk_control (RdmaConn *conn, guint8 kind, const guint8 *payload, guint32 len,
                            GError **error);
/* The registration cache's counters into the connection's stats. */
void rdma_bulk_update_stats (RdmaConn *conn);
/* Frees windows, registrations and the cache; after the QP is gone.  Idempotent. */
void rdma_bulk_free (RdmaConn *conn);

G_END_DECLS

#endif
