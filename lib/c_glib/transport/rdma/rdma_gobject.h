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
 * rdma_gobject.h: the properties ThriftRdma and ThriftServerRdma share: "configuration",
 * "remainingmessagesize" and "knowmessagesize" (their parents, ThriftTransport and
 * ThriftServerTransport, have the same three fields but no properties for them), and the
 * bulk transfer ones.  A class numbers each group consecutively from @first.
 */
#ifndef _RDMA_GOBJECT_H
#define _RDMA_GOBJECT_H

#include <glib-object.h>

#include <thrift/c_glib/thrift_configuration.h>

G_BEGIN_DECLS

void rdma_size_props_install (GObjectClass *cls, guint first);
/* FALSE if @property_id is not one of the three. */
gboolean rdma_size_props_get (guint property_id, guint first, ThriftConfiguration *configuration,
                              glong remaining, glong know, GValue *value);
gboolean rdma_size_props_set (guint property_id, guint first,
                              ThriftConfiguration **configuration, glong *remaining,
                              glong *know, const GValue *value);

/* The bulk transfer properties ("bulk-threshold", "bulk-chunk", "bulk-depth"; rdma_bulk.h)
 * that both classes have, numbered consecutively from @first as well. */
typedef struct
{
  guint threshold;     /* fields this large are lent (0: never) */
  guint chunk;         /* bytes per READ of a lent field */
  guint depth;         /* READs of a field in flight (1: unpipelined) */
} RdmaBulkProps;

void rdma_bulk_props_install (GObjectClass *cls, guint first);
/* FALSE if @property_id is not one of the three. */
gboolean rdma_bulk_props_get (guint property_id, guint first, const RdmaBulkProps *props,
                              GValue *value);
gboolean rdma_bulk_props_set (guint property_id, guint first, RdmaBulkProps *props,
                              const GValue *value);

G_END_DECLS

#endif
