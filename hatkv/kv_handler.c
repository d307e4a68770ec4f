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

/* kv_handler.c: the four HatKV functions on the store (see kv_handler.h). */
#include "config.h"

#include "kv_handler.h"

/* A store error as the KvError the client gets. */
static gboolean
fail (KvError **failure, GError *error)
{
  *failure = g_object_new (TYPE_KV_ERROR, "message", error->message, NULL);
  g_error_free (error);
  return FALSE;
}

gboolean
kv_handle_get (KvStore *store, GByteArray **ret, const GByteArray *key, KvNotFound **missing,
               KvError **failure)
{
  GByteArray *value = NULL;
  GError *error = NULL;

  if (!kv_store_get (store, key, &value, &error))
    return fail (failure, error);
  if (value == NULL)
  {
    *missing = g_object_new (TYPE_KV_NOT_FOUND, "key", key, NULL);
    return FALSE;
  }
  if (*ret != NULL)
    g_byte_array_unref (*ret);
  *ret = value;
  return TRUE;
}

gboolean
kv_handle_put (KvStore *store, const GByteArray *key, const GByteArray *value, KvError **failure)
{
  GError *error = NULL;
  return kv_store_put (store, key, value, &error) || fail (failure, error);
}

gboolean
kv_handle_multi_get (KvStore *store, GPtrArray **ret, const GPtrArray *keys, KvError **failure)
{
  GPtrArray *values = NULL;
  GError *error = NULL;

  if (!kv_store_get_many (store, keys, &values, &error))
    return fail (failure, error);
  if (*ret != NULL)
    g_ptr_array_unref (*ret);
  *ret = values;
  return TRUE;
}

gboolean
kv_handle_multi_put (KvStore *store, const GPtrArray *keys, const GPtrArray *values,
                     KvError **failure)
{
  GError *error = NULL;
  return kv_store_put_many (store, keys, values, &error) || fail (failure, error);
}
