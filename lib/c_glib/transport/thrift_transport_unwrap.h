/* Finding a transport under Thrift's wrapping transports. Internal to the library. */
#ifndef _THRIFT_TRANSPORT_UNWRAP_H
#define _THRIFT_TRANSPORT_UNWRAP_H

#include <thrift/c_glib/transport/thrift_transport.h>

G_BEGIN_DECLS

/* The first transport, from @transport inwards through ThriftBufferedTransport,
 * ThriftFramedTransport and ThriftZlibTransport, that is a @type (a class or an interface),
 * or NULL. A wrapper that is itself a @type wins over what it wraps. */
ThriftTransport *thrift_transport_find_wrapped (ThriftTransport *transport, GType type);

G_END_DECLS

#endif
