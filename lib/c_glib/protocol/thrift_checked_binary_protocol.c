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
 * thrift_checked_binary_protocol.c: ThriftCheckedBinaryProtocol and its factory (see
 * thrift_checked_binary_protocol.h).
 */
#include "config.h"

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/thrift_configuration.h>
#include <thrift/c_glib/protocol/thrift_protocol.h>

#include <thrift/c_glib/protocol/thrift_checked_binary_protocol.h>

typedef struct
{
  /* structs and containers open in the message being read: set to 0 by its header, since a
   * read that fails leaves its levels open */
  gint depth;
} ThriftCheckedBinaryProtocolPrivate;

G_DEFINE_TYPE_WITH_PRIVATE (ThriftCheckedBinaryProtocol, thrift_checked_binary_protocol,
                            THRIFT_TYPE_BINARY_PROTOCOL)
G_DEFINE_TYPE (ThriftCheckedBinaryProtocolFactory, thrift_checked_binary_protocol_factory,
               THRIFT_TYPE_BINARY_PROTOCOL_FACTORY)

#define PRIV(p)                                                                                 \
  ((ThriftCheckedBinaryProtocolPrivate *) thrift_checked_binary_protocol_get_instance_private ( \
      (ThriftCheckedBinaryProtocol *) (p)))

/* A read that failed must say why: callers (ThriftDispatchProcessor) dereference *error. */
static void
ensure_error (GError **error, const gchar *what)
{
  if (error != NULL && *error == NULL)
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                 "reading %s failed and the transport gave no reason (a framed transport "
                 "does so on a frame of length 0)",
                 what);
}

/* Reads a length and allocates @extra more bytes than it says, once the transport agrees
 * that that many bytes can follow.  Returns the bytes read, or -1 with @error. */
static gint32
read_sized (ThriftProtocol *protocol, const gchar *what, guint extra, gpointer *out, gint32 *len,
            GError **error)
{
  ThriftTransport *t = protocol->transport;
  gint32 ret;

  *out = NULL;
  *len = 0;
  if ((ret = thrift_protocol_read_i32 (protocol, len, error)) < 0)
  {
    ensure_error (error, what);
    return -1;
  }
  if (*len < 0)
  {
    g_set_error (error, THRIFT_PROTOCOL_ERROR, THRIFT_PROTOCOL_ERROR_NEGATIVE_SIZE,
                 "a %s field announces a negative size (%d)", what, *len);
    return -1;
  }
  if (!THRIFT_TRANSPORT_GET_CLASS (t)->checkReadBytesAvailable (t, *len, error))
  {
    ensure_error (error, what);
    g_prefix_error (error, "a %s field announces %d bytes, more than the message holds: ", what,
                    *len);
    return -1;
  }
  if (*len == 0 && extra == 0)
    return ret;
  *out = g_try_malloc ((gsize) *len + extra);
  if (*out == NULL)
  {
    g_set_error (error, THRIFT_PROTOCOL_ERROR, THRIFT_PROTOCOL_ERROR_SIZE_LIMIT,
                 "out of memory for a %d-byte %s field", *len, what);
    return -1;
  }
  if (*len > 0 && thrift_transport_read_all (t, *out, (guint32) *len, error) < 0)
  {
    ensure_error (error, what);
    g_free (*out);
    *out = NULL;
    return -1;
  }
  return ret + *len;
}

static gint32
thrift_checked_binary_protocol_read_string (ThriftProtocol *protocol, gchar **str, GError **error)
{
  gpointer buf;
  gint32 len;
  gint32 ret = read_sized (protocol, "string", 1, &buf, &len, error);

  *str = buf;
  if (ret >= 0)
    (*str)[len] = '\0';
  return ret;
}

static gint32
thrift_checked_binary_protocol_read_binary (ThriftProtocol *protocol, gpointer *buf, guint32 *len,
                                            GError **error)
{
  gint32 n;
  gint32 ret = read_sized (protocol, "binary", 0, buf, &n, error);

  *len = ret >= 0 ? (guint32) n : 0;
  return ret;
}

/* The least bytes an element of @type takes (Thrift 0.17's figures), -1 for a type the binary
 * protocol does not have. */
static gint
least_size (gint8 type)
{
  switch (type)
  {
  case T_STOP:
  case T_VOID:
  case T_STRUCT:
    return 0;
  case T_BOOL:
  case T_BYTE:
    return 1;
  case T_I16:
    return 2;
  case T_I32:
  case T_STRING:
  case T_MAP:
  case T_SET:
  case T_LIST:
    return 4;
  case T_DOUBLE:
  case T_I64:
    return 8;
  default:
    return -1;
  }
}

/* Opens a struct or container (@what) unless as many as the limit are open: the transport's
 * ThriftConfiguration recursion_limit, else Thrift's DEFAULT_RECURSION_DEPTH (64).  Thrift 0.17
 * counts nothing: thrift_protocol_skip and generated readers recurse once per level, and a
 * request of containers each in the one before, a few bytes a level, takes the reading
 * thread's whole stack (100,000 levels crash a server's worker of 8 MiB). */
static gboolean
nest (ThriftProtocol *protocol, const gchar *what, GError **error)
{
  ThriftCheckedBinaryProtocolPrivate *priv = PRIV (protocol);
  ThriftConfiguration *conf = protocol->transport->configuration;
  gint limit = conf != NULL ? conf->recursionLimit_ : DEFAULT_RECURSION_DEPTH;

  if (priv->depth >= limit)
  {
    g_set_error (error, THRIFT_PROTOCOL_ERROR, THRIFT_PROTOCOL_ERROR_DEPTH_LIMIT,
                 "a %s nested %d deep, more than the limit of %d", what, priv->depth + 1, limit);
    return FALSE;
  }
  priv->depth++;
  return TRUE;
}

static void
unnest (ThriftProtocol *protocol)
{
  ThriftCheckedBinaryProtocolPrivate *priv = PRIV (protocol);

  if (priv->depth > 0)
    priv->depth--;
}

static gint32
thrift_checked_binary_protocol_read_struct_begin (ThriftProtocol *protocol, gchar **name,
                                                  GError **error)
{
  *name = NULL;
  return nest (protocol, "struct", error) ? 0 : -1;
}

/* implements read_struct_end, read_list_end, read_set_end and read_map_end: the binary
 * protocol reads nothing there */
static gint32
thrift_checked_binary_protocol_read_end (ThriftProtocol *protocol, GError **error)
{
  unnest (protocol);
  return 0;
}

/* A container's @n_types element types and its size, checked before any element is read.
 * Thrift 0.17 sets an error for an element type it does not know and succeeds all the same
 * (the next error is set over it: a GLib warning, the reason lost; test/fuzz/regress/
 * checked_binary), and multiplies the size in a gint32 that overflows. */
static gint32
read_container (ThriftProtocol *protocol, const gchar *what, guint n_types, gint8 *types,
                guint32 *size, GError **error)
{
  ThriftTransport *t = protocol->transport;
  gint32 ret, xfer = 0, n;
  glong least = 0;

  for (guint i = 0; i < n_types; i++)
  {
    if ((ret = thrift_protocol_read_byte (protocol, &types[i], error)) < 0)
    {
      ensure_error (error, what);
      return -1;
    }
    xfer += ret;
  }
  if ((ret = thrift_protocol_read_i32 (protocol, &n, error)) < 0)
  {
    ensure_error (error, what);
    return -1;
  }
  xfer += ret;
  if (n < 0)
  {
    g_set_error (error, THRIFT_PROTOCOL_ERROR, THRIFT_PROTOCOL_ERROR_NEGATIVE_SIZE,
                 "a %s announces a negative size (%d)", what, n);
    return -1;
  }
  for (guint i = 0; i < n_types; i++)
  {
    if (least_size (types[i]) < 0)
    {
      g_set_error (error, THRIFT_PROTOCOL_ERROR, THRIFT_PROTOCOL_ERROR_INVALID_DATA,
                   "a %s of elements of type %d, which the binary protocol does not have", what,
                   types[i]);
      return -1;
    }
    least += (glong) n * least_size (types[i]);
  }
  if (!THRIFT_TRANSPORT_GET_CLASS (t)->checkReadBytesAvailable (t, least, error))
  {
    ensure_error (error, what);
    g_prefix_error (error, "a %s of %d elements, more than the message holds: ", what, n);
    return -1;
  }
  *size = (guint32) n;
  return xfer;
}

/* A list's or set's head (the same bytes), nested as @what. */
static gint32
read_sequence (ThriftProtocol *protocol, const gchar *what, ThriftType *element_type, guint32 *size,
               GError **error)
{
  gint8 type;
  gint32 ret;

  if (!nest (protocol, what, error))
    return -1;
  if ((ret = read_container (protocol, what, 1, &type, size, error)) < 0)
  {
    unnest (protocol);
    return ret;
  }
  *element_type = (ThriftType) type;
  return ret;
}

static gint32
thrift_checked_binary_protocol_read_list_begin (ThriftProtocol *protocol, ThriftType *element_type,
                                                guint32 *size, GError **error)
{
  return read_sequence (protocol, "list", element_type, size, error);
}

static gint32
thrift_checked_binary_protocol_read_set_begin (ThriftProtocol *protocol, ThriftType *element_type,
                                               guint32 *size, GError **error)
{
  return read_sequence (protocol, "set", element_type, size, error);
}

static gint32
thrift_checked_binary_protocol_read_map_begin (ThriftProtocol *protocol, ThriftType *key_type,
                                               ThriftType *value_type, guint32 *size,
                                               GError **error)
{
  gint8 types[2];
  gint32 ret;

  if (!nest (protocol, "map", error))
    return -1;
  if ((ret = read_container (protocol, "map", 2, types, size, error)) < 0)
  {
    unnest (protocol);
    return ret;
  }
  *key_type = (ThriftType) types[0];
  *value_type = (ThriftType) types[1];
  return ret;
}

static gint32
thrift_checked_binary_protocol_read_message_begin (ThriftProtocol *protocol, gchar **name,
                                                   ThriftMessageType *message_type, gint32 *seqid,
                                                   GError **error)
{
  ThriftProtocolClass *parent = THRIFT_PROTOCOL_CLASS (thrift_checked_binary_protocol_parent_class);
  ThriftCheckedBinaryProtocolPrivate *priv = PRIV (protocol);
  gint32 ret;

  *name = NULL;
  priv->depth = 0;
  ret = parent->read_message_begin (protocol, name, message_type, seqid, error);
  if (ret < 0)
  {
    /* a header cut after its name: ThriftDispatchProcessor keeps none from a failed read */
    g_clear_pointer (name, g_free);
    ensure_error (error, "a message header");
    return ret;
  }
  /* Thrift 0.17 takes a first word >= 0 for an old unversioned header, reads no more of it and
   * succeeds: no name, type or seqid, and ThriftDispatchProcessor looks up the name it left
   * unset (test/fuzz/regress/checked_binary) */
  if (*name == NULL)
  {
    g_set_error (error, THRIFT_PROTOCOL_ERROR, THRIFT_PROTOCOL_ERROR_BAD_VERSION,
                 "a message header without the binary protocol's version word (an old "
                 "unversioned header, or another protocol): refused");
    return -1;
  }
  return ret;
}

static void
thrift_checked_binary_protocol_class_init (ThriftCheckedBinaryProtocolClass *cls)
{
  ThriftProtocolClass *pc = THRIFT_PROTOCOL_CLASS (cls);

  pc->read_message_begin = thrift_checked_binary_protocol_read_message_begin;
  pc->read_string = thrift_checked_binary_protocol_read_string;
  pc->read_binary = thrift_checked_binary_protocol_read_binary;
  pc->read_struct_begin = thrift_checked_binary_protocol_read_struct_begin;
  pc->read_struct_end = thrift_checked_binary_protocol_read_end;
  pc->read_list_begin = thrift_checked_binary_protocol_read_list_begin;
  pc->read_list_end = thrift_checked_binary_protocol_read_end;
  pc->read_set_begin = thrift_checked_binary_protocol_read_set_begin;
  pc->read_set_end = thrift_checked_binary_protocol_read_end;
  pc->read_map_begin = thrift_checked_binary_protocol_read_map_begin;
  pc->read_map_end = thrift_checked_binary_protocol_read_end;
}

static void
thrift_checked_binary_protocol_init (ThriftCheckedBinaryProtocol *self)
{
}

static ThriftProtocol *
thrift_checked_binary_protocol_factory_get_protocol (ThriftProtocolFactory *factory,
                                                     ThriftTransport *transport)
{
  return THRIFT_PROTOCOL (
      g_object_new (THRIFT_TYPE_CHECKED_BINARY_PROTOCOL, "transport", transport, NULL));
}

static void
thrift_checked_binary_protocol_factory_class_init (ThriftCheckedBinaryProtocolFactoryClass *cls)
{
  THRIFT_PROTOCOL_FACTORY_CLASS (cls)->get_protocol =
      thrift_checked_binary_protocol_factory_get_protocol;
}

static void
thrift_checked_binary_protocol_factory_init (ThriftCheckedBinaryProtocolFactory *self)
{
}
