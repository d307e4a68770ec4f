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
 * fuzz_uri.c: transport URIs (thrift_transport_uri.h) as a user or a configuration file
 * gives them.  Each is parsed for a client and for a server; one that parses is described and
 * its transport built (objects only: nothing opens a socket or a device before open or
 * listen), and building it must neither fail nor warn (a value the parser let through that
 * a property refuses); one that does not parse must fail to build, with an error in
 * THRIFT_TRANSPORT_URI_ERROR.  No descriptor outlives its object.
 */
#include "config.h"

#include <string.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "test/fuzz/fuzz_common.h"
#include "test/fuzz/fuzz_thrift.h"

static void
check (const gchar *uri, gboolean for_server)
{
  GError *error = NULL;
  ThriftTransportUri *u = thrift_transport_uri_parse (uri, for_server, &error);
  ThriftTransportFactory *in = NULL, *out = NULL;
  GObject *t;

  fuzz_check_outcome ("thrift_transport_uri_parse", u != NULL, &error);
  if (u != NULL)
  {
    gchar *text = thrift_transport_uri_describe (u);

    FUZZ_ASSERT (text != NULL && text[0] != '\0');
    FUZZ_ASSERT (u->port >= 1 && u->port <= 65535 && u->host != NULL);
    FUZZ_ASSERT (for_server || u->host[0] != '\0');
    g_free (text);
  }
  if (for_server)
    t = G_OBJECT (thrift_server_transport_new_for_uri (uri, &in, &out, &error));
  else
    t = G_OBJECT (thrift_transport_new_for_uri (uri, &error));
  if ((t != NULL) != (u != NULL))
    FUZZ_FAIL ("'%s' %s, but its transport %s built", uri, u != NULL ? "parses" : "does not parse",
               t != NULL ? "is" : "is not");
  if (t == NULL)
    FUZZ_ASSERT (error != NULL && error->domain == THRIFT_TRANSPORT_URI_ERROR);
  fuzz_check_outcome ("building the transport of a URI", t != NULL, &error);
  if (t != NULL)
    g_object_unref (t);
  if (in != NULL)
    g_object_unref (in);
  if (out != NULL)
    g_object_unref (out);
  thrift_transport_uri_free (u);
}

/* Eventfds and sockets open: what the transports' objects make (the sanitizers' own
 * descriptors, a symbolizer's pipes, are neither). */
static guint
objects_fds (void)
{
  GDir *dir = g_dir_open ("/proc/self/fd", 0, NULL);
  const gchar *name;
  guint n = 0;

  FUZZ_ASSERT (dir != NULL);
  while ((name = g_dir_read_name (dir)) != NULL)
  {
    g_autofree gchar *path = g_build_filename ("/proc/self/fd", name, NULL);
    g_autofree gchar *what = g_file_read_link (path, NULL);

    if (what != NULL && (g_str_has_prefix (what, "socket:") || strstr (what, "eventfd")))
      n++;
  }
  g_dir_close (dir);
  return n;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static guint before = G_MAXUINT;
  gchar *uri = g_strndup ((const gchar *) data, size);
  guint now;

  fuzz_init ();
  check (uri, FALSE);
  check (uri, TRUE);
  g_free (uri);
  /* the descriptors the objects made were closed with them */
  now = objects_fds ();
  if (before == G_MAXUINT)
    before = now;
  if (now > before)
    FUZZ_FAIL ("%u eventfds or sockets open after the objects went, %u before", now, before);
  return 0;
}

FUZZ_THRIFT_OBJECTS ("hybrid://h:1?keepalive=5")
