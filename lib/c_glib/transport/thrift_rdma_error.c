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
 * thrift_rdma_error.c: the error boundary of the GObject shells (second error layer).
 *
 * The engine's errors are in RDMA_ENGINE_ERROR, their code an RdmaStatus (rdma_status.h).
 * ThriftRdma and ThriftServerRdma pass every one through rdma_error_to_thrift before it leaves
 * them: it becomes THRIFT_TRANSPORT_ERROR with rdma_status_thrift_code (), its message
 * unchanged, and its status is remembered twice: by the object (thrift_rdma_get_last_status,
 * an atomic of the shell) and by the thread, errno-like, with the error's code and message,
 * so that thrift_rdma_error_status recognises that error (a copy, a prefixed one) and nothing
 * else.
 */
#include "config.h"

#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_transport.h>

#include "rdma/rdma_status.h"
#include "rdma/rdma_transport.h"

/* The public status of each engine status; a status added to RDMA_STATUS_LIST without its
 * public twin fails to compile here (the size), one added in the middle fails the table
 * test (/rdma_engine/status/boundary). */
static const ThriftRdmaStatus public_status[] = {
  [RDMA_OK] = THRIFT_RDMA_STATUS_OK,
  [RDMA_ERR_NO_DEVICE] = THRIFT_RDMA_STATUS_NO_DEVICE,
  [RDMA_ERR_NO_MEMORY] = THRIFT_RDMA_STATUS_NO_MEMORY,
  [RDMA_ERR_RESOLVE] = THRIFT_RDMA_STATUS_RESOLVE,
  [RDMA_ERR_REFUSED] = THRIFT_RDMA_STATUS_REFUSED,
  [RDMA_ERR_ADDR_IN_USE] = THRIFT_RDMA_STATUS_ADDR_IN_USE,
  [RDMA_ERR_UNREACHABLE] = THRIFT_RDMA_STATUS_UNREACHABLE,
  [RDMA_ERR_VERSION] = THRIFT_RDMA_STATUS_VERSION,
  [RDMA_ERR_TIMED_OUT] = THRIFT_RDMA_STATUS_TIMED_OUT,
  [RDMA_ERR_PEER_GONE] = THRIFT_RDMA_STATUS_PEER_GONE,
  [RDMA_ERR_PROTOCOL] = THRIFT_RDMA_STATUS_PROTOCOL,
  [RDMA_ERR_TOO_LARGE] = THRIFT_RDMA_STATUS_TOO_LARGE,
  [RDMA_ERR_COMPLETION] = THRIFT_RDMA_STATUS_COMPLETION,
  [RDMA_ERR_INTERRUPTED] = THRIFT_RDMA_STATUS_INTERRUPTED,
  [RDMA_ERR_NOT_OPEN] = THRIFT_RDMA_STATUS_NOT_OPEN,
  [RDMA_ERR_SYSTEM] = THRIFT_RDMA_STATUS_SYSTEM,
};
G_STATIC_ASSERT (G_N_ELEMENTS (public_status) == RDMA_STATUS_COUNT);

/* The last engine error this thread's shells let out. */
typedef struct
{
  ThriftRdmaStatus status;
  gint code;      /* its THRIFT_TRANSPORT_ERROR code */
  gchar *message; /* (owned) */
} LastError;

static void
last_error_free (gpointer data)
{
  LastError *last = data;

  g_free (last->message);
  g_free (last);
}

static GPrivate last_error = G_PRIVATE_INIT (last_error_free);

GType
thrift_rdma_status_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    { THRIFT_RDMA_STATUS_OK, "THRIFT_RDMA_STATUS_OK", "ok" },
    { THRIFT_RDMA_STATUS_NO_DEVICE, "THRIFT_RDMA_STATUS_NO_DEVICE", "no-device" },
    { THRIFT_RDMA_STATUS_NO_MEMORY, "THRIFT_RDMA_STATUS_NO_MEMORY", "no-memory" },
    { THRIFT_RDMA_STATUS_RESOLVE, "THRIFT_RDMA_STATUS_RESOLVE", "resolve" },
    { THRIFT_RDMA_STATUS_REFUSED, "THRIFT_RDMA_STATUS_REFUSED", "refused" },
    { THRIFT_RDMA_STATUS_ADDR_IN_USE, "THRIFT_RDMA_STATUS_ADDR_IN_USE", "addr-in-use" },
    { THRIFT_RDMA_STATUS_UNREACHABLE, "THRIFT_RDMA_STATUS_UNREACHABLE", "unreachable" },
    { THRIFT_RDMA_STATUS_VERSION, "THRIFT_RDMA_STATUS_VERSION", "version" },
    { THRIFT_RDMA_STATUS_TIMED_OUT, "THRIFT_RDMA_STATUS_TIMED_OUT", "timed-out" },
    { THRIFT_RDMA_STATUS_PEER_GONE, "THRIFT_RDMA_STATUS_PEER_GONE", "peer-gone" },
    { THRIFT_RDMA_STATUS_PROTOCOL, "THRIFT_RDMA_STATUS_PROTOCOL", "protocol" },
    { THRIFT_RDMA_STATUS_TOO_LARGE, "THRIFT_RDMA_STATUS_TOO_LARGE", "too-large" },
    { THRIFT_RDMA_STATUS_COMPLETION, "THRIFT_RDMA_STATUS_COMPLETION", "completion" },
    { THRIFT_RDMA_STATUS_INTERRUPTED, "THRIFT_RDMA_STATUS_INTERRUPTED", "interrupted" },
    { THRIFT_RDMA_STATUS_NOT_OPEN, "THRIFT_RDMA_STATUS_NOT_OPEN", "not-open" },
    { THRIFT_RDMA_STATUS_SYSTEM, "THRIFT_RDMA_STATUS_SYSTEM", "system" },
    { 0, NULL, NULL }
  };
  if (g_once_init_enter (&type))
  {
    GType t = g_enum_register_static ("ThriftRdmaStatus", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

static ThriftRdmaStatus
public_of (gint status)
{
  return status >= 0 && status < RDMA_STATUS_COUNT ? public_status[status]
                                                   : THRIFT_RDMA_STATUS_SYSTEM;
}

ThriftRdmaStatus
rdma_error_to_thrift (GError **error)
{
  GError *e = error != NULL ? *error : NULL;
  LastError *last;
  ThriftRdmaStatus status;

  if (e == NULL || e->domain != RDMA_ENGINE_ERROR)
    return THRIFT_RDMA_STATUS_OK;
  status = public_of (e->code);
  e->domain = THRIFT_TRANSPORT_ERROR;
  e->code = rdma_status_thrift_code ((RdmaStatus) e->code);
  last = g_private_get (&last_error);
  if (last == NULL)
  {
    last = g_new0 (LastError, 1);
    g_private_set (&last_error, last);
  }
  last->status = status;
  last->code = e->code;
  g_free (last->message);
  last->message = g_strdup (e->message);
  return status;
}

ThriftRdmaStatus
thrift_rdma_error_status (const GError *error)
{
  const LastError *last;

  if (error == NULL)
    return THRIFT_RDMA_STATUS_OK;
  if (error->domain == RDMA_ENGINE_ERROR) /* not expected out of the shells */
    return public_of (error->code);
  last = g_private_get (&last_error);
  if (last == NULL || error->domain != THRIFT_TRANSPORT_ERROR || error->code != last->code
      || error->message == NULL || !g_str_has_suffix (error->message, last->message))
    return THRIFT_RDMA_STATUS_OK;
  return last->status;
}
