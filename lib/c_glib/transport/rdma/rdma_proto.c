/* rdma_proto.c: the protocol registry. */
#include "config.h"

#include <string.h>

#include "rdma_proto.h"

const RdmaProtoOps *const rdma_proto_registry[RDMA_PROTO_COUNT + 1] = {
  [RDMA_PROTO_EAGER] = &rdma_proto_eager_ops,
  [RDMA_PROTO_COUNT] = NULL,
};

const RdmaProtoOps *
rdma_proto_by_id (guint id)
{
  return id < RDMA_PROTO_COUNT ? rdma_proto_registry[id] : NULL;
}

const RdmaProtoOps *
rdma_proto_by_name (const gchar *name)
{
  for (const RdmaProtoOps *const *p = rdma_proto_registry; *p != NULL; p++)
    if (g_strcmp0 ((*p)->name, name) == 0)
      return *p;
  return NULL;
}

const RdmaProtoOps *
rdma_proto_for_hint (ThriftHintProto hint)
{
  for (const RdmaProtoOps *const *p = rdma_proto_registry; *p != NULL; p++)
    if ((*p)->hint == hint)
      return *p;
  return &rdma_proto_eager_ops;
}
