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
 * thrift_checked_framed_transport.h: Thrift's framed transport, with reads that cross a
 * frame's end returning the right bytes.
 *
 * Thrift 0.17's ThriftFramedTransport (thrift_framed_transport_read_slow) copies what is
 * left of the current frame from the GByteArray's header instead of its data (the bug
 * upstream fixed in 0.24, THRIFT-6094).  A peer reaches it with a field that continues into
 * the next frame: a 100-byte binary echoed by a tcp:// server, its first frame ending 16
 * bytes into the binary, came back with those 16 bytes replaced by the frame buffer's heap
 * address, length and allocation (test_hybrid, /hybrid/tcp-alone/split-frames), and a rest
 * longer than the header reads beyond it.
 *
 * ThriftCheckedFramedTransport is the same wire format; a read that needs more than the
 * frame holds takes the rest of the frame from its data, then reads on from the next frame.
 * A read that fails says why (the parent fails a frame of length 0 without an error).
 * tcp:// URIs, the TCP leg of hybrid:// and ThriftThreadedServer (in place of a plain
 * ThriftFramedTransportFactory) use it.  Debian's ThriftBufferedTransport has the same line
 * but never reaches it: its read buffer never holds more than the read asked for.
 */
#ifndef _THRIFT_CHECKED_FRAMED_TRANSPORT_H
#define _THRIFT_CHECKED_FRAMED_TRANSPORT_H

#include <glib-object.h>

#include <thrift/c_glib/transport/thrift_framed_transport.h>
#include <thrift/c_glib/transport/thrift_framed_transport_factory.h>

G_BEGIN_DECLS

#define THRIFT_TYPE_CHECKED_FRAMED_TRANSPORT (thrift_checked_framed_transport_get_type ())
#define THRIFT_CHECKED_FRAMED_TRANSPORT(obj)                                \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), THRIFT_TYPE_CHECKED_FRAMED_TRANSPORT, \
                               ThriftCheckedFramedTransport))
#define THRIFT_IS_CHECKED_FRAMED_TRANSPORT(obj) \
  (G_TYPE_CHECK_INSTANCE_TYPE ((obj), THRIFT_TYPE_CHECKED_FRAMED_TRANSPORT))

typedef struct _ThriftCheckedFramedTransport ThriftCheckedFramedTransport;
typedef struct _ThriftCheckedFramedTransportClass ThriftCheckedFramedTransportClass;

struct _ThriftCheckedFramedTransport
{
  ThriftFramedTransport parent;
};

struct _ThriftCheckedFramedTransportClass
{
  ThriftFramedTransportClass parent;
};

GType thrift_checked_framed_transport_get_type (void);

/* The factory: a ThriftFramedTransportFactory whose transports are checked. */
#define THRIFT_TYPE_CHECKED_FRAMED_TRANSPORT_FACTORY \
  (thrift_checked_framed_transport_factory_get_type ())
#define THRIFT_CHECKED_FRAMED_TRANSPORT_FACTORY(obj)                                \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), THRIFT_TYPE_CHECKED_FRAMED_TRANSPORT_FACTORY, \
                               ThriftCheckedFramedTransportFactory))
#define THRIFT_IS_CHECKED_FRAMED_TRANSPORT_FACTORY(obj) \
  (G_TYPE_CHECK_INSTANCE_TYPE ((obj), THRIFT_TYPE_CHECKED_FRAMED_TRANSPORT_FACTORY))

typedef struct _ThriftCheckedFramedTransportFactory ThriftCheckedFramedTransportFactory;
typedef struct _ThriftCheckedFramedTransportFactoryClass ThriftCheckedFramedTransportFactoryClass;

struct _ThriftCheckedFramedTransportFactory
{
  ThriftFramedTransportFactory parent;
};

struct _ThriftCheckedFramedTransportFactoryClass
{
  ThriftFramedTransportFactoryClass parent;
};

GType thrift_checked_framed_transport_factory_get_type (void);

G_END_DECLS

#endif /* _THRIFT_CHECKED_FRAMED_TRANSPORT_H */
