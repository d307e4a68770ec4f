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
 * fuzz_checked_binary.c: a client's bytes as a tcp:// server or ThriftThreadedServer reads
 * them: ThriftCheckedFramedTransport over the accepted ThriftSocket, ThriftCheckedBinaryProtocol
 * on it, requests read until the first error (fuzz_thrift.h).  Every way a request can be
 * wrong ends in a GError: no crash, no leak, no abort, no failure without a reason.
 */
#include "config.h"

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/protocol/thrift_checked_binary_protocol.h>
#include <thrift/c_glib/transport/thrift_checked_framed_transport.h>

#include "test/fuzz/fuzz_common.h"
#include "test/fuzz/fuzz_thrift.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  ThriftSocket *socket;
  ThriftTransport *framed;
  ThriftProtocol *protocol;

  fuzz_init ();
  socket = fuzz_peer_socket (data, size);
  framed = g_object_new (THRIFT_TYPE_CHECKED_FRAMED_TRANSPORT, "transport", socket, NULL);
  protocol = g_object_new (THRIFT_TYPE_CHECKED_BINARY_PROTOCOL, "transport", framed, NULL);
  fuzz_read_requests (protocol);
  g_object_unref (protocol);
  g_object_unref (framed);
  g_object_unref (socket);
  return 0;
}

/* a frame with a call of "f" and its empty arguments */
FUZZ_THRIFT_OBJECTS ("\0\0\0\x0e\x80\x01\0\x01\0\0\0\x01"
                     "f\0\0\0\x01\0")
