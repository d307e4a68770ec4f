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
 * rdma_conn.h: one RDMA connection (the engine's private header): the CM id and its own event
 * channel, the verbs resources, the slot pools, credits, received messages, statistics and the
 * state machine.  ThriftRdma owns one per open connection.
 */
#ifndef _RDMA_CONN_H
#define _RDMA_CONN_H

#include <glib.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <thrift/c_glib/transport/thrift_rdma.h>

#include "rdma_credit.h"
#include "rdma_op.h"
#include "rdma_pool.h"
#include "rdma_proto.h"
#include "rdma_tx.h"
#include "rdma_wire.h"

G_BEGIN_DECLS

/*
 * Connection states and allowed transitions:
 *
 *   IDLE -> RESOLVING -> CONNECTING -> CONNECTED        (client: rdma_conn_connect)
 *   IDLE -> ACCEPTING -> CONNECTED                      (server: rdma_conn_accept)
 *   CONNECTED -> DISCONNECTED   the peer disconnected; messages already received can still
 *                               be read, nothing can be sent
 *   any but CLOSED -> FAILED    sticky: keeps its cause (conn->failure), every later call
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
  guint32 slot_size;        /* receive/send slot, header included (4096) */
  guint32 credits;          /* data receive slots (the window) */
  guint32 max_message;      /* the configuration's max message size */
  ThriftRdmaPolling polling;
  guint spin_us;            /* hybrid: how long to spin before blocking */
  guint16 wire_version;     /* THRIFT_RDMA_WIRE_VERSION (tests may change it) */
  guint keepalive_ms;       /* a peer quiet this long is dead (rdma_keepalive.h); 0: never */
  guint32 unread_limit;     /* received, unread bytes after which credits stop flowing */
  guint16 rx_protocols;     /* bits (1 << RdmaProtoId) of the protocols this side accepts */
  guint32 ring_size;        /* bytes of the direct ring, registered on the peer's first
                               direct message (rdma_ring.h) */
} RdmaConnSettings;

void rdma_conn_settings_init (RdmaConnSettings *s, guint32 max_message,
                              ThriftRdmaPolling polling);

/* Who owns the memory of a received message, and so how it is given back. */
typedef enum
{
  RDMA_MSG_IN_SLOT,    /* in its receive slot: reposted */
  RDMA_MSG_ON_HEAP,    /* reassembled with g_malloc: freed */
  RDMA_MSG_IN_PROTO    /* in the protocol's registered memory: its release slot */
} RdmaMsgOwner;

/* A received message. */
typedef struct
{
  guint8 *data;
  gsize len;
  RdmaMsgOwner owner;
  gint64 slot;                  /* RDMA_MSG_IN_SLOT: the receive slot */
  guint64 token;                /* RDMA_MSG_IN_PROTO: the protocol's */
  const RdmaProtoOps *proto;    /* the protocol that carried it */
  gboolean pending;             /* its place is taken, its bytes are still arriving
                                   (rdma_conn_deliver_pending): not readable yet */
} RdmaMessage;

typedef struct _RdmaRing RdmaRing;

struct _RdmaConn
{
  RdmaConnState state;
  GError *failure;                    /* the cause of FAILED */
  gboolean is_client;

  struct rdma_event_channel *cm_channel;
  struct rdma_cm_id *id;
  struct ibv_pd *pd;
  struct ibv_comp_channel *comp_channel;
  struct ibv_cq *cq;
  guint unacked_events;
  gboolean armed;
  int wake_fd;                        /* the owner's eventfd (-1: none); readable once the
                                         owner was interrupted: poll(2) watches it */
  const gint *interrupted;            /* the owner's atomic flag (NULL: none): a wait that
                                         finds it set fails with RDMA_ERR_INTERRUPTED */

  RdmaConnSettings settings;
  RdmaPool recv_pool;                 /* credits + RDMA_CREDIT_CONTROL_SLOTS slots */
  RdmaPool send_pool;
  RdmaCredits credits;
  RdmaWireHello peer;                 /* the peer's hello */
  ThriftRdmaPolling polling;          /* the mode of the current wait */

  GQueue received;                    /* RdmaMessage *, complete, in arrival order */
  gpointer proto_state[RDMA_PROTO_COUNT];
  guint8 progress_mask;               /* protocols whose progress slot runs in waits */
  const RdmaProtoOps *tx_proto;       /* protocol of the next message sent */
  const RdmaProtoOps *last_tx_proto;  /* the one that carried the last message sent */
  gboolean last_was_send;             /* for round trip counting */
  guint64 msgs_sent;                  /* messages sent and received since connect, never */
  guint64 msgs_received;              /* reset: the numbers RFP's messages carry */

  /* operations (rdma_op.h) */
  RdmaOp *recv_ops;                   /* one per receive slot */
  RdmaOp *send_ops;                   /* one per send slot */
  RdmaOp probe_op;
  RdmaOp quiet_op;
  RdmaOp *free_ops;                   /* pooled ops for WRITE and READ */
  GPtrArray *op_blocks;               /* their allocations */
  guint32 sq_depth;                   /* send queue entries of the QP */
  guint32 sq_used;                    /* posted and not yet retired */
  guint32 sq_unsignalled;             /* unsignalled WRs since the last signalled one */
  guint32 max_rd_atomic;              /* READs that may be outstanding (both sides agree) */

  /* transmit buffers (rdma_tx.h), used in turn */
  RdmaTx tx[2];
  guint tx_cur;

  /* the control channel: messages waiting for a free send slot */
  GQueue control_out;

  /* the direct ring (rdma_ring.h), made on first use */
  RdmaRing *ring;

  /* back-pressure: data slots held back (not reposted) while the unread bytes exceed
   * settings.unread_limit; reposted as the reader releases messages */
  gsize unread_bytes;                 /* bytes of received messages not yet released */
  GArray *held_slots;                 /* guint32 */

  /* keepalive (rdma_keepalive.c) */
  gboolean alive_seen;                /* a completion arrived since the last tick */
  gint64 last_alive_us;               /* monotonic time of the last sign of life */
  gint64 keepalive_due_us;            /* next tick (0: none) */
  gboolean probe_outstanding;
  gint64 probe_sent_us;

  ThriftRdmaStats stats;
};

/* Client: resolves @host:@port (and binds @source if set), connects before @deadline_us. */
RdmaConn *rdma_conn_connect (const gchar *host, guint port, const gchar *source,
                             const RdmaConnSettings *settings, gint64 deadline_us,
                             GError **error);
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
/* Sends what the current transmit buffer holds as one message with conn->tx_proto (or
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
/* Gives the oldest received message back (its slot is reposted). */
gboolean rdma_conn_release_message (RdmaConn *conn, GError **error);

/* For protocols: */
gboolean rdma_conn_check_usable (RdmaConn *conn, GError **error);
void rdma_conn_fail (RdmaConn *conn, const GError *cause);
/* Posts a signalled SEND of @len bytes of send slot @slot (header included), optionally
 * followed by @tx_len bytes of @tx gathered from @tx_off (@tx NULL: none). */
gboolean rdma_conn_post_send (RdmaConn *conn, guint8 proto, guint32 slot, guint32 len,
                              RdmaTx *tx, gsize tx_off, guint32 tx_len, GError **error);
/* An op from the free list for a WRITE or READ (never fails: the list grows). */
RdmaOp *rdma_conn_op_get (RdmaConn *conn, RdmaOpKind kind, guint8 proto);
/* Waits until @n more send queue entries are free. */
gboolean rdma_conn_sq_reserve (RdmaConn *conn, guint n, gint64 deadline_us, GError **error);
/* Posts a list of send work requests with one doorbell (each wr_id an RdmaOp, or the quiet
 * op for unsignalled ones), counting them by opcode and accounting the send queue and the
 * transmit buffers the ops hold; on failure the connection fails (@what names the request in
 * the error).  Call rdma_conn_sq_reserve first. */
gboolean rdma_conn_post_wr (RdmaConn *conn, struct ibv_send_wr *wr, const gchar *what,
                            GError **error);
/* Writes a header with the credits and freed ring chunks to return (piggybacked). */
void rdma_conn_header (RdmaConn *conn, void *slot, guint8 proto, guint8 type, guint8 flags,
                       guint32 frag_len, guint32 msg_len);
/* Queues a control message (RDMA_WIRE_CONTROL, @len <= RDMA_WIRE_CONTROL_MAX) for @proto's
 * peer; it goes out at once if a send slot is free, else at the next completion.  Never
 * blocks: completion handlers call it. */
gboolean rdma_conn_send_control (RdmaConn *conn, guint8 proto, guint8 kind,
                                 const void *payload, guint32 len, GError **error);
/* Waits by the connection's polling mode until @done (@data) is TRUE or @deadline_us. */
gboolean rdma_conn_wait_for (RdmaConn *conn, gboolean (*done) (RdmaConn *, gpointer),
                             gpointer data, gint64 deadline_us, GError **error);
gboolean rdma_conn_repost (RdmaConn *conn, guint32 slot, gboolean data_slot, GError **error);
/* Sends an explicit credit message if enough credits are pending and a send slot is free. */
gboolean rdma_conn_return_credits (RdmaConn *conn, GError **error);
/* Waits for and handles at least one completion or CM event (rdma_poll.c); fails with
 * RDMA_ERR_INTERRUPTED instead of waiting once conn->interrupted is set. */
gboolean rdma_conn_progress (RdmaConn *conn, gint64 deadline_us, GError **error);
/* Waiting in a poll set owned by the caller (rdma_poll.c), for a server's idle connections:
 * prepare takes what already completed and arms the CQ; check (after the poll said the
 * completion channel (@cq_event) or the CM channel (@cm_event) is readable, or the keepalive
 * was due) takes the events and prepares again.  READY: a message is there; GONE: the connection is over (@error says
 * why, when it failed); WAIT: watch the completion and CM channels' fds until
 * rdma_keepalive_due (). */
typedef enum
{
  RDMA_IDLE_READY,
  RDMA_IDLE_WAIT,
  RDMA_IDLE_GONE
} RdmaIdle;
RdmaIdle rdma_conn_idle_prepare (RdmaConn *conn, GError **error);
RdmaIdle rdma_conn_idle_check (RdmaConn *conn, gboolean cq_event, gboolean cm_event,
                               gint64 now, GError **error);
/* Handles a work completion (rdma_conn.c). */
gboolean rdma_conn_handle_wc (RdmaConn *conn, const struct ibv_wc *wc, GError **error);
/* Handles every pending CM event of the connection's channel (rdma_conn.c). */
gint rdma_conn_handle_cm_events (RdmaConn *conn, GError **error);
/* Queues a complete received message (protocols call it); counts it. */
void rdma_conn_deliver (RdmaConn *conn, const RdmaProtoOps *proto, guint8 *data, gsize len,
                        RdmaMsgOwner owner, gint64 slot, guint64 token);
/* Takes the next place in the received queue for a message of @len bytes whose data is
 * still to come (an RDMA READ in flight), so the messages received after it are read after
 * it; it counts as received (and unread) now.  rdma_conn_deliver_ready makes it readable
 * once @data holds it (owner RDMA_MSG_IN_PROTO).  The engine frees the RdmaMessage: a
 * protocol must not touch it once the connection is being freed. */
RdmaMessage *rdma_conn_deliver_pending (RdmaConn *conn, const RdmaProtoOps *proto, gsize len,
                                        guint64 token);
void rdma_conn_deliver_ready (RdmaConn *conn, RdmaMessage *msg, guint8 *data);
/* Counts a protocol error of the peer's: fails the connection with @e (taken). */
gboolean rdma_conn_fail_with (RdmaConn *conn, GError *e, GError **error);

G_END_DECLS

#endif
