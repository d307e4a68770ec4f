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
 * kv_handler.h: what every HatKV service does with a call, on the store: the bodies of the
 * four handler functions, shared by the handler types of all variants (kv_variant.c), so the
 * variants differ in their hints and nothing else.
 */
#ifndef _KV_HANDLER_H
#define _KV_HANDLER_H

#include <glib.h>

#include "hatkv_types.h"
#include "kv_store.h"

G_BEGIN_DECLS

/* As a generated handler function returns: TRUE with the result; FALSE with *@missing or
 * *@failure set (the exception the client gets). */
gboolean kv_handle_get (KvStore *store, GByteArray **ret, const GByteArray *key,
                        KvNotFound **missing, KvError **failure);
gboolean kv_handle_put (KvStore *store, const GByteArray *key, const GByteArray *value,
                        KvError **failure);
gboolean kv_handle_multi_get (KvStore *store, GPtrArray **ret, const GPtrArray *keys,
                              KvError **failure);
gboolean kv_handle_multi_put (KvStore *store, const GPtrArray *keys, const GPtrArray *values,
                              KvError **failure);

G_END_DECLS

#endif
