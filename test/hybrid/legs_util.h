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
 * legs_util.h: the Legs service of the hybrid tests (legs.thrift): a handler that echoes,
 * sums the oneway notes and throws on request, a ThriftThreadedServer serving it on a URI in
 * a thread, and a client on a URI.
 */
#ifndef _LEGS_UTIL_H
#define _LEGS_UTIL_H

#include <thrift/c_glib/server/thrift_server.h>
#include <thrift/c_glib/transport/thrift_transport.h>

#include "legs.h"
#include "serve_thread.h"

G_BEGIN_DECLS

typedef struct
{
  ThriftServer *server;
  ServeThread serve;
} LegsTestServer;

/* Listens on @uri and serves it in a thread; FALSE with @error if it cannot listen. */
gboolean legs_server_start (LegsTestServer *s, const gchar *uri, GError **error);
/* Stops the server (bounded: asserts that serve returns) and frees it. */
void legs_server_stop (LegsTestServer *s);

typedef struct
{
  ThriftTransport *transport;
  ThriftProtocol *protocol;
  LegsIf *client;
} LegsTestClient;

/* A client on @uri, opened; FALSE with @error (and @c cleared) if it cannot open. */
gboolean legs_client_open (LegsTestClient *c, const gchar *uri, GError **error);
/* legs_client_open, or the test fails saying @uri and the error. */
void legs_assert_open (LegsTestClient *c, const gchar *uri);
void legs_client_clear (LegsTestClient *c);

/* A payload of @len bytes whose content depends on @seed. */
GByteArray *legs_payload (guint len, guint seed);

G_END_DECLS

#endif
