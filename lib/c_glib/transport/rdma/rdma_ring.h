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
 * rdma_ring.h: the direct ring, the reserved buffer of the direct protocols
 * (Direct-Write-Send, Chained-Write-Send, Direct-WriteIMM: paper Sec. 3.1).
 *
 * Each side may own one ring, which its peer WRITEs messages into.  It is registered when the
 * peer first asks for it (a control message), not at connect, so a connection that never
 * uses a direct protocol pins nothing; the owner answers with its address, key and size, or
 * with size 0 when it cannot (then the sender falls back to Eager-SendRecv).
 *
 * A message goes as one or more chunks.  A chunk is contiguous: it starts where the last one
 * ended and is cut at the end of the ring, where the next starts again at 0, so both sides
 * know every chunk's place from the lengths alone, in the order of the QP.  The owner frees a
 * chunk when the message has been read (a one-chunk message is read in place) or copied out
 * (the chunks of a longer one), and reports freed chunks in order, in the `freed` field of
 * its headers, in its immediates, or in a credit message when many pile up.  The writer waits
 * for room: a message of any size up to the max message size passes through a ring of any
 * size.
 */
#ifndef _RDMA_RING_H
#define _RDMA_RING_H

#include <glib.h>

#include "rdma_proto.h"

G_BEGIN_DECLS

/* Chunks that may be in flight (written, not yet reported freed). */
#define RDMA_RING_MAX_CHUNKS 1024u
/* The largest chunk (fits 20 bits of an immediate). */
#define RDMA_RING_MAX_CHUNK ((1u << 20) - 1)

/* Control kinds (RDMA_WIRE_PROTO_ENGINE). */
enum
{
  RDMA_RING_REQUEST = 1,   /* please register your ring; no payload */
  RDMA_RING_ADVERT = 2     /* le64 addr, le32 rkey, le32 size (0: no ring) */
};

/* Writer: makes sure the peer's ring is known (asks for it and waits the first time). */
RdmaOpenStatus rdma_ring_tx_open (RdmaConn *conn, gint64 deadline_us, GError **error);
/* Writer: the place of the next chunk, of at most @want bytes (0 for an empty message);
 * waits for room.  The chunk is taken: the caller must write it. */
gboolean rdma_ring_tx_place (RdmaConn *conn, gsize want, gint64 deadline_us,
                             guint64 *remote_addr, guint32 *rkey, guint32 *len,
                             GError **error);
/* Writer: the peer freed the @n oldest chunks. */
gboolean rdma_ring_tx_freed (RdmaConn *conn, guint n, GError **error);

/* Owner: a chunk of @len bytes has arrived for @proto (@last: it ends a message). */
gboolean rdma_ring_rx_chunk (RdmaConn *conn, const RdmaProtoOps *proto, guint32 len,
                             gboolean last, GError **error);
/* Owner: the release slot of a message read in place. */
gboolean rdma_ring_release (RdmaConn *conn, guint8 *data, gsize len, guint64 token,
                            GError **error);
/* Owner: freed chunks not yet reported, at most @max; they count as reported. */
guint rdma_ring_take_freed (RdmaConn *conn, guint max);
/* Owner: enough freed chunks or bytes wait that a credit message should report them. */
gboolean rdma_ring_need_report (RdmaConn *conn);

/* Both: a control message of the ring (RDMA_WIRE_PROTO_ENGINE). */
gboolean rdma_ring_control (RdmaConn *conn, guint8 kind, const guint8 *payload, guint32 len,
                            GError **error);
/* Deregisters and frees both halves; idempotent. */
void rdma_ring_free (RdmaConn *conn);

G_END_DECLS

#endif
