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
 * thrift_c_glib_rdma: RDMA transports for Apache Thrift c_glib.
 */
#ifndef _THRIFT_RDMA_VERSION_H
#define _THRIFT_RDMA_VERSION_H

#include <glib.h>

G_BEGIN_DECLS

/* The wire protocol version exchanged in the connection handshake; peers with another
 * version are refused. */
#define THRIFT_RDMA_WIRE_VERSION 4

/* Library version as "major.minor.micro". */
const gchar *thrift_rdma_version_string (void);

/* TRUE when an RDMA device is usable on this host. When not, sets @error
 * (THRIFT_TRANSPORT_ERROR; thrift_rdma_error_status gives THRIFT_RDMA_STATUS_NO_DEVICE) to a
 * message that names the cause and what to do. */
gboolean thrift_rdma_device_available (GError **error);

G_END_DECLS

#endif /* _THRIFT_RDMA_VERSION_H */
