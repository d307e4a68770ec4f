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
 * rdma_rndv.h: what Write-RNDV and Read-RNDV share (paper Sec. 3.1).
 *
 * Both announce a message with a request-to-send (RTS): a SEND of type RDMA_WIRE_DATA
 * (first and last fragment) whose 24-byte payload is an RdmaRndvWire.  It goes into a receive
 * slot and takes a credit like an Eager-SendRecv message, so the receiver's window bounds the
 * RTSs a peer can have outstanding.  The receiver holds an RTS's slot until it has set up the
 * buffer for it, and sets up buffers (mapped memory of the announced length, registered for
 * the transfer only) while the bytes it holds for the reader stay under settings.unread_limit
 * (at least one message, of any size up to the max message size, is always taken): the rest
 * wait, so what a peer can make us allocate and pin is about unread_limit plus one max-size
 * message per protocol, and a peer that pushes on stops getting credits.  A longer length than
 * the max message size is a protocol error.
 *
 * Every message of a protocol and direction has a sequence number (from 0, in order); the
 * answers (Write-RNDV's CTS and notice, Read-RNDV's DONE) name it, and the receiver checks
 * every one against the oldest message waiting for it.  A 0-byte message is its RTS alone:
 * the receiver delivers it at once, from the RTS's slot.
 */
#ifndef _RDMA_RNDV_H
#define _RDMA_RNDV_H

#include "../rdma_conn_private.h"
#include "../rdma_conn_window.h"

G_BEGIN_DECLS

/* Receive buffers are mappings of a power of two bytes, at least this many; the memory of
 * one freed buffer up to RDMA_RNDV_SPARE_MAX is kept for the next. */
#define RDMA_RNDV_MIN_CAP (4u << 10)
#define RDMA_RNDV_SPARE_MAX (1u << 20)

/* RdmaRndvWire.kind.  CTS and DONE go on the control channel (kind = the control kind). */
enum
{
  RDMA_RNDV_RTS = 1,    /* sender -> receiver, SEND: a message of len bytes (Read-RNDV: to be
                            read at addr with rkey) */
  RDMA_RNDV_CTS = 2,    /* Write-RNDV receiver -> sender, control: write it at addr, rkey */
  RDMA_RNDV_NOTIFY = 3, /* Write-RNDV sender -> receiver, SEND: it is written */
  RDMA_RNDV_DONE = 4    /* Read-RNDV receiver -> sender, control: it is read; drop the key */
};

/* Little-endian on the wire. */
typedef struct __attribute__ ((packed))
{
  guint8 kind;
  guint8 reserved[3];
  guint32 seq;  /* the message's sequence number (per protocol and direction) */
  guint32 len;  /* the message's length */
  guint32 rkey; /* Read-RNDV's RTS, CTS: the key of the buffer; else 0 */
  guint64 addr; /* its address; else 0 */
} RdmaRndvWire;
G_STATIC_ASSERT (sizeof (RdmaRndvWire) == 24);

/* The same, in host order. */
typedef struct
{
  guint8 kind;
  guint32 seq;
  guint32 len;
  guint32 rkey;
  guint64 addr;
} RdmaRndvMsg;

void rdma_rndv_encode (void *dst, const RdmaRndvMsg *m);
/* A rendezvous message of @len bytes (a control message's payload) from the peer; a wrong
 * size is a protocol error. */
gboolean rdma_rndv_decode (const RdmaProtoOps *ops, const guint8 *payload, guint32 len,
                           RdmaRndvMsg *out, GError **error);
/* The same for a SEND with header @hdr (a one-fragment RDMA_WIRE_DATA message). */
gboolean rdma_rndv_decode_send (const RdmaProtoOps *ops, const RdmaWireHeader *hdr,
                                const guint8 *payload, RdmaRndvMsg *out, GError **error);
/* Sends @m as a control message (CTS, DONE): never blocks. */
gboolean rdma_rndv_send_control (RdmaConn *conn, const RdmaProtoOps *ops, const RdmaRndvMsg *m,
                                 GError **error);

/* Waits until a SEND may go: a credit, a send slot and @entries free send queue entries. */
gboolean rdma_rndv_wait_room (RdmaConn *conn, guint entries, gint64 deadline_us, GError **error);
/* After rdma_rndv_wait_room: takes the credit and the slot, writes the header and @m into the
 * slot and fills @sge and @wr (signalled) with them.  Returns the SEND's op (the caller may set
 * its tx). */
RdmaOp *rdma_rndv_prepare_send (RdmaConn *conn, const RdmaProtoOps *ops, const RdmaRndvMsg *m,
                                struct ibv_sge *sge, struct ibv_send_wr *wr);

/* A message being received: its buffer and where it stands. */
typedef struct
{
  guint32 seq;
  guint32 len;
  gint64 slot;       /* the RTS's receive slot, held until the buffer is set up; -1 */
  guint64 peer_addr; /* Read-RNDV: where the peer's bytes are */
  guint32 peer_rkey;
  guint32 posted;  /* Read-RNDV: bytes whose READ is posted */
  guint32 arrived; /* Read-RNDV: bytes whose READ completed */
  guint8 *base;    /* (owned) (nullable): mapped, cap bytes */
  gsize cap;
  struct ibv_mr *mr;  /* (owned) (nullable): registered while the transfer runs */
  RdmaWindow *window; /* Write-RNDV: the peer's way in, as long as mr (rdma_conn_window.h) */
  RdmaMessage *msg;   /* Read-RNDV: its place in the received queue (the engine's) */
} RdmaRndvBuf;

/* A protocol's receiving side. */
typedef struct
{
  guint32 next_seq; /* of the next RTS */
  GQueue waiting;   /* RdmaRndvBuf (owned): announced, no buffer yet */
  GQueue active;    /* (owned): buffer set up, bytes on the way */
  GQueue delivered; /* (owned): delivered, not yet released by the reader */
  gsize mapped;     /* bytes of all buffers' messages */
  guint8 *spare;    /* (owned) (nullable): the memory of a freed buffer, kept for the
                           next (an unmap costs every CPU running the process a TLB
                           flush); not registered */
  gsize spare_cap;
} RdmaRndvRx;

/* An RTS arrived in receive slot @slot: checks it (kind, order, length).  A 0-byte message is
 * delivered from the slot at once (*@buf NULL); otherwise *@buf is a new RdmaRndvBuf that
 * holds the slot, for the caller to queue. */
gboolean rdma_rndv_rx_rts (RdmaConn *conn, const RdmaProtoOps *ops, RdmaRndvRx *rx, guint32 slot,
                           const RdmaRndvMsg *m, RdmaRndvBuf **buf, GError **error);
/* TRUE if a buffer of @len bytes may be set up now (the bytes held stay bounded). */
gboolean rdma_rndv_rx_may_map (RdmaConn *conn, const RdmaRndvRx *rx, guint32 len);
/* Maps and registers @buf's memory with @access, and gives the RTS's slot back. */
gboolean rdma_rndv_rx_map (RdmaConn *conn, RdmaRndvRx *rx, RdmaRndvBuf *buf, gint access,
                           GError **error);
/* Deregisters @buf's memory, its window first (the transfer is over: the key, if the peer had
 * one, is dead). */
void rdma_rndv_rx_unpin (RdmaConn *conn, RdmaRndvBuf *buf);
/* The release slot: the reader is done with the delivered message @token (an RdmaRndvBuf). */
void rdma_rndv_rx_release (RdmaConn *conn, RdmaRndvRx *rx, guint64 token);
/* Frees every buffer and the spare memory; idempotent. */
void rdma_rndv_rx_clear (RdmaConn *conn, RdmaRndvRx *rx);

G_END_DECLS

#endif
