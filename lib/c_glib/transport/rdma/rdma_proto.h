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
 * rdma_proto.h: the protocol interface.  Each RDMA protocol (paper Sec. 3.1) is one const
 * RdmaProtoOps table in its own file under proto/, listed in the registry of rdma_proto.c
 * under its RdmaProtoId.  The engine calls protocols only through these slots and never
 * switches on a protocol's name.  The receiver needs no advance knowledge of the sender's
 * choice: every SEND names its protocol in its header, every WRITE_WITH_IMM in the top bits
 * of its immediate (RDMA_IMM_PROTO), and every completion carries its RdmaOp (rdma_op.h).
 *
 * send_message is the only required slot; NULL in any other means "nothing to do" (or, for a
 * receive slot, that the protocol never gets that kind of message: one that arrives anyway is
 * a protocol error from the peer).
 */
#ifndef _RDMA_PROTO_H
#define _RDMA_PROTO_H

#include <glib.h>
#include <infiniband/verbs.h>

#include <thrift/c_glib/transport/thrift_hints.h>

#include "rdma_op.h"
#include "rdma_wire.h"

G_BEGIN_DECLS

/* Wire ids of the protocols (RdmaWireHeader.proto, RDMA_IMM_PROTO, bits of
 * RdmaWireHello.protocols).  3 bits on the wire: at most 8. */
typedef enum
{
  RDMA_PROTO_EAGER = 0,
  RDMA_PROTO_WRITE_RNDV = 1,
  RDMA_PROTO_READ_RNDV = 2,
  RDMA_PROTO_DIRECT_WRITE_SEND = 3,
  RDMA_PROTO_CHAINED_WRITE_SEND = 4,
  RDMA_PROTO_DIRECT_WRITE_IMM = 5,
  RDMA_PROTO_RFP = 6,
  RDMA_PROTO_BATCHED_WRITE = 7,
  RDMA_PROTO_COUNT
} RdmaProtoId;

/* The immediate of a WRITE_WITH_IMM: the protocol in the top 3 bits, the rest is its own. */
#define RDMA_IMM_PROTO(imm) ((guint) ((imm) >> 29))
#define RDMA_IMM_MAKE(proto, rest) (((guint32) (proto) << 29) | ((rest) &0x1fffffffu))
#define RDMA_IMM_REST(imm) ((guint32) ((imm) &0x1fffffffu))

/* What a protocol's open slot found. */
typedef enum
{
  RDMA_OPEN_READY,
  RDMA_OPEN_REFUSED, /* the peer cannot take this protocol's messages: Eager-SendRecv */
  RDMA_OPEN_ERROR
} RdmaOpenStatus;

typedef struct _RdmaProtoOps
{
  const gchar *name; /* as in the IDL hint: "eager" */
  RdmaProtoId id;
  ThriftHintProto hint; /* the proto hint that selects it */

  /* Once the connection is up (both hellos taken): allocate the protocol's per-connection
   * state in conn->proto_state[id].  Registered memory should wait for the first message
   * that needs it (a connection that never uses the protocol pins nothing). */
  gboolean (*setup) (RdmaConn *conn, GError **error);
  /* Frees what the protocol made; idempotent, called on every teardown path. */
  void (*teardown) (RdmaConn *conn);

  /* Before each message this protocol is to carry: makes sure what it needs of the peer is
   * known (asks for it and waits, until @deadline_us, the first time).  REFUSED: the engine
   * sends the message by Eager-SendRecv, so the carrier reported is the one used.  The
   * direct protocols plug in the ring's (rdma_ring_tx_open). */
  RdmaOpenStatus (*open) (RdmaConn *conn, gint64 deadline_us, GError **error);

  /* Sends the @tx->len bytes of @tx as one message, blocking (by the connection's polling
   * mode) until it is posted or @deadline_us (monotonic, 0 = none) passes.  Every op that
   * reads @tx holds it (op->tx, tx->busy++), so it is not rewritten before the NIC is done. */
  gboolean (*send_message) (RdmaConn *conn, RdmaTx *tx, gint64 deadline_us, GError **error);

  /* A received SEND of type RDMA_WIRE_DATA addressed to this protocol: @slot is its receive
   * slot, @hdr the validated header, @payload its frag_len bytes.  Must either hand the slot
   * to a received message or repost it (rdma_conn_repost). */
  gboolean (*on_receive) (RdmaConn *conn, guint32 slot, const RdmaWireHeader *hdr,
                          const guint8 *payload, GError **error);
  /* A WRITE_WITH_IMM addressed to this protocol (its receive slot is already reposted). */
  gboolean (*on_imm) (RdmaConn *conn, guint32 imm, guint32 byte_len, GError **error);
  /* A control message (RDMA_WIRE_CONTROL) addressed to this protocol; @payload has @len
   * bytes (at most RDMA_WIRE_CONTROL_MAX).  Its slot is reposted by the engine. */
  gboolean (*on_control) (RdmaConn *conn, guint8 kind, const guint8 *payload, guint32 len,
                          GError **error);
  /* Called on every turn of a wait while the protocol asks for it (rdma_conn_want_progress):
   * work the protocol drives itself (RFP's client fetching the response by READ).  Returns
   * the number of things it completed (0: nothing yet), -1 with @error. */
  gint (*progress) (RdmaConn *conn, GError **error);
  /* A message this protocol delivered in its own registered memory (not a receive slot) was
   * read: give that memory back.  @token is what it passed to rdma_conn_deliver. */
  gboolean (*release) (RdmaConn *conn, guint8 *data, gsize len, guint64 token, GError **error);
  /* Runs before every message the connection sends, whatever protocol @ops carries it, and
   * may wait until @deadline_us: a protocol that leaves a message in its own memory holds
   * the next one back until the peer has taken it, so messages arrive in order (RFP). */
  gboolean (*before_send) (RdmaConn *conn, const struct _RdmaProtoOps *ops, gint64 deadline_us,
                           GError **error);
  /* Messages this protocol posted that the peer has not been told about yet (plain WRITEs,
   * which complete nothing at the peer: Batched-Write): tell it now.  Called before another
   * protocol sends on the connection (so the peer delivers in order) and, with @closing,
   * before this side disconnects: then also wait, until @deadline_us, until the NIC is done
   * with them (a disconnect flushes what is still queued). */
  gboolean (*flush) (RdmaConn *conn, gboolean closing, gint64 deadline_us, GError **error);
} RdmaProtoOps;

extern const RdmaProtoOps rdma_proto_eager_ops;
extern const RdmaProtoOps rdma_proto_direct_write_imm_ops;
extern const RdmaProtoOps rdma_proto_direct_write_send_ops;
extern const RdmaProtoOps rdma_proto_chained_write_send_ops;
extern const RdmaProtoOps rdma_proto_write_rndv_ops;
extern const RdmaProtoOps rdma_proto_read_rndv_ops;
extern const RdmaProtoOps rdma_proto_rfp_ops;
extern const RdmaProtoOps rdma_proto_batched_write_ops;

/* The registry: indexed by RdmaProtoId; NULL where a protocol is not implemented. */
extern const RdmaProtoOps *const rdma_proto_registry[RDMA_PROTO_COUNT];

/* The implementation of a proto hint, or NULL if it is not implemented. */
const RdmaProtoOps *rdma_proto_for_hint (ThriftHintProto hint);
const RdmaProtoOps *rdma_proto_by_name (const gchar *name);
/* NULL if @id is not a registered protocol (garbage from the wire). */
const RdmaProtoOps *rdma_proto_by_id (guint id);
/* Bit (1 << id) of every implemented protocol. */
guint16 rdma_proto_implemented (void);

G_END_DECLS

#endif
