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

/* gate_client.c: a Gate client of the server tests (see gate_client.h). */
#include "config.h"

#include <thrift/c_glib/protocol/thrift_binary_protocol.h>

#include "gate_client.h"

void
gate_test_client_init (GateTestClient *c, ThriftTransport *transport)
{
  c->transport = transport;
  c->protocol = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", transport, NULL);
  c->client = g_object_new (TYPE_GATE_CLIENT, "input_protocol", c->protocol, "output_protocol",
                            c->protocol, NULL);
}

void
gate_test_client_clear (GateTestClient *c)
{
  if (c->transport != NULL && thrift_transport_is_open (c->transport))
    thrift_transport_close (c->transport, NULL);
  g_clear_object (&c->client);
  g_clear_object (&c->protocol);
  g_clear_object (&c->transport);
}
