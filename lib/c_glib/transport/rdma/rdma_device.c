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

#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "rdma_device.h"
#include "rdma_status.h"

gint
rdma_device_probe (GError **error)
{
  struct ibv_device **list;
  int n = 0;

  errno = 0;
  list = ibv_get_device_list (&n);
  if (list == NULL)
  {
    int err = errno;
    g_set_error (error, RDMA_ENGINE_ERROR, RDMA_ERR_NO_DEVICE,
                 "no RDMA device: ibv_get_device_list failed (%s); the kernel has no "
                 "RDMA support loaded (ib_uverbs). Load your NIC's driver, or soft-RoCE with "
                 "'modprobe rdma_rxe && rdma link add rxe0 type rxe netdev IFACE', or run "
                 "under test/softroce/run-in-guest",
                 g_strerror (err ? err : ENOSYS));
    return 0;
  }
  ibv_free_device_list (list);
  if (n == 0)
  {
    g_set_error (error, RDMA_ENGINE_ERROR, RDMA_ERR_NO_DEVICE,
                 "no RDMA device: the kernel supports RDMA but no device is present "
                 "(ibv_devices lists none). Check the NIC driver, or add a soft-RoCE device "
                 "with 'rdma link add rxe0 type rxe netdev IFACE'");
    return 0;
  }
  return n;
}
