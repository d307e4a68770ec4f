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
 * fuzz_thrift.h: what the Thrift harnesses share: a socket whose peer sent the input and
 * closed (as a server's accepted connection sees a client), and a server's reading of
 * requests from a protocol on it.
 */
#ifndef _FUZZ_THRIFT_H
#define _FUZZ_THRIFT_H

#include <thrift/c_glib/protocol/thrift_protocol.h>
#include <thrift/c_glib/transport/thrift_socket.h>

G_BEGIN_DECLS

/* Stock Thrift 0.17's ThriftSocket, ThriftServerSocket, ThriftFramedTransport (so
 * ThriftCheckedFramedTransport) and ThriftBufferedTransport do not chain their finalize up to
 * GObject's, so the notify queue g_object_unref attaches to each object (48 bytes) is never
 * freed, and LeakSanitizer would report every input.  Before any object is made, this chains
 * them up, so that what is left is what an input leaks. */
void fuzz_thrift_init (void);

/* A connected ThriftSocket from which @size bytes at @data can be read, then the end of the
 * stream (the peer closed).  Unref it when done; it closes its descriptor. */
ThriftSocket *fuzz_peer_socket (const guint8 *data, gsize size);

/* Reads requests from @protocol as ThriftDispatchProcessor and the code c_glib's generator
 * writes do (message header, the arguments' struct field by field, message end, the
 * transport's read_end) until the first error, checking each answer (fuzz_common.h) and that
 * a header read gives the dispatcher a name.  It reads on a thread of a 512 KiB stack, so
 * that nesting as deep as an input can make it overflows where it is not bounded. */
void fuzz_read_requests (ThriftProtocol *protocol);

G_END_DECLS

#endif /* _FUZZ_THRIFT_H */
