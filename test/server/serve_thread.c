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

#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve_thread.h"

static gpointer
serve_main (gpointer data)
{
  ServeThread *st = data;
  gboolean r = thrift_server_serve (st->server, &st->error);

  g_mutex_lock (&st->lock);
  st->result = r;
  st->returned = TRUE;
  g_cond_broadcast (&st->cond);
  g_mutex_unlock (&st->lock);
  return NULL;
}

void
serve_thread_init (ServeThread *st)
{
  memset (st, 0, sizeof *st);
  g_mutex_init (&st->lock);
  g_cond_init (&st->cond);
}

void
serve_thread_start (ServeThread *st, ThriftServer *server)
{
  g_assert_null (st->thread);
  st->server = server;
  st->returned = FALSE;
  st->thread = g_thread_new ("serve", serve_main, st);
}

gboolean
serve_thread_join (ServeThread *st, gint64 timeout_us)
{
  gint64 deadline = g_get_monotonic_time () + timeout_us;
  gboolean returned;

  g_mutex_lock (&st->lock);
  while (!st->returned && g_get_monotonic_time () < deadline)
    g_cond_wait_until (&st->cond, &st->lock, deadline);
  returned = st->returned;
  g_mutex_unlock (&st->lock);
  g_assert_true (returned); /* serve did not return in time: the stop hung */
  g_thread_join (st->thread);
  st->thread = NULL;
  return st->result;
}

void
serve_thread_clear (ServeThread *st)
{
  g_clear_error (&st->error);
  g_mutex_clear (&st->lock);
  g_cond_clear (&st->cond);
}

guint
test_count_entries (const gchar *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  guint n = 0;

  g_assert_nonnull (d);
  while (g_dir_read_name (d) != NULL)
    n++;
  g_dir_close (d);
  return n;
}

guint
test_free_port (void)
{
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof a;
  int s = socket (AF_INET, SOCK_STREAM, 0);
  guint port;

  g_assert_cmpint (s, >=, 0);
  g_assert_cmpint (bind (s, (struct sockaddr *) &a, sizeof a), ==, 0);
  g_assert_cmpint (getsockname (s, (struct sockaddr *) &a, &len), ==, 0);
  port = ntohs (a.sin_port);
  close (s);
  return port;
}
