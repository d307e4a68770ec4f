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
 * fuzz_hybrid_peer.c: a client's bytes on a hybrid:// server's TCP port, read the way
 * ThriftServerHybrid reads them (thrift_server_hybrid.c, leg_readable): the first byte,
 * peeked, tells a hybrid client (the HELLO's magic) from a stock framed or buffered Thrift
 * client; a hybrid client's HELLO and COMMIT follow, then framed requests; a stock client's
 * bytes are its requests, through the transport the server gives it (checked framed or
 * buffered) and ThriftCheckedBinaryProtocol.  Requests are read until the first error
 * (fuzz_thrift.h).
 */
#include "config.h"

#include <errno.h>
#include <sys/socket.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/protocol/thrift_checked_binary_protocol.h>
#include <thrift/c_glib/transport/thrift_buffered_transport.h>
#include <thrift/c_glib/transport/thrift_checked_framed_transport.h>

#include "lib/c_glib/transport/hybrid/hybrid_wire.h"
#include "test/fuzz/fuzz_common.h"
#include "test/fuzz/fuzz_thrift.h"

/* Exactly @len bytes of the handshake, or FALSE: the client closed before (the server drops
 * the connection). */
static gboolean
recv_exactly (int fd, guint8 *buf, gsize len)
{
  gsize got = 0;

  while (got < len)
  {
    ssize_t n = recv (fd, buf + got, len - got, 0);

    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return FALSE;
    got += (gsize) n;
  }
  return TRUE;
}

/* The hybrid client's HELLO and COMMIT; TRUE if the server would hand the connection out. */
static gboolean
handshake (int fd)
{
  guint8 buf[HYBRID_HELLO_LEN];
  HybridMessage m;
  GError *error = NULL;
  gboolean ok;

  if (!recv_exactly (fd, buf, HYBRID_HELLO_LEN))
    return FALSE;
  ok = hybrid_wire_parse_hello (buf, HYBRID_HELLO_LEN, &m, &error);
  fuzz_check_outcome ("hybrid_wire_parse_hello", ok, &error);
  /* (the server answers with its WELCOME here) */
  if (!ok || !recv_exactly (fd, buf, HYBRID_COMMIT_LEN))
    return FALSE;
  ok = hybrid_wire_parse_commit (buf, HYBRID_COMMIT_LEN, &m, &error);
  fuzz_check_outcome ("hybrid_wire_parse_commit", ok, &error);
  /* an RDMA commit is handed out once its RDMA leg arrives: the TCP leg reads the same */
  return ok;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  ThriftSocket *socket;
  ThriftTransport *transport = NULL;
  ThriftProtocol *protocol;
  guint8 first;
  HybridPeer peer = HYBRID_PEER_HYBRID;
  gboolean framed = TRUE;

  fuzz_init ();
  socket = fuzz_peer_socket (data, size);
  /* as the server: a byte peeked (none: the client closed, taken for a hybrid one) */
  if (recv (socket->sd, &first, 1, MSG_PEEK) == 1)
    peer = hybrid_wire_first_byte (first);
  if (peer == HYBRID_PEER_HYBRID)
  {
    if (!handshake (socket->sd))
      goto out;
  }
  else
  {
    framed = peer == HYBRID_PEER_FRAMED;
  }
  transport = g_object_new (framed ? THRIFT_TYPE_CHECKED_FRAMED_TRANSPORT
                                   : THRIFT_TYPE_BUFFERED_TRANSPORT,
                            "transport", socket, NULL);
  protocol = g_object_new (THRIFT_TYPE_CHECKED_BINARY_PROTOCOL, "transport", transport, NULL);
  fuzz_read_requests (protocol);
  g_object_unref (protocol);
out:
  if (transport != NULL)
    g_object_unref (transport);
  g_object_unref (socket);
  return 0;
}

/* a stock framed client's call of "f" with empty arguments */
FUZZ_THRIFT_OBJECTS ("\0\0\0\x0e\x80\x01\0\x01\0\0\0\x01"
                     "f\0\0\0\x01\0")
