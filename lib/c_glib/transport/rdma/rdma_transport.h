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

/* rdma_transport.h: what ThriftServerRdma needs from ThriftRdma, and the error boundary both
 * pass the engine's errors through (internal: G_GNUC_INTERNAL keeps these out of the shared
 * library's exports, although two of them are named thrift_*). */
#ifndef _RDMA_TRANSPORT_H
#define _RDMA_TRANSPORT_H

#include <thrift/c_glib/thrift_configuration.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_server_rdma.h>

#include "rdma_conn.h"

G_BEGIN_DECLS

/* A ThriftRdma around an accepted, connected @conn (ownership taken). */
G_GNUC_INTERNAL
ThriftRdma *thrift_rdma_new_accepted (RdmaConn *conn, ThriftConfiguration *configuration,
                                      gpointer hints, ThriftRdmaPolling polling,
                                      guint call_timeout_ms, guint idle_timeout_ms,
                                      guint keepalive_ms);

/* @self, just accepted, takes a server's defaults where its server's properties are unset
 * (before rdma_bulk_props_apply): a reply's fields are staged, never lent in place. */
G_GNUC_INTERNAL
void thrift_rdma_serve_defaults (ThriftRdma *self);

/* The settings a client's open gives the engine from @self's properties (all but its pairing
 * token and NUMA node, which open checks and chooses). */
G_GNUC_INTERNAL
void thrift_rdma_settings_of (ThriftRdma *self, RdmaConnSettings *out);

/* The settings a ThriftRdma with this configuration and polling mode uses. */
G_GNUC_INTERNAL
void thrift_rdma_settings_for (ThriftConfiguration *configuration, ThriftRdmaPolling polling,
                               RdmaConnSettings *out);

/* ThriftServerRdma's side (also for white-box tests): the settings its accepts give the
 * engine, and the ThriftRdma it hands out around an accepted @conn (ownership taken). */
G_GNUC_INTERNAL
void thrift_server_rdma_settings_of (ThriftServerRdma *self, RdmaConnSettings *out);
G_GNUC_INTERNAL
ThriftRdma *thrift_server_rdma_wrap_accepted (ThriftServerRdma *self, RdmaConn *conn);

/**
 * rdma_error_to_thrift:
 * @error: (inout) (nullable): an error about to leave a shell, or NULL
 *
 * The boundary (thrift_rdma_error.c): an error in RDMA_ENGINE_ERROR becomes
 * THRIFT_TRANSPORT_ERROR with rdma_status_thrift_code (), its message unchanged, and is
 * remembered for thrift_rdma_error_status on this thread.  Any other error is left as it is.
 *
 * Returns: the public status of the engine error, THRIFT_RDMA_STATUS_OK for anything else.
 */
G_GNUC_INTERNAL
ThriftRdmaStatus rdma_error_to_thrift (GError **error);

G_END_DECLS

#endif
