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
 * kv_variant.c: the variants' table.  Each service of hatkv.thrift generates its own handler
 * class and client functions with its own types; one macro per service makes the handler
 * type (whose functions call kv_handler.c) and the client halves (which call the generated
 * ones), so that nothing else needs to know which service it talks to.
 */
#include "config.h"

#include "kv_variant.h"
#include "kv_handler.h"
#include "kv_service.h"
#include "kv_function.h"
#include "kv_ar_grpc.h"
#include "kv_herd.h"
#include "kv_pilaf.h"

#define KV_VARIANT_CODE(Svc, svc, SVC)                                                            \
  typedef struct                                                                                  \
  {                                                                                               \
    Svc##Handler parent;                                                                          \
    KvStore *store;                                                                               \
  } Hk##Svc##Handler;                                                                             \
  typedef struct                                                                                  \
  {                                                                                               \
    Svc##HandlerClass parent;                                                                     \
  } Hk##Svc##HandlerClass;                                                                        \
  static GType hk_##svc##_handler_get_type (void);                                                \
  G_DEFINE_TYPE (Hk##Svc##Handler, hk_##svc##_handler, TYPE_##SVC##_HANDLER)                      \
  static KvStore *hk_##svc##_store (Svc##If *iface)                                               \
  {                                                                                               \
    return ((Hk##Svc##Handler *) iface)->store;                                                   \
  }                                                                                               \
  static gboolean hk_##svc##_get (Svc##If *iface, GByteArray **ret, const GByteArray *key,        \
                                  KvNotFound **missing, KvError **failure, GError **error)        \
  {                                                                                               \
    return kv_handle_get (hk_##svc##_store (iface), ret, key, missing, failure);                  \
  }                                                                                               \
  static gboolean hk_##svc##_put (Svc##If *iface, const GByteArray *key, const GByteArray *value, \
                                  KvError **failure, GError **error)                              \
  {                                                                                               \
    return kv_handle_put (hk_##svc##_store (iface), key, value, failure);                         \
  }                                                                                               \
  static gboolean hk_##svc##_multi_get (Svc##If *iface, GPtrArray **ret, const GPtrArray *keys,   \
                                        KvError **failure, GError **error)                        \
  {                                                                                               \
    return kv_handle_multi_get (hk_##svc##_store (iface), ret, keys, failure);                    \
  }                                                                                               \
  static gboolean hk_##svc##_multi_put (Svc##If *iface, const GPtrArray *keys,                    \
                                        const GPtrArray *values, KvError **failure,               \
                                        GError **error)                                           \
  {                                                                                               \
    return kv_handle_multi_put (hk_##svc##_store (iface), keys, values, failure);                 \
  }                                                                                               \
  static void hk_##svc##_handler_class_init (Hk##Svc##HandlerClass *klass)                        \
  {                                                                                               \
    Svc##HandlerClass *h = (Svc##HandlerClass *) klass;                                           \
    h->get = hk_##svc##_get;                                                                      \
    h->put = hk_##svc##_put;                                                                      \
    h->multi_get = hk_##svc##_multi_get;                                                          \
    h->multi_put = hk_##svc##_multi_put;                                                          \
  }                                                                                               \
  static void hk_##svc##_handler_init (Hk##Svc##Handler *self)                                    \
  {                                                                                               \
  }                                                                                               \
  static gboolean svc##_send_get_ (GObject *c, const GByteArray *k, GError **e)                   \
  {                                                                                               \
    return svc##_client_send_get ((Svc##If *) c, k, e);                                           \
  }                                                                                               \
  static gboolean svc##_recv_get_ (GObject *c, GByteArray **v, KvNotFound **m, KvError **f,       \
                                   GError **e)                                                    \
  {                                                                                               \
    return svc##_client_recv_get ((Svc##If *) c, v, m, f, e);                                     \
  }                                                                                               \
  static gboolean svc##_send_put_ (GObject *c, const GByteArray *k, const GByteArray *v,          \
                                   GError **e)                                                    \
  {                                                                                               \
    return svc##_client_send_put ((Svc##If *) c, k, v, e);                                        \
  }                                                                                               \
  static gboolean svc##_recv_put_ (GObject *c, KvError **f, GError **e)                           \
  {                                                                                               \
    return svc##_client_recv_put ((Svc##If *) c, f, e);                                           \
  }                                                                                               \
  static gboolean svc##_send_multi_get_ (GObject *c, const GPtrArray *k, GError **e)              \
  {                                                                                               \
    return svc##_client_send_multi_get ((Svc##If *) c, k, e);                                     \
  }                                                                                               \
  static gboolean svc##_recv_multi_get_ (GObject *c, GPtrArray **v, KvError **f, GError **e)      \
  {                                                                                               \
    return svc##_client_recv_multi_get ((Svc##If *) c, v, f, e);                                  \
  }                                                                                               \
  static gboolean svc##_send_multi_put_ (GObject *c, const GPtrArray *k, const GPtrArray *v,      \
                                         GError **e)                                              \
  {                                                                                               \
    return svc##_client_send_multi_put ((Svc##If *) c, k, v, e);                                  \
  }                                                                                               \
  static gboolean svc##_recv_multi_put_ (GObject *c, KvError **f, GError **e)                     \
  {                                                                                               \
    return svc##_client_recv_multi_put ((Svc##If *) c, f, e);                                     \
  }                                                                                               \
  static const KvClientOps svc##_ops = { svc##_send_get_,       svc##_recv_get_,                  \
                                         svc##_send_put_,       svc##_recv_put_,                  \
                                         svc##_send_multi_get_, svc##_recv_multi_get_,            \
                                         svc##_send_multi_put_, svc##_recv_multi_put_ };

KV_VARIANT_CODE (KvService, kv_service, KV_SERVICE)
KV_VARIANT_CODE (KvFunction, kv_function, KV_FUNCTION)
KV_VARIANT_CODE (KvArGrpc, kv_ar_grpc, KV_AR_GRPC)
KV_VARIANT_CODE (KvHerd, kv_herd, KV_HERD)
KV_VARIANT_CODE (KvPilaf, kv_pilaf, KV_PILAF)

#define KV_VARIANT_ROW(name, label, Svc, svc, claim, tcp)                           \
  {                                                                                 \
    name, label, #Svc, claim, tcp, svc##_client_get_type, svc##_processor_get_type, \
        hk_##svc##_handler_get_type, svc##_hint_sets, &svc##_ops                    \
  }

const KvVariant kv_variants[] = {
  KV_VARIANT_ROW ("service", "HatRPC-Service", KvService, kv_service,
                  "service-level hints only: perf_goal = throughput, concurrency = 128", FALSE),
  KV_VARIANT_ROW ("function", "HatRPC-Function", KvFunction, kv_function,
                  "service hints plus each function's payload sizes per side", FALSE),
  KV_VARIANT_ROW ("ar_grpc", "AR-gRPC", KvArGrpc, kv_ar_grpc,
                  "eager up to 4 KiB, read rendezvous above, both ways", FALSE),
  KV_VARIANT_ROW ("herd", "HERD", KvHerd, kv_herd,
                  "requests by RDMA WRITE (direct_write_send), responses by SEND (eager)", FALSE),
  KV_VARIANT_ROW ("pilaf_rfp", "Pilaf/RFP", KvPilaf, kv_pilaf,
                  "requests by RDMA WRITE (direct_write_imm), responses fetched by READ (rfp)",
                  FALSE),
  KV_VARIANT_ROW ("thrift_tcp", "Thrift TCP", KvService, kv_service,
                  "stock Thrift over TCP (framed): KvService over tcp://, hints ignored", TRUE),
  { NULL }
};

const KvVariant *
kv_variant_find (const gchar *name)
{
  for (const KvVariant *v = kv_variants; v->name != NULL; v++)
    if (g_strcmp0 (v->name, name) == 0)
      return v;
  return NULL;
}

gchar *
kv_variant_names (void)
{
  GString *s = g_string_new (NULL);

  for (const KvVariant *v = kv_variants; v->name != NULL; v++)
    g_string_append_printf (s, "%s%s", s->len > 0 ? ", " : "", v->name);
  return g_string_free (s, FALSE);
}

GObject *
kv_variant_new_handler (const KvVariant *variant, KvStore *store)
{
  GObject *h = g_object_new (variant->handler_type (), NULL);

  /* every handler type of the macro starts with its generated parent, then the store */
  if (variant->handler_type == hk_kv_service_handler_get_type)
    ((HkKvServiceHandler *) h)->store = store;
  else if (variant->handler_type == hk_kv_function_handler_get_type)
    ((HkKvFunctionHandler *) h)->store = store;
  else if (variant->handler_type == hk_kv_ar_grpc_handler_get_type)
    ((HkKvArGrpcHandler *) h)->store = store;
  else if (variant->handler_type == hk_kv_herd_handler_get_type)
    ((HkKvHerdHandler *) h)->store = store;
  else
    ((HkKvPilafHandler *) h)->store = store;
  return h;
}

GObject *
kv_variant_new_processor (const KvVariant *variant, KvStore *store)
{
  GObject *handler = kv_variant_new_handler (variant, store);
  GObject *p = g_object_new (variant->processor_type (), "handler", handler, NULL);

  g_object_unref (handler);
  return p;
}
