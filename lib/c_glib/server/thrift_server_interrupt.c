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
 * Waking blocked accepts and reads from another thread (see thrift_server_interrupt.h).
 *
 * ThriftServerSocket and ThriftSocket: shutdown (2) of the descriptor wakes accept (EINVAL)
 * and recv (end of file) at once, and leaves the descriptor to its owner to close, so a
 * descriptor number is never reused under a thread that still uses it. close (2) would not
 * wake a thread blocked in accept on Linux.
 *
 * ThriftServerRdma: thrift_server_rdma_interrupt () (an eventfd its accept polls).
 * ThriftRdma: thrift_rdma_interrupt () (an eventfd its waits poll, and a flag its spinning
 * checks); closing it under a waiting thread would free verbs resources in use.  Found
 * under any buffered, framed or zlib wrapper a transport factory added.
 */
#include "config.h"

#include <sys/socket.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/transport/thrift_server_socket.h>
#include <thrift/c_glib/transport/thrift_socket.h>
#include <thrift/c_glib/transport/thrift_hybrid.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_server_hybrid.h>
#include <thrift/c_glib/transport/thrift_server_rdma.h>

#include "../transport/thrift_transport_unwrap.h"
#include "thrift_server_interrupt.h"

gboolean
thrift_server_interrupt_accept (ThriftServerTransport *listener)
{
  if (THRIFT_IS_SERVER_SOCKET (listener))
  {
    ThriftServerSocket *s = THRIFT_SERVER_SOCKET (listener);
    if (s->sd != THRIFT_INVALID_SOCKET)
      shutdown (s->sd, SHUT_RDWR);
    return FALSE;
  }
  if (THRIFT_IS_SERVER_RDMA (listener))
  {
    thrift_server_rdma_interrupt (THRIFT_SERVER_RDMA (listener));
    return FALSE;
  }
  if (THRIFT_IS_SERVER_HYBRID (listener))
  {
    thrift_server_hybrid_interrupt (THRIFT_SERVER_HYBRID (listener));
    return FALSE;
  }
  thrift_server_transport_close (listener, NULL);
  return TRUE;
}

void
thrift_server_interrupt_connection (ThriftTransport *connection)
{
  ThriftTransport *rdma;

  if (THRIFT_IS_SOCKET (connection))
  {
    ThriftSocket *s = THRIFT_SOCKET (connection);
    if (s->sd != THRIFT_INVALID_SOCKET)
      shutdown (s->sd, SHUT_RDWR);
    return;
  }
  if (THRIFT_IS_HYBRID (connection))
  {
    thrift_hybrid_interrupt (THRIFT_HYBRID (connection));
    return;
  }
  rdma = thrift_transport_find_wrapped (connection, THRIFT_TYPE_RDMA);
  if (rdma != NULL)
  {
    thrift_rdma_interrupt (THRIFT_RDMA (rdma));
    return;
  }
  thrift_transport_close (connection, NULL);
}
