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

/* Finding RDMA devices, with errors that say what to check. Internal to the engine. */
#ifndef _RDMA_DEVICE_H
#define _RDMA_DEVICE_H

#include <glib.h>

G_BEGIN_DECLS

/* Number of RDMA devices on this host (> 0), or 0 with @error set to the cause. */
gint rdma_device_probe (GError **error);

G_END_DECLS

#endif
