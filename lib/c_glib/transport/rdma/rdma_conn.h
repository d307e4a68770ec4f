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
#include "rdma_pool.h"
#include "rdma_proto.h"
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
} RdmaConnSettings;

void rdma_conn_settings_init (RdmaConnSettings *s, guint32 max_message,
                              ThriftRdmaPolling polling);

/* wr_id layout: bit 63 set for receives, bit 62 for the keepalive probe; bits 0..31 are the
 * slot index; bits 32..39 the RdmaProtoId of a send. */
#define RDMA_WRID_RECV (G_GUINT64_CONSTANT (1) << 63)
#define RDMA_WRID_PROBE (G_GUINT64_CONSTANT (1) << 62)   /* the keepalive probe */
#define RDMA_WRID_SEND(proto, slot) (((guint64) (proto) << 32) | (guint64) (slot))
#define RDMA_WRID_SLOT(wr_id) ((guint32) ((wr_id) & 0xffffffffu))
#define RDMA_WRID_PROTO(wr_id) ((guint) (((wr_id) >> 32) & 0xff))

/* A received message: in its receive slot (slot >= 0) or reassembled in owned memory. */
typedef struct
{
  guint8 *data;
  gsize len;
  gint64 slot;     /* receive slot to repost when released, or -1 */
  gboolean owned;  /* data was g_malloc'ed by the protocol */
} RdmaMessage;

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
  const RdmaProtoOps *tx_proto;       /* protocol of the next message sent */
  gboolean last_was_send;             /* for round trip counting */

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

/* Sends @len bytes as one message with conn->tx_proto. */
gboolean rdma_conn_send (RdmaConn *conn, const guint8 *buf, gsize len, gint64 deadline_us,
                         GError **error);
/* Waits until a whole message is received; returns it (still queued) or NULL with @error
 * (RDMA_ERR_PEER_GONE when the peer disconnected, RDMA_ERR_TIMED_OUT). */
RdmaMessage *rdma_conn_wait_message (RdmaConn *conn, gint64 deadline_us, GError **error);
/* Gives the oldest received message back (its slot is reposted). */
gboolean rdma_conn_release_message (RdmaConn *conn, GError **error);

/* For protocols: */
gboolean rdma_conn_check_usable (RdmaConn *conn, GError **error);
void rdma_conn_fail (RdmaConn *conn, const GError *cause);
gboolean rdma_conn_post_send (RdmaConn *conn, guint8 proto, guint32 slot, guint32 len,
                              GError **error);
/* Posts a list of send work requests with one doorbell, counting them; on failure the
 * connection fails (@what names the request in the error). */
gboolean rdma_conn_post_wr (RdmaConn *conn, struct ibv_send_wr *wr, const gchar *what,
                            GError **error);
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
void rdma_conn_deliver (RdmaConn *conn, guint8 *data, gsize len, gint64 slot, gboolean owned);

G_END_DECLS

#endif
