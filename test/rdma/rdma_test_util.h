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

/* Shared helpers of the ThriftRdma tests: addresses, an echo server thread, patterns. */
#ifndef _RDMA_TEST_UTIL_H
#define _RDMA_TEST_UTIL_H

#include <glib.h>
#include <thrift/c_glib/transport/thrift_hints.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/server/thrift_server.h>
#include <thrift/c_glib/transport/thrift_server_rdma.h>

const gchar *rt_server_addr (void);
const gchar *rt_client_addr (void);

/* Byte i of a payload of seed @seed: differs per offset and per call. */
static inline guint8
rt_pattern (guint seed, gsize i)
{
  return (guint8) ((i * 131u + seed * 17u + (i >> 8) + (i >> 16)) & 0xff);
}

/* What ThriftRdma puts before a message (its envelope byte: a plain message, nothing lent)
 * and a binary field's length: the bytes of a raw message before the payload. */
#define RT_RAW_HEADER 5
/* What rt_echo sends for @len payload bytes of seed @seed, for raw connections: ThriftRdma's
 * envelope byte and a Thrift binary (4-byte big-endian length, then the payload) in one
 * buffer of RT_RAW_HEADER + @len bytes. */
guint8 *rt_binary_new (gsize len, guint seed);

/* An echo server in a thread: every message is a binary field that is sent back.  Serves
 * connections one after the other until rt_echo_server_stop. */
typedef struct _RtEchoServer RtEchoServer;
/* @idle_timeout_ms: how long the server waits for a request (0: forever). */
RtEchoServer *rt_echo_server_start (ThriftRdmaPolling polling, guint max_message,
                                    guint idle_timeout_ms);
/* With a default hint set for the replies (NULL: none); @hints must outlive the server. */
RtEchoServer *rt_echo_server_start_hinted (ThriftRdmaPolling polling, guint max_message,
                                           const ThriftHintSet *hints);
guint rt_echo_server_port (RtEchoServer *srv);
/* Its ThriftServerRdma (properties set before a client connects apply to that client). */
ThriftServerTransport *rt_echo_server_transport (RtEchoServer *srv);
/* The counters of the last connection it served, as they were when it ended. */
void rt_echo_server_last_stats (RtEchoServer *srv, ThriftRdmaStats *out);
/* Connections served so far, and how many ended with an error. */
guint rt_echo_server_served (RtEchoServer *srv);
guint rt_echo_server_failed (RtEchoServer *srv);
/* Waits (up to 10 s) until every connection it accepted is counted in served: a connection
 * whose client closed releases its resources before the server counts it, so a count read
 * right after rt_resources_at_baseline may still be about to change. */
void rt_echo_server_settle (RtEchoServer *srv);
void rt_echo_server_stop (RtEchoServer *srv);

/* From now on the echo servers started and the clients made here lend no field (their
 * "bulk-threshold" is 0): for tests of how the protocols carry whole large messages, whose
 * copies, work requests and carriers bulk transfer would change. */
void rt_bulk_off (void);
/* The threshold they get: 0 after rt_bulk_off, else a client's default (the echo servers'
 * handlers keep a reply's bytes until its flush returns, so they may lend it too). */
guint rt_bulk_threshold (void);

/* Stock ThriftSimpleServer serving @processor on a ThriftServerRdma of default properties
 * (port 0: the CM's), in a thread, with @transport_factory and the binary protocol; started,
 * it listens. */
typedef struct
{
  ThriftServer *server;
  ThriftServerTransport *transport;
  GThread *thread;
} RtSimpleServer;
void rt_simple_server_start (RtSimpleServer *s, GObject *processor, GObject *transport_factory);
guint rt_simple_server_port (RtSimpleServer *s);
void rt_simple_server_stop (RtSimpleServer *s);

/* A client transport to the server. */
ThriftTransport *rt_client_new (guint port, ThriftRdmaPolling polling);
/* One echo of @len patterned bytes over @t, checking every byte; returns FALSE with @error. */
gboolean rt_echo (ThriftTransport *t, gsize len, guint seed, GError **error);

/* Packets sent by every RDMA device of the machine (soft-RoCE's hardware counters). */
guint64 rt_rdma_sent_packets (void);

/* One echo of the @len bytes at @buf, the caller's memory as it is (so that a test chooses
 * which buffers are lent); asserts that the reply is byte-exact. */
void rt_echo_buffer (ThriftTransport *t, const guint8 *buf, gsize len);

/* Live QPs + CQs + MRs + memory windows of the process (MRs and windows as the verbs table
 * counts them, the registration cache's included). */
gint rt_live_resources (void);
/* TRUE if they are back at @baseline; says what is left otherwise. */
gboolean rt_resources_at_baseline (gint baseline);

#endif
