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

/* rdma_gobject.c: the properties shared by the two GObject classes. */
#include "config.h"

#include "rdma_bulk_msg.h"
#include "rdma_gobject.h"

enum
{
  SIZE_CONFIGURATION,
  SIZE_REMAINING,
  SIZE_KNOW
};

void
rdma_size_props_install (GObjectClass *cls, guint first)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;

  g_object_class_install_property (cls, first + SIZE_CONFIGURATION,
                                   g_param_spec_object ("configuration", "configuration",
                                                        "Thrift configuration (max message size)",
                                                        THRIFT_TYPE_CONFIGURATION,
                                                        rw | G_PARAM_CONSTRUCT_ONLY));
  g_object_class_install_property (
      cls, first + SIZE_REMAINING,
      g_param_spec_long ("remainingmessagesize", "remainingmessagesize",
                         "Bytes that may still be read of the message", 0, G_MAXINT32,
                         DEFAULT_MAX_MESSAGE_SIZE, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (
      cls, first + SIZE_KNOW,
      g_param_spec_long ("knowmessagesize", "knowmessagesize", "Known message size", 0, G_MAXINT32,
                         DEFAULT_MAX_MESSAGE_SIZE, rw | G_PARAM_CONSTRUCT));
}

gboolean
rdma_size_props_get (guint property_id, guint first, ThriftConfiguration *configuration,
                     glong remaining, glong know, GValue *value)
{
  switch (property_id - first)
  {
  case SIZE_CONFIGURATION:
    g_value_set_object (value, configuration);
    return TRUE;
  case SIZE_REMAINING:
    g_value_set_long (value, remaining);
    return TRUE;
  case SIZE_KNOW:
    g_value_set_long (value, know);
    return TRUE;
  default:
    return FALSE;
  }
}

gboolean
rdma_size_props_set (guint property_id, guint first, ThriftConfiguration **configuration,
                     glong *remaining, glong *know, const GValue *value)
{
  switch (property_id - first)
  {
  case SIZE_CONFIGURATION:
    g_clear_object (configuration);
    *configuration = g_value_dup_object (value);
    if (*configuration != NULL)
    {
      *remaining = (*configuration)->maxMessageSize_;
      *know = (*configuration)->maxMessageSize_;
    }
    return TRUE;
  case SIZE_REMAINING:
    *remaining = g_value_get_long (value);
    return TRUE;
  case SIZE_KNOW:
    *know = g_value_get_long (value);
    return TRUE;
  default:
    return FALSE;
  }
}

void
rdma_budget_prop_install (GObjectClass *cls, guint id)
{
  g_object_class_install_property (
      cls, id,
      g_param_spec_uint64 ("max-pinned-bytes", "max-pinned-bytes",
                           "Bytes the process may pin before buffers that only speed "
                           "connections up (direct rings, batched-write slots, RFP regions, the "
                           "shared receive queue's growth) are no longer made; connections keep "
                           "working by Eager-SendRecv.  The budget is the process's: the "
                           "smallest any transport asks for (0: an eighth of the machine's "
                           "memory, at most RLIMIT_MEMLOCK unless root)",
                           0, G_MAXUINT64, 0,
                           G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_CONSTRUCT));
}

enum
{
  BULK_THRESHOLD,
  BULK_CHUNK,
  BULK_DEPTH,
  BULK_RCACHE_ENTRIES,
  BULK_RCACHE_BYTES
};
G_STATIC_ASSERT (BULK_RCACHE_BYTES + 1 == RDMA_BULK_PROPS_N);

void
rdma_bulk_props_install (GObjectClass *cls, guint first, gboolean server)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_CONSTRUCT;

  g_object_class_install_property (
      cls, first + BULK_THRESHOLD,
      g_param_spec_uint ("bulk-threshold", "bulk-threshold",
                         "Binary and string fields of at least this many bytes are lent to the "
                         "peer, which reads them by RDMA READ, instead of copied (0: never; "
                         "under 4096 counts as 4096); a payload_size hint beats it.  Left at its "
                         "default, a field is lent or copied by which of the two measured "
                         "cheaper on the device for its size; set, always lent.  A lent "
                         "field's bytes must stay as they are until the flush that ends its "
                         "message returns: servers default to 0, since c_glib's generated "
                         "processors free a reply's fields before that flush; left at that, a "
                         "server stages its replies' fields from 16 KiB (copies them once into "
                         "a buffer of the connection's own, which the peer reads) or copies "
                         "them, by which measured cheaper",
                         0, G_MAXUINT,
                         server ? RDMA_BULK_SERVER_DEFAULT_THRESHOLD : RDMA_BULK_DEFAULT_THRESHOLD,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (
      cls, first + BULK_CHUNK,
      g_param_spec_uint ("bulk-chunk", "bulk-chunk",
                         "Bytes per RDMA READ of a lent field (at least 4096)", 4096, G_MAXINT32,
                         RDMA_BULK_DEFAULT_CHUNK, rw));
  g_object_class_install_property (
      cls, first + BULK_DEPTH,
      g_param_spec_uint ("bulk-depth", "bulk-depth",
                         "RDMA READs of a lent field in flight, bounded by the connection's "
                         "(1: unpipelined, the whole field registered before the first READ)",
                         1, 128, RDMA_BULK_DEFAULT_DEPTH, rw));
  /* the device's cache, shared by the process's connections on it (rdma_domain.h), is made
   * at the first lent or pulled field and raised to the largest bounds any connection asks;
   * a scan of its entries finds a buffer, hence the ceiling on their number */
  g_object_class_install_property (
      cls, first + BULK_RCACHE_ENTRIES,
      g_param_spec_uint ("rcache-entries", "rcache-entries",
                         "Memory registrations the device's registration cache (shared by the "
                         "process's connections; the largest any asks) keeps at most, "
                         "in use or cached for reuse (least recently used dropped first): a "
                         "field lent or pulled whole is one while in use, a pipelined pull one "
                         "per registration window (one bulk-chunk, then doubling to 4 MiB) "
                         "until the field is in; a call that needs more than this fails",
                         RDMA_BULK_RCACHE_ENTRIES_MIN, RDMA_BULK_RCACHE_ENTRIES_MAX,
                         RDMA_BULK_DEFAULT_RCACHE_ENTRIES, rw));
  g_object_class_install_property (
      cls, first + BULK_RCACHE_BYTES,
      g_param_spec_uint64 ("rcache-bytes", "rcache-bytes",
                           "Bytes of memory the device's registration cache (shared by the "
                           "process's connections; the largest any asks) keeps registered "
                           "(pinned) at most, in use or cached for reuse; a call whose fields "
                           "in use need more than this fails",
                           RDMA_BULK_RCACHE_BYTES_MIN, RDMA_BULK_RCACHE_BYTES_MAX,
                           RDMA_BULK_DEFAULT_RCACHE_BYTES, rw));
}

void
rdma_bulk_props_init (RdmaBulkProps *props, gboolean server)
{
  props->threshold = server ? RDMA_BULK_SERVER_DEFAULT_THRESHOLD : RDMA_BULK_DEFAULT_THRESHOLD;
  props->threshold_set = FALSE;
  props->server = server;
}

gboolean
rdma_bulk_props_get (guint property_id, guint first, const RdmaBulkProps *props, GValue *value)
{
  switch (property_id - first)
  {
  case BULK_THRESHOLD:
    g_value_set_uint (value, props->threshold);
    return TRUE;
  case BULK_CHUNK:
    g_value_set_uint (value, props->chunk);
    return TRUE;
  case BULK_DEPTH:
    g_value_set_uint (value, props->depth);
    return TRUE;
  case BULK_RCACHE_ENTRIES:
    g_value_set_uint (value, props->rcache_entries);
    return TRUE;
  case BULK_RCACHE_BYTES:
    g_value_set_uint64 (value, props->rcache_bytes);
    return TRUE;
  default:
    return FALSE;
  }
}

gboolean
rdma_bulk_props_set (guint property_id, guint first, RdmaBulkProps *props, const GValue *value)
{
  switch (property_id - first)
  {
  case BULK_THRESHOLD:
    props->threshold = g_value_get_uint (value);
    props->threshold_set = TRUE;
    return TRUE;
  case BULK_CHUNK:
    props->chunk = g_value_get_uint (value);
    return TRUE;
  case BULK_DEPTH:
    props->depth = g_value_get_uint (value);
    return TRUE;
  case BULK_RCACHE_ENTRIES:
    props->rcache_entries = g_value_get_uint (value);
    return TRUE;
  case BULK_RCACHE_BYTES:
    props->rcache_bytes = g_value_get_uint64 (value);
    return TRUE;
  default:
    return FALSE;
  }
}

void
rdma_bulk_props_to_settings (const RdmaBulkProps *props, RdmaConnSettings *settings)
{
  settings->bulk_chunk = props->chunk;
  settings->bulk_depth = props->depth;
  settings->rcache_entries = props->rcache_entries;
  settings->rcache_bytes = props->rcache_bytes;
}

void
rdma_bulk_props_apply (const RdmaBulkProps *props, gpointer object)
{
  guint threshold;

  /* the default is handed on as the default, so that the leg or the accepted connection still
   * measures; a server's (0) differs from a ThriftRdma's and is set */
  g_object_get (object, "bulk-threshold", &threshold, NULL);
  if (props->threshold_set || props->threshold != threshold)
    g_object_set (object, "bulk-threshold", props->threshold, NULL);
  g_object_set (object, "bulk-chunk", props->chunk, "bulk-depth", props->depth, "rcache-entries",
                props->rcache_entries, "rcache-bytes", props->rcache_bytes, NULL);
}
