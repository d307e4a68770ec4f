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
 * gate_client.h: a Gate client of the server tests (test/server over TCP, test/rdma over
 * RDMA): a transport, a binary protocol on it, and the generated client.
 */
#ifndef _GATE_CLIENT_H
#define _GATE_CLIENT_H

#include <thrift/c_glib/transport/thrift_transport.h>

#include "gate.h"

G_BEGIN_DECLS

typedef struct
{
  ThriftTransport *transport;
  ThriftProtocol *protocol;
  GateIf *client;
} GateTestClient;

/* Puts a binary protocol and a Gate client on @transport (taken; not opened here). */
void gate_test_client_init (GateTestClient *c, ThriftTransport *transport);
/* Closes the transport if it is open and releases everything; safe to call twice. */
void gate_test_client_clear (GateTestClient *c);

G_END_DECLS

#endif
