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

/* hybrid_transport.h: what ThriftServerHybrid needs of ThriftHybrid beyond its public API. */
#ifndef _HYBRID_TRANSPORT_H
#define _HYBRID_TRANSPORT_H

#include <thrift/c_glib/thrift_configuration.h>
#include <thrift/c_glib/transport/thrift_hybrid.h>
#include <thrift/c_glib/transport/thrift_socket.h>

G_BEGIN_DECLS

/* The server's side of a pair: takes @socket (open, past the handshake) and @rdma (NULL
 * when the client runs over TCP alone).  @framed: the TCP leg's messages are framed, as a
 * hybrid client's are; FALSE for a stock buffered client (hybrid_wire_stock_client). */
ThriftHybrid *hybrid_transport_new_accepted (ThriftSocket *socket, ThriftRdma *rdma,
                                             gboolean framed, ThriftConfiguration *configuration);

G_END_DECLS

#endif /* _HYBRID_TRANSPORT_H */
