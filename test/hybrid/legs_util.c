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

/* legs_util.c: see legs_util.h. */
#include "config.h"

#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/server/thrift_server_uri.h>
#include <thrift/c_glib/transport/thrift_server_hybrid.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "legs_util.h"

static gint64 noted_sum;
static GMutex noted_lock;

typedef struct
{
  LegsHandler parent;
} TestLegs;
typedef struct
{
  LegsHandlerClass parent;
} TestLegsClass;
static GType test_legs_get_type (void);
G_DEFINE_TYPE (TestLegs, test_legs, TYPE_LEGS_HANDLER)

static gboolean
echo (LegsIf *iface, GByteArray **ret, const GByteArray *data, GError **error)
{
  if (*ret != NULL)
    g_byte_array_unref (*ret);
  *ret = g_byte_array_ref ((GByteArray *) data);
  return TRUE;
}

static gboolean
note (LegsIf *iface, const gint32 x, GError **error)
{
  g_mutex_lock (&noted_lock);
  noted_sum += x;
  g_mutex_unlock (&noted_lock);
  return TRUE;
}

static gboolean
noted (LegsIf *iface, gint64 *ret, const gint32 dummy, GError **error)
{
  g_mutex_lock (&noted_lock);
  *ret = noted_sum;
  g_mutex_unlock (&noted_lock);
  return TRUE;
}

static gboolean
fail (LegsIf *iface, gint32 *ret, const gint32 code, Oops **oops, GError **error)
{
  if (code == 0)
  {
    *ret = 0;
    return TRUE;
  }
  *oops = g_object_new (TYPE_OOPS, "code", code, NULL);
  return FALSE;
}

static void
test_legs_class_init (TestLegsClass *klass)
{
  LegsHandlerClass *h = LEGS_HANDLER_CLASS (klass);

  h->bulk = echo;
  h->quick = echo;
  h->plain = echo;
  h->note_tcp = note;
  h->note_rdma = note;
  h->noted = noted;
  h->fail_tcp = fail;
  h->fail_rdma = fail;
}

static void
test_legs_init (TestLegs *self)
{
}

/* Waits (5 s at most) until @s listens; FALSE with @error if serve returned instead (its
 * listen failed) or took longer, the server then stopped and freed. */
static gboolean
wait_listening (LegsTestServer *s, const gchar *uri, GError **error)
{
  gint64 until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  gboolean listening = FALSE, returned = FALSE;

  for (;;)
  {
    g_object_get (s->server, "listening", &listening, NULL);
    g_mutex_lock (&s->serve.lock);
    returned = s->serve.returned;
    g_mutex_unlock (&s->serve.lock);
    if (listening || returned || g_get_monotonic_time () > until)
      break;
    g_usleep (2000);
  }
  if (listening)
    return TRUE;
  g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET, "%s: the server %s",
               uri, returned ? "did not listen" : "did not listen within 5 s");
  if (returned && s->serve.error != NULL)
    g_prefix_error (error, "%s: ", s->serve.error->message);
  legs_server_stop (s);
  return FALSE;
}

gboolean
legs_server_start (LegsTestServer *s, const gchar *uri, GError **error)
{
  GObject *handler = g_object_new (test_legs_get_type (), NULL);
  GObject *processor = g_object_new (TYPE_LEGS_PROCESSOR, "handler", handler, NULL);
  ThriftThreadedServer *server = thrift_server_new_for_uri (uri, processor,
                                                            THRIFT_THREADED_SERVER_POOL, error);
  ThriftServerTransport *st;

  g_object_unref (handler);
  g_object_unref (processor);
  if (server == NULL)
    return FALSE;
  /* a hybrid server listens here to show its error at once (its listen may be repeated;
   * ThriftServerSocket's and ThriftServerRdma's may not, and serve listens) */
  st = THRIFT_SERVER (server)->server_transport;
  if (THRIFT_IS_SERVER_HYBRID (st) && !thrift_server_transport_listen (st, error))
  {
    g_object_unref (server);
    return FALSE;
  }
  s->server = THRIFT_SERVER (server);
  serve_thread_init (&s->serve);
  serve_thread_start (&s->serve, s->server);
  /* serve listens in its thread: a client that came before it would be refused */
  return wait_listening (s, uri, error);
}

void
legs_server_stop (LegsTestServer *s)
{
  thrift_server_stop (s->server);
  serve_thread_join (&s->serve, 10 * G_USEC_PER_SEC);
  serve_thread_clear (&s->serve);
  g_clear_object (&s->server);
}

gboolean
legs_client_open (LegsTestClient *c, const gchar *uri, GError **error)
{
  memset (c, 0, sizeof *c);
  c->transport = thrift_transport_new_for_uri (uri, error);
  if (c->transport == NULL)
    return FALSE;
  c->protocol = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", c->transport, NULL);
  c->client = g_object_new (TYPE_LEGS_CLIENT, "input_protocol", c->protocol, "output_protocol",
                            c->protocol, NULL);
  if (!thrift_transport_open (c->transport, error))
  {
    legs_client_clear (c);
    return FALSE;
  }
  return TRUE;
}

void
legs_assert_open (LegsTestClient *c, const gchar *uri)
{
  GError *error = NULL;

  if (!legs_client_open (c, uri, &error))
    g_error ("legs_client_open (%s): %s", uri, error != NULL ? error->message : "no error set");
}

void
legs_client_clear (LegsTestClient *c)
{
  if (c->transport != NULL && thrift_transport_is_open (c->transport))
    thrift_transport_close (c->transport, NULL);
  g_clear_object (&c->client);
  g_clear_object (&c->protocol);
  g_clear_object (&c->transport);
}

GByteArray *
legs_payload (guint len, guint seed)
{
  GByteArray *a = g_byte_array_sized_new (len);

  g_byte_array_set_size (a, len);
  for (guint i = 0; i < len; i++)
    a->data[i] = (guint8) (i * 31 + seed * 7 + (i >> 8));
  return a;
}
