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

enum { SIZE_CONFIGURATION, SIZE_REMAINING, SIZE_KNOW };

void
rdma_size_props_install (GObjectClass *cls, guint first)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;

  g_object_class_install_property (cls, first + SIZE_CONFIGURATION,
    g_param_spec_object ("configuration", "configuration",
                         "Thrift configuration (max message size)", THRIFT_TYPE_CONFIGURATION,
                         rw | G_PARAM_CONSTRUCT_ONLY));
  g_object_class_install_property (cls, first + SIZE_REMAINING,
    g_param_spec_long ("remainingmessagesize", "remainingmessagesize",
                       "Bytes that may still be read of the message", 0, G_MAXINT32,
                       DEFAULT_MAX_MESSAGE_SIZE, rw | G_PARAM_CONSTRUCT));
  g_object_class_install_property (cls, first + SIZE_KNOW,
    g_param_spec_long ("knowmessagesize", "knowmessagesize", "Known message size", 0,
                       G_MAXINT32, DEFAULT_MAX_MESSAGE_SIZE, rw | G_PARAM_CONSTRUCT));
}

gboolean
rdma_size_props_get (guint property_id, guint first, ThriftConfiguration *configuration,
                     glong remaining, glong know, GValue *value)
{
  switch (property_id - first) {
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
  switch (property_id - first) {
  case SIZE_CONFIGURATION:
    g_clear_object (configuration);
    *configuration = g_value_dup_object (value);
    if (*configuration != NULL) {
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

enum { BULK_THRESHOLD, BULK_CHUNK, BULK_DEPTH };

void
rdma_bulk_props_install (GObjectClass *cls, guint first)
{
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_CONSTRUCT;

  g_object_class_install_property (cls, first + BULK_THRESHOLD,
    g_param_spec_uint ("bulk-threshold", "bulk-threshold",
                       "Binary and string fields of at least this many bytes are lent to the "
                       "peer, which reads them by RDMA READ, instead of copied (0: never; "
                       "under 4096 counts as 4096); a payload_size hint beats it",
                       0, G_MAXUINT, RDMA_BULK_DEFAULT_THRESHOLD, rw));
  g_object_class_install_property (cls, first + BULK_CHUNK,
    g_param_spec_uint ("bulk-chunk", "bulk-chunk",
                       "Bytes per RDMA READ of a lent field (at least 4096)",
                       4096, G_MAXINT32, RDMA_BULK_DEFAULT_CHUNK, rw));
  g_object_class_install_property (cls, first + BULK_DEPTH,
    g_param_spec_uint ("bulk-depth", "bulk-depth",
                       "RDMA READs of a lent field in flight, bounded by the connection's "
                       "(1: unpipelined, the whole field registered before the first READ)",
                       1, 128, RDMA_BULK_DEFAULT_DEPTH, rw));
}

gboolean
rdma_bulk_props_get (guint property_id, guint first, const RdmaBulkProps *props,
                     GValue *value)
{
  switch (property_id - first) {
  case BULK_THRESHOLD:
    g_value_set_uint (value, props->threshold);
    return TRUE;
  case BULK_CHUNK:
    g_value_set_uint (value, props->chunk);
    return TRUE;
  case BULK_DEPTH:
    g_value_set_uint (value, props->depth);
    return TRUE;
  default:
    return FALSE;
  }
}

gboolean
rdma_bulk_props_set (guint property_id, guint first, RdmaBulkProps *props,
                     const GValue *value)
{
  switch (property_id - first) {
  case BULK_THRESHOLD:
    props->threshold = g_value_get_uint (value);
    return TRUE;
  case BULK_CHUNK:
    props->chunk = g_value_get_uint (value);
    return TRUE;
  case BULK_DEPTH:
    props->depth = g_value_get_uint (value);
    return TRUE;
  default:
    return FALSE;
  }
}
