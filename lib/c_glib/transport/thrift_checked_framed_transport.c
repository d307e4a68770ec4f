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
 * thrift_checked_framed_transport.c: ThriftCheckedFramedTransport and its factory (see
 * thrift_checked_framed_transport.h).
 */
#include "config.h"

#include <string.h>

#include <thrift/c_glib/thrift.h>

#include <thrift/c_glib/transport/thrift_checked_framed_transport.h>

G_DEFINE_TYPE (ThriftCheckedFramedTransport, thrift_checked_framed_transport,
               THRIFT_TYPE_FRAMED_TRANSPORT)
G_DEFINE_TYPE (ThriftCheckedFramedTransportFactory, thrift_checked_framed_transport_factory,
               THRIFT_TYPE_FRAMED_TRANSPORT_FACTORY)

/* implements thrift_transport_read: the parent's, except where its slow path would copy
 * the rest of a frame from the wrong place */
static gint32
thrift_checked_framed_transport_read (ThriftTransport *transport, gpointer buf, guint32 len,
                                      GError **error)
{
  ThriftFramedTransport *t = THRIFT_FRAMED_TRANSPORT (transport);
  ThriftTransportClass *parent = THRIFT_TRANSPORT_CLASS (
      thrift_checked_framed_transport_parent_class);
  guint32 have = t->r_buf->len;
  gint32 got;

  if (have == 0 || len <= have)
  {
    got = parent->read (transport, buf, len, error);
  }
  else
  {
    if (!THRIFT_TRANSPORT_GET_CLASS (transport)->checkReadBytesAvailable (transport, len, error))
      return -1;
    /* the rest of this frame, then the parent's read from an empty buffer: the next frame */
    memcpy (buf, t->r_buf->data, have);
    g_byte_array_set_size (t->r_buf, 0);
    got = parent->read (transport, (guint8 *) buf + have, len - have, error);
    if (got >= 0)
      got += (gint32) have;
  }
  /* the parent fails a frame of length 0 without a reason: every read that fails says why
   * (a request's field after such a frame: test/fuzz/regress/checked_binary) */
  if (got < 0 && error != NULL && *error == NULL)
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                 "reading a frame failed and the transport gave no reason (a frame of "
                 "length 0)");
  return got;
}

static void
thrift_checked_framed_transport_class_init (ThriftCheckedFramedTransportClass *cls)
{
  THRIFT_TRANSPORT_CLASS (cls)->read = thrift_checked_framed_transport_read;
}

static void
thrift_checked_framed_transport_init (ThriftCheckedFramedTransport *self)
{
}

static ThriftTransport *
thrift_checked_framed_transport_factory_get_transport (ThriftTransportFactory *factory,
                                                       ThriftTransport *transport)
{
  return THRIFT_TRANSPORT (
      g_object_new (THRIFT_TYPE_CHECKED_FRAMED_TRANSPORT, "transport", transport, NULL));
}

static void
thrift_checked_framed_transport_factory_class_init (ThriftCheckedFramedTransportFactoryClass *cls)
{
  THRIFT_TRANSPORT_FACTORY_CLASS (cls)->get_transport =
      thrift_checked_framed_transport_factory_get_transport;
  THRIFT_FRAMED_TRANSPORT_FACTORY_CLASS (cls)->get_transport =
      thrift_checked_framed_transport_factory_get_transport;
}

static void
thrift_checked_framed_transport_factory_init (ThriftCheckedFramedTransportFactory *self)
{
}
