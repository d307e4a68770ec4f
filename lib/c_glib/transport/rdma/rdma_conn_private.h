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
 * rdma_conn_private.h: what is inside an RdmaConn, and the API the protocols use (for the
 * engine, proto/ and white-box tests only; the GObject shells use rdma_conn.h).  The CM id
 * and its own event channel, the verbs resources, the slot pools, credits, received messages,
 * statistics, the state machine, and the poller it waits with (rdma_poll.h).
 */
#ifndef _RDMA_CONN_PRIVATE_H
#define _RDMA_CONN_PRIVATE_H

#include <glib.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rdma_conn.h"
#include "rdma_conn_window.h"
#include "rdma_credit.h"
#include "rdma_op.h"
#include "rdma_poll.h"
#include "rdma_pool.h"
#include "rdma_proto.h"
#include "rdma_srq.h"
#include "rdma_tx.h"
#include "rdma_wire.h"

G_BEGIN_DECLS

/* Who owns the memory of a received message, and so how it is given back. */
typedef enum
{
  RDMA_MSG_IN_SLOT, /* in its receive slot: reposted */
  RDMA_MSG_ON_HEAP, /* reassembled with g_malloc: freed */
  RDMA_MSG_IN_PROTO /* in the protocol's registered memory: its release slot */
} RdmaMsgOwner;

/* A received message. */
struct _RdmaMessage
{
  guint8 *data; /* (owned) if @owner is RDMA_MSG_ON_HEAP, else (unowned): its
                                   receive slot or its protocol's memory (a ring's among
                                   them); NULL while @pending */
  gsize len;
  RdmaMsgOwner owner;
  gint64 slot;               /* RDMA_MSG_IN_SLOT: the receive slot */
  guint64 token;             /* RDMA_MSG_IN_PROTO: the protocol's */
  const RdmaProtoOps *proto; /* (unowned): the protocol that carried it (static) */
  gboolean pending;          /* its place is taken, its bytes are still arriving
                                   (rdma_conn_deliver_pending): not readable yet */
  gboolean opened;           /* handed to a reader (rdma_conn_ready_message), who may
                                   hold its data pointer: it stays where it is */
};

/* A send slot holds a header and at most a control message: a message's own bytes go from a
 * transmit buffer (rdma_tx.h), gathered by the SEND, never copied into the slot. */
#define RDMA_SEND_SLOT_SIZE 128u
/* Received messages that may wait for the reader in place, in their receive slots
 * (rdma_conn_deliver) or in the direct ring (rdma_ring.c, which also keeps half of the ring
 * free of them): later ones are copied out, so slots, credits and ring go back at once and
 * what the reader lets wait is bounded by its unread limit, in bytes. */
#define RDMA_IN_PLACE_MAX 4u
G_STATIC_ASSERT (RDMA_WIRE_HEADER_SIZE + RDMA_WIRE_CONTROL_MAX <= RDMA_SEND_SLOT_SIZE);

typedef struct _RdmaRing RdmaRing;
typedef struct _RdmaBulk RdmaBulk;

struct _RdmaConn
{
  RdmaConnState state;
  GError *failure; /* (owned) (nullable): the cause of FAILED */
  gboolean is_client;

  struct rdma_event_channel *cm_channel; /* (owned) (nullable): NULL until the id moves to
                                             it (an accepted one starts on the listener's) */
  struct rdma_cm_id *id;                 /* (owned) (nullable) */
  struct ibv_pd *pd;                     /* (owned) (nullable): a reference on the device's domain
                                         (rdma_domain_acquire, rdma_domain_release) */
  RdmaPoller poller;                     /* the CQ and its channel, the fds a wait watches, the
                                         polling mode and the protocols' progress_mask */

  RdmaConnSettings settings;
  RdmaSrq *srq;       /* (unowned) (nullable): the domain's; the device's shared
                                         receive queue (rdma_srq.h), whose slots this
                                         connection's receives take; NULL: recv_pool's own */
  RdmaPool recv_pool; /* credits + RDMA_CREDIT_CONTROL_SLOTS slots of its own */
  RdmaPool send_pool; /* as many slots, of RDMA_SEND_SLOT_SIZE bytes */
  RdmaCredits credits;
  RdmaWireHello peer;           /* the peer's hello */
  gboolean has_peer_pair_token; /* server: the client's request carried a token */
  guint8 peer_pair_token[RDMA_WIRE_PAIR_TOKEN_LEN];

  GQueue received;                        /* RdmaMessage * (owned), complete, in arrival order */
  gpointer proto_state[RDMA_PROTO_COUNT]; /* (owned) (nullable): each protocol's, made by its
                                              setup, freed by its teardown (rdma_conn_free) */
  const RdmaProtoOps *tx_proto;      /* (unowned): protocol of the next message sent (static) */
  const RdmaProtoOps *last_tx_proto; /* (unowned) (nullable): the one that carried the last
                                         message sent (static); NULL before the first */
  gboolean last_was_send;            /* for round trip counting */
  gboolean closing;                  /* rdma_conn_free waits for what was sent */
  guint64 msgs_sent;                 /* messages sent and received since connect, never */
  guint64 msgs_received;             /* reset: the numbers RFP's messages carry */

  /* operations (rdma_op.h) */
  RdmaOp *recv_ops; /* (owned) (nullable): one per receive slot of its own
                                         (NULL with @srq) */
  RdmaOp *send_ops; /* (owned) (nullable): one per send slot */
  RdmaOp probe_op;
  RdmaOp fatal_op;   /* (rdma_domain.h: RDMA_OP_FATAL) */
  gint device_event; /* the first async event that failed our QP, + 1 (0: none);
                                         set on the domain's thread, atomic */
  RdmaOp quiet_op;
  RdmaOp *free_ops;       /* (unowned) (nullable): pooled ops for WRITE and READ, a
                                         list through @op_blocks */
  GPtrArray *op_blocks;   /* (owned): their allocations */
  guint32 sq_depth;       /* send queue entries of the QP */
  guint32 sq_used;        /* posted and not yet retired */
  guint32 sq_unsignalled; /* unsignalled WRs since the last signalled one */
  guint32 max_rd_atomic;  /* READs that may be outstanding (both sides agree) */

  /* transmit buffers (rdma_tx.h), used in turn */
  RdmaTx tx[2];
  guint tx_cur;
  gsize tx_may_copy; /* bytes the message being sent lends that another may
                                         copy (rdma_lend_cost.h): a ring asked for counts them */

  /* the control channel: messages waiting for a free send slot (owned, g_free) */
  GQueue control_out;

  /* the direct ring (rdma_ring.h), made on first use */
  RdmaRing *ring; /* (owned) (nullable): rdma_ring_free */

  /* memory window operations, in order (rdma_conn_window.h) */
  RdmaWindows windows;

  /* bulk transfer (rdma_bulk.h): windows, loans, the registration cache; made on first use */
  RdmaBulk *bulk; /* (owned) (nullable): rdma_bulk_free */

  /* back-pressure: data slots held back (not reposted) while the unread bytes exceed
   * settings.unread_limit; reposted as the reader releases messages */
  gsize unread_bytes;   /* bytes of received messages not yet released */
  guint in_slot;        /* of them, messages read in place from their slot */
  GArray *held_slots;   /* (owned): guint32 (own slots) */
  guint32 held_credits; /* (shared slots: those go back at once, a held slot
                                         would starve the other connections) */

  /* keepalive (rdma_keepalive.c) */
  gboolean alive_seen;     /* a completion arrived since the last tick */
  gint64 last_alive_us;    /* monotonic time of the last sign of life */
  gint64 keepalive_due_us; /* next tick (0: none) */
  gboolean probe_outstanding;
  gint64 probe_sent_us;

  gboolean block_refused; /* the watcher cannot take it (rdma_block.h): waits poll */

  ThriftRdmaStats stats;
};

/* For tests over a fake provider (rdma_verbs.h): a connected client and server on
 * @client_id and @server_id, the two ends of one link that the provider made (no QP yet).
 * Runs what rdma_conn_connect and rdma_conn_accept_start/finish run once the CM has done its
 * part: each side's resources and hello, the server takes the client's hello (and pairing
 * token), the client the server's (with each protocol's setup), and each side moves its id to
 * its own event channel.
 * The ids are taken, on failure too. */
gboolean rdma_conn_pair (struct rdma_cm_id *client_id, struct rdma_cm_id *server_id,
                         const RdmaConnSettings *client_settings,
                         const RdmaConnSettings *server_settings, RdmaConn **client,
                         RdmaConn **server, GError **error);

/* For protocols: */
gboolean rdma_conn_check_usable (RdmaConn *conn, GError **error);
/* Posts a signalled SEND of @len bytes of send slot @slot (header included), optionally
 * followed by @tx_len bytes of @tx gathered from @tx_off (@tx NULL: none). */
gboolean rdma_conn_post_send (RdmaConn *conn, guint8 proto, guint32 slot, guint32 len, RdmaTx *tx,
                              gsize tx_off, guint32 tx_len, GError **error);
/* An op from the free list for a WRITE or READ (never fails: the list grows). */
RdmaOp *rdma_conn_op_get (RdmaConn *conn, RdmaOpKind kind, guint8 proto);
/* Puts a pooled op back on the free list once its completion was handled. */
void rdma_conn_op_put (RdmaConn *conn, RdmaOp *op);
/* Waits until @n more send queue entries are free. */
gboolean rdma_conn_sq_reserve (RdmaConn *conn, guint n, gint64 deadline_us, GError **error);
/* Posts a list of send work requests with one doorbell (each wr_id an RdmaOp, or the quiet
 * op for unsignalled ones), counting them by opcode and accounting the send queue and the
 * transmit buffers the ops hold; on failure the connection fails (@what names the request in
 * the error).  Call rdma_conn_sq_reserve first. */
gboolean rdma_conn_post_wr (RdmaConn *conn, struct ibv_send_wr *wr, const gchar *what,
                            GError **error);
/* Posts a list that rdma_conn_post_wr accounted already (rdma_conn_window.c, for what it kept). */
gboolean rdma_conn_post_wr_accounted (RdmaConn *conn, struct ibv_send_wr *wr, const gchar *what,
                                      GError **error);
/* Posts one signalled WR at once, ahead of what is deferred (rdma_conn_window.c): its completion
 * retires @entries send queue entries (itself, and unsignalled WRs before it). */
gboolean rdma_conn_post_wr_alone (RdmaConn *conn, struct ibv_send_wr *wr, guint32 entries,
                                  const gchar *what, GError **error);
/* Writes a header with the credits and freed ring chunks to return (piggybacked). */
void rdma_conn_header (RdmaConn *conn, void *slot, guint8 proto, guint8 type, guint8 flags,
                       guint32 frag_len, guint32 msg_len);
/* Queues a control message (RDMA_WIRE_CONTROL, @len <= RDMA_WIRE_CONTROL_MAX) for @proto's
 * peer; it goes out at once if a send slot is free, else at the next completion.  Never
 * blocks: completion handlers call it. */
gboolean rdma_conn_send_control (RdmaConn *conn, guint8 proto, guint8 kind, const void *payload,
                                 guint32 len, GError **error);
/* Posts a signalled zero-byte RDMA WRITE, which touches no memory at either end: its
 * completion says the QP still works and retires the unsignalled WRs before it.  @op must
 * have a send-queue slot (rdma_conn_sq_reserve, or the keepalive's own). */
gboolean rdma_conn_post_empty_write (RdmaConn *conn, RdmaOp *op, const char *what, GError **error);
/* Posts an empty WRITE if the newest WR is unsignalled: only a signalled completion retires
 * the unsignalled WRs before it. */
gboolean rdma_conn_retire_unsignalled (RdmaConn *conn, gint64 deadline_us, GError **error);
/* Waits by the connection's polling mode until @done (@data) is TRUE or @deadline_us. */
gboolean rdma_conn_wait_for (RdmaConn *conn, gboolean (*done) (RdmaConn *, gpointer), gpointer data,
                             gint64 deadline_us, GError **error);
/* Waits (1 s at most, by the caller's @deadline_us) until what was posted has completed and
 * the held control messages went out: close (2) delivers a socket's queued bytes the same
 * way.  FALSE if the deadline came first or the connection failed. */
gboolean rdma_conn_flush_sent (RdmaConn *conn, gint64 deadline_us);
/* Posts receives for the receive slots @slots (@n of them) in one call. */
gboolean rdma_conn_post_recv_list (RdmaConn *conn, const guint32 *slots, guint n, GError **error);
gboolean rdma_conn_repost (RdmaConn *conn, guint32 slot, gboolean data_slot, GError **error);
/* The bytes of receive slot @slot (the shared queue's or the connection's own). */
guint8 *rdma_conn_recv_slot (RdmaConn *conn, guint32 slot);
/* A connection that no longer receives gives receive slot @slot back (to the shared queue;
 * its own slots go with it). */
void rdma_conn_drop_slot (RdmaConn *conn, guint32 slot);
/* Reposts the data slots held back while the unread bytes were over the limit. */
gboolean rdma_conn_repost_held (RdmaConn *conn, GError **error);
/* Sends an explicit credit message if enough credits are pending and a send slot is free. */
gboolean rdma_conn_return_credits (RdmaConn *conn, GError **error);
/* Waits for and handles at least one completion or CM event (rdma_poller_wait); fails with
 * RDMA_ERR_INTERRUPTED instead of waiting once the owner was interrupted. */
gboolean rdma_conn_progress (RdmaConn *conn, gint64 deadline_us, GError **error);
/* The same, for a wait that only a peer's message ends (a reply, a request): its CQ armed for
 * solicited completions where nothing of ours waits for a send's completion. */
gboolean rdma_conn_progress_message (RdmaConn *conn, gint64 deadline_us, GError **error);
/* The connection leaves the watcher (rdma_conn_free). */
void rdma_conn_block_forget (RdmaConn *conn);
/* Sets up conn->poller from conn->settings, with the connection as its sink
 * (rdma_conn_wait.c). */
void rdma_conn_poller_init (RdmaConn *conn);
/* Handles a work completion (rdma_conn_wc.c). */
gboolean rdma_conn_handle_wc (RdmaConn *conn, const struct ibv_wc *wc, GError **error);
/* Handles every pending CM event of the connection's channel (rdma_conn.c). */
gint rdma_conn_handle_cm_events (RdmaConn *conn, GError **error);
/* Queues a complete received message (protocols call it); counts it. */
void rdma_conn_deliver (RdmaConn *conn, const RdmaProtoOps *proto, guint8 *data, gsize len,
                        RdmaMsgOwner owner, gint64 slot, guint64 token);
/* Moves a received message the reader has not been handed out of the protocol's memory onto
 * the heap (a copy); the caller frees what held it. */
void rdma_conn_message_to_heap (RdmaConn *conn, RdmaMessage *msg);
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

/* The polling mode of the current wait. */
static inline ThriftRdmaPolling
rdma_conn_polling (const RdmaConn *conn)
{
  return conn->poller.polling;
}

/* Protocol @proto's progress slot runs on every turn of a wait (@on), or no longer. */
static inline void
rdma_conn_want_progress (RdmaConn *conn, guint proto, gboolean on)
{
  if (on)
    conn->poller.progress_mask |= 1u << proto;
  else
    conn->poller.progress_mask &= ~(1u << proto);
}

G_END_DECLS

#endif
