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

/* Device discovery: the answer matches what the kernel exposes, and a host without a device
 * gets an error that says what to do. Runs on the host (no device) and in the guest (two). */
#include "config.h"

#include <string.h>

#include <glib.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_rdma_version.h>
#include <thrift/c_glib/transport/thrift_transport.h>

static guint
kernel_device_count (void)
{
  GDir *dir = g_dir_open ("/sys/class/infiniband", 0, NULL);
  guint n = 0;

  if (dir == NULL)
    return 0;
  while (g_dir_read_name (dir) != NULL)
    n++;
  g_dir_close (dir);
  return n;
}

static void
test_available_matches_kernel (void)
{
  GError *error = NULL;
  gboolean available = thrift_rdma_device_available (&error);

  if (kernel_device_count () > 0)
  {
    g_assert_no_error (error);
    g_assert_true (available);
  }
  else
  {
    g_assert_false (available);
    g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET);
    g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_NO_DEVICE);
    g_assert_true (g_str_has_prefix (error->message, "no RDMA device"));
    /* the message tells the user what to do */
    g_assert_nonnull (strstr (error->message, "rdma link add"));
    g_error_free (error);
  }
}

static void
test_version (void)
{
  g_assert_cmpstr (thrift_rdma_version_string (), ==, PACKAGE_VERSION);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/device/available_matches_kernel", test_available_matches_kernel);
  g_test_add_func ("/device/version", test_version);
  return g_test_run ();
}
