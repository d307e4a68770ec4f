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

#include "config.h"

#include <thrift/c_glib/transport/thrift_buffered_transport.h>
#include <thrift/c_glib/transport/thrift_framed_transport.h>
#include <thrift/c_glib/transport/thrift_zlib_transport.h>

#include "thrift_transport_unwrap.h"

ThriftTransport *
thrift_transport_find_wrapped (ThriftTransport *transport, GType type)
{
  /* Bounded, in case a wrapper ever wraps itself. */
  for (int depth = 0; transport != NULL && depth < 16; depth++)
  {
    if (G_TYPE_CHECK_INSTANCE_TYPE (transport, type))
      return transport;
    if (THRIFT_IS_BUFFERED_TRANSPORT (transport))
      transport = THRIFT_BUFFERED_TRANSPORT (transport)->transport;
    else if (THRIFT_IS_FRAMED_TRANSPORT (transport))
      transport = THRIFT_FRAMED_TRANSPORT (transport)->transport;
    else if (THRIFT_IS_ZLIB_TRANSPORT (transport))
      transport = THRIFT_ZLIB_TRANSPORT (transport)->transport;
    else
      return NULL;
  }
  return NULL;
}
