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

/* suite_client.c: functions, connections and subscription of the suite (suite_client.h). */
#include "config.h"

#include <string.h>

#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include <thrift/c_glib/transport/thrift_hybrid.h>

#include "suite_client.h"

#define NAME(p) #p,
const gchar *const suite_protocol_names[] = { SUITE_PROTOCOLS (NAME) NULL };
#undef NAME

/* The generated client's two halves of a call, so that the protocol of each can be read. */
struct _SuiteFunction
{
  const gchar *name;
  gboolean (*send) (BenchSuiteIf *iface, const GByteArray *data, GError **error);
  gboolean (*recv) (BenchSuiteIf *iface, GByteArray **ret, GError **error);
};

#define FN(name) { #name, bench_suite_client_send_##name, bench_suite_client_recv_##name },
#define ECHO(p) FN (echo_##p)
#define MIX(p) FN (mix_lat_##p) FN (mix_tput_##p)
static const SuiteFunction functions[] = {
  FN (echo_plan) FN (echo_plain) SUITE_PROTOCOLS (ECHO) FN (tput_small_under) FN (tput_small_over)
      FN (tput_large_under) FN (tput_large_over) FN (tput_small_under_eager_rndv)
          FN (tput_small_over_eager_rndv) FN (tput_large_under_eager_rndv)
              FN (tput_large_over_eager_rndv) MIX (small_under) MIX (small_over) MIX (large_under)
                  MIX (large_over) SUITE_PROTOCOLS (MIX) FN (hy_small) FN (hy_bulk) FN (bulk_echo)
};
#undef FN
#undef ECHO
#undef MIX

const gchar *
suite_proto_short (const gchar *proto)
{
  static const gchar *const names[][2] = {
    { "write_rndv", "w_rndv" },         { "read_rndv", "r_rndv" },
    { "direct_write_send", "dw_send" }, { "chained_write_send", "cw_send" },
    { "direct_write_imm", "dw_imm" },   { "batched_write", "batched" },
    { "eager_rndv", "e+r_rndv" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_strcmp0 (names[i][0], proto) == 0)
      return names[i][1];
  return proto;
}

gboolean
suite_function_is_eager_rndv (const gchar *function)
{
  return function != NULL && g_str_has_suffix (function, "_eager_rndv");
}

gchar *
suite_uri_whole_messages (const gchar *uri)
{
  if (!g_str_has_prefix (uri, "rdma://"))
    return g_strdup (uri);
  return g_strconcat (uri, strchr (uri, '?') != NULL ? "&" : "?", "bulk=0", NULL);
}

const SuiteFunction *
suite_function_find (const gchar *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (functions); i++)
    if (g_strcmp0 (functions[i].name, name) == 0)
      return &functions[i];
  return NULL;
}

gboolean
suite_call (SuiteConn *c, const SuiteFunction *f, const GByteArray *data, GByteArray **ret,
            const gchar **request_proto, const gchar **reply_proto, GError **error)
{
  ThriftRdma *rdma = suite_conn_rdma (c);

  /* after the send the name is the request's protocol, after the receive the reply's (a
   * hybrid call by its TCP leg has none) */
  if (!f->send (c->client, data, error))
    return FALSE;
  if (g_strcmp0 (suite_conn_leg (c), "tcp") == 0)
    rdma = NULL;
  *request_proto = rdma != NULL ? thrift_rdma_get_protocol_name (rdma) : "";
  if (!f->recv (c->client, ret, error))
    return FALSE;
  *reply_proto = rdma != NULL ? thrift_rdma_get_protocol_name (rdma) : "";
  return TRUE;
}

SuiteConn *
suite_conn_open (const gchar *uri, GError **error)
{
  ThriftTransport *t = thrift_transport_new_for_uri (uri, error);
  SuiteConn *c;

  if (t == NULL)
    return NULL;
  if (!thrift_transport_open (t, error))
  {
    g_object_unref (t);
    return NULL;
  }
  c = g_new0 (SuiteConn, 1);
  c->uri = g_strdup (uri);
  c->transport = t;
  c->protocol = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
  c->client = g_object_new (TYPE_BENCH_SUITE_CLIENT, "input_protocol", c->protocol,
                            "output_protocol", c->protocol, NULL);
  return c;
}

void
suite_conn_free (SuiteConn *c)
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
suite_conn_rdma (SuiteConn *c)
{
  if (THRIFT_IS_HYBRID (c->transport))
    return thrift_hybrid_get_rdma (THRIFT_HYBRID (c->transport));
  return THRIFT_IS_RDMA (c->transport) ? THRIFT_RDMA (c->transport) : NULL;
}

const gchar *
suite_conn_leg (SuiteConn *c)
{
  if (THRIFT_IS_HYBRID (c->transport))
    return thrift_hybrid_leg_name (thrift_hybrid_get_last_leg (THRIFT_HYBRID (c->transport)));
  return THRIFT_IS_RDMA (c->transport) ? "rdma" : "tcp";
}

gboolean
suite_clients_under (guint clients)
{
  static gsize per_node;

  if (g_once_init_enter (&per_node))
  {
    /* the cores of one NUMA node, as rdma_plan counts them: all cores over the nodes */
    guint nodes = 0, cores = MAX (1, g_get_num_processors ());
    GDir *dir = g_dir_open ("/sys/devices/system/node", 0, NULL);
    const gchar *name;

    while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
      if (g_str_has_prefix (name, "node") && g_ascii_isdigit (name[4]))
        nodes++;
    if (dir != NULL)
      g_dir_close (dir);
    g_once_init_leave (&per_node, MAX (1, cores / MAX (1, nodes)));
  }
  return clients <= per_node;
}

const gchar *
suite_column_transport (const gchar *label, const gchar *uri)
{
  if (g_strcmp0 (label, "rsocket") == 0)
    return "rsocket";
  return g_str_has_prefix (uri, "rdma") ? "rdma" : "tcp";
}

gboolean
suite_server_usage (SuiteConn *c, SuiteServerUsage *out, GError **error)
{
  ServerUsage *u = g_object_new (TYPE_SERVER_USAGE, NULL);
  gboolean ok = bench_suite_if_usage (c->client, &u, error);

  if (ok)
    *out = (SuiteServerUsage){ .cpu_s = (u->user_us + u->system_us) / 1e6,
                               .calls = u->calls,
                               .wakeups = u->wakeups,
                               .switches = u->switches };
  g_object_unref (u);
  return ok;
}
