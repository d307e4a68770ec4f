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
 * serve_thread.h: a ThriftServer served in a background thread, for the threaded-server
 * tests (test/server over TCP, test/rdma over RDMA): start it, later wait a bounded time for
 * thrift_server_serve () to return, and count the process's threads and descriptors.
 */
#ifndef _SERVE_THREAD_H
#define _SERVE_THREAD_H

#include <glib.h>
#include <thrift/c_glib/server/thrift_server.h>

G_BEGIN_DECLS

typedef struct
{
  ThriftServer *server; /* not owned */
  GThread *thread;
  gboolean returned; /* serve has returned */
  gboolean result;   /* what it returned */
  GError *error;     /* and its error */
  GMutex lock;
  GCond cond;
} ServeThread;

void serve_thread_init (ServeThread *st);
void serve_thread_start (ServeThread *st, ThriftServer *server);
/* Waits at most @timeout_us for serve to return, asserts that it did (a stop that hangs
 * fails here), joins the thread and gives serve's result. */
gboolean serve_thread_join (ServeThread *st, gint64 timeout_us);
void serve_thread_clear (ServeThread *st);

/* A TCP port on 127.0.0.1 that was free a moment ago. */
guint test_free_port (void);

/* Entries of a /proc directory: /proc/self/task (threads), /proc/self/fd (descriptors). */
guint test_count_entries (const gchar *dir);

G_END_DECLS

#endif
