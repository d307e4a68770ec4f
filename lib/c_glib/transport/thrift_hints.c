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
 * thrift_hints.c: HatRPC hint sets and their hand-over to the transport (see thrift_hints.h).
 */

#include <thrift/c_glib/transport/thrift_hints.h>

#include <thrift/c_glib/protocol/thrift_protocol_decorator.h>

#include "thrift_transport_unwrap.h"

G_DEFINE_INTERFACE (ThriftHintReceiver, thrift_hint_receiver, G_TYPE_OBJECT)

static void
thrift_hint_receiver_default_init (ThriftHintReceiverInterface *iface)
{
  (void) iface;
}

void
thrift_hint_receiver_set_hints (ThriftHintReceiver *receiver, const ThriftHintSet *hints)
{
  ThriftHintReceiverInterface *iface;

  g_return_if_fail (THRIFT_IS_HINT_RECEIVER (receiver));

  iface = THRIFT_HINT_RECEIVER_GET_INTERFACE (receiver);
  if (iface->set_hints != NULL)
    iface->set_hints (receiver, hints);
}

ThriftHintReceiver *
thrift_hints_find_receiver (ThriftProtocol *protocol)
{
  for (int depth = 0; protocol != NULL && depth < 16; depth++)
  {
    if (!THRIFT_IS_PROTOCOL_DECORATOR (protocol))
    {
      ThriftTransport *t = thrift_transport_find_wrapped (protocol->transport,
                                                          THRIFT_TYPE_HINT_RECEIVER);
      return t != NULL ? THRIFT_HINT_RECEIVER (t) : NULL;
    }
    protocol = THRIFT_PROTOCOL_DECORATOR (protocol)->concrete_protocol;
  }
  return NULL;
}

gboolean
thrift_hints_apply (ThriftProtocol *protocol, const ThriftHintSet *hints)
{
  ThriftHintReceiver *receiver;

  g_return_val_if_fail (hints != NULL, FALSE);

  receiver = thrift_hints_find_receiver (protocol);
  if (receiver == NULL)
    return FALSE;
  thrift_hint_receiver_set_hints (receiver, hints);
  return TRUE;
}

const gchar *
thrift_hint_perf_goal_to_string (ThriftHintPerfGoal value)
{
  switch (value)
  {
  case THRIFT_HINT_PERF_GOAL_LATENCY:
    return "latency";
  case THRIFT_HINT_PERF_GOAL_THROUGHPUT:
    return "throughput";
  case THRIFT_HINT_PERF_GOAL_RES_UTIL:
    return "res_util";
  case THRIFT_HINT_PERF_GOAL_UNSET:
    break;
  }
  return NULL;
}

const gchar *
thrift_hint_polling_to_string (ThriftHintPolling value)
{
  switch (value)
  {
  case THRIFT_HINT_POLLING_BUSY:
    return "busy";
  case THRIFT_HINT_POLLING_EVENT:
    return "event";
  case THRIFT_HINT_POLLING_HYBRID:
    return "hybrid";
  case THRIFT_HINT_POLLING_UNSET:
    break;
  }
  return NULL;
}

const gchar *
thrift_hint_proto_to_string (ThriftHintProto value)
{
  switch (value)
  {
  case THRIFT_HINT_PROTO_EAGER:
    return "eager";
  case THRIFT_HINT_PROTO_WRITE_RNDV:
    return "write_rndv";
  case THRIFT_HINT_PROTO_READ_RNDV:
    return "read_rndv";
  case THRIFT_HINT_PROTO_DIRECT_WRITE_SEND:
    return "direct_write_send";
  case THRIFT_HINT_PROTO_CHAINED_WRITE_SEND:
    return "chained_write_send";
  case THRIFT_HINT_PROTO_DIRECT_WRITE_IMM:
    return "direct_write_imm";
  case THRIFT_HINT_PROTO_RFP:
    return "rfp";
  case THRIFT_HINT_PROTO_BATCHED_WRITE:
    return "batched_write";
  case THRIFT_HINT_PROTO_EAGER_RNDV:
    return "eager_rndv";
  case THRIFT_HINT_PROTO_UNSET:
    break;
  }
  return NULL;
}

const gchar *
thrift_hint_transport_to_string (ThriftHintTransport value)
{
  switch (value)
  {
  case THRIFT_HINT_TRANSPORT_RDMA:
    return "rdma";
  case THRIFT_HINT_TRANSPORT_TCP:
    return "tcp";
  case THRIFT_HINT_TRANSPORT_UNSET:
    break;
  }
  return NULL;
}

static void
append_name (GString *s, const gchar *key, const gchar *value)
{
  g_string_append_printf (s, " %s=%s", key, value != NULL ? value : "?");
}

gchar *
thrift_hint_set_to_string (const ThriftHintSet *hints)
{
  GString *s;

  if (hints == NULL)
    return g_strdup ("(null)");

  s = g_string_new (NULL);
  g_string_append_printf (s, "%s.%s %s:", hints->service, hints->function,
                          hints->side == THRIFT_HINT_SIDE_CLIENT ? "client" : "server");
  /* alphabetical order of the keys, as the compiler prints them */
  if (hints->set & THRIFT_HINT_HAS_CONCURRENCY)
    g_string_append_printf (s, " concurrency=%u", hints->concurrency);
  if (hints->set & THRIFT_HINT_HAS_NUMA)
    g_string_append_printf (s, " numa=%u", hints->numa);
  if (hints->set & THRIFT_HINT_HAS_PAYLOAD_SIZE)
    g_string_append_printf (s, " payload_size=%" G_GUINT64_FORMAT, hints->payload_size);
  if (hints->set & THRIFT_HINT_HAS_PERF_GOAL)
    append_name (s, "perf_goal", thrift_hint_perf_goal_to_string (hints->perf_goal));
  if (hints->set & THRIFT_HINT_HAS_POLLING)
    append_name (s, "polling", thrift_hint_polling_to_string (hints->polling));
  if (hints->set & THRIFT_HINT_HAS_PROTO)
    append_name (s, "proto", thrift_hint_proto_to_string (hints->proto));
  if (hints->set & THRIFT_HINT_HAS_TRANSPORT)
    append_name (s, "transport", thrift_hint_transport_to_string (hints->transport));
  if (hints->set == 0)
    g_string_append (s, " (none)");
  return g_string_free (s, FALSE);
}
