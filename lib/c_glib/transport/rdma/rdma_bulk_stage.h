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
 * rdma_bulk_stage.h: large reply fields copied once into memory of the connection's own and
 * lent from there (bulk transfer, rdma_bulk.h), where the caller's bytes may not be lent.
 *
 * A lent field must stay as it is until the reader's DONE; the processors c_glib's generator
 * writes free a reply's fields before the flush (rdma_bulk_msg.h), so a server at its default
 * threshold cannot lend them.  Copied into the message instead, the field is copied twice:
 * into the transmit buffer, and out of the received message into the reader's buffer.  Staged,
 * it is copied once: into the stage, from which the reader pulls it by RDMA READ straight into
 * its own buffer.
 *
 *   lender (a server's reply)                      reader
 *   waits for the DONE of the message staged
 *   before (there already: the reader sent it
 *   before its next request), copies the field
 *   into the stage
 *   the message: inline bytes + descriptors  ->   pulls the fields, as lent ones
 *   the flush returns at once                 <-  DONE: the stage may be written again
 *
 * The stage is one registration with one window over all of it, bound when the stage is made
 * and kept for its life: no bind, invalidation or wait for the DONE per message.  The window
 * is bound to the connection's QP, and the stage holds nothing but what this connection sent
 * its peer (it starts zeroed), so the key reaches no byte the peer was not sent.  It grows to
 * the largest message's fields (a power of two), within the process's budget (rdma_budget.h):
 * refused, the fields are copied into the message as before.  A stage unused for
 * settings.ring_idle_ms goes, as an idle ring does (rdma_ring.h): made again, a 16 MiB stage
 * costs its registration and 16 MiB of page faults, 3% of a 16 MiB echo on soft-RoCE.
 */
#ifndef _RDMA_BULK_STAGE_H
#define _RDMA_BULK_STAGE_H

#include "rdma_bulk_wire.h"
#include "rdma_conn.h"
#include "rdma_conn_window.h"

G_BEGIN_DECLS

/* The smallest stage. */
#define RDMA_BULK_STAGE_MIN (64u << 10)

typedef struct
{
  guint8 *base; /* (owned) (nullable): mmap'd, NULL while none */
  gsize size;
  struct ibv_mr *mr; /* (owned) (nullable) */
  RdmaWindow *win;   /* (owned) (nullable): over all of @base, remote READ */
  gsize used;        /* bytes of the message being written */
  gboolean out;      /* a message staged is out and its DONE has not come */
  guint32 seq;       /* its number */
  gsize out_bytes;   /* its fields' bytes */
  gint64 idle_due;   /* when it goes unless used again (monotonic us; 0: not while out) */
} RdmaBulkStage;

/* Copies the @len bytes at @ptr into @s after the message's fields staged before, waiting
 * first for the DONE of the message staged before (until @deadline_us); @desc->addr gets the
 * offset in the stage (rdma_bulk_stage_seal makes it an address).  FALSE with @error unset
 * when the stage cannot hold it (the budget, or no type-2 windows): copy the field into the
 * message instead. */
gboolean rdma_bulk_stage_copy (RdmaConn *conn, RdmaBulkStage *s, gconstpointer ptr, gsize len,
                               RdmaBulkDesc *desc, gint64 deadline_us, GError **error);
/* Before the message is sent: the @n descriptors of its staged fields get their addresses
 * and the window's key (bound here if the stage is new). */
gboolean rdma_bulk_stage_seal (RdmaConn *conn, RdmaBulkStage *s, RdmaBulkDesc *desc, guint n,
                               gint64 deadline_us, GError **error);
/* The message, numbered @seq, went out (@sent) or not: the stage waits for its DONE, or is
 * free at once. */
void rdma_bulk_stage_finish (RdmaConn *conn, RdmaBulkStage *s, gboolean sent, guint32 seq);
/* A DONE for @seq: TRUE if it returns the staged message (and the stage is free again). */
gboolean rdma_bulk_stage_returned (RdmaConn *conn, RdmaBulkStage *s, guint32 seq);
/* When the stage's idle check is due (0: none), and the check: a stage unused since its
 * last DONE for settings.ring_idle_ms goes. */
gint64 rdma_bulk_stage_due (const RdmaBulkStage *s);
void rdma_bulk_stage_tick (RdmaConn *conn, RdmaBulkStage *s, gint64 now);
/* The window, the registration and the memory go; after the QP is gone.  Idempotent. */
void rdma_bulk_stage_free (RdmaConn *conn, RdmaBulkStage *s);

G_END_DECLS

#endif
