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
