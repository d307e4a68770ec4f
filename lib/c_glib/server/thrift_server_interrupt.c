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
 * Waking blocked accepts and reads from another thread (see thrift_server_interrupt.h): the
 * transport wakes them itself (thrift_interruptible.h, which also knows stock sockets); one
 * it cannot wake is closed, the only way left to end its calls.
 */
#include "config.h"

#include <thrift/c_glib/transport/thrift_interruptible.h>

#include "thrift_server_interrupt.h"

gboolean
thrift_server_interrupt_accept (ThriftServerTransport *listener)
{
  if (thrift_interruptible_interrupt (G_OBJECT (listener)))
    return FALSE;
  thrift_server_transport_close (listener, NULL);
  return TRUE;
}

void
thrift_server_interrupt_connection (ThriftTransport *connection)
{
  if (!thrift_interruptible_interrupt (G_OBJECT (connection)))
    thrift_transport_close (connection, NULL);
}
