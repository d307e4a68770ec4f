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
 * rdma_op.h: one posted work request, as the engine sees it.  Every WR's wr_id points to an
 * RdmaOp, so a completion says by itself what it finishes: the kind of operation, the
 * protocol that posted it, the slot or transmit buffer it holds, and what to do next.
 *
 * Ops live in per-connection arrays and a free list, never on the stack: a WR in flight when a
 * connection fails still completes (flushed) before the QP is destroyed.  Unsignalled WRs
 * (the WRITE before a chained SEND) point to the connection's `quiet` op: they produce a
 * completion only when they fail.
 */
#ifndef _RDMA_OP_H
#define _RDMA_OP_H

#include <glib.h>
#include <infiniband/verbs.h>

G_BEGIN_DECLS

typedef struct _RdmaConn RdmaConn;
typedef struct _RdmaOp RdmaOp;
typedef struct _RdmaTx RdmaTx;

typedef enum
{
  RDMA_OP_RECV,   /* a receive slot posted for a SEND or a WRITE_WITH_IMM */
  RDMA_OP_SEND,   /* a SEND from a send slot (data, or a control message) */
  RDMA_OP_WRITE,  /* RDMA WRITE (with or without immediate) */
  RDMA_OP_READ,   /* RDMA READ */
  RDMA_OP_PROBE,  /* the keepalive's zero-byte WRITE */
  RDMA_OP_WINDOW, /* a memory window bound or invalidated (bulk transfer) */
  RDMA_OP_FATAL,  /* a zero-byte WRITE the device's event thread posts to a QP it reported
                          failed (rdma_domain.h), whose flushed completion tells the owner */
  RDMA_OP_QUIET   /* an unsignalled WR: only a failure completes it */
} RdmaOpKind;

/* Called when the op's WR completed successfully (the engine has already given back the
 * slot and the transmit buffer the op held). */
typedef gboolean (*RdmaOpDone) (RdmaConn *conn, RdmaOp *op, const struct ibv_wc *wc,
                                GError **error);

struct _RdmaOp
{
  RdmaOpKind kind;
  guint8 proto;       /* RdmaProtoId of the protocol that posted it */
  gint64 slot;        /* send or receive slot it holds, or -1 */
  RdmaTx *tx;         /* transmit buffer it reads from (released on completion), or NULL */
  guint32 sq_entries; /* send queue entries its completion retires (itself and the
                          unsignalled WRs posted before it) */
  gboolean pooled;    /* from the free list: goes back there on completion */
  RdmaOpDone done;    /* NULL: nothing more to do */
  gpointer data;      /* the protocol's */
  guint64 arg;        /* the protocol's */
  RdmaOp *next_free;
};

static inline guint64
rdma_op_wr_id (RdmaOp *op)
{
  return (guint64) (guintptr) op;
}

static inline RdmaOp *
rdma_op_from_wr_id (guint64 wr_id)
{
  return (RdmaOp *) (guintptr) wr_id;
}

G_END_DECLS

#endif
