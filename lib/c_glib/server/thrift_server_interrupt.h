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
 * Waking a thread that blocks in a server transport's accept or in a connection's peek or
 * read, from another thread: through ThriftInterruptible (thrift_interruptible.h), else by
 * closing the transport. Internal to libthrift_c_glib_rdma (not installed, and not exported:
 * G_GNUC_INTERNAL).
 */
#ifndef _THRIFT_SERVER_INTERRUPT_H
#define _THRIFT_SERVER_INTERRUPT_H

#include <thrift/c_glib/transport/thrift_server_transport.h>
#include <thrift/c_glib/transport/thrift_transport.h>

G_BEGIN_DECLS

/* Makes a blocked (or the next) accept on LISTENER fail. Returns TRUE if that closed
 * LISTENER (the caller must not close it again), FALSE if LISTENER is still to be closed. */
G_GNUC_INTERNAL
gboolean thrift_server_interrupt_accept (ThriftServerTransport *listener);

/* Makes a blocked (or the next) peek or read on CONNECTION end; the connection's worker
 * still closes it. For a transport that cannot be interrupted this closes it. */
G_GNUC_INTERNAL
void thrift_server_interrupt_connection (ThriftTransport *connection);

G_END_DECLS

#endif /* _THRIFT_SERVER_INTERRUPT_H */
