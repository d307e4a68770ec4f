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
 * rdma_admit.h: whether a server admits a connection request, from the pairing token after
 * its hello (rdma_wire.h) and the server's admission function (thrift_server_rdma.h).  No
 * verbs: ThriftServerRdma asks before it sets anything up for the request.
 */
#ifndef _RDMA_ADMIT_H
#define _RDMA_ADMIT_H

#include <glib.h>

#include <thrift/c_glib/transport/thrift_server_rdma.h>

G_BEGIN_DECLS

/*
 * Decides on a request whose private data @data (@len bytes) holds a sound hello:
 *   - with @func, @func decides; a refused request with a token is
 *     RDMA_WIRE_REFUSE_UNKNOWN_TOKEN, one without RDMA_WIRE_REFUSE_TOKEN_REQUIRED;
 *   - without @func (a server that does not pair), a request without a token is admitted,
 *     one with a token refused (RDMA_WIRE_REFUSE_NOT_PAIRING).
 * Returns RDMA_WIRE_REFUSE_NONE to admit, else the refusal's code (RdmaWireRefusalCode), and
 * then *@reason (g_free) says why, for the server's log.
 */
guint16 rdma_admit_request (const void *data, gsize len, ThriftServerRdmaAdmitFunc func,
                            gpointer user_data, gchar **reason);

G_END_DECLS

#endif
