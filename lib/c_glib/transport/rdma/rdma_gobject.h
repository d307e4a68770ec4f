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

#include "rdma_conn.h"

G_BEGIN_DECLS

void rdma_size_props_install (GObjectClass *cls, guint first);
/* FALSE if @property_id is not one of the three. */
gboolean rdma_size_props_get (guint property_id, guint first, ThriftConfiguration *configuration,
                              glong remaining, glong know, GValue *value);
gboolean rdma_size_props_set (guint property_id, guint first, ThriftConfiguration **configuration,
                              glong *remaining, glong *know, const GValue *value);

/* "max-pinned-bytes" (rdma_budget.h), a guint64 property of all four classes. */
void rdma_budget_prop_install (GObjectClass *cls, guint id);

/* The bulk transfer properties that both classes have (and ThriftHybrid and
 * ThriftServerHybrid, which hand them to their RDMA legs), RDMA_BULK_PROPS_N of them numbered
 * consecutively from @first as well: "bulk-threshold", "bulk-chunk", "bulk-depth"
 * (rdma_bulk.h) and "rcache-entries", "rcache-bytes" (the bounds of the connection's
 * registration cache, rdma_rcache.h). */
#define RDMA_BULK_PROPS_N 5
typedef struct
{
  guint threshold;        /* fields this large are lent (0: never) */
  gboolean threshold_set; /* by the user: lend from it always, not by measurement */
  gboolean server;        /* a server's (or its accepted connection's): at the default, its
                             replies' fields are staged (rdma_bulk_stage.h), not lent */
  guint chunk;            /* bytes per READ of a lent field */
  guint depth;            /* READs of a field in flight (1: unpipelined) */
  guint rcache_entries;   /* registrations the cache keeps at most, in use or not */
  guint64 rcache_bytes;   /* bytes they pin at most */
} RdmaBulkProps;

/* @server: a server's (for the connections it accepts): its "bulk-threshold" defaults to
 * RDMA_BULK_SERVER_DEFAULT_THRESHOLD. */
void rdma_bulk_props_install (GObjectClass *cls, guint first, gboolean server);
/* The threshold's default, from the instance's init (and an accepted connection's, @server):
 * it is not a construct property, so that a threshold the user set can be told from the
 * default (rdma_lend_cost.h). */
void rdma_bulk_props_init (RdmaBulkProps *props, gboolean server);
/* FALSE if @property_id is not one of them. */
gboolean rdma_bulk_props_get (guint property_id, guint first, const RdmaBulkProps *props,
                              GValue *value);
gboolean rdma_bulk_props_set (guint property_id, guint first, RdmaBulkProps *props,
                              const GValue *value);
/* What of them a connection's settings carry (all but the threshold, which is the shell's). */
void rdma_bulk_props_to_settings (const RdmaBulkProps *props, RdmaConnSettings *settings);
/* All of them onto @object, a ThriftRdma or ThriftServerRdma (a hybrid's leg, an accepted
 * connection). */
void rdma_bulk_props_apply (const RdmaBulkProps *props, gpointer object);

G_END_DECLS

#endif
