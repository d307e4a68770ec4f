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
 * kv_client.h: a connection to a HatKV server for one variant, and its four calls, each made
 * as the generated client makes it (send, then receive) with the protocol that carried each
 * half read after it (thrift_rdma_get_protocol_name; "tcp" over tcp://).
 */
#ifndef _KV_CLIENT_H
#define _KV_CLIENT_H

#include <thrift/c_glib/protocol/thrift_protocol.h>
#include <thrift/c_glib/transport/thrift_rdma.h>

#include "kv_variant.h"

G_BEGIN_DECLS

typedef struct
{
  const KvVariant *variant;
  gchar *uri;
  ThriftTransport *transport;
  ThriftProtocol *protocol;
  GObject *client;
  const gchar *request_proto; /* of the last call's request, "" before any */
  const gchar *reply_proto;   /* of its reply */
} KvConn;

/* What a call came to. */
typedef enum
{
  KV_CALL_OK,
  KV_CALL_MISSING, /* get: the store does not have the key */
  KV_CALL_REFUSED, /* the server answered with KvError (@error has its message) */
  KV_CALL_BROKEN   /* the call failed: the connection is of no more use */
} KvCallResult;

/* Opens a connection to @uri for @variant; NULL with @error if it cannot (or @variant is
 * stock Thrift and @uri is not tcp://). */
KvConn *kv_conn_open (const KvVariant *variant, const gchar *uri, GError **error);
void kv_conn_free (KvConn *c);

/* The ThriftRdma under @c, NULL over tcp://. */
ThriftRdma *kv_conn_rdma (KvConn *c);

KvCallResult kv_conn_get (KvConn *c, const GByteArray *key, GByteArray **value, GError **error);
KvCallResult kv_conn_put (KvConn *c, const GByteArray *key, const GByteArray *value,
                          GError **error);
/* *@values: one per key, empty for a missing key. */
KvCallResult kv_conn_multi_get (KvConn *c, const GPtrArray *keys, GPtrArray **values,
                                GError **error);
KvCallResult kv_conn_multi_put (KvConn *c, const GPtrArray *keys, const GPtrArray *values,
                                GError **error);

G_END_DECLS

#endif
