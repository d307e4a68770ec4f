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

/* Finding a transport under Thrift's wrapping transports. Internal to the library. */
#ifndef _THRIFT_TRANSPORT_UNWRAP_H
#define _THRIFT_TRANSPORT_UNWRAP_H

#include <thrift/c_glib/transport/thrift_transport.h>

G_BEGIN_DECLS

/* The first transport, from @transport inwards through ThriftBufferedTransport,
 * ThriftFramedTransport and ThriftZlibTransport, that is a @type (a class or an interface),
 * or NULL. A wrapper that is itself a @type wins over what it wraps.  Internal: not
 * exported from the shared library, whatever its name (G_GNUC_INTERNAL). */
G_GNUC_INTERNAL
ThriftTransport *thrift_transport_find_wrapped (ThriftTransport *transport, GType type);

G_END_DECLS

#endif
