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
  ThriftServer *server;   /* not owned */
  GThread *thread;
  gboolean returned;      /* serve has returned */
  gboolean result;        /* what it returned */
  GError *error;          /* and its error */
  GMutex lock;
  GCond cond;
} ServeThread;

void serve_thread_init (ServeThread *st);
void serve_thread_start (ServeThread *st, ThriftServer *server);
/* Waits at most @timeout_us for serve to return, asserts that it did (a stop that hangs
 * fails here), joins the thread and gives serve's result. */
gboolean serve_thread_join (ServeThread *st, gint64 timeout_us);
void serve_thread_clear (ServeThread *st);

/* Entries of a /proc directory: /proc/self/task (threads), /proc/self/fd (descriptors). */
guint test_count_entries (const gchar *dir);

G_END_DECLS

#endif
