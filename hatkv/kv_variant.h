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
 * kv_variant.h: HatKV's variants (hatkv.thrift: one service per variant of the HatRPC
 * paper's Sec. 5.4, alike but for their hints) and, for each, what a server needs (its
 * processor and a handler on the store) and what a client needs (its client type and the
 * send and receive halves of each call, so that the protocol of each half can be read).
 */
#ifndef _KV_VARIANT_H
#define _KV_VARIANT_H

#include <glib-object.h>
#include <thrift/c_glib/transport/thrift_hints.h>

#include "hatkv_types.h"
#include "kv_store.h"

G_BEGIN_DECLS

/* The halves of the four calls on a generated client of any variant. */
typedef struct
{
  gboolean (*send_get) (GObject *client, const GByteArray *key, GError **error);
  gboolean (*recv_get) (GObject *client, GByteArray **value, KvNotFound **missing,
                        KvError **failure, GError **error);
  gboolean (*send_put) (GObject *client, const GByteArray *key, const GByteArray *value,
                        GError **error);
  gboolean (*recv_put) (GObject *client, KvError **failure, GError **error);
  gboolean (*send_multi_get) (GObject *client, const GPtrArray *keys, GError **error);
  gboolean (*recv_multi_get) (GObject *client, GPtrArray **values, KvError **failure,
                              GError **error);
  gboolean (*send_multi_put) (GObject *client, const GPtrArray *keys, const GPtrArray *values,
                              GError **error);
  gboolean (*recv_multi_put) (GObject *client, KvError **failure, GError **error);
} KvClientOps;

typedef struct
{
  const gchar *name;    /* as on the command line and in CSV: "function" */
  const gchar *label;   /* as in the paper: "HatRPC-Function" */
  const gchar *service; /* the IDL service: "KvFunction" */
  const gchar *claim;   /* its protocols, in words */
  gboolean tcp_only;    /* stock Thrift over TCP: a tcp:// URI only */
  GType (*client_type) (void);
  GType (*processor_type) (void);
  GType (*handler_type) (void);
  const ThriftHintSet *const *hint_sets;
  const KvClientOps *ops;
} KvVariant;

/* Every variant, in the paper's order; the last has name NULL. */
extern const KvVariant kv_variants[];

/* The variant called @name, or NULL. */
const KvVariant *kv_variant_find (const gchar *name);

/* "service, function, ..." (free with g_free). */
gchar *kv_variant_names (void);

/* A handler of @variant's service serving from @store (which must outlive it). */
GObject *kv_variant_new_handler (const KvVariant *variant, KvStore *store);

/* @variant's processor around a handler on @store. */
GObject *kv_variant_new_processor (const KvVariant *variant, KvStore *store);

G_END_DECLS

#endif
