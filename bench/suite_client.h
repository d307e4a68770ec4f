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
 * suite_client.h: the client side of the benchmark suite's service (bench/suite.thrift): its
 * functions by name, a connection to a server, and which hinted variant of a function tells
 * the truth about a number of clients on this machine.
 */
#ifndef _SUITE_CLIENT_H
#define _SUITE_CLIENT_H

#include <glib-object.h>
#include <thrift/c_glib/protocol/thrift_protocol.h>
#include <thrift/c_glib/transport/thrift_rdma.h>

#include "bench_suite.h"

G_BEGIN_DECLS

/* The values of the proto hint, in the IDL's order: X(name) for each.  The last, eager_rndv,
 * is the pair of eager (up to 4 KiB) and read_rndv (above): the HatRPC paper's
 * Hybrid-EagerRNDV baseline, whose columns move whole messages (suite_uri_whole_messages). */
#define SUITE_PROTOCOLS(X) \
  X (eager)                \
  X (write_rndv)           \
  X (read_rndv)            \
  X (direct_write_send)    \
  X (chained_write_send)   \
  X (direct_write_imm)     \
  X (rfp)                  \
  X (batched_write)        \
  X (eager_rndv)

/* The proto hint spellings, NULL-terminated. */
extern const gchar *const suite_protocol_names[];

/* "dw_imm" for "direct_write_imm" and so on: table columns; other names as they are.
 * "e+r_rndv" for the pair "eager_rndv". */
const gchar *suite_proto_short (const gchar *proto);

/* TRUE if @function forces the pair eager_rndv (the Hybrid-EagerRNDV baseline). */
gboolean suite_function_is_eager_rndv (const gchar *function);

/* @uri (rdma://) with bulk transfer off ("bulk=0"), for the Hybrid-EagerRNDV columns: the
 * baseline (AR-gRPC) sends each message whole, by eager or by read_rndv, where the client's
 * default would lend a large field out of its message and leave the message small.  Other
 * URIs are returned as they are.  Free with g_free (). */
gchar *suite_uri_whole_messages (const gchar *uri);

/* One of the echo functions of the service. */
typedef struct _SuiteFunction SuiteFunction;

/* The echo function called @name ("echo_plan", "mix_tput_rfp", ...), or NULL. */
const SuiteFunction *suite_function_find (const gchar *name);

/* An open connection: the transport the URI asks for, a binary protocol, a client. */
typedef struct
{
  gchar *uri;
  ThriftTransport *transport;
  ThriftProtocol *protocol;
  BenchSuiteIf *client;
} SuiteConn;

/* Opens a connection to @uri; NULL with @error if it cannot. */
SuiteConn *suite_conn_open (const gchar *uri, GError **error);
/* Closes and frees @c (NULL is fine). */
void suite_conn_free (SuiteConn *c);
/* The ThriftRdma under @c (a hybrid:// connection's RDMA leg), NULL for tcp://. */
ThriftRdma *suite_conn_rdma (SuiteConn *c);

/* The leg the last call on @c took: "rdma" or "tcp" (hybrid://: thrift_hybrid_get_last_leg). */
const gchar *suite_conn_leg (SuiteConn *c);

/* One call of @f with @data on @c, as the generated client makes it (send, then receive),
 * with the protocol that carried the request and the one that carried the reply read
 * (thrift_rdma_get_protocol_name) after each half: "" for tcp://.  @ret gets the reply.
 * FALSE with @error if the call failed. */
gboolean suite_call (SuiteConn *c, const SuiteFunction *f, const GByteArray *data, GByteArray **ret,
                     const gchar **request_proto, const gchar **reply_proto, GError **error);

/* TRUE if @clients concurrent calls are "under-subscription" on this machine (at most the
 * cores of one NUMA node, as the engine compares the concurrency hint), so that the hinted
 * variant with concurrency = 1 tells the truth; FALSE: the one with concurrency = 64. */
gboolean suite_clients_under (guint clients);

/* The transport a column's CSV rows name: "rsocket" for the rsocket column (tcp:// carried by
 * librspreload), else "rdma" or "tcp" by @uri. */
const gchar *suite_column_transport (const gchar *label, const gchar *uri);

/* The server's CPU seconds and benchmark calls so far (the usage function). */
typedef struct
{
  double cpu_s;                    /* user and system */
  gint64 calls, wakeups, switches; /* ServerUsage's (suite.thrift) */
} SuiteServerUsage;
gboolean suite_server_usage (SuiteConn *c, SuiteServerUsage *out, GError **error);

G_END_DECLS

#endif
