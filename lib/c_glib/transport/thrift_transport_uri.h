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
 * Choosing the transport at startup from a string.
 *
 *   tcp://HOST:PORT[?OPTIONS]     ThriftSocket in ThriftFramedTransport (server: ThriftServerSocket
 *                                 with framed transport factories)
 *   rdma://HOST:PORT[?OPTIONS]    ThriftRdma alone, message-oriented (server: ThriftServerRdma)
 *   hybrid://HOST:PORT[?OPTIONS]  ThriftHybrid: a TCP leg (framed) and an RDMA leg to the same
 *                                 port, each call by the leg its `transport` hint names
 *                                 (server: ThriftServerHybrid)
 *
 * HOST is a name, an IPv4 address or an IPv6 address in brackets ([::1]). For servers, HOST is
 * the address to listen on and may be left empty (tcp://:9090) for every address; a tcp server
 * always listens on every IPv4 address (ThriftServerSocket has no bind address). PORT is 1 to
 * 65535. OPTIONS are NAME=VALUE pairs separated by '&':
 *
 *   framing=framed|buffered|none   tcp only; default framed (one write per message)
 *   polling=busy|event|hybrid      rdma, hybrid; default: from the hints, else the transport's
 *   connect-timeout=MS             rdma, hybrid client (hybrid server: the time a client has
 *                                  to bring both legs); connect timeout in milliseconds
 *   call-timeout=MS                rdma, hybrid; per-call timeout in milliseconds (0: none)
 *   idle-timeout=MS                rdma, hybrid server only; a connection waiting this long for
 *                                  its next request is closed (0: never, the default)
 *   keepalive=MS                   rdma, hybrid; a peer that stopped answering for this long is
 *                                  declared dead and its connection freed (0: never;
 *                                  default 30000)
 *   backlog=N                      servers only; listen backlog (1 to 65535)
 *   fallback=tcp|none              rdma, hybrid; tcp: when RDMA cannot be had (no device, the
 *                                  RDMA connection fails), warn once and run over TCP alone;
 *                                  default none (the RDMA error).  An rdma:// client with
 *                                  fallback is a ThriftHybrid sending every call by RDMA, so
 *                                  its server must be hybrid:// or rdma://...?fallback=tcp,
 *                                  which is a ThriftServerHybrid (it serves plain rdma://
 *                                  clients too)
 *   numa=N                         rdma; NUMA node of the connections' buffers and polling
 *                                  threads (0 to 1023; the "numa-node" property); a node
 *                                  this machine lacks is an error at open or listen
 *   max-pinned-bytes=BYTES         rdma, hybrid; the "max-pinned-bytes" property: what the
 *                                  process may pin before buffers that only speed
 *                                  connections up are no longer made (0: the default)
 *   bulk=BYTES                     rdma only (not with fallback=tcp); the "bulk-threshold"
 *                                  property: fields this large are lent, not copied (0: never)
 *   bulk_chunk=BYTES               rdma only; "bulk-chunk", bytes per RDMA READ of a lent field
 *   bulk_depth=N                   rdma only; "bulk-depth", READs of a field in flight
 *   rcache_entries=N               rdma only; "rcache-entries", registrations the device's
 *                                  registration cache (the process's) keeps at most
 *   rcache_bytes=BYTES             rdma only; "rcache-bytes", bytes it keeps pinned at most
 *                                  (docs/bulk.md; each option's
 *                                  range is its property's)
 *
 * The server factories work with every c_glib server: each connection they hand out is a
 * reference of its own (ThriftSimpleServer unrefs what they return and the connection).
 *
 * Errors are in THRIFT_TRANSPORT_URI_ERROR and name what is wrong and what is allowed.
 */
#ifndef _THRIFT_TRANSPORT_URI_H
#define _THRIFT_TRANSPORT_URI_H

#include <glib.h>

#include <thrift/c_glib/transport/thrift_transport.h>
#include <thrift/c_glib/transport/thrift_server_transport.h>
#include <thrift/c_glib/transport/thrift_transport_factory.h>

G_BEGIN_DECLS

typedef enum
{
  THRIFT_TRANSPORT_URI_TCP,
  THRIFT_TRANSPORT_URI_RDMA,
  THRIFT_TRANSPORT_URI_HYBRID
} ThriftTransportUriScheme;

typedef enum
{
  THRIFT_TRANSPORT_URI_FRAMED,
  THRIFT_TRANSPORT_URI_BUFFERED,
  THRIFT_TRANSPORT_URI_UNFRAMED
} ThriftTransportUriFraming;

typedef enum
{
  THRIFT_TRANSPORT_URI_POLLING_DEFAULT,
  THRIFT_TRANSPORT_URI_POLLING_BUSY,
  THRIFT_TRANSPORT_URI_POLLING_EVENT,
  THRIFT_TRANSPORT_URI_POLLING_HYBRID
} ThriftTransportUriPolling;

/* A parsed URI. Numbers that were not given are -1. */
typedef struct
{
  ThriftTransportUriScheme scheme;
  gchar *host; /* without brackets; "" when not given */
  guint port;
  ThriftTransportUriFraming framing; /* tcp */
  ThriftTransportUriPolling polling; /* rdma */
  gint connect_timeout_ms;           /* rdma client */
  gint call_timeout_ms;              /* rdma */
  gint idle_timeout_ms;              /* rdma server */
  gint keepalive_ms;                 /* rdma */
  gint backlog;                      /* servers */
  gboolean fallback;                 /* rdma, hybrid: fallback=tcp */
  gint numa_node;                    /* rdma */
  gint64 max_pinned_bytes;           /* rdma, hybrid; -1: unset */
  gint64 bulk_threshold;             /* rdma (no fallback); -1: unset */
  gint64 bulk_chunk;
  gint64 bulk_depth;
  gint64 rcache_entries;
  gint64 rcache_bytes;
} ThriftTransportUri;

typedef enum
{
  THRIFT_TRANSPORT_URI_ERROR_SYNTAX, /* not SCHEME://HOST:PORT[?OPTIONS] */
  THRIFT_TRANSPORT_URI_ERROR_SCHEME, /* a scheme other than tcp, rdma or hybrid */
  THRIFT_TRANSPORT_URI_ERROR_HOST,   /* missing or malformed host */
  THRIFT_TRANSPORT_URI_ERROR_PORT,   /* missing port, not a number, or out of range */
  THRIFT_TRANSPORT_URI_ERROR_OPTION  /* unknown option, bad value, or wrong scheme/side */
} ThriftTransportUriError;

#define THRIFT_TRANSPORT_URI_ERROR (thrift_transport_uri_error_quark ())
GQuark thrift_transport_uri_error_quark (void);

/* Parses URI for a client (FOR_SERVER FALSE: host required, client options) or a server.
 * Returns NULL with an error if it is not valid. */
ThriftTransportUri *thrift_transport_uri_parse (const gchar *uri, gboolean for_server,
                                                GError **error);
void thrift_transport_uri_free (ThriftTransportUri *uri);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ThriftTransportUri, thrift_transport_uri_free)

/* One line for people: "rdma 10.77.0.1:9090 (ThriftRdma, polling=busy)". */
gchar *thrift_transport_uri_describe (const ThriftTransportUri *uri);

/* The client transport stack for URI, ready for a protocol and not yet open: open it with
 * thrift_transport_open. NULL with an error if URI is not valid. The returned transport owns
 * what it wraps. */
ThriftTransport *thrift_transport_new_for_uri (const gchar *uri, GError **error);

/* The server transport for URI (not yet listening) and, if the pointers are not NULL, new
 * references to the transport factories the server must use for each connection (framed
 * for tcp by default, pass-through for rdma). NULL with an error if URI is not valid. */
ThriftServerTransport *thrift_server_transport_new_for_uri (const gchar *uri,
                                                            ThriftTransportFactory **input_factory,
                                                            ThriftTransportFactory **output_factory,
                                                            GError **error);

G_END_DECLS

#endif /* _THRIFT_TRANSPORT_URI_H */
