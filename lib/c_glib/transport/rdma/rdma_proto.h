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
 * RdmaProtoOps table in its own file (rdma_proto_eager.c, ...), listed in the registry of
 * rdma_proto.c under its RdmaProtoId.  The engine calls protocols only through these slots and
 * never switches on a protocol's name: every received SEND names, in its header, the protocol
 * that handles it; the sender's choice comes from the hints (rdma_proto_for_hint).
 *
 * Every slot must be set (a host test checks the registry); a protocol without anything to do
 * in a slot points it at a function that does nothing and succeeds.
 */
#ifndef _RDMA_PROTO_H
#define _RDMA_PROTO_H

#include <glib.h>

#include <thrift/c_glib/transport/thrift_hints.h>

#include "rdma_wire.h"

G_BEGIN_DECLS

typedef struct _RdmaConn RdmaConn;

/* Wire ids of the protocols (RdmaWireHeader.proto, bits of RdmaWireHello.protocols). */
typedef enum
{
  RDMA_PROTO_EAGER = 0,
  RDMA_PROTO_COUNT
} RdmaProtoId;

typedef struct _RdmaProtoOps
{
  const gchar *name;        /* as in the IDL hint: "eager" */
  RdmaProtoId id;
  ThriftHintProto hint;     /* the proto hint that selects it */

  /* Connect-time setup, after the QP and slot pools exist and before the hello is sent:
   * allocate and register the protocol's own state; add what the peer needs to @hello. */
  gboolean (*setup) (RdmaConn *conn, RdmaWireHello *hello, GError **error);
  /* Takes what the peer's hello offers (remote buffers); after setup on both sides. */
  gboolean (*peer_hello) (RdmaConn *conn, const RdmaWireHello *peer, GError **error);
  /* Frees what setup made; idempotent, called on every teardown path. */
  void (*teardown) (RdmaConn *conn);

  /* Sends one whole message, blocking (by the connection's polling mode) until it is posted
   * or @deadline_us (monotonic, 0 = none) passes. */
  gboolean (*send_message) (RdmaConn *conn, const guint8 *buf, gsize len, gint64 deadline_us,
                            GError **error);
  /* A received SEND addressed to this protocol: @slot is its receive slot, @hdr the validated
   * header, @payload its frag_len bytes.  Must either hand the slot to a received message or
   * repost it (rdma_conn_repost). */
  gboolean (*on_receive) (RdmaConn *conn, guint32 slot, const RdmaWireHeader *hdr,
                          const guint8 *payload, GError **error);
  /* A signalled send of this protocol completed successfully (@wr_id as posted). */
  void (*on_send_complete) (RdmaConn *conn, guint64 wr_id);
} RdmaProtoOps;

extern const RdmaProtoOps rdma_proto_eager_ops;

/* The registry: indexed by RdmaProtoId, NULL-terminated. */
extern const RdmaProtoOps *const rdma_proto_registry[RDMA_PROTO_COUNT + 1];

/* The protocol a hint asks for, falling back to eager when it is not implemented yet. */
const RdmaProtoOps *rdma_proto_for_hint (ThriftHintProto hint);
const RdmaProtoOps *rdma_proto_by_name (const gchar *name);
/* NULL if @id is not a registered protocol (garbage from the wire). */
const RdmaProtoOps *rdma_proto_by_id (guint id);

G_END_DECLS

#endif
