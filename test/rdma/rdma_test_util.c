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

/* rdma_test_util.c: see rdma_test_util.h. */
#include "config.h"

#include <string.h>

#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol_factory.h>
#include <thrift/c_glib/server/thrift_simple_server.h>
#include <thrift/c_glib/thrift_configuration.h>

#include "lib/c_glib/transport/rdma/rdma_resources.h"
#include "lib/c_glib/transport/rdma/rdma_verbs.h"
#include "rdma_test_util.h"

static const gchar *
env_or (const gchar *name, const gchar *fallback)
{
  const gchar *v = g_getenv (name);
  return v != NULL && *v ? v : fallback;
}

const gchar *
rt_server_addr (void)
{
  return env_or ("THRIFT_RDMA_TEST_SERVER_ADDR", "10.77.0.1");
}

const gchar *
rt_client_addr (void)
{
  return env_or ("THRIFT_RDMA_TEST_CLIENT_ADDR", "10.77.0.2");
}

gint
rt_live_resources (void)
{
  RdmaResCounts c;
  gint mrs, mws;

  rdma_res_counts (&c);
  /* regions and windows as the verbs table counts them: the registration cache's and bulk
   * transfer's too, which rdma_res does not make */
  rdma_verbs_live (&mrs, &mws);
  return c.qps + c.cqs + mrs + mws;
}

gboolean
rt_resources_at_baseline (gint baseline)
{
  if (rt_live_resources () == baseline)
    return TRUE;
  {
    RdmaResCounts c;
    gint mrs, mws;
    rdma_res_counts (&c);
    rdma_verbs_live (&mrs, &mws);
    g_printerr ("live verbs resources at the end: %d (QPs %d, CQs %d, MRs %d, MWs %d), "
                "baseline %d\n",
                rt_live_resources (), c.qps, c.cqs, mrs, mws, baseline);
  }
  return FALSE;
}

static gboolean bulk_off;

void
rt_bulk_off (void)
{
  bulk_off = TRUE;
}

guint
rt_bulk_threshold (void)
{
  ThriftTransport *t;
  guint v = 0;

  if (bulk_off)
    return 0;
  t = g_object_new (THRIFT_TYPE_RDMA, NULL);
  g_object_get (t, "bulk-threshold", &v, NULL);
  g_object_unref (t);
  return v;
}

struct _RtEchoServer
{
  ThriftServerTransport *server;
  GThread *thread;
  volatile gint stop;
  volatile guint accepted;
  volatile guint served;
  volatile guint failed;
  GMutex lock;
  ThriftRdmaStats last; /* of the last connection served (lock) */
};

static gboolean
serve_one (ThriftTransport *t, GError **error)
{
  ThriftProtocol *p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
  gboolean ok = TRUE;

  while (ok && thrift_transport_peek (t, error))
  {
    gpointer buf = NULL;
    guint32 len = 0;
    ok = thrift_protocol_read_binary (p, &buf, &len, error) >= 0
         && thrift_transport_read_end (t, error)
         && thrift_protocol_write_binary (p, buf, len, error) >= 0
         && thrift_transport_flush (t, error);
    g_free (buf);
  }
  g_object_unref (p);
  return ok && (error == NULL || *error == NULL);
}

static gpointer
echo_thread (gpointer data)
{
  RtEchoServer *srv = data;

  while (!g_atomic_int_get (&srv->stop))
  {
    GError *error = NULL;
    ThriftTransport *t = thrift_server_transport_accept (srv->server, &error);
    if (t == NULL)
    {
      g_clear_error (&error);
      continue;
    }
    g_atomic_int_inc ((gint *) &srv->accepted);
    if (!serve_one (t, &error))
    {
      g_test_message ("echo server: connection ended: %s", error ? error->message : "?");
      g_atomic_int_inc ((gint *) &srv->failed);
    }
    g_clear_error (&error);
    g_mutex_lock (&srv->lock);
    thrift_rdma_get_stats (THRIFT_RDMA (t), &srv->last);
    g_mutex_unlock (&srv->lock);
    thrift_transport_close (t, NULL);
    g_object_unref (t);
    g_atomic_int_inc ((gint *) &srv->served);
  }
  return NULL;
}

static RtEchoServer *
echo_server_start (ThriftRdmaPolling polling, guint max_message, guint idle_timeout_ms,
                   const ThriftHintSet *hints)
{
  RtEchoServer *srv = g_new0 (RtEchoServer, 1);
  ThriftConfiguration *conf = g_object_new (THRIFT_TYPE_CONFIGURATION, "max_message_size",
                                            (gint) max_message, NULL);
  GError *error = NULL;

  srv->server = g_object_new (THRIFT_TYPE_SERVER_RDMA, "hostname", rt_server_addr (), "port", 0,
                              "polling", polling, "configuration", conf, "idle-timeout",
                              idle_timeout_ms, "hints", hints, "bulk-threshold",
                              rt_bulk_threshold (), NULL);
  g_object_unref (conf);
  g_assert_true (thrift_server_transport_listen (srv->server, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (rt_echo_server_port (srv), >, 0);
  srv->thread = g_thread_new ("echo", echo_thread, srv);
  return srv;
}

RtEchoServer *
rt_echo_server_start (ThriftRdmaPolling polling, guint max_message, guint idle_timeout_ms)
{
  return echo_server_start (polling, max_message, idle_timeout_ms, NULL);
}

RtEchoServer *
rt_echo_server_start_hinted (ThriftRdmaPolling polling, guint max_message,
                             const ThriftHintSet *hints)
{
  return echo_server_start (polling, max_message, 0, hints);
}

guint
rt_echo_server_port (RtEchoServer *srv)
{
  return thrift_server_rdma_get_port (THRIFT_SERVER_RDMA (srv->server));
}

ThriftServerTransport *
rt_echo_server_transport (RtEchoServer *srv)
{
  return srv->server;
}

void
rt_echo_server_last_stats (RtEchoServer *srv, ThriftRdmaStats *out)
{
  g_mutex_lock (&srv->lock);
  *out = srv->last;
  g_mutex_unlock (&srv->lock);
}

guint
rt_echo_server_served (RtEchoServer *srv)
{
  return g_atomic_int_get ((gint *) &srv->served);
}

guint
rt_echo_server_failed (RtEchoServer *srv)
{
  return g_atomic_int_get ((gint *) &srv->failed);
}

void
rt_echo_server_settle (RtEchoServer *srv)
{
  gint64 until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (g_atomic_int_get ((gint *) &srv->served) != g_atomic_int_get ((gint *) &srv->accepted)
         && g_get_monotonic_time () < until)
    g_usleep (1000);
  g_assert_cmpuint (g_atomic_int_get ((gint *) &srv->served), ==,
                    g_atomic_int_get ((gint *) &srv->accepted));
}

void
rt_echo_server_stop (RtEchoServer *srv)
{
  g_atomic_int_set (&srv->stop, 1);
  thrift_server_rdma_interrupt (THRIFT_SERVER_RDMA (srv->server));
  g_thread_join (srv->thread);
  thrift_server_transport_close (srv->server, NULL);
  g_object_unref (srv->server);
  g_mutex_clear (&srv->lock);
  g_free (srv);
}

ThriftTransport *
rt_client_new (guint port, ThriftRdmaPolling polling)
{
  return g_object_new (THRIFT_TYPE_RDMA, "hostname", rt_server_addr (), "port", port, "polling",
                       polling, "call-timeout", 20000, "bulk-threshold", rt_bulk_threshold (),
                       NULL);
}

guint8 *
rt_binary_new (gsize len, guint seed)
{
  guint8 *buf = g_malloc (RT_RAW_HEADER + len);
  guint32 be = GUINT32_TO_BE ((guint32) len);

  buf[0] = 0; /* RDMA_BULK_PLAIN */
  memcpy (buf + 1, &be, 4);
  for (gsize i = 0; i < len; i++)
    buf[RT_RAW_HEADER + i] = rt_pattern (seed, i);
  return buf;
}

gboolean
rt_echo (ThriftTransport *t, gsize len, guint seed, GError **error)
{
  ThriftProtocol *p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
  guint8 *out = g_malloc (MAX (len, 1));
  gpointer in = NULL;
  guint32 in_len = 0;
  gboolean ok;

  for (gsize i = 0; i < len; i++)
    out[i] = rt_pattern (seed, i);
  ok = thrift_protocol_write_binary (p, out, (guint32) len, error) >= 0
       && thrift_transport_flush (t, error) && thrift_transport_write_end (t, error)
       && thrift_protocol_read_binary (p, &in, &in_len, error) >= 0
       && thrift_transport_read_end (t, error);
  if (ok)
  {
    g_assert_cmpuint (in_len, ==, len);
    for (gsize i = 0; i < len; i++)
      if (((guint8 *) in)[i] != rt_pattern (seed, i))
        g_error ("echo of %" G_GSIZE_FORMAT " bytes: byte %" G_GSIZE_FORMAT " is 0x%02x, "
                 "expected 0x%02x",
                 len, i, ((guint8 *) in)[i], rt_pattern (seed, i));
  }
  g_free (in);
  g_free (out);
  g_object_unref (p);
  return ok;
}

void
rt_echo_buffer (ThriftTransport *t, const guint8 *buf, gsize len)
{
  ThriftProtocol *p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
  GError *error = NULL;
  gpointer in = NULL;
  guint32 in_len = 0;

  g_assert_cmpint (thrift_protocol_write_binary (p, (gpointer) buf, (guint32) len, &error), >=, 0);
  g_assert_true (thrift_transport_flush (t, &error));
  g_assert_true (thrift_transport_write_end (t, &error));
  g_assert_cmpint (thrift_protocol_read_binary (p, &in, &in_len, &error), >=, 0);
  g_assert_true (thrift_transport_read_end (t, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (in_len, ==, len);
  g_assert_true (memcmp (in, buf, len) == 0);
  g_free (in);
  g_object_unref (p);
}

guint64
rt_rdma_sent_packets (void)
{
  g_autoptr (GDir) dir = g_dir_open ("/sys/class/infiniband", 0, NULL);
  const gchar *name;
  guint64 sum = 0;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
  {
    g_autofree gchar *path = g_strdup_printf ("/sys/class/infiniband/%s/ports/1/hw_counters/"
                                              "sent_pkts",
                                              name);
    g_autofree gchar *text = NULL;

    if (g_file_get_contents (path, &text, NULL, NULL))
      sum += g_ascii_strtoull (text, NULL, 10);
  }
  return sum;
}

static gpointer
simple_serve (gpointer data)
{
  GError *error = NULL;

  thrift_server_serve (data, &error);
  g_clear_error (&error); /* serve only returns on stop: the interrupt's error */
  return NULL;
}

void
rt_simple_server_start (RtSimpleServer *s, GObject *processor, GObject *transport_factory)
{
  GObject *pf = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL_FACTORY, NULL);
  gint64 until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;

  s->transport = g_object_new (THRIFT_TYPE_SERVER_RDMA, "hostname", rt_server_addr (), "port", 0,
                               NULL);
  /* ThriftServer's factory properties are construct properties: give them explicitly */
  s->server = g_object_new (THRIFT_TYPE_SIMPLE_SERVER, "processor", processor, "server_transport",
                            s->transport, "input_transport_factory", transport_factory,
                            "output_transport_factory", transport_factory, "input_protocol_factory",
                            pf, "output_protocol_factory", pf, NULL);
  g_object_unref (pf);
  s->thread = g_thread_new ("simple-server", simple_serve, s->server);
  while (rt_simple_server_port (s) == 0 && g_get_monotonic_time () < until)
    g_usleep (5000);
  g_assert_cmpuint (rt_simple_server_port (s), >, 0);
}

guint
rt_simple_server_port (RtSimpleServer *s)
{
  return thrift_server_rdma_get_port (THRIFT_SERVER_RDMA (s->transport));
}

void
rt_simple_server_stop (RtSimpleServer *s)
{
  thrift_server_stop (s->server);
  thrift_server_rdma_interrupt (THRIFT_SERVER_RDMA (s->transport));
  g_thread_join (s->thread);
  g_clear_object (&s->server);
  g_clear_object (&s->transport);
}
