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
 * thrift_rdma.h: ThriftRdma, a Thrift c_glib client transport over RDMA (librdmacm, RC QP).
 *
 * ThriftRdma is a ThriftTransport usable wherever ThriftSocket is: give it a hostname and a
 * port, open it, and hand it to a protocol (ThriftBinaryProtocol, ThriftCompactProtocol)
 * directly.  It is message oriented:
 *
 *   - write buffers bytes until flush; flush sends them as one message;
 *   - read serves bytes of the received message, blocking (by the polling mode) until one
 *     arrives; read_end gives the message's receive slots back to the peer;
 *   - peek blocks until a message arrives and returns FALSE once the peer is gone;
 *   - close disconnects and frees every verbs resource; the object can be opened again;
 *   - thrift_rdma_interrupt wakes a blocked peek or read from another thread.
 *
 * No ThriftBufferedTransport or ThriftFramedTransport is needed on top (they work, but only
 * add a copy).  Errors are in THRIFT_TRANSPORT_ERROR and name the verbs call, errno and the
 * completion status.  ThriftRdma implements ThriftHintReceiver (thrift_hints.h): code generated
 * by thrift-hatrpc hands it each function's hints, which select the polling mode and the
 * protocol of the message about to be written.
 *
 * Properties:
 *   "hostname"        gchar*     server address or name (construct; default "localhost")
 *   "port"            guint      server port, 1..65535 (construct; default 9090)
 *   "configuration"   ThriftConfiguration*  (construct-only) max message size etc.
 *   "remainingmessagesize", "knowmessagesize"  glong, as ThriftSocket's
 *   "hints"           gpointer   the service's hint data (a const ThriftHintSet *, the
 *                                default for messages written without a set) or NULL
 *   "polling"         ThriftRdmaPolling  default THRIFT_RDMA_POLLING_HYBRID; a message's
 *                                hint set (polling, perf_goal) overrides it for that message
 *   "connect-timeout" guint      ms for address/route resolution and connection; default 5000
 *   "call-timeout"    guint      ms a read waits for a message (and a flush for credits);
 *                                0 = forever; default 30000.  When a call times out the
 *                                connection fails (is_open is FALSE, every later call gets
 *                                the error): a late reply can never answer another call.
 *                                Close and open the transport to go on.
 *   "idle-timeout"    guint      ms a server-side connection waits for its next request
 *                                (peek, or a read that starts a request); 0 = forever
 *                                (default).  Set by ThriftServerRdma.
 *   "keepalive"       guint      ms after which a peer that stopped answering (host or link
 *                                down, packets lost) is declared dead: the connection fails
 *                                with "no sign of life".  A side that waits probes a quiet
 *                                peer after a quarter of it.  0 = never; default 30000
 *
 * A signal that interrupts a blocking wait ends it (RDMA_ERR_INTERRUPTED, and a failed
 * connection if a call was in progress) when a caught signal's handler was installed without
 * SA_RESTART, as recv (2) would end; with SA_RESTART handlers the wait goes on.  Busy polling
 * never blocks in the kernel, so only thrift_rdma_interrupt stops it.
 *   "source-address"  gchar*     local address to connect from (NULL: the route decides)
 */
#ifndef _THRIFT_RDMA_H
#define _THRIFT_RDMA_H

#include <glib-object.h>

#include <thrift/c_glib/transport/thrift_transport.h>

G_BEGIN_DECLS

/**
 * ThriftRdmaPolling:
 * @THRIFT_RDMA_POLLING_BUSY: spin on the completion queue (lowest latency, one core busy)
 * @THRIFT_RDMA_POLLING_EVENT: block on the completion channel (poll, arm, poll, block)
 * @THRIFT_RDMA_POLLING_HYBRID: spin for a bounded time, then block as EVENT does
 *
 * How a ThriftRdma waits for completions.
 */
typedef enum
{
  THRIFT_RDMA_POLLING_BUSY = 0,
  THRIFT_RDMA_POLLING_EVENT = 1,
  THRIFT_RDMA_POLLING_HYBRID = 2
} ThriftRdmaPolling;

GType thrift_rdma_polling_get_type (void);
#define THRIFT_TYPE_RDMA_POLLING (thrift_rdma_polling_get_type ())

/* Defaults of the properties. */
#define THRIFT_RDMA_DEFAULT_POLLING THRIFT_RDMA_POLLING_HYBRID
#define THRIFT_RDMA_DEFAULT_CONNECT_TIMEOUT_MS 5000
#define THRIFT_RDMA_DEFAULT_CALL_TIMEOUT_MS 30000
#define THRIFT_RDMA_DEFAULT_KEEPALIVE_MS 30000

/**
 * ThriftRdmaStats:
 *
 * What one connection made the hardware do since open (or the last reset).  Exact on any
 * device; divide by round_trips for per-RPC figures.
 */
typedef struct _ThriftRdmaStats
{
  guint64 wr_posted;          /* work requests posted, send and receive */
  guint64 post_send_calls;    /* ibv_post_send calls (doorbells) */
  guint64 post_recv_calls;    /* ibv_post_recv calls */
  guint64 completions;        /* work completions polled from the CQ */
  guint64 bytes_copied;       /* payload bytes copied by the CPU (into/out of slots) */
  guint64 round_trips;        /* request->response turnarounds: a message received after
                                 one was sent (client) or sent after one was received */
  guint64 messages_sent;      /* whole Thrift messages sent (flushes with data) */
  guint64 messages_received;  /* whole Thrift messages received */
  guint64 pinned_bytes;       /* bytes registered with the device right now (not reset) */
  guint64 credit_messages;    /* explicit credit-return messages sent */
  guint64 cq_events;          /* completion channel events (times blocked in the kernel) */
  guint64 keepalive_probes;   /* probes posted to a quiet peer (keepalive) */
  guint64 slots_held;         /* receive slots held back because too much was unread */
  guint64 sends;              /* SEND work requests (data, notices, control, credits) */
  guint64 writes;             /* RDMA WRITE work requests (keepalive probes included) */
  guint64 write_imms;         /* RDMA WRITE_WITH_IMM work requests */
  guint64 reads;              /* RDMA READ work requests */
  guint64 recvs;              /* receive work requests posted */
  guint64 control_messages;   /* control channel messages sent (ring requests and adverts,
                                 rendezvous) */
} ThriftRdmaStats;

/* Six type macros. */
#define THRIFT_TYPE_RDMA (thrift_rdma_get_type ())
#define THRIFT_RDMA(obj) (G_TYPE_CHECK_INSTANCE_CAST ((obj), THRIFT_TYPE_RDMA, ThriftRdma))
#define THRIFT_IS_RDMA(obj) (G_TYPE_CHECK_INSTANCE_TYPE ((obj), THRIFT_TYPE_RDMA))
#define THRIFT_RDMA_CLASS(c) (G_TYPE_CHECK_CLASS_CAST ((c), THRIFT_TYPE_RDMA, ThriftRdmaClass))
#define THRIFT_IS_RDMA_CLASS(c) (G_TYPE_CHECK_CLASS_TYPE ((c), THRIFT_TYPE_RDMA))
#define THRIFT_RDMA_GET_CLASS(obj) (G_TYPE_INSTANCE_GET_CLASS ((obj), THRIFT_TYPE_RDMA, ThriftRdmaClass))

typedef struct _ThriftRdma ThriftRdma;
typedef struct _ThriftRdmaClass ThriftRdmaClass;

/* The instance: all state is private. */
struct _ThriftRdma
{
  ThriftTransport parent;
};

struct _ThriftRdmaClass
{
  ThriftTransportClass parent;
};

GType thrift_rdma_get_type (void);

/**
 * thrift_rdma_new:
 * @hostname: the server's address or name
 * @port: the server's port
 *
 * Returns: (transfer full): a new, unopened ThriftRdma with default settings; same as
 * g_object_new (THRIFT_TYPE_RDMA, "hostname", hostname, "port", port, NULL).
 */
ThriftTransport *thrift_rdma_new (const gchar *hostname, guint port);

/* Copies the connection's counters into @out (all zero if never opened). */
void thrift_rdma_get_stats (ThriftRdma *self, ThriftRdmaStats *out);

/* Sets the counters to zero, except pinned_bytes, which is a level, not a count. */
void thrift_rdma_reset_stats (ThriftRdma *self);

/**
 * thrift_rdma_get_protocol_name:
 *
 * Returns: (transfer none): the name of the RDMA protocol ("eager", ...) that sent the last
 * message written on this transport, or the one the next would use if none was sent yet.
 */
const gchar *thrift_rdma_get_protocol_name (ThriftRdma *self);

/* The polling mode the last wait for a message used (the property, or the choice of the
 * hints of the message sent before it); the property before any wait. */
ThriftRdmaPolling thrift_rdma_get_effective_polling (ThriftRdma *self);

/**
 * thrift_rdma_interrupt:
 *
 * Wakes a thread blocked on this transport (peek, read, or a flush waiting for credits) and
 * makes every later wait end at once: peek returns FALSE, read fails with
 * THRIFT_TRANSPORT_ERROR "interrupted", until the transport is closed (close clears it; a
 * reopened transport waits normally again).  Safe from any thread and, for a live object,
 * from a signal handler: it only stores a flag and writes an eventfd.  It never frees
 * anything: the thread that owns the transport still closes it.
 */
void thrift_rdma_interrupt (ThriftRdma *self);

G_END_DECLS

#endif /* _THRIFT_RDMA_H */
