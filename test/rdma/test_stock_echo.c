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
 * What a user who only swaps the transport gets for large fields (issue 23): code generated
 * from an IDL without hints (stock Thrift's), ThriftSimpleServer on a ThriftServerRdma and a
 * ThriftRdma client, every property at its default.  Echoes of 16 KiB to 64 MiB arrive
 * byte-exact, and the transport copies the payload at most once per call: the client lends
 * its request, which the server pulls by RDMA READ into the buffer Thrift's protocol reads
 * it into; the server stages its reply (its generated processor frees the reply before the
 * flush, so the field itself cannot be lent: rdma_bulk_stage.h), which the client pulls into
 * its own.  Each size on a connection of its own: its first calls take the ways the device's
 * measure starts from (lending, staging), which it keeps until copying measures cheaper.
 */
#include "config.h"

#include <string.h>

#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/transport/thrift_transport_factory.h>

#include "stock_echo.h"
#include "rdma_test_util.h"

/* inline bytes of a call besides the field (envelope, names, lengths, the table) */
#define INLINE_MAX 256u

/* ---- the handler ---- */

typedef struct
{
  StockEchoHandler parent;
} TestHandler;
typedef struct
{
  StockEchoHandlerClass parent;
} TestHandlerClass;
static GType test_handler_get_type (void);
G_DEFINE_TYPE (TestHandler, test_handler, TYPE_STOCK_ECHO_HANDLER)

static gboolean
handler_echo (StockEchoIf *iface, GByteArray **_return, const GByteArray *payload, GError **error)
{
  if (*_return == NULL)
    *_return = g_byte_array_new ();
  g_byte_array_set_size (*_return, 0);
  g_byte_array_append (*_return, payload->data, payload->len);
  return TRUE;
}

static void
test_handler_class_init (TestHandlerClass *cls)
{
  STOCK_ECHO_HANDLER_CLASS (cls)->echo = handler_echo;
}

static void
test_handler_init (TestHandler *self)
{
}

/* ---- a transport factory that keeps the accepted transport, for its counters ---- */

typedef struct
{
  ThriftTransportFactory parent;
} KeepFactory;
typedef struct
{
  ThriftTransportFactoryClass parent;
} KeepFactoryClass;
static GType keep_factory_get_type (void);
G_DEFINE_TYPE (KeepFactory, keep_factory, THRIFT_TYPE_TRANSPORT_FACTORY)

static GMutex kept_lock;
static ThriftTransport *kept; /* (owned) (nullable): the last connection accepted */

static ThriftTransport *
keep_get_transport (ThriftTransportFactory *factory, ThriftTransport *transport)
{
  g_mutex_lock (&kept_lock);
  g_set_object (&kept, transport);
  g_mutex_unlock (&kept_lock);
  /* the server unrefs what the factory returns as well as the accepted transport */
  return g_object_ref (transport);
}

static void
keep_factory_class_init (KeepFactoryClass *cls)
{
  THRIFT_TRANSPORT_FACTORY_CLASS (cls)->get_transport = keep_get_transport;
}

static void
keep_factory_init (KeepFactory *self)
{
}

/* ---- the server ---- */

static RtSimpleServer simple;

static void
start_server (void)
{
  GObject *handler = g_object_new (test_handler_get_type (), NULL);
  GObject *processor = g_object_new (TYPE_STOCK_ECHO_PROCESSOR, "handler", handler, NULL);
  GObject *tf = g_object_new (keep_factory_get_type (), NULL);

  rt_simple_server_start (&simple, processor, tf);
  g_object_unref (tf);
  g_object_unref (processor);
  g_object_unref (handler);
}

static void
stop_server (void)
{
  rt_simple_server_stop (&simple);
  g_clear_object (&kept);
}

/* The counters of the server's side of the connection, once the server is done with it:
 * its thread closed it and dropped every reference but ours (reading them while it closes
 * would race with the close). */
static void
server_stats (ThriftRdmaStats *out)
{
  gint64 until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  ThriftTransport *t = NULL;

  while (t == NULL && g_get_monotonic_time () < until)
  {
    g_mutex_lock (&kept_lock);
    t = g_steal_pointer (&kept);
    g_mutex_unlock (&kept_lock);
    if (t == NULL)
      g_usleep (10000);
  }
  g_assert_nonnull (t);
  while (g_atomic_int_get (&G_OBJECT (t)->ref_count) > 1 && g_get_monotonic_time () < until)
    g_usleep (10000);
  g_assert_cmpuint (g_atomic_int_get (&G_OBJECT (t)->ref_count), ==, 1);
  g_assert_false (thrift_transport_is_open (t));
  thrift_rdma_get_stats (THRIFT_RDMA (t), out);
  g_object_unref (t);
}

/* ---- the test ---- */

static void
test_sizes (void)
{
  static const gsize sizes[] = { 16u << 10, 64u << 10, 1u << 20, 16u << 20, 64u << 20 };

  start_server ();
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
  {
    gsize len = sizes[i];
    /* every property at its default: the hostname and port only */
    ThriftTransport *t = g_object_new (THRIFT_TYPE_RDMA, "hostname", rt_server_addr (), "port",
                                       rt_simple_server_port (&simple), NULL);
    ThriftProtocol *p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
    StockEchoIf *client = g_object_new (TYPE_STOCK_ECHO_CLIENT, "input_protocol", p,
                                        "output_protocol", p, NULL);
    GByteArray *payload = g_byte_array_sized_new ((guint) len), *ret = NULL;
    ThriftRdmaStats c, s;
    GError *error = NULL;

    g_assert_true (thrift_transport_open (t, &error));
    g_assert_no_error (error);
    g_byte_array_set_size (payload, (guint) len);
    for (gsize k = 0; k < len; k++)
      payload->data[k] = rt_pattern (i + 1, k);
    g_assert_true (stock_echo_if_echo (client, &ret, payload, &error));
    g_assert_no_error (error);
    g_assert_nonnull (ret);
    g_assert_cmpuint (ret->len, ==, len);
    g_assert_true (memcmp (ret->data, payload->data, len) == 0);
    thrift_rdma_get_stats (THRIFT_RDMA (t), &c);
    thrift_transport_close (t, NULL);
    server_stats (&s);
    g_test_message ("%" G_GSIZE_FORMAT " B: client copied %" G_GUINT64_FORMAT
                    ", lent %" G_GUINT64_FORMAT ", pulled %" G_GUINT64_FORMAT
                    "; server copied %" G_GUINT64_FORMAT ", pulled %" G_GUINT64_FORMAT
                    ", staged and returned %" G_GUINT64_FORMAT ", windows bound %" G_GUINT64_FORMAT
                    ", invalidated %" G_GUINT64_FORMAT,
                    len, c.bytes_copied, c.bulk_sent, c.bulk_received, s.bytes_copied,
                    s.bulk_received, s.bulk_sent, s.window_binds, s.window_invalidations);
    /* the request: lent by the client, pulled by the server, copied by neither */
    g_assert_cmpuint (c.bulk_sent, ==, len);
    g_assert_cmpuint (s.bulk_received, ==, len);
    /* the reply: staged by the server (its one copy), pulled by the client */
    g_assert_cmpuint (s.bulk_sent, ==, len);
    g_assert_cmpuint (c.bulk_received, ==, len);
    g_assert_cmpuint (c.bytes_copied, <=, INLINE_MAX);
    g_assert_cmpuint (s.bytes_copied, >=, len);
    g_assert_cmpuint (s.bytes_copied, <=, len + INLINE_MAX);
    /* no field of the server's lent in place, so none invalidated: the stage's window is
     * bound once and stays */
    g_assert_cmpuint (s.window_invalidations, ==, 0);
    g_assert_cmpuint (s.bulk_copied, ==, 0);
    g_assert_cmpuint (c.bulk_copied, ==, 0);
    g_byte_array_unref (ret);
    g_byte_array_unref (payload);
    g_object_unref (client);
    g_object_unref (p);
    g_object_unref (t);
  }
  stop_server ();
}

int
main (int argc, char **argv)
{
  gint baseline;
  int rc;

  g_test_init (&argc, &argv, NULL);
  baseline = rt_live_resources ();
  g_test_add_func ("/stock_echo/sizes", test_sizes);
  rc = g_test_run ();
  /* every registration, window and stage gone with the connections */
  if (!rt_resources_at_baseline (baseline))
    rc = 1;
  return rc;
}
