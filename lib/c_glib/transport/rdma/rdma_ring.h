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
 * peer first asks for it (a control message with the size of the message that needs it), not
 * at connect, so a connection that never uses a direct protocol pins nothing; the owner sizes
 * it for RDMA_RING_MESSAGES such messages (at least RDMA_RING_MIN_SIZE, at most
 * settings.ring_size) and answers with its address, key and size, or with size 0 when it
 * cannot (then the sender falls back to Eager-SendRecv).
 *
 * A ring nothing was written into for settings.ring_idle_ms goes back: the owner asks the
 * writer to give it up (REVOKE, with the freed chunks not yet reported), and the writer
 * agrees when none of its chunks is in flight (RELEASED: it writes no more, and its earlier
 * WRITEs have landed, the QP keeps order) or declines (KEEP).  Only the writer's word makes
 * it safe: a WRITE into a revoked window would fail the writer's QP.  The writer answers when
 * it next looks at its completions, and looks before it writes after a quiet spell, so a
 * ring that is used less often than the idle period is given back between uses.
 *
 * A ring is made for the message that asked for it, but a connection's first messages may be
 * small and its later ones large, and a message more than half the ring (which cannot go
 * whole) is cut into chunks that each wait for the owner's report of freed room (a 1 MB
 * message through a 16 KiB ring: 134 WRs a call).  So the writer grows it: before such a
 * message, if a larger ring is possible, nothing of its chunks is in the ring and the peer
 * takes it (RDMA_WIRE_HELLO_RING_GROW), it gives the ring up unprompted (RELEASED, as after a
 * REVOKE) and asks again with the message's size (REQUEST).  With chunks of its own in the
 * ring it writes into the ring as it is, that time: a reader that releases a message only
 * after answering it reports it freed with its next answer, so the first larger message of
 * a call-and-reply goes through the old ring and the next grows it; a one-way stream, whose
 * freed chunks are reported once half the ring waits, may keep its ring.  The owner, with
 * nothing of the
 * writer's left in the ring, frees it at once (its window deallocated, not invalidated: no
 * completion to wait for) and answers the REQUEST that follows in QP order as a first one.
 * An answer for less than was asked (the owner's ring_size) is remembered: the writer asks
 * again only for a larger message, or when it holds a smaller ring than that answer gave
 * (after an idle return).  A refused one (the owner's budget) asks once more for the size
 * given up, which the writer has the best reason to expect (it cannot know what the budget
 * admits); refused again, its messages go by eager as after any refusal.  An owner's REVOKE
 * that crosses an unprompted RELEASED finds the writer without that ring: it is not
 * answered, and the owner takes the RELEASED for the answer.
 *
 * A message goes as one or more chunks.  A chunk is contiguous: it starts where the last one
 * ended, and where it would run past the end of the ring, it is either cut there (the next
 * starts again at 0) or, for a message of at most half the ring when the start has room,
 * written whole at 0, the end left unused and freed with it.  A chunk longer than the rest
 * of the ring therefore starts at 0, and both sides know every chunk's place from the
 * lengths alone, in the order of the QP.  The owner frees a chunk when the message has been
 * read (a one-chunk message is read in place) or copied out
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
/* A ring holds this many messages of the size that asked for it, and never less than the
 * minimum size. */
#define RDMA_RING_MESSAGES 4u
#define RDMA_RING_MIN_SIZE (16u << 10)
/* A message of at most 1/RDMA_RING_WHOLE of the ring that would run past its end goes whole
 * at 0 (when the start has room).  Half, not a quarter: a ring made for 128 KB messages is
 * capped at 512 KiB, less than four such messages with their framing. */
#define RDMA_RING_WHOLE 2u

/* Control kinds (RDMA_WIRE_PROTO_ENGINE). */
enum
{
  RDMA_RING_REQUEST = 1, /* please register your ring; le32 message size (0: any) */
  RDMA_RING_ADVERT = 2,  /* le64 addr, le32 rkey, le32 size (0: no ring) */
  /* (3 is bulk transfer's, rdma_bulk.h) */
  RDMA_RING_REVOKE = 4,   /* owner: please give the ring up; le32 chunks freed */
  RDMA_RING_RELEASED = 5, /* writer: given up (answering REVOKE, or to grow); no payload */
  RDMA_RING_KEEP = 6      /* writer: still in use; no payload */
};

/* The owner's ring size for messages of @message bytes (0: the largest), at most @max. */
guint32 rdma_ring_size_for (guint32 message, guint32 max);

/* Writer: makes sure the peer's ring is known (asks for it and waits the first time). */
RdmaOpenStatus rdma_ring_tx_open (RdmaConn *conn, gint64 deadline_us, GError **error);
/* Writer: the place of the next chunk, of at most @want bytes (0 for an empty message);
 * waits for room.  The chunk is taken: the caller must write it. */
gboolean rdma_ring_tx_place (RdmaConn *conn, gsize want, gint64 deadline_us, guint64 *remote_addr,
                             guint32 *rkey, guint32 *len, GError **error);
/* Writer: the peer freed the @n oldest chunks. */
gboolean rdma_ring_tx_freed (RdmaConn *conn, guint n, GError **error);

/* Owner: a chunk of @len bytes has arrived for @proto (@last: it ends a message). */
gboolean rdma_ring_rx_chunk (RdmaConn *conn, const RdmaProtoOps *proto, guint32 len, gboolean last,
                             GError **error);
/* Owner: the release slot of a message read in place. */
gboolean rdma_ring_release (RdmaConn *conn, guint8 *data, gsize len, guint64 token, GError **error);
/* Owner: freed chunks not yet reported, at most @max; they count as reported. */
guint rdma_ring_take_freed (RdmaConn *conn, guint max);
/* Owner: enough freed chunks or bytes wait that a credit message should report them. */
gboolean rdma_ring_need_report (RdmaConn *conn);

/* Owner: the bytes of its ring now (0: none). */
guint32 rdma_ring_rx_size (RdmaConn *conn);
/* Owner: when the ring's next idle check is due (monotonic us), or 0 if none. */
gint64 rdma_ring_due (RdmaConn *conn);
/* Owner: the idle check; asks the writer for a ring not written into for ring_idle_ms. */
gboolean rdma_ring_tick (RdmaConn *conn, gint64 now, GError **error);

/* Both: a control message of the ring (RDMA_WIRE_PROTO_ENGINE). */
gboolean rdma_ring_control (RdmaConn *conn, guint8 kind, const guint8 *payload, guint32 len,
                            GError **error);
/* Deregisters and frees both halves; idempotent. */
void rdma_ring_free (RdmaConn *conn);

G_END_DECLS

#endif
