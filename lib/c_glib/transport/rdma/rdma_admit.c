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

/* rdma_admit.c: see rdma_admit.h. */
#include "config.h"

#include "rdma_admit.h"
#include "rdma_wire.h"

guint16
rdma_admit_request (const void *data, gsize len, ThriftServerRdmaAdmitFunc func, gpointer user_data,
                    gchar **reason)
{
  guint8 token[RDMA_WIRE_PAIR_TOKEN_LEN];
  gboolean has_token = rdma_wire_pair_token_parse (data, len, token);
  gchar *why = NULL;

  *reason = NULL;
  if (func == NULL)
  {
    if (!has_token)
      return RDMA_WIRE_REFUSE_NONE;
    /* a client that believes it is one leg of a pair must not get a lone connection */
    *reason = g_strdup ("the request carries a pairing token and this server does not pair "
                        "connections (no admission function)");
    return RDMA_WIRE_REFUSE_NOT_PAIRING;
  }
  if (func (has_token ? token : NULL, user_data, &why))
  {
    g_free (why);
    return RDMA_WIRE_REFUSE_NONE;
  }
  *reason = why != NULL ? why : g_strdup ("the admission function refused it");
  return has_token ? RDMA_WIRE_REFUSE_UNKNOWN_TOKEN : RDMA_WIRE_REFUSE_TOKEN_REQUIRED;
}
