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
 * thrift_hybrid.h: ThriftHybrid, a Thrift c_glib transport with two legs to one server, TCP
 * (framed) and RDMA (ThriftRdma), each call going by the leg its function's `transport` hint
 * names (HatRPC paper Sec. 3.3): bulk calls over TCP, small latency-bound calls over RDMA, in
 * one client, with no change to generated code or handlers.
 *
 *   - A client (hybrid://HOST:PORT) opens the TCP leg, gets a pair token from the server
 *     over it, then opens the RDMA leg to the same port presenting the token; the server
 *     (ThriftServerHybrid) pairs the two into one accepted ThriftHybrid, so a server serves
 *     it as one client.
 *   - Each call goes by the leg its hint set names (thrift_hints_apply: `transport = tcp` or
 *     `rdma`; RDMA when the set says nothing or there is no set), and its reply comes back
 *     on the same leg.  A server answers each request on the leg it came by.
 *   - With "fallback" set, a client whose RDMA leg cannot be made (no device here, none at
 *     the server, the connection fails) warns once, naming the reason, and sends every call
 *     by TCP; without it, open fails with the RDMA error.
 *   - When either leg fails or its peer goes, the connection is over: both legs close.
 *
 * Properties (client):
 *   "hostname"        gchar*     server address or name (construct; default "localhost")
 *   "port"            guint      the server's port, TCP and RDMA alike (construct; 9090)
 *   "configuration"   ThriftConfiguration*  (construct-only) max message size etc.
 *   "fallback"        gboolean   run over TCP alone when RDMA cannot be had (default FALSE)
 *   "use-transport-hints"  gboolean  each call by the leg its hint names (default TRUE);
 *                                FALSE: every call by RDMA (rdma://...?fallback=tcp)
 *   "hints"           gpointer   the service's hint data, as ThriftRdma's
 *   "polling", "connect-timeout", "call-timeout", "keepalive", "numa-node"  as ThriftRdma's, for the
 *                                RDMA leg; connect-timeout also bounds the TCP handshake
 */
#ifndef _THRIFT_HYBRID_H
#define _THRIFT_HYBRID_H

#include <glib-object.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_socket.h>
#include <thrift/c_glib/transport/thrift_transport.h>

G_BEGIN_DECLS

/**
 * ThriftHybridLeg:
 * @THRIFT_HYBRID_LEG_NONE: no message yet
 * @THRIFT_HYBRID_LEG_TCP: the TCP leg (framed)
 * @THRIFT_HYBRID_LEG_RDMA: the RDMA leg
 */
typedef enum
{
  THRIFT_HYBRID_LEG_NONE = 0,
  THRIFT_HYBRID_LEG_TCP = 1,
  THRIFT_HYBRID_LEG_RDMA = 2
} ThriftHybridLeg;

#define THRIFT_TYPE_HYBRID (thrift_hybrid_get_type ())
#define THRIFT_HYBRID(obj) (G_TYPE_CHECK_INSTANCE_CAST ((obj), THRIFT_TYPE_HYBRID, ThriftHybrid))
#define THRIFT_IS_HYBRID(obj) (G_TYPE_CHECK_INSTANCE_TYPE ((obj), THRIFT_TYPE_HYBRID))
#define THRIFT_HYBRID_CLASS(c) \
  (G_TYPE_CHECK_CLASS_CAST ((c), THRIFT_TYPE_HYBRID, ThriftHybridClass))
#define THRIFT_IS_HYBRID_CLASS(c) (G_TYPE_CHECK_CLASS_TYPE ((c), THRIFT_TYPE_HYBRID))
#define THRIFT_HYBRID_GET_CLASS(obj) \
  (G_TYPE_INSTANCE_GET_CLASS ((obj), THRIFT_TYPE_HYBRID, ThriftHybridClass))

typedef struct _ThriftHybrid ThriftHybrid;
typedef struct _ThriftHybridClass ThriftHybridClass;

struct _ThriftHybrid
{
  ThriftTransport parent;
};

struct _ThriftHybridClass
{
  ThriftTransportClass parent;
};

GType thrift_hybrid_get_type (void);

/* The leg of the last message: on a client the last call written, on a server the last
 * request read. */
ThriftHybridLeg thrift_hybrid_get_last_leg (ThriftHybrid *hybrid);

/* "tcp", "rdma" or "none". */
const gchar *thrift_hybrid_leg_name (ThriftHybridLeg leg);

/* The RDMA leg (its stats, explain, protocol name), or NULL while closed and when the
 * connection runs over TCP alone after a fallback; owned by @hybrid. */
ThriftRdma *thrift_hybrid_get_rdma (ThriftHybrid *hybrid);

/* The TCP leg's socket (to set socket options on it, say), NULL while closed; owned by
 * @hybrid. */
ThriftSocket *thrift_hybrid_get_socket (ThriftHybrid *hybrid);

/* Wakes a read or peek blocked on either leg from another thread (as thrift_rdma_interrupt;
 * the TCP leg is shut down, so the connection is over). */
void thrift_hybrid_interrupt (ThriftHybrid *hybrid);

/* Why the RDMA leg is missing after a fallback (NULL when it is not); owned by @hybrid. */
const gchar *thrift_hybrid_get_fallback_reason (ThriftHybrid *hybrid);

G_END_DECLS

#endif /* _THRIFT_HYBRID_H */
