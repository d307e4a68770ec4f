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
 * thrift_server_rdma.h: ThriftServerRdma, a Thrift c_glib server transport over RDMA.
 *
 * The counterpart of ThriftServerSocket: listen binds and listens with librdmacm; accept
 * waits for a connection request, sets the connection up (queue pair, registered buffers,
 * handshake) and returns it as a connected ThriftRdma with its own event channel; close stops
 * listening.  Works with ThriftSimpleServer and any server that takes a ThriftServerTransport.
 *
 * Properties:
 *   "hostname"       gchar*    address to bind; NULL (default) = every address
 *   "port"           guint     port to bind, 0 = the system picks one; after listen, reading
 *                              the property (or thrift_server_rdma_get_port) gives the real one
 *   "backlog"        gint      listen backlog, and the most handshakes in progress at once
 *                              (default 128)
 *   "hints"          gpointer  the service's hint data (const ThriftHintSet *) or NULL;
 *                              handed to every accepted ThriftRdma
 *   "polling"        ThriftRdmaPolling  polling mode of accepted connections (default HYBRID)
 *   "configuration"  ThriftConfiguration*  (construct-only) handed to accepted connections
 *   "remainingmessagesize", "knowmessagesize"  glong, as ThriftServerSocket's
 *   "call-timeout"   guint     ms an accepted connection waits within a call (for credits
 *                              to send a reply); 0 = forever; default 30000
 *   "idle-timeout"   guint     ms an accepted connection waits for its next request before
 *                              it is closed; 0 (the default) = forever
 *   "keepalive"      guint     ms after which a client that stopped answering (host or link
 *                              down, packets lost) is declared dead and its connection
 *                              freed; probes start after a quarter of it; 0 = never;
 *                              default 30000
 *   "numa-node"      gint      NUMA node of accepted connections: their buffers are placed
 *                              on it and the threads that serve them (peek, read, write)
 *                              run on its CPUs, from their first use; -1 = none (default).
 *                              A node the machine lacks is an error at listen.  A numa
 *                              hint beats it (see thrift_rdma.h)
 *
 * Handshakes progress side by side: a connection request is accepted at once and waits for
 * its ESTABLISHED with its own 5 s deadline, so clients that never complete a handshake
 * delay nobody; at most "backlog" handshakes are in progress, further requests are refused.
 *
 * Stopping a blocked accept: thrift_server_rdma_interrupt () may be called from any thread;
 * an accept blocked in another thread then returns NULL with an error (and so does every
 * later accept, until close and listen again).  close itself must not race a running accept.
 *
 * Pairing (hybrid://): a client may carry a pairing token in its connection request (the
 * ThriftRdma property "pair-token").  A server with an admission function
 * (thrift_server_rdma_set_admission) lets it decide on every request, with or without a
 * token; a server without one (a plain rdma:// server) admits every request that carries no
 * token and refuses one that does, so a client that believes it is one leg of a pair learns
 * at once that the server does not pair (THRIFT_TRANSPORT_ERROR_CONNECT, "the server refused
 * the connection: it carries a pairing token, and this server does not pair connections").
 * An accepted connection's token: thrift_rdma_get_peer_pair_token ().
 *
 * Waiting on several listeners at once (thrift_server_rdma_get_fd, _accept_ready): one
 * thread calls accept_ready (or accept) at a time, and not while close runs.
 */
#ifndef _THRIFT_SERVER_RDMA_H
#define _THRIFT_SERVER_RDMA_H

#include <glib-object.h>

#include <thrift/c_glib/transport/thrift_server_transport.h>
#include <thrift/c_glib/transport/thrift_rdma.h>

G_BEGIN_DECLS

#define THRIFT_TYPE_SERVER_RDMA (thrift_server_rdma_get_type ())
#define THRIFT_SERVER_RDMA(obj) \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), THRIFT_TYPE_SERVER_RDMA, ThriftServerRdma))
#define THRIFT_IS_SERVER_RDMA(obj) (G_TYPE_CHECK_INSTANCE_TYPE ((obj), THRIFT_TYPE_SERVER_RDMA))
#define THRIFT_SERVER_RDMA_CLASS(c) \
  (G_TYPE_CHECK_CLASS_CAST ((c), THRIFT_TYPE_SERVER_RDMA, ThriftServerRdmaClass))
#define THRIFT_IS_SERVER_RDMA_CLASS(c) (G_TYPE_CHECK_CLASS_TYPE ((c), THRIFT_TYPE_SERVER_RDMA))
#define THRIFT_SERVER_RDMA_GET_CLASS(obj) \
  (G_TYPE_INSTANCE_GET_CLASS ((obj), THRIFT_TYPE_SERVER_RDMA, ThriftServerRdmaClass))

#define THRIFT_SERVER_RDMA_DEFAULT_BACKLOG 128

typedef struct _ThriftServerRdma ThriftServerRdma;
typedef struct _ThriftServerRdmaClass ThriftServerRdmaClass;

struct _ThriftServerRdma
{
  ThriftServerTransport parent;
};

struct _ThriftServerRdmaClass
{
  ThriftServerTransportClass parent;
};

GType thrift_server_rdma_get_type (void);

/* The port the server listens on (the real one when "port" was 0), or 0 before listen. */
guint thrift_server_rdma_get_port (ThriftServerRdma *self);

/* The cause of the last error listen or accept set (thread-safe; any thread may ask, for
 * example the one ThriftThreadedServer's serve returned the accept thread's error to), as
 * thrift_rdma_get_last_status () gives it for a connection; THRIFT_RDMA_STATUS_OK after a
 * successful listen. */
ThriftRdmaStatus thrift_server_rdma_get_last_status (ThriftServerRdma *self);

/**
 * thrift_server_rdma_interrupt:
 *
 * Wakes an accept blocked in another thread; it returns NULL with an error in
 * THRIFT_TRANSPORT_ERROR ("interrupted").  Thread-safe and async-signal-safe (one write to an
 * eventfd).  Sticky: later accepts fail at once until the server is closed and listens again.
 */
void thrift_server_rdma_interrupt (ThriftServerRdma *self);

/**
 * ThriftServerRdmaAdmitFunc:
 * @token: (nullable): the request's pairing token, THRIFT_RDMA_PAIR_TOKEN_LEN bytes valid
 *   during the call only, or NULL if the request carries none
 * @user_data: as given to thrift_server_rdma_set_admission
 * @reason: (out): where a refusal's reason goes (g_strdup'ed; the server logs it and frees it)
 *
 * Decides, before the connection is accepted, whether a connection request is admitted.  It
 * runs in the thread that calls accept or accept_ready, once per request whose hello is sound,
 * before any verbs resource is set up for it.  A refused request is rejected with a code the
 * client reports: "its pairing token is unknown or was already used" when it carried a token,
 * "it carries no pairing token, and this server admits only paired connections" when not.
 * Admitted is not yet connected: the handshake may still fail (the client vanishes, 5 s
 * pass), and then accept never returns that connection; a caller that pairs connections by
 * their tokens therefore pairs what accept returns and gives up on a partner that does not
 * come within its own time.
 *
 * Returns: TRUE to admit the request, FALSE to refuse it (then set *@reason to a short text).
 */
typedef gboolean (*ThriftServerRdmaAdmitFunc) (const guint8 *token, gpointer user_data,
                                               gchar **reason);

/**
 * thrift_server_rdma_set_admission:
 * @func: (nullable): the admission function, or NULL for none (the default: requests without
 *   a token are admitted, requests with one refused, see above)
 * @user_data: handed to @func; must live as long as @func is set
 *
 * Sets the function that admits connection requests.  Set it before listen, or from the
 * thread that calls accept.
 */
void thrift_server_rdma_set_admission (ThriftServerRdma *self, ThriftServerRdmaAdmitFunc func,
                                       gpointer user_data);

/**
 * thrift_server_rdma_get_fd:
 *
 * For a caller that waits on several listeners at once (poll (2) for POLLIN, or a GSource):
 * the descriptor that becomes readable when accept may progress: a connection request or a
 * handshake's event arrived, or thrift_server_rdma_interrupt was called (the interrupt's
 * eventfd is inside it: the caller needs no other descriptor of the server).  Handshake
 * deadlines do not make it readable: thrift_server_rdma_accept_ready says when to call again.
 * The descriptor belongs to the server, valid from listen to close; do not read it.
 *
 * Returns: the descriptor, or -1 before listen (and after close).
 */
gint thrift_server_rdma_get_fd (ThriftServerRdma *self);

/**
 * thrift_server_rdma_accept_ready:
 * @next_deadline_us: (out) (optional): when NULL is returned without an error: the earliest
 *   deadline of a handshake in progress (monotonic time, g_get_monotonic_time ()), by which
 *   the caller must call again even if the descriptor stays quiet; 0 for none
 *
 * Accept without blocking: takes what arrived on the listener (runs the admission function
 * on new requests, starts their handshakes, completes or drops the ones in progress) and
 * returns an established connection, as accept does.  The blocking accept is this call and
 * a wait on thrift_server_rdma_get_fd.  Once thrift_server_rdma_interrupt was called it fails
 * (THRIFT_TRANSPORT_ERROR, "interrupted"), as accept does, until close and listen again.
 *
 * Returns: (transfer full) (nullable): a connected ThriftRdma; NULL with no error if none is
 * ready yet; NULL with @error on failure (the server is not listening, interrupted, a system
 * call failed).
 */
ThriftTransport *thrift_server_rdma_accept_ready (ThriftServerRdma *self, gint64 *next_deadline_us,
                                                  GError **error);

G_END_DECLS

#endif /* _THRIFT_SERVER_RDMA_H */
