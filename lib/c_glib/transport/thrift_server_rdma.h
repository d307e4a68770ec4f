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
 */
#ifndef _THRIFT_SERVER_RDMA_H
#define _THRIFT_SERVER_RDMA_H

#include <glib-object.h>

#include <thrift/c_glib/transport/thrift_server_transport.h>
#include <thrift/c_glib/transport/thrift_rdma.h>

G_BEGIN_DECLS

#define THRIFT_TYPE_SERVER_RDMA (thrift_server_rdma_get_type ())
#define THRIFT_SERVER_RDMA(obj) (G_TYPE_CHECK_INSTANCE_CAST ((obj), THRIFT_TYPE_SERVER_RDMA, ThriftServerRdma))
#define THRIFT_IS_SERVER_RDMA(obj) (G_TYPE_CHECK_INSTANCE_TYPE ((obj), THRIFT_TYPE_SERVER_RDMA))
#define THRIFT_SERVER_RDMA_CLASS(c) (G_TYPE_CHECK_CLASS_CAST ((c), THRIFT_TYPE_SERVER_RDMA, ThriftServerRdmaClass))
#define THRIFT_IS_SERVER_RDMA_CLASS(c) (G_TYPE_CHECK_CLASS_TYPE ((c), THRIFT_TYPE_SERVER_RDMA))
#define THRIFT_SERVER_RDMA_GET_CLASS(obj) (G_TYPE_INSTANCE_GET_CLASS ((obj), THRIFT_TYPE_SERVER_RDMA, ThriftServerRdmaClass))

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

G_END_DECLS

#endif /* _THRIFT_SERVER_RDMA_H */
