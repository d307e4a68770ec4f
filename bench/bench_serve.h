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
 * bench_serve.h: the server side of the benchmarks: thrift_server_serve_uris (one
 * ThriftThreadedServer per URI, side by side, until SIGINT or SIGTERM) with the lines the
 * benchmark scripts wait for, and the servers' wake-ups for the suite's counters.
 */
#ifndef _BENCH_SERVE_H
#define _BENCH_SERVE_H

#include <glib-object.h>
#include <thrift/c_glib/server/thrift_threaded_server.h>

G_BEGIN_DECLS

/* Serves @processor on every URI of @uris (NULL-terminated) in @mode; prints "listening on
 * URI" on stdout when each listens and "servers stopped" once all stopped cleanly.  Messages
 * on stderr start with @prog.  Returns the exit status: 0 stopped by a signal, 1 a server
 * failed (the others are then stopped too), 2 a URI is wrong. */
int bench_serve (gchar **uris, ThriftThreadedServerMode mode, GObject *processor,
                 const gchar *prog);

/* The same with a processor of its own for each URI: @processors[i] serves @uris[i]. */
int bench_serve_each (gchar **uris, GObject **processors, ThriftThreadedServerMode mode,
                      const gchar *prog);

/* Dispatcher wake-ups so far of the servers bench_serve runs in this process (their
 * "wakeups" property, summed). */
guint64 bench_serve_wakeups (void);

/* Parses --server-mode's value (NULL: pool); FALSE if it is neither pool nor
 * per-connection. */
gboolean bench_parse_server_mode (const gchar *text, ThriftThreadedServerMode *mode);

G_END_DECLS

#endif
