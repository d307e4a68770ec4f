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

/* rdma_proto.c: the protocol registry. */
#include "config.h"

#include <string.h>

#include "rdma_proto.h"

const RdmaProtoOps *const rdma_proto_registry[RDMA_PROTO_COUNT] = {
  [RDMA_PROTO_EAGER] = &rdma_proto_eager_ops,
  [RDMA_PROTO_WRITE_RNDV] = &rdma_proto_write_rndv_ops,
  [RDMA_PROTO_READ_RNDV] = &rdma_proto_read_rndv_ops,
  [RDMA_PROTO_DIRECT_WRITE_SEND] = &rdma_proto_direct_write_send_ops,
  [RDMA_PROTO_CHAINED_WRITE_SEND] = &rdma_proto_chained_write_send_ops,
  [RDMA_PROTO_DIRECT_WRITE_IMM] = &rdma_proto_direct_write_imm_ops,
  [RDMA_PROTO_RFP] = &rdma_proto_rfp_ops,
  [RDMA_PROTO_BATCHED_WRITE] = &rdma_proto_batched_write_ops,
};

const RdmaProtoOps *
rdma_proto_by_id (guint id)
{
  return id < RDMA_PROTO_COUNT ? rdma_proto_registry[id] : NULL;
}

const RdmaProtoOps *
rdma_proto_by_name (const gchar *name)
{
  for (guint i = 0; i < RDMA_PROTO_COUNT; i++)
    if (rdma_proto_registry[i] != NULL && g_strcmp0 (rdma_proto_registry[i]->name, name) == 0)
      return rdma_proto_registry[i];
  return NULL;
}

const RdmaProtoOps *
rdma_proto_for_hint (ThriftHintProto hint)
{
  for (guint i = 0; i < RDMA_PROTO_COUNT; i++)
    if (rdma_proto_registry[i] != NULL && rdma_proto_registry[i]->hint == hint)
      return rdma_proto_registry[i];
  return NULL;
}

guint16
rdma_proto_implemented (void)
{
  guint16 bits = 0;

  for (guint i = 0; i < RDMA_PROTO_COUNT; i++)
    if (rdma_proto_registry[i] != NULL)
      bits |= (guint16) (1u << i);
  return bits;
}
