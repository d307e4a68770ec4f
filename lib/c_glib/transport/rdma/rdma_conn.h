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
 * rdma_conn.h: one RDMA connection, as the GObject shells (ThriftRdma, ThriftServerRdma) see
 * it: an opaque RdmaConn, its states and settings, setting up and tearing down, sending and
 * receiving messages, and the few things a shell sets or reads.  What is inside a connection
 * and the API of the protocols is rdma_conn_private.h, for the engine and proto/ only.
 * ThriftRdma owns one RdmaConn per open connection.
 */
#ifndef _RDMA_CONN_H
#define _RDMA_CONN_H

#include <glib.h>
#include <rdma/rdma_cma.h>

#include <thrift/c_glib/transport/thrift_rdma.h>

#include "rdma_plan.h"
#include "rdma_poll_cost.h"
#include "rdma_proto.h"
#include "rdma_tx.h"

G_BEGIN_DECLS

typedef struct _RdmaConn RdmaConn;
/* A received message (rdma_message_* below). */
typedef struct _RdmaMessage RdmaMessage;

/*
 * Connection states and allowed transitions:
 *
 *   IDLE -> RESOLVING -> CONNECTING -> CONNECTED        (client: rdma_conn_connect)
 *   IDLE -> ACCEPTING -> CONNECTED                      (server: rdma_conn_accept)
 *   CONNECTED -> DISCONNECTED   the peer disconnected; messages already received can still
 *                               be read, nothing can be sent
 *   any but CLOSED -> FAILED    sticky: keeps its cause (its failure), every later call
 *                               reports it
 *   any -> CLOSED               rdma_conn_free; resources are gone
 */
typedef enum
{
  RDMA_CONN_IDLE,
  RDMA_CONN_RESOLVING,
  RDMA_CONN_CONNECTING,
  RDMA_CONN_ACCEPTING,
  RDMA_CONN_CONNECTED,
  RDMA_CONN_DISCONNECTED,
  RDMA_CONN_FAILED,
  RDMA_CONN_CLOSED
} RdmaConnState;

const gchar *rdma_conn_state_name (RdmaConnState state);
gboolean rdma_conn_state_allowed (RdmaConnState from, RdmaConnState to);

/* Settings of a connection, from the ThriftRdma / ThriftServerRdma properties. */
typedef struct
{
  guint32 slot_size;   /* receive/send slot, header included (4096) */
  guint32 credits;     /* data receive slots (the window) */
  guint32 max_message; /* the configuration's max message size */
  ThriftRdmaPolling polling;
  guint spin_us;        /* hybrid: how long to spin before blocking */
  guint16 wire_version; /* THRIFT_RDMA_WIRE_VERSION (tests may change it) */
  guint keepalive_ms;   /* a peer quiet this long is dead (rdma_keepalive.h); 0: never */
  guint32 unread_limit; /* received, unread bytes after which credits stop flowing */
  guint16 rx_protocols; /* bits (1 << RdmaProtoId) of the protocols this side accepts */
  guint32 ring_size;    /* most bytes of a direct ring, registered on the peer's first
                               direct message (rdma_ring.h) */
  guint ring_idle_ms;   /* a ring unused this long goes back (rdma_ring.h); 0: never */
  guint8 pair_token[THRIFT_RDMA_PAIR_TOKEN_LEN]; /* client: sent in the connection request
                                                     after the hello (all zero: none) */
  gint numa_node;       /* NUMA node of every buffer the connection maps, now or later
                               (rdma_numa.h); RDMA_NUMA_NONE (-1, the default): none */
  guint32 bulk_chunk;   /* bytes per READ of a lent field (rdma_bulk.h) */
  guint bulk_depth;     /* READs of a field in flight; 1: unpipelined */
  guint rcache_entries; /* bounds of the registration cache (rdma_rcache.h) */
  guint64 rcache_bytes;
} RdmaConnSettings;

/* Defaults of the bulk settings (rdma_bulk.h), which the shells' properties share; the rest
 * are in rdma_conn.c's conn_defaults. */
#define RDMA_BULK_DEFAULT_CHUNK (256u << 10)
#define RDMA_BULK_DEFAULT_DEPTH 4u
#define RDMA_BULK_DEFAULT_RCACHE_ENTRIES 256u
#define RDMA_BULK_DEFAULT_RCACHE_BYTES (256u << 20)

void rdma_conn_settings_init (RdmaConnSettings *s, guint32 max_message, ThriftRdmaPolling polling);

/* A received message's bytes, its length and the protocol that carried it. */
const guint8 *rdma_message_data (const RdmaMessage *msg);
gsize rdma_message_len (const RdmaMessage *msg);
const RdmaProtoOps *rdma_message_proto (const RdmaMessage *msg);

/* Client: resolves @host:@port (and binds @source if set), connects before @deadline_us. */
RdmaConn *rdma_conn_connect (const gchar *host, guint port, const gchar *source,
                             const RdmaConnSettings *settings, gint64 deadline_us, GError **error);
/* Server, first half: takes a connection request's id (its event already acked), sets up
 * the resources, checks the client's hello and accepts (rdma_accept does not wait).  The id
 * stays on the listener's event channel, where its ESTABLISHED event will come; on failure
 * the request is rejected and the id destroyed.  The connection is ACCEPTING. */
RdmaConn *rdma_conn_accept_start (struct rdma_cm_id *id, const void *private_data, gsize len,
                                  const RdmaConnSettings *settings, GError **error);
/* Server, second half, once the id's ESTABLISHED event was acked: moves the id to its own
 * event channel; the connection is CONNECTED.  On failure, free it. */
gboolean rdma_conn_accept_finish (RdmaConn *conn, GError **error);
/* Disconnects and frees every resource.  Idempotent through a NULL pointer. */
void rdma_conn_free (RdmaConn *conn);

/* The transmit buffer the next message is written into, emptied; waits (by the polling
 * mode, until @deadline_us) while the NIC still reads it from an earlier message. */
RdmaTx *rdma_conn_tx_begin (RdmaConn *conn, gint64 deadline_us, GError **error);
/* Appends to the current transmit buffer (rdma_conn_tx_begin first). */
gboolean rdma_conn_tx_append (RdmaConn *conn, const guint8 *buf, gsize len, GError **error);
/* The message being sent lends @bytes that another message may copy instead (rdma_lend_cost.h):
 * a direct ring it asks for is sized for them too. */
void rdma_conn_tx_may_copy (RdmaConn *conn, gsize bytes);
/* Appends framing (not payload: not counted as copied) to the current transmit buffer. */
gboolean rdma_conn_tx_frame (RdmaConn *conn, const void *buf, gsize len, GError **error);
/* The bytes of the current transmit buffer written so far (to patch framing). */
guint8 *rdma_conn_tx_data (RdmaConn *conn);
/* Sends what the current transmit buffer holds as one message by rdma_conn_set_tx_proto's (or
 * Eager-SendRecv when the peer does not accept it); the next message goes to the other
 * buffer. */
gboolean rdma_conn_tx_send (RdmaConn *conn, gint64 deadline_us, GError **error);
/* The three above in one: copies @buf and sends it. */
gboolean rdma_conn_send (RdmaConn *conn, const guint8 *buf, gsize len, gint64 deadline_us,
                         GError **error);
/* The oldest received message if it can be read (NULL: none, or it is still arriving). */
RdmaMessage *rdma_conn_ready_message (RdmaConn *conn);
/* Waits until a whole message is received; returns it (still queued) or NULL with @error
 * (RDMA_ERR_PEER_GONE when the peer disconnected, RDMA_ERR_TIMED_OUT). */
RdmaMessage *rdma_conn_wait_message (RdmaConn *conn, gint64 deadline_us, GError **error);
/* The same, for a client's reply, whose wait's timeout or interrupt the caller ends the
 * connection for: it may block in the completion channel's read alone (rdma_block.h). */
RdmaMessage *rdma_conn_wait_reply (RdmaConn *conn, gint64 deadline_us, GError **error);
/* Gives the oldest received message back (its slot is reposted). */
gboolean rdma_conn_release_message (RdmaConn *conn, GError **error);

/* Fails the connection with @cause (copied), unless it already failed or is closed. */
void rdma_conn_fail (RdmaConn *conn, const GError *cause);

/* Waiting in a poll set owned by the caller (rdma_conn_wait.c), for a server's idle
 * connections: prepare takes what already completed and arms the CQ; check (after the poll
 * said the completion channel (@cq_event) or the CM channel (@cm_event) is readable, or the
 * keepalive was due) takes the events and prepares again.  READY: a message is there; GONE:
 * the connection is over (@error says why, when it failed); WAIT: watch the fds of
 * rdma_conn_get_fds until rdma_keepalive_due (). */
typedef enum
{
  RDMA_IDLE_READY,
  RDMA_IDLE_WAIT,
  RDMA_IDLE_GONE
} RdmaIdle;
RdmaIdle rdma_conn_idle_prepare (RdmaConn *conn, GError **error);
/* When the connection's timers (keepalive, idle ring) next want a tick (monotonic us), or 0
 * if none; rdma_conn_idle_check runs them. */
gint64 rdma_conn_timer_due (RdmaConn *conn);
RdmaIdle rdma_conn_idle_check (RdmaConn *conn, gboolean cq_event, gboolean cm_event, gint64 now,
                               GError **error);
/* check, for a caller that did not poll the fds (woken by the set they are in): reads the
 * completion channel, and the CM channel only if that had no event (an unread CM event keeps
 * the fds readable, so the next look reads it): one system call per request, not a poll and
 * a read. */
RdmaIdle rdma_conn_idle_look (RdmaConn *conn, gint64 now, GError **error);

/* What a shell sets and reads: */
RdmaConnState rdma_conn_get_state (const RdmaConn *conn);
gboolean rdma_conn_is_client (const RdmaConn *conn);
/* The oldest received message, whole or still arriving (NULL: none). */
RdmaMessage *rdma_conn_head_message (RdmaConn *conn);
/* The bulk settings (bulk_chunk, bulk_depth: for the fields pulled from now on;
 * rcache_entries, rcache_bytes: if the registration cache is not made yet, which happens at
 * the first field lent or pulled; rdma_bulk.h) from @from; the others are not looked at. */
void rdma_conn_set_bulk (RdmaConn *conn, const RdmaConnSettings *from);
/* The polling mode of the next waits, and for EVENT the measure by which they may spin
 * instead (RdmaMeasure, rdma_plan.h; RDMA_MEASURE_NONE: they block). */
void rdma_conn_set_polling (RdmaConn *conn, ThriftRdmaPolling polling, RdmaMeasure measure);
/* What the waits measured of spinning against blocking (with a measure: set_polling). */
const RdmaPollCost *rdma_conn_poll_cost (const RdmaConn *conn);
/* The owner's wake-up: waits watch @wake_fd (-1: none) and fail with RDMA_ERR_INTERRUPTED
 * once the atomic flag @interrupted (NULL: none) is set. */
void rdma_conn_set_wake (RdmaConn *conn, int wake_fd, const gint *interrupted);
/* The completion channel's fd and the CM channel's fd, for a poll set (the idle API). */
void rdma_conn_get_fds (const RdmaConn *conn, int *cq_fd, int *cm_fd);
/* The connection's counters: the shell reads and resets them, and counts its copies. */
ThriftRdmaStats *rdma_conn_stats (RdmaConn *conn);
/* The protocol of the next message sent (rdma_conn_tx_send), and the one that carried the
 * last message sent. */
void rdma_conn_set_tx_proto (RdmaConn *conn, const RdmaProtoOps *proto);
const RdmaProtoOps *rdma_conn_last_tx_proto (const RdmaConn *conn);
/* The largest message the peer accepts (its hello), framing included. */
guint32 rdma_conn_peer_max_message (const RdmaConn *conn);
/* The protocols the peer accepts (bits 1 << RdmaProtoId, from its hello). */
guint32 rdma_conn_peer_protocols (const RdmaConn *conn);
/* The CM id (a server tells its handshakes apart by it). */
struct rdma_cm_id *rdma_conn_cm_id (const RdmaConn *conn);
/* Server side: the pairing token of the client's connection request
 * (THRIFT_RDMA_PAIR_TOKEN_LEN bytes, as long as @conn lives), NULL if it carried none. */
const guint8 *rdma_conn_peer_pair_token (const RdmaConn *conn);
/* The NUMA node its buffers were placed on (settings.numa_node). */
gint rdma_conn_numa_node (const RdmaConn *conn);

G_END_DECLS

#endif
