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

/* thrift_interruptible.c: waking blocked calls from another thread (see
 * thrift_interruptible.h). */
#include "config.h"

#include <sys/socket.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/transport/thrift_server_socket.h>
#include <thrift/c_glib/transport/thrift_socket.h>

#include <thrift/c_glib/transport/thrift_interruptible.h>

#include "thrift_transport_unwrap.h"

G_DEFINE_INTERFACE (ThriftInterruptible, thrift_interruptible, G_TYPE_OBJECT)

static void
thrift_interruptible_default_init (ThriftInterruptibleInterface *iface)
{
  (void) iface;
}

static void
shut_down (int sd)
{
  /* a closed one has nobody blocked on it */
  if (sd != THRIFT_INVALID_SOCKET)
    shutdown (sd, SHUT_RDWR);
}

gboolean
thrift_interruptible_interrupt (GObject *transport)
{
  GObject *inner = transport;

  g_return_val_if_fail (G_IS_OBJECT (transport), FALSE);

  /* a connection is a ThriftInterruptible or socket under what a transport factory added */
  if (THRIFT_IS_TRANSPORT (transport))
  {
    ThriftTransport *t = thrift_transport_find_wrapped (THRIFT_TRANSPORT (transport),
                                                        THRIFT_TYPE_INTERRUPTIBLE);
    if (t == NULL)
      t = thrift_transport_find_wrapped (THRIFT_TRANSPORT (transport), THRIFT_TYPE_SOCKET);
    inner = (GObject *) t;
  }
  if (inner == NULL)
    return FALSE;
  if (THRIFT_IS_INTERRUPTIBLE (inner))
  {
    ThriftInterruptibleInterface *iface = THRIFT_INTERRUPTIBLE_GET_INTERFACE (inner);
    if (iface->interrupt == NULL)
      return FALSE;
    iface->interrupt (THRIFT_INTERRUPTIBLE (inner));
    return TRUE;
  }
  /* stock sockets cannot implement the interface */
  if (THRIFT_IS_SOCKET (inner))
  {
    shut_down (THRIFT_SOCKET (inner)->sd);
    return TRUE;
  }
  if (THRIFT_IS_SERVER_SOCKET (inner))
  {
    shut_down (THRIFT_SERVER_SOCKET (inner)->sd);
    return TRUE;
  }
  return FALSE;
}
