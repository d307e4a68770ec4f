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
 * thrift_server_hybrid.h: ThriftServerHybrid, the server transport of hybrid:// (see
 * thrift_hybrid.h).  It listens on one port number for TCP and for RDMA (CM) connections
 * and hands each client's two legs to the server as one ThriftHybrid, so ThriftSimpleServer
 * and ThriftThreadedServer serve it unchanged and the handler sees one client.
 *
 *   - A client's TCP leg says hello; the server answers with a fresh random pair token; the
 *     client's RDMA leg presents it in its connection request.  The server admits an RDMA
 *     request only with a token that a TCP leg waits for, once: a connection that claims to
 *     be another client's leg, or comes again with a used token, is refused before it is
 *     accepted.  A TCP leg whose partner does not come within the connect-timeout is dropped.
 *   - An RDMA connection with no token (a plain rdma:// client) is served as it is.
 *   - A client that runs over TCP alone (its fallback) is served over TCP alone.
 *   - A stock Thrift client of any language (no hello: its first byte is its first call's,
 *     hybrid_wire_first_byte) is served over TCP alone, framed or buffered as its first
 *     byte says, in the server's protocol.  A client that connects and says nothing holds no
 *     thread and is dropped at the connect-timeout.
 *   - With "fallback" set, a server that cannot listen for RDMA (no device) warns and serves
 *     over TCP alone; without it, listen fails with the RDMA error.
 *
 * Properties: "hostname" (the address to listen on, both legs; NULL: every address), "port",
 * "backlog", "fallback", "connect-timeout" (ms a client has to bring its second leg), and,
 * for the RDMA legs, as ThriftServerRdma's: "polling", "call-timeout", "idle-timeout",
 * "keepalive".  Use it with the identity transport factory: the accepted transport frames
 * its TCP leg itself.
 */
#ifndef _THRIFT_SERVER_HYBRID_H
#define _THRIFT_SERVER_HYBRID_H

#include <glib-object.h>
#include <thrift/c_glib/transport/thrift_server_transport.h>
#include <thrift/c_glib/transport/thrift_hybrid.h>

G_BEGIN_DECLS

#define THRIFT_TYPE_SERVER_HYBRID (thrift_server_hybrid_get_type ())
#define THRIFT_SERVER_HYBRID(obj) \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), THRIFT_TYPE_SERVER_HYBRID, ThriftServerHybrid))
#define THRIFT_IS_SERVER_HYBRID(obj) (G_TYPE_CHECK_INSTANCE_TYPE ((obj), THRIFT_TYPE_SERVER_HYBRID))
#define THRIFT_SERVER_HYBRID_CLASS(c) \
  (G_TYPE_CHECK_CLASS_CAST ((c), THRIFT_TYPE_SERVER_HYBRID, ThriftServerHybridClass))
#define THRIFT_IS_SERVER_HYBRID_CLASS(c) (G_TYPE_CHECK_CLASS_TYPE ((c), THRIFT_TYPE_SERVER_HYBRID))
#define THRIFT_SERVER_HYBRID_GET_CLASS(obj) \
  (G_TYPE_INSTANCE_GET_CLASS ((obj), THRIFT_TYPE_SERVER_HYBRID, ThriftServerHybridClass))

typedef struct _ThriftServerHybrid ThriftServerHybrid;
typedef struct _ThriftServerHybridClass ThriftServerHybridClass;

struct _ThriftServerHybrid
{
  ThriftServerTransport parent;
};

struct _ThriftServerHybridClass
{
  ThriftServerTransportClass parent;
};

GType thrift_server_hybrid_get_type (void);

/* Wakes a blocked accept from another thread: it fails with an "interrupted" error. */
void thrift_server_hybrid_interrupt (ThriftServerHybrid *server);

/* Whether the server listens for RDMA legs (FALSE after a fallback, or before listen). */
gboolean thrift_server_hybrid_has_rdma (ThriftServerHybrid *server);

G_END_DECLS

#endif /* _THRIFT_SERVER_HYBRID_H */
