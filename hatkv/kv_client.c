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

/* kv_client.c: a client connection of a HatKV variant (see kv_client.h). */
#include "config.h"

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/transport/thrift_hybrid.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "kv_client.h"

KvConn *
kv_conn_open (const KvVariant *variant, const gchar *uri, GError **error)
{
  ThriftTransport *t;
  KvConn *c;

  if (variant->tcp_only && !g_str_has_prefix (uri, "tcp://"))
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_UNKNOWN,
                 "variant %s is stock Thrift over TCP: its URI must be tcp://, not %s",
                 variant->name, uri);
    return NULL;
  }
  if ((t = thrift_transport_new_for_uri (uri, error)) == NULL)
    return NULL;
  if (!thrift_transport_open (t, error))
  {
    g_object_unref (t);
    return NULL;
  }
  c = g_new0 (KvConn, 1);
  c->variant = variant;
  c->uri = g_strdup (uri);
  c->transport = t;
  c->protocol = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
  c->client = g_object_new (variant->client_type (), "input_protocol", c->protocol,
                            "output_protocol", c->protocol, NULL);
  c->request_proto = c->reply_proto = "";
  return c;
}

void
kv_conn_free (KvConn *c)
{
  if (c == NULL)
    return;
  thrift_transport_close (c->transport, NULL);
  g_object_unref (c->client);
  g_object_unref (c->protocol);
  g_object_unref (c->transport);
  g_free (c->uri);
  g_free (c);
}

ThriftRdma *
kv_conn_rdma (KvConn *c)
{
  if (THRIFT_IS_HYBRID (c->transport))
    return thrift_hybrid_get_rdma (THRIFT_HYBRID (c->transport));
  return THRIFT_IS_RDMA (c->transport) ? THRIFT_RDMA (c->transport) : NULL;
}

static const gchar *
carrier (KvConn *c)
{
  ThriftRdma *rdma = kv_conn_rdma (c);
  return rdma != NULL ? thrift_rdma_get_protocol_name (rdma) : "tcp";
}

/* After a call's receive half: its result from what came back. */
static KvCallResult
finish (KvConn *c, gboolean ok, KvNotFound *missing, KvError *failure, GError **error)
{
  c->reply_proto = carrier (c);
  if (ok)
    return KV_CALL_OK;
  if (missing != NULL)
  {
    g_object_unref (missing);
    g_clear_error (error);
    return KV_CALL_MISSING;
  }
  if (failure != NULL)
  {
    gchar *message = NULL;
    g_object_get (failure, "message", &message, NULL);
    g_clear_error (error);
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_UNKNOWN,
                 "the server refused: %s", message != NULL ? message : "(no message)");
    g_free (message);
    g_object_unref (failure);
    return KV_CALL_REFUSED;
  }
  return KV_CALL_BROKEN;
}

KvCallResult
kv_conn_get (KvConn *c, const GByteArray *key, GByteArray **value, GError **error)
{
  KvNotFound *missing = NULL;
  KvError *failure = NULL;
  gboolean ok;

  *value = NULL;
  if (!c->variant->ops->send_get (c->client, key, error))
    return KV_CALL_BROKEN;
  c->request_proto = carrier (c);
  ok = c->variant->ops->recv_get (c->client, value, &missing, &failure, error);
  return finish (c, ok, missing, failure, error);
}

KvCallResult
kv_conn_put (KvConn *c, const GByteArray *key, const GByteArray *value, GError **error)
{
  KvError *failure = NULL;
  gboolean ok;

  if (!c->variant->ops->send_put (c->client, key, value, error))
    return KV_CALL_BROKEN;
  c->request_proto = carrier (c);
  ok = c->variant->ops->recv_put (c->client, &failure, error);
  return finish (c, ok, NULL, failure, error);
}

KvCallResult
kv_conn_multi_get (KvConn *c, const GPtrArray *keys, GPtrArray **values, GError **error)
{
  KvError *failure = NULL;
  KvCallResult r;
  gboolean ok;

  *values = g_ptr_array_new_with_free_func (thrift_string_free);
  if (!c->variant->ops->send_multi_get (c->client, keys, error))
    return KV_CALL_BROKEN;
  c->request_proto = carrier (c);
  ok = c->variant->ops->recv_multi_get (c->client, values, &failure, error);
  r = finish (c, ok, NULL, failure, error);
  if (r == KV_CALL_OK && (*values)->len != keys->len)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_UNKNOWN,
                 "multi_get of %u keys returned %u values", keys->len, (*values)->len);
    return KV_CALL_REFUSED;
  }
  return r;
}

KvCallResult
kv_conn_multi_put (KvConn *c, const GPtrArray *keys, const GPtrArray *values, GError **error)
{
  KvError *failure = NULL;
  gboolean ok;

  if (!c->variant->ops->send_multi_put (c->client, keys, values, error))
    return KV_CALL_BROKEN;
  c->request_proto = carrier (c);
  ok = c->variant->ops->recv_multi_put (c->client, &failure, error);
  return finish (c, ok, NULL, failure, error);
}
