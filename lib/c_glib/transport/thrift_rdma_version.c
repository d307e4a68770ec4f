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

#include "config.h"

#include <thrift/c_glib/transport/thrift_rdma_version.h>

#include "rdma/rdma_device.h"
#include "rdma/rdma_transport.h"

const gchar *
thrift_rdma_version_string (void)
{
  return PACKAGE_VERSION;
}

gboolean
thrift_rdma_device_available (GError **error)
{
  GError *e = NULL;

  if (rdma_device_probe (&e) > 0)
    return TRUE;
  rdma_error_to_thrift (&e);
  g_propagate_error (error, e);
  return FALSE;
}
