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
 * rdma_status.h: the engine's status codes (first error layer).
 *
 * Inside the engine every failure is an RdmaStatus; one mapper turns errno values and work
 * completion statuses into it, and one helper (rdma_status_set_error) turns a status into a
 * GError in RDMA_ENGINE_ERROR, whose code is the status, naming the verbs call, errno and
 * ibv_wc_status_str () and saying what to check.  Only the GObject shells turn such an error
 * into THRIFT_TRANSPORT_ERROR (rdma_error_to_thrift, rdma_transport.h), with the code
 * rdma_status_thrift_code () gives, so their callers see Thrift's codes while the status
 * behind each stays known (thrift_rdma_error_status).
 */
#ifndef _RDMA_STATUS_H
#define _RDMA_STATUS_H

#include <glib.h>
#include <infiniband/verbs.h>

G_BEGIN_DECLS

/* X (NAME, thrift transport error code, what it means / what to check) */
#define RDMA_STATUS_LIST(X)                                                                        \
  X (RDMA_OK, UNKNOWN, "success")                                                                  \
  X (RDMA_ERR_NO_DEVICE, SOCKET, "no RDMA device")                                                 \
  X (RDMA_ERR_NO_MEMORY, SOCKET,                                                                   \
     "out of memory or locked memory; raise 'ulimit -l' (memlock in "                              \
     "/etc/security/limits.conf) for the user, or run as root")                                    \
  X (RDMA_ERR_RESOLVE, HOST,                                                                       \
     "address or route resolution failed; check that the address belongs to an RDMA "              \
     "interface (not lo) and that the route to the peer leaves through it")                        \
  X (RDMA_ERR_REFUSED, CONNECT, "connection refused; is a server listening on the port?")          \
  X (RDMA_ERR_ADDR_IN_USE, SOCKET,                                                                 \
     "the port is in use; stop the other server or choose another port")                           \
  X (RDMA_ERR_UNREACHABLE, CONNECT,                                                                \
     "peer unreachable; check the port state (ibv_devinfo: PORT_ACTIVE), the RoCE GID "            \
     "of the address family and the link")                                                         \
  X (RDMA_ERR_VERSION, CONNECT, "the peer speaks another wire protocol version")                   \
  X (RDMA_ERR_TIMED_OUT, RECEIVE, "timed out")                                                     \
  X (RDMA_ERR_PEER_GONE, RECEIVE, "the peer disconnected or vanished (process killed, host down)") \
  X (RDMA_ERR_PROTOCOL, RECEIVE, "malformed message from the peer")                                \
  X (RDMA_ERR_TOO_LARGE, MAX_MESSAGE_SIZE_REACHED,                                                 \
     "message larger than the configuration's max message size")                                   \
  X (RDMA_ERR_COMPLETION, SEND, "a work request completed with an error")                          \
  X (RDMA_ERR_INTERRUPTED, SOCKET, "interrupted")                                                  \
  X (RDMA_ERR_NOT_OPEN, SOCKET, "the transport is not open")                                       \
  X (RDMA_ERR_SYSTEM, SOCKET, "system call failed")

#define RDMA_STATUS_ENUM(name, code, text) name,
typedef enum
{
  RDMA_STATUS_LIST (RDMA_STATUS_ENUM) RDMA_STATUS_COUNT
} RdmaStatus;
#undef RDMA_STATUS_ENUM

/* The engine's error domain: an error in it has an RdmaStatus as its code.  Never seen by a
 * caller of the public API. */
#define RDMA_ENGINE_ERROR (rdma_engine_error_quark ())
GQuark rdma_engine_error_quark (void);

/* "RDMA_ERR_TIMED_OUT" */
const gchar *rdma_status_name (RdmaStatus status);
/* What the status means and what to check. */
const gchar *rdma_status_text (RdmaStatus status);
/* The ThriftTransportErrorEnum value used for the status. */
gint rdma_status_thrift_code (RdmaStatus status);

/* The one mapper: an errno value of a verbs or rdma_cm call, or (if @wc_status is not -1) a
 * work completion status, to a status. */
RdmaStatus rdma_status_from_errno (int err);
RdmaStatus rdma_status_from_wc (enum ibv_wc_status wc_status);

/**
 * rdma_status_set_error:
 * @call: the verbs/CM call or engine step that failed ("ibv_reg_mr"), or NULL
 * @err: its errno, or 0
 * @wc_status: a work completion status, or -1
 * @fmt: printf format of the specifics (may be NULL)
 *
 * Sets @error in RDMA_ENGINE_ERROR, code @status, to
 * "CALL: SPECIFICS: errno N (strerror), completion status S: what it means/what to check".
 */
void rdma_status_set_error (GError **error, RdmaStatus status, const gchar *call, int err,
                            int wc_status, const gchar *fmt, ...) G_GNUC_PRINTF (6, 7);

G_END_DECLS

#endif
