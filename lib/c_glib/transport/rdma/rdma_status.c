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

/* rdma_status.c: status strings, the errno/completion mapper and the status-to-GError helper
 * (RDMA_ENGINE_ERROR). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>

#include <thrift/c_glib/transport/thrift_transport.h>

#include "rdma_status.h"

#define RDMA_STATUS_NAME(name, code, text) #name,
static const gchar *const status_names[] = { RDMA_STATUS_LIST (RDMA_STATUS_NAME) };
#undef RDMA_STATUS_NAME

#define RDMA_STATUS_TEXT(name, code, text) text,
static const gchar *const status_texts[] = { RDMA_STATUS_LIST (RDMA_STATUS_TEXT) };
#undef RDMA_STATUS_TEXT

#define RDMA_STATUS_CODE(name, code, text) THRIFT_TRANSPORT_ERROR_##code,
static const gint status_codes[] = { RDMA_STATUS_LIST (RDMA_STATUS_CODE) };
#undef RDMA_STATUS_CODE

G_STATIC_ASSERT (G_N_ELEMENTS (status_names) == RDMA_STATUS_COUNT);

/* the domain is spelled out as it is, not an expression */
/* clang-format off */
G_DEFINE_QUARK (rdma-engine-error-quark, rdma_engine_error)
/* clang-format on */

const gchar *
rdma_status_name (RdmaStatus status)
{
  return (guint) status < RDMA_STATUS_COUNT ? status_names[status] : "RDMA_ERR_?";
}

const gchar *
rdma_status_text (RdmaStatus status)
{
  return (guint) status < RDMA_STATUS_COUNT ? status_texts[status] : "unknown status";
}

gint
rdma_status_thrift_code (RdmaStatus status)
{
  return (guint) status < RDMA_STATUS_COUNT ? status_codes[status] : THRIFT_TRANSPORT_ERROR_UNKNOWN;
}

RdmaStatus
rdma_status_from_errno (int err)
{
  switch (err)
  {
  case 0:
    return RDMA_OK;
  case ENOMEM:
  case EAGAIN:
  case ENOBUFS:
    return RDMA_ERR_NO_MEMORY;
  case ENODEV:
  case ENOSYS:
    return RDMA_ERR_NO_DEVICE;
  case ECONNREFUSED:
    return RDMA_ERR_REFUSED;
  case ETIMEDOUT:
    return RDMA_ERR_TIMED_OUT;
  case EHOSTUNREACH:
  case ENETUNREACH:
    return RDMA_ERR_UNREACHABLE;
  case EADDRNOTAVAIL:
  case ENODATA:
    return RDMA_ERR_RESOLVE;
  case ECONNRESET:
  case EPIPE:
  case ENOTCONN:
    return RDMA_ERR_PEER_GONE;
  case EINTR:
    return RDMA_ERR_INTERRUPTED;
  default:
    return RDMA_ERR_SYSTEM;
  }
}

RdmaStatus
rdma_status_from_wc (enum ibv_wc_status wc_status)
{
  switch (wc_status)
  {
  case IBV_WC_SUCCESS:
    return RDMA_OK;
  case IBV_WC_RETRY_EXC_ERR:
  case IBV_WC_RNR_RETRY_EXC_ERR:
  case IBV_WC_REM_ABORT_ERR:
  case IBV_WC_WR_FLUSH_ERR:
    return RDMA_ERR_PEER_GONE;
  case IBV_WC_LOC_LEN_ERR:
  case IBV_WC_REM_INV_REQ_ERR:
    return RDMA_ERR_PROTOCOL;
  default:
    return RDMA_ERR_COMPLETION;
  }
}

void
rdma_status_set_error (GError **error, RdmaStatus status, const gchar *call, int err, int wc_status,
                       const gchar *fmt, ...)
{
  GString *msg;

  if (error == NULL)
    return;
  msg = g_string_new (NULL);
  if (call != NULL)
    g_string_append_printf (msg, "%s: ", call);
  if (fmt != NULL)
  {
    va_list ap;
    va_start (ap, fmt);
    g_string_append_vprintf (msg, fmt, ap);
    va_end (ap);
    g_string_append (msg, ": ");
  }
  if (err != 0)
    g_string_append_printf (msg, "errno %d (%s), ", err, g_strerror (err));
  if (wc_status >= 0)
    g_string_append_printf (msg, "completion status %s, ",
                            ibv_wc_status_str ((enum ibv_wc_status) wc_status));
  g_string_append (msg, rdma_status_text (status));
  g_set_error_literal (error, RDMA_ENGINE_ERROR, status, msg->str);
  g_string_free (msg, TRUE);
}
