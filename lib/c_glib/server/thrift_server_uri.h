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
 * Servers from URIs: a ThriftThreadedServer for a processor on a URI of
 * thrift_transport_uri.h (tcp://, rdma://, hybrid://) in one call, and a server program's
 * main loop: serve processors on URIs, one server each, side by side, until SIGINT or
 * SIGTERM.
 *
 *   gchar *uris[] = { "rdma://:9090", NULL };
 *   GObject *processors[] = { processor };
 *
 *   return thrift_server_serve_uris (uris, processors, THRIFT_THREADED_SERVER_POOL, NULL,
 *                                    &error);
 */
#ifndef _THRIFT_SERVER_URI_H
#define _THRIFT_SERVER_URI_H

#include <glib-object.h>

#include <thrift/c_glib/server/thrift_threaded_server.h>

G_BEGIN_DECLS

/* A ThriftThreadedServer serving PROCESSOR (a ThriftProcessor) on URI in MODE, not yet
 * serving: the server transport of thrift_server_transport_new_for_uri, its transport
 * factories (checked framed for tcp:// by default, the connection itself for rdma://) and
 * the checked binary protocol (ThriftCheckedBinaryProtocolFactory).  Its other properties
 * ("max-connections", "workers", ...) can be set before serving.  NULL with an error of
 * THRIFT_TRANSPORT_URI_ERROR if URI is not a valid server URI. */
ThriftThreadedServer *thrift_server_new_for_uri (const gchar *uri, GObject *processor,
                                                 ThriftThreadedServerMode mode, GError **error);

/* What thrift_server_serve_uris returns, an exit status for a program. */
typedef enum
{
  THRIFT_SERVE_STOPPED = 0, /* stopped by SIGINT, SIGTERM or thrift_server_stop, cleanly */
  THRIFT_SERVE_FAILED = 1,  /* a server failed (could not listen, or accept kept failing) */
  THRIFT_SERVE_BAD_URI = 2  /* a URI is not valid: nothing was served */
} ThriftServeStatus;

/* Called in SERVER's serving thread once it listens on URI (a program can print "ready";
 * thrift_server_stop on SERVER, from any thread, stops every server). */
typedef void (*ThriftServeListeningFunc) (ThriftThreadedServer *server, const gchar *uri,
                                          gpointer user_data);

/* Options of thrift_server_serve_uris; zero (or NULL for all of them) is the default. */
typedef struct
{
  guint max_connections; /* each server's "max-connections"; 0: its default */
  guint workers;         /* each server's "workers"; 0: one per core */
  ThriftServeListeningFunc listening;
  gpointer user_data;  /* for listening */
  gpointer padding[4]; /* room for options to come; leave zero */
} ThriftServeOptions;

/* Serves PROCESSORS[i] on URIS[i] (URIS NULL-terminated, PROCESSORS as many) in MODE, one
 * ThriftThreadedServer (thrift_server_new_for_uri) per URI, each in a thread of its own,
 * until SIGINT or SIGTERM reaches the process or one of the servers stops
 * (thrift_server_stop, e.g. on a server the listening callback was given) or fails; then
 * stops every server (each finishes the calls it is running) and returns once all stopped.
 * While it serves, SIGINT and SIGTERM are handled (GLib's unix signal sources: nothing runs
 * in a signal handler) and SIGPIPE is ignored (a peer gone while a reply is written must not
 * end the process); their actions before the call are restored when it returns (so one
 * call at a time per process).
 *
 * Returns THRIFT_SERVE_STOPPED, or THRIFT_SERVE_FAILED (the first server's error) or
 * THRIFT_SERVE_BAD_URI (THRIFT_TRANSPORT_URI_ERROR) with ERROR set. */
ThriftServeStatus thrift_server_serve_uris (gchar **uris, GObject **processors,
                                            ThriftThreadedServerMode mode,
                                            const ThriftServeOptions *options, GError **error);

G_END_DECLS

#endif /* _THRIFT_SERVER_URI_H */
