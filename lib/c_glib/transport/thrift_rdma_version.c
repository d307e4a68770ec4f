#include "config.h"

#include <thrift/c_glib/transport/thrift_rdma_version.h>

#include "rdma/rdma_device.h"

const gchar *
thrift_rdma_version_string (void)
{
  return PACKAGE_VERSION;
}

gboolean
thrift_rdma_device_available (GError **error)
{
  return rdma_device_probe (error) > 0;
}
