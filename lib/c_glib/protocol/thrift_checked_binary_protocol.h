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
 * thrift_checked_binary_protocol.h: Thrift's binary protocol, guarded against lengths that
 * the message cannot hold.
 *
 * Thrift 0.17's ThriftBinaryProtocol allocates a string or binary field at the length the
 * peer announces before reading it (g_new0), so one ~30-byte request that announces 2 GiB
 * makes GLib abort the process; and when a transport fails without setting an error (a
 * ThriftFramedTransport that reads a frame of length 0), its read_message_begin returns -1
 * with *error unset and ThriftDispatchProcessor dereferences it.
 *
 * It also takes a first word that is not negative for an old unversioned message header, reads
 * no more of it and succeeds with the name, type and seqid unset; and a container of an
 * element type it does not know sets an error and succeeds.  Nor does it bound how deep
 * structs and containers nest, while thrift_protocol_skip and generated readers recurse once
 * a level: one request of lists in lists, 5 bytes a level, takes a server thread's stack.
 *
 * ThriftCheckedBinaryProtocol is the same wire format.  Before it allocates a string or
 * binary field it asks the transport whether that many bytes can follow
 * (checkReadBytesAvailable: ThriftRdma knows the bytes left in the message; other transports
 * compare with the max message size) and allocates with g_try_malloc; it refuses unversioned
 * headers and element types the protocol does not have; it refuses a struct, list, set or map
 * nested deeper than the transport's ThriftConfiguration recursion_limit (without one,
 * DEFAULT_RECURSION_DEPTH: 64, the arguments' struct counting as the first) with
 * THRIFT_PROTOCOL_ERROR_DEPTH_LIMIT, counting from each message header; every read that fails
 * reports an error, and a header it could not read leaves no name.  ThriftThreadedServer uses
 * it by default and in place of a plain ThriftBinaryProtocolFactory; with ThriftSimpleServer
 * pass a ThriftCheckedBinaryProtocolFactory.
 */
#ifndef _THRIFT_CHECKED_BINARY_PROTOCOL_H
#define _THRIFT_CHECKED_BINARY_PROTOCOL_H

#include <glib-object.h>

#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol_factory.h>

G_BEGIN_DECLS

#define THRIFT_TYPE_CHECKED_BINARY_PROTOCOL (thrift_checked_binary_protocol_get_type ())
#define THRIFT_CHECKED_BINARY_PROTOCOL(obj)                                \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), THRIFT_TYPE_CHECKED_BINARY_PROTOCOL, \
                               ThriftCheckedBinaryProtocol))
#define THRIFT_IS_CHECKED_BINARY_PROTOCOL(obj) \
  (G_TYPE_CHECK_INSTANCE_TYPE ((obj), THRIFT_TYPE_CHECKED_BINARY_PROTOCOL))
#define THRIFT_CHECKED_BINARY_PROTOCOL_CLASS(c)                       \
  (G_TYPE_CHECK_CLASS_CAST ((c), THRIFT_TYPE_CHECKED_BINARY_PROTOCOL, \
                            ThriftCheckedBinaryProtocolClass))
#define THRIFT_IS_CHECKED_BINARY_PROTOCOL_CLASS(c) \
  (G_TYPE_CHECK_CLASS_TYPE ((c), THRIFT_TYPE_CHECKED_BINARY_PROTOCOL))
#define THRIFT_CHECKED_BINARY_PROTOCOL_GET_CLASS(obj)                     \
  (G_TYPE_INSTANCE_GET_CLASS ((obj), THRIFT_TYPE_CHECKED_BINARY_PROTOCOL, \
                              ThriftCheckedBinaryProtocolClass))

typedef struct _ThriftCheckedBinaryProtocol ThriftCheckedBinaryProtocol;
typedef struct _ThriftCheckedBinaryProtocolClass ThriftCheckedBinaryProtocolClass;

struct _ThriftCheckedBinaryProtocol
{
  ThriftBinaryProtocol parent;
};

struct _ThriftCheckedBinaryProtocolClass
{
  ThriftBinaryProtocolClass parent;
};

GType thrift_checked_binary_protocol_get_type (void);

/* The factory: a ThriftBinaryProtocolFactory whose protocols are checked. */
#define THRIFT_TYPE_CHECKED_BINARY_PROTOCOL_FACTORY \
  (thrift_checked_binary_protocol_factory_get_type ())
#define THRIFT_CHECKED_BINARY_PROTOCOL_FACTORY(obj)                                \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), THRIFT_TYPE_CHECKED_BINARY_PROTOCOL_FACTORY, \
                               ThriftCheckedBinaryProtocolFactory))
#define THRIFT_IS_CHECKED_BINARY_PROTOCOL_FACTORY(obj) \
  (G_TYPE_CHECK_INSTANCE_TYPE ((obj), THRIFT_TYPE_CHECKED_BINARY_PROTOCOL_FACTORY))
#define THRIFT_CHECKED_BINARY_PROTOCOL_FACTORY_CLASS(c)                       \
  (G_TYPE_CHECK_CLASS_CAST ((c), THRIFT_TYPE_CHECKED_BINARY_PROTOCOL_FACTORY, \
                            ThriftCheckedBinaryProtocolFactoryClass))
#define THRIFT_IS_CHECKED_BINARY_PROTOCOL_FACTORY_CLASS(c) \
  (G_TYPE_CHECK_CLASS_TYPE ((c), THRIFT_TYPE_CHECKED_BINARY_PROTOCOL_FACTORY))
#define THRIFT_CHECKED_BINARY_PROTOCOL_FACTORY_GET_CLASS(obj)                     \
  (G_TYPE_INSTANCE_GET_CLASS ((obj), THRIFT_TYPE_CHECKED_BINARY_PROTOCOL_FACTORY, \
                              ThriftCheckedBinaryProtocolFactoryClass))

typedef struct _ThriftCheckedBinaryProtocolFactory ThriftCheckedBinaryProtocolFactory;
typedef struct _ThriftCheckedBinaryProtocolFactoryClass ThriftCheckedBinaryProtocolFactoryClass;

struct _ThriftCheckedBinaryProtocolFactory
{
  ThriftBinaryProtocolFactory parent;
};

struct _ThriftCheckedBinaryProtocolFactoryClass
{
  ThriftBinaryProtocolFactoryClass parent;
};

GType thrift_checked_binary_protocol_factory_get_type (void);

G_END_DECLS

#endif /* _THRIFT_CHECKED_BINARY_PROTOCOL_H */
