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
 * thrift_hints.h: HatRPC hint sets and their hand-over to the transport.
 *
 * thrift-hatrpc resolves the hints of an IDL at compile time (function over service,
 * c_hint/s_hint over hint, a child service over its parent) and writes, for every function of
 * a service with hints, one ThriftHintSet per side as static const data in the generated
 * service .c file.  The generated code hands the set to the transport:
 *
 *   - the client's send_<function> calls thrift_hints_apply (protocol, &<fn>_client_hints)
 *     before it writes the call;
 *   - the processor's process_<function> calls thrift_hints_apply (output_protocol,
 *     &<fn>_server_hints) once the call is read, before the handler runs and the reply is
 *     written.
 *
 * thrift_hints_apply () looks through protocol decorators (ThriftMultiplexedProtocol,
 * ThriftStoredMessageProtocol) to the concrete protocol and through transport wrappers
 * (ThriftBufferedTransport, ThriftFramedTransport, ThriftZlibTransport) to the transport that
 * implements ThriftHintReceiver, and calls its set_hints.  For a transport that does not
 * implement it (ThriftSocket and every stock transport) it does nothing.
 *
 * The values are already validated by the compiler: a consumer (the RDMA engine) can switch on
 * them without checking again.  A field is meaningful only if its THRIFT_HINT_HAS_* bit is in
 * `set`; an unset field is 0 (the *_UNSET enumerator).
 */

#ifndef _THRIFT_HINTS_H
#define _THRIFT_HINTS_H

#include <glib-object.h>

#include <thrift/c_glib/protocol/thrift_protocol.h>
#include <thrift/c_glib/transport/thrift_transport.h>

G_BEGIN_DECLS

/**
 * THRIFT_HINT_SET_VERSION:
 *
 * The layout of ThriftHintSet.  Generated code checks it at compile time (#error) and stores
 * it in every set; a receiver may check hints->version.
 */
#define THRIFT_HINT_SET_VERSION 1

/** Which side a hint set is for. */
typedef enum
{
  THRIFT_HINT_SIDE_CLIENT = 0, /* the client writing a call (c_hint and hint) */
  THRIFT_HINT_SIDE_SERVER = 1  /* the server writing a reply (s_hint and hint) */
} ThriftHintSide;

/** The bits of ThriftHintSet.set: which fields carry a value. */
typedef enum
{
  THRIFT_HINT_HAS_PERF_GOAL = 1 << 0,
  THRIFT_HINT_HAS_CONCURRENCY = 1 << 1,
  THRIFT_HINT_HAS_PAYLOAD_SIZE = 1 << 2,
  THRIFT_HINT_HAS_POLLING = 1 << 3,
  THRIFT_HINT_HAS_PROTO = 1 << 4,
  THRIFT_HINT_HAS_TRANSPORT = 1 << 5,
  THRIFT_HINT_HAS_NUMA = 1 << 6
} ThriftHintFlags;

/**
 * perf_goal: what the function should be optimized for (paper Fig. 6).  With concurrency it
 * selects the polling mode and the protocols when they are not given.
 */
typedef enum
{
  THRIFT_HINT_PERF_GOAL_UNSET = 0,
  THRIFT_HINT_PERF_GOAL_LATENCY,    /* latency */
  THRIFT_HINT_PERF_GOAL_THROUGHPUT, /* throughput */
  THRIFT_HINT_PERF_GOAL_RES_UTIL    /* res_util: least CPU and pinned memory */
} ThriftHintPerfGoal;

/**
 * polling: how completions are waited for.  Also written `perf_pref = busy | event`, as in the
 * HatRPC artifact.
 */
typedef enum
{
  THRIFT_HINT_POLLING_UNSET = 0,
  THRIFT_HINT_POLLING_BUSY,  /* busy: spin on the completion queue */
  THRIFT_HINT_POLLING_EVENT, /* event: block on the completion channel */
  THRIFT_HINT_POLLING_HYBRID /* hybrid: spin for a bounded time, then block */
} ThriftHintPolling;

/**
 * proto: the RDMA protocol of the messages this side writes (paper Sec. 3.1).  Each value
 * names one protocol, except THRIFT_HINT_PROTO_EAGER_RNDV, which names a pair, one chosen per
 * message by its size.  New values are added at the end, so that the numbers of the others
 * never change (generated code and compiled programs hold them).
 */
typedef enum
{
  THRIFT_HINT_PROTO_UNSET = 0,
  THRIFT_HINT_PROTO_EAGER,              /* eager: SEND into a pre-posted slot */
  THRIFT_HINT_PROTO_WRITE_RNDV,         /* write_rndv: RTS, buffer address, WRITE, done */
  THRIFT_HINT_PROTO_READ_RNDV,          /* read_rndv: address and key, peer READs */
  THRIFT_HINT_PROTO_DIRECT_WRITE_SEND,  /* direct_write_send: WRITE, then SEND */
  THRIFT_HINT_PROTO_CHAINED_WRITE_SEND, /* chained_write_send: WRITE+SEND, one doorbell */
  THRIFT_HINT_PROTO_DIRECT_WRITE_IMM,   /* direct_write_imm: one WRITE_WITH_IMM */
  THRIFT_HINT_PROTO_RFP,                /* rfp: the client READs the response */
  THRIFT_HINT_PROTO_BATCHED_WRITE,      /* batched_write: WRITE into slots, batched confirmation */
  /* eager_rndv (also hybrid_eager_rndv): Eager-SendRecv for a message up to the small/large
   * threshold (4 KiB), Read-RNDV above it; the protocol pair of AR-gRPC, the HatRPC paper's
   * Hybrid-EagerRNDV baseline.  A pair, not a protocol of its own. */
  THRIFT_HINT_PROTO_EAGER_RNDV
} ThriftHintProto;

/** transport: which transport the function's calls should use (hybrid mode). */
typedef enum
{
  THRIFT_HINT_TRANSPORT_UNSET = 0,
  THRIFT_HINT_TRANSPORT_RDMA, /* rdma */
  THRIFT_HINT_TRANSPORT_TCP   /* tcp */
} ThriftHintTransport;

/**
 * ThriftHintSet: the resolved hints of one side of one function.
 *
 * Generated sets are static const data and live as long as the program: a receiver may keep
 * the pointer.  Compare pointers to learn cheaply whether the function changed.
 */
typedef struct _ThriftHintSet
{
  guint32 version;       /* THRIFT_HINT_SET_VERSION */
  const gchar *service;  /* the IDL service that defines the function */
  const gchar *function; /* the IDL function name (as on the wire) */
  ThriftHintSide side;
  guint32 set; /* ThriftHintFlags: the fields below that carry a value */

  ThriftHintPerfGoal perf_goal;
  ThriftHintPolling polling;
  ThriftHintProto proto;
  ThriftHintTransport transport;
  guint32 concurrency;  /* expected concurrent calls (threads, clients); >= 1 */
  guint64 payload_size; /* expected message size in bytes */
  guint32 numa;         /* NUMA node to bind buffers and polling threads to */
} ThriftHintSet;

/* ThriftHintReceiver: implemented by transports that use hints (ThriftRdma). */
typedef struct _ThriftHintReceiver ThriftHintReceiver; /* dummy object */
typedef struct _ThriftHintReceiverInterface ThriftHintReceiverInterface;

/**
 * ThriftHintReceiverInterface:
 * @set_hints: called with the hint set of the message about to be written on this transport
 *   (a call on the client, a reply on the server), before its first byte.  The set applies to
 *   that message; a transport should fall back to its defaults for a message written without
 *   a set (code generated from IDL without hints never calls it), e.g. by forgetting the set
 *   when the message is flushed.  Must not fail and must be cheap: it runs on every call.
 */
struct _ThriftHintReceiverInterface
{
  GTypeInterface parent;

  void (*set_hints) (ThriftHintReceiver *receiver, const ThriftHintSet *hints);
};

GType thrift_hint_receiver_get_type (void);
#define THRIFT_TYPE_HINT_RECEIVER (thrift_hint_receiver_get_type ())
#define THRIFT_HINT_RECEIVER(obj) \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), THRIFT_TYPE_HINT_RECEIVER, ThriftHintReceiver))
#define THRIFT_IS_HINT_RECEIVER(obj) (G_TYPE_CHECK_INSTANCE_TYPE ((obj), THRIFT_TYPE_HINT_RECEIVER))
#define THRIFT_HINT_RECEIVER_GET_INTERFACE(inst) \
  (G_TYPE_INSTANCE_GET_INTERFACE ((inst), THRIFT_TYPE_HINT_RECEIVER, ThriftHintReceiverInterface))

/* Calls the receiver's set_hints. */
void thrift_hint_receiver_set_hints (ThriftHintReceiver *receiver, const ThriftHintSet *hints);

/**
 * thrift_hints_find_receiver:
 * @protocol: a protocol, possibly a decorator (multiplexed, stored message)
 *
 * Returns: (transfer none): the transport under @protocol that implements ThriftHintReceiver,
 * looking through buffered, framed and zlib transports, or NULL if there is none.
 */
ThriftHintReceiver *thrift_hints_find_receiver (ThriftProtocol *protocol);

/**
 * thrift_hints_apply:
 * @protocol: the protocol the message is about to be written to
 * @hints: the message's hint set
 *
 * Hands @hints to the hint receiver under @protocol, if there is one.
 *
 * Returns: TRUE if a receiver got the set, FALSE if there is none (nothing done).
 */
gboolean thrift_hints_apply (ThriftProtocol *protocol, const ThriftHintSet *hints);

/* The IDL spelling of a value ("latency", "event", "direct_write_imm", "tcp"), or NULL if the
 * value is not one of the enumerators (or is *_UNSET). */
const gchar *thrift_hint_perf_goal_to_string (ThriftHintPerfGoal value);
const gchar *thrift_hint_polling_to_string (ThriftHintPolling value);
const gchar *thrift_hint_proto_to_string (ThriftHintProto value);
const gchar *thrift_hint_transport_to_string (ThriftHintTransport value);

/**
 * thrift_hint_set_to_string:
 * @hints: a hint set, or NULL
 *
 * Describes a set the way `THRIFT_HATRPC_DUMP_HINTS=1 thrift-hatrpc` prints it:
 * "Kv.get client: concurrency=64 payload_size=64 perf_goal=latency" (keys in alphabetical
 * order; " (none)" for an empty set; "(null)" for NULL).
 *
 * Returns: (transfer full): a newly allocated string; free with g_free ().
 */
gchar *thrift_hint_set_to_string (const ThriftHintSet *hints);

G_END_DECLS

#endif /* _THRIFT_HINTS_H */
