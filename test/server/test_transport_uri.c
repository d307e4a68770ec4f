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
 * thrift_transport_uri: parsing (good URIs and every kind of bad one, with the error code
 * and what the message names), descriptions, and the transports built for tcp://.
 * End-to-end tcp:// calls are in test_threaded_server.
 */
#include "config.h"

#include <string.h>
#include <sys/wait.h>

#include <glib.h>
#include <glib-object.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/transport/thrift_memory_buffer.h>
#include <thrift/c_glib/transport/thrift_buffered_transport.h>
#include <thrift/c_glib/transport/thrift_buffered_transport_factory.h>
#include <thrift/c_glib/transport/thrift_framed_transport.h>
#include <thrift/c_glib/transport/thrift_framed_transport_factory.h>
#include <thrift/c_glib/transport/thrift_checked_framed_transport.h>
#include <thrift/c_glib/transport/thrift_server_socket.h>
#include <thrift/c_glib/transport/thrift_socket.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_server_rdma.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

typedef struct
{
  const gchar *uri;
  gboolean server;
  ThriftTransportUriScheme scheme;
  const gchar *host;
  guint port;
  ThriftTransportUriFraming framing;
  ThriftTransportUriPolling polling;
  gint connect_ms, call_ms, backlog;
  gint idle_ms, keepalive_ms;
} Good;

static const Good good[] = {
  { "tcp://127.0.0.1:9090", FALSE, THRIFT_TRANSPORT_URI_TCP, "127.0.0.1", 9090,
    THRIFT_TRANSPORT_URI_FRAMED, 0, -1, -1, -1, -1, -1 },
  { "TCP://localhost:1", FALSE, THRIFT_TRANSPORT_URI_TCP, "localhost", 1,
    THRIFT_TRANSPORT_URI_FRAMED, 0, -1, -1, -1, -1, -1 },
  { "tcp://h:65535?framing=buffered", FALSE, THRIFT_TRANSPORT_URI_TCP, "h", 65535,
    THRIFT_TRANSPORT_URI_BUFFERED, 0, -1, -1, -1, -1, -1 },
  { "tcp://h:80?framing=none&", FALSE, THRIFT_TRANSPORT_URI_TCP, "h", 80,
    THRIFT_TRANSPORT_URI_UNFRAMED, 0, -1, -1, -1, -1, -1 },
  { "tcp://:9090?backlog=8", TRUE, THRIFT_TRANSPORT_URI_TCP, "", 9090, THRIFT_TRANSPORT_URI_FRAMED,
    0, -1, -1, 8, -1, -1 },
  { "rdma://10.77.0.1:9090", FALSE, THRIFT_TRANSPORT_URI_RDMA, "10.77.0.1", 9090,
    THRIFT_TRANSPORT_URI_FRAMED, THRIFT_TRANSPORT_URI_POLLING_DEFAULT, -1, -1, -1, -1, -1 },
  { "rdma://10.77.0.1:9090?polling=busy&connect-timeout=250&call-timeout=0", FALSE,
    THRIFT_TRANSPORT_URI_RDMA, "10.77.0.1", 9090, THRIFT_TRANSPORT_URI_FRAMED,
    THRIFT_TRANSPORT_URI_POLLING_BUSY, 250, 0, -1, -1, -1 },
  { "rdma://[fe80::1]:7?polling=event", FALSE, THRIFT_TRANSPORT_URI_RDMA, "fe80::1", 7,
    THRIFT_TRANSPORT_URI_FRAMED, THRIFT_TRANSPORT_URI_POLLING_EVENT, -1, -1, -1, -1, -1 },
  { "rdma://[::]:9090?polling=hybrid&backlog=4096", TRUE, THRIFT_TRANSPORT_URI_RDMA, "::", 9090,
    THRIFT_TRANSPORT_URI_FRAMED, THRIFT_TRANSPORT_URI_POLLING_HYBRID, -1, -1, 4096, -1, -1 },
  { "rdma://:9090?idle-timeout=60000&keepalive=5000&call-timeout=100", TRUE,
    THRIFT_TRANSPORT_URI_RDMA, "", 9090, THRIFT_TRANSPORT_URI_FRAMED,
    THRIFT_TRANSPORT_URI_POLLING_DEFAULT, -1, 100, -1, 60000, 5000 },
  { "rdma://h:9090?keepalive=0", FALSE, THRIFT_TRANSPORT_URI_RDMA, "h", 9090,
    THRIFT_TRANSPORT_URI_FRAMED, THRIFT_TRANSPORT_URI_POLLING_DEFAULT, -1, -1, -1, -1, 0 },
};

typedef struct
{
  const gchar *uri;
  gboolean server;
  gint code;
  const gchar *says; /* a piece of the message */
} Bad;

static const Bad bad[] = {
  { "", FALSE, THRIFT_TRANSPORT_URI_ERROR_SYNTAX, "empty" },
  { "127.0.0.1:9090", FALSE, THRIFT_TRANSPORT_URI_ERROR_SYNTAX, "expected tcp://HOST:PORT" },
  { "udp://h:1", FALSE, THRIFT_TRANSPORT_URI_ERROR_SCHEME,
    "unknown scheme 'udp'; allowed: tcp, rdma" },
  { "://h:1", FALSE, THRIFT_TRANSPORT_URI_ERROR_SCHEME, "unknown scheme ''" },
  { "tcp://h", FALSE, THRIFT_TRANSPORT_URI_ERROR_PORT, "missing port" },
  { "tcp://h:", FALSE, THRIFT_TRANSPORT_URI_ERROR_PORT, "missing port" },
  { "tcp://h:0", FALSE, THRIFT_TRANSPORT_URI_ERROR_PORT, "bad port '0'; allowed: 1 to 65535" },
  { "tcp://h:65536", FALSE, THRIFT_TRANSPORT_URI_ERROR_PORT, "bad port '65536'" },
  { "tcp://h:-1", FALSE, THRIFT_TRANSPORT_URI_ERROR_PORT, "bad port '-1'" },
  { "tcp://h:90x", FALSE, THRIFT_TRANSPORT_URI_ERROR_PORT, "bad port '90x'" },
  { "tcp://h:99999999999999999999", FALSE, THRIFT_TRANSPORT_URI_ERROR_PORT, "bad port" },
  { "tcp://:9090", FALSE, THRIFT_TRANSPORT_URI_ERROR_HOST, "missing host" },
  { "tcp://h:9090/x", FALSE, THRIFT_TRANSPORT_URI_ERROR_SYNTAX, "no path" },
  { "tcp://::1:9090", FALSE, THRIFT_TRANSPORT_URI_ERROR_HOST, "in brackets" },
  { "rdma://[::1:9090", FALSE, THRIFT_TRANSPORT_URI_ERROR_HOST, "bad IPv6 address" },
  { "rdma://[]:9090", FALSE, THRIFT_TRANSPORT_URI_ERROR_HOST, "bad IPv6 address" },
  { "rdma://[host]:9090", FALSE, THRIFT_TRANSPORT_URI_ERROR_HOST, "'host' is not an IPv6 address" },
  { "rdma://[::1]9090", FALSE, THRIFT_TRANSPORT_URI_ERROR_PORT, "missing port" },
  { "tcp://h:1?polling=busy", FALSE, THRIFT_TRANSPORT_URI_ERROR_OPTION,
    "'polling' does not apply to tcp://" },
  { "rdma://h:1?framing=framed", FALSE, THRIFT_TRANSPORT_URI_ERROR_OPTION,
    "'framing' does not apply to rdma://" },
  { "rdma://h:1?polling=fast", FALSE, THRIFT_TRANSPORT_URI_ERROR_OPTION,
    "bad value 'fast' for option 'polling'; allowed: busy | event | hybrid" },
  { "rdma://h:1?polling=default", FALSE, THRIFT_TRANSPORT_URI_ERROR_OPTION, "bad value 'default'" },
  { "tcp://h:1?framing=zlib", FALSE, THRIFT_TRANSPORT_URI_ERROR_OPTION,
    "allowed: framed | buffered | none" },
  { "rdma://h:1?call-timeout=-5", FALSE, THRIFT_TRANSPORT_URI_ERROR_OPTION,
    "bad value '-5' for option 'call-timeout'" },
  { "rdma://h:1?connect-timeout", FALSE, THRIFT_TRANSPORT_URI_ERROR_OPTION, "has no value" },
  /* the transports' connect-timeout is 1 ms at least (test/fuzz/regress/uri) */
  { "rdma://h:1?connect-timeout=0", FALSE, THRIFT_TRANSPORT_URI_ERROR_OPTION,
    "allowed: milliseconds, 1 to" },
  { "rdma://h:1?colour=blue", FALSE, THRIFT_TRANSPORT_URI_ERROR_OPTION, "unknown option 'colour'" },
  { "rdma://h:1?connect-timeout=5", TRUE, THRIFT_TRANSPORT_URI_ERROR_OPTION,
    "does not apply to a server" },
  { "rdma://h:1?idle-timeout=5", FALSE, THRIFT_TRANSPORT_URI_ERROR_OPTION,
    "'idle-timeout' does not apply to a client" },
  { "rdma://:1?keepalive=x", TRUE, THRIFT_TRANSPORT_URI_ERROR_OPTION,
    "bad value 'x' for option 'keepalive'" },
  { "tcp://:1?idle-timeout=5", TRUE, THRIFT_TRANSPORT_URI_ERROR_OPTION,
    "'idle-timeout' does not apply to tcp://" },
  { "tcp://h:1?backlog=5", FALSE, THRIFT_TRANSPORT_URI_ERROR_OPTION, "does not apply to a client" },
  { "tcp://:1?backlog=0", TRUE, THRIFT_TRANSPORT_URI_ERROR_OPTION, "allowed: 1 to 4096" },
  { "tcp://h:+80", FALSE, THRIFT_TRANSPORT_URI_ERROR_PORT, "bad port '+80'" },
  { "tcp://h: 80", FALSE, THRIFT_TRANSPORT_URI_ERROR_PORT, "bad port ' 80'" },
  { "rdma://h:1?call-timeout=2147483648", FALSE, THRIFT_TRANSPORT_URI_ERROR_OPTION,
    "allowed: milliseconds" },
  { "rdma://h:1?numa=1024", FALSE, THRIFT_TRANSPORT_URI_ERROR_OPTION, "0 to 1023" },
  { "tcp://h:1?max-pinned-bytes=1", FALSE, THRIFT_TRANSPORT_URI_ERROR_OPTION,
    "'max-pinned-bytes' does not apply to tcp://" },
  { "rdma://h:1?max-pinned-bytes=-1", FALSE, THRIFT_TRANSPORT_URI_ERROR_OPTION,
    "bad value '-1' for option 'max-pinned-bytes'" },
  { "hybrid://:1?max-pinned-bytes=1M", TRUE, THRIFT_TRANSPORT_URI_ERROR_OPTION, "allowed: bytes" },
};

static void
test_parse_good (void)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (good); i++)
  {
    const Good *g = &good[i];
    GError *error = NULL;
    ThriftTransportUri *u = thrift_transport_uri_parse (g->uri, g->server, &error);

    g_test_message ("%s", g->uri);
    g_assert_no_error (error);
    g_assert_nonnull (u);
    g_assert_cmpint (u->scheme, ==, g->scheme);
    g_assert_cmpstr (u->host, ==, g->host);
    g_assert_cmpuint (u->port, ==, g->port);
    g_assert_cmpint (u->framing, ==, g->framing);
    g_assert_cmpint (u->polling, ==, g->polling);
    g_assert_cmpint (u->connect_timeout_ms, ==, g->connect_ms);
    g_assert_cmpint (u->call_timeout_ms, ==, g->call_ms);
    g_assert_cmpint (u->backlog, ==, g->backlog);
    g_assert_cmpint (u->idle_timeout_ms, ==, g->idle_ms);
    g_assert_cmpint (u->keepalive_ms, ==, g->keepalive_ms);
    thrift_transport_uri_free (u);
  }
}

static void
test_parse_bad (void)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (bad); i++)
  {
    const Bad *b = &bad[i];
    GError *error = NULL;
    ThriftTransportUri *u = thrift_transport_uri_parse (b->uri, b->server, &error);

    g_test_message ("'%s' -> %s", b->uri, error ? error->message : "(accepted)");
    g_assert_null (u);
    g_assert_error (error, THRIFT_TRANSPORT_URI_ERROR, b->code);
    if (strstr (error->message, b->says) == NULL)
      g_error ("'%s': message '%s' does not say '%s'", b->uri, error->message, b->says);
    /* the message names the URI it is about */
    if (*b->uri != '\0')
      g_assert_nonnull (strstr (error->message, b->uri));
    g_clear_error (&error);

    /* the builders refuse it the same way */
    if (b->server)
      g_assert_null (thrift_server_transport_new_for_uri (b->uri, NULL, NULL, &error));
    else
      g_assert_null (thrift_transport_new_for_uri (b->uri, &error));
    g_assert_error (error, THRIFT_TRANSPORT_URI_ERROR, b->code);
    g_clear_error (&error);
  }
}

static void
test_describe (void)
{
  static const struct
  {
    const gchar *uri;
    gboolean server;
    const gchar *text;
  } cases[] = {
    { "tcp://127.0.0.1:9090", FALSE, "tcp 127.0.0.1:9090 (ThriftSocket + ThriftFramedTransport)" },
    { "tcp://:9090?framing=none&backlog=3", TRUE, "tcp *:9090 (ThriftSocket, backlog=3)" },
    { "rdma://[::1]:5?polling=busy&call-timeout=100", FALSE,
      "rdma [::1]:5 (ThriftRdma, polling=busy, call-timeout=100 ms)" },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
  {
    g_autoptr (ThriftTransportUri)
        u = thrift_transport_uri_parse (cases[i].uri, cases[i].server, NULL);
    g_autofree gchar *text = NULL;
    g_assert_nonnull (u);
    text = thrift_transport_uri_describe (u);
    g_assert_cmpstr (text, ==, cases[i].text);
  }
}

/* tcp:// clients: ThriftSocket with the URI's host and port inside the chosen wrapper; the
 * wrapper keeps the socket alive and drops it with itself. */
static void
test_tcp_client (void)
{
  static const struct
  {
    const gchar *options;
    GType (*wrapper) (void);
  } cases[] = {
    { "", thrift_framed_transport_get_type },
    { "?framing=buffered", thrift_buffered_transport_get_type },
    { "?framing=none", NULL },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
  {
    g_autofree gchar *uri = g_strdup_printf ("tcp://example.invalid:4242%s", cases[i].options);
    GError *error = NULL;
    ThriftTransport *t = thrift_transport_new_for_uri (uri, &error);
    ThriftTransport *sock = NULL;
    gchar *host = NULL;
    guint port = 0;

    g_assert_no_error (error);
    g_assert_nonnull (t);
    if (cases[i].wrapper != NULL)
    {
      g_assert_true (G_TYPE_CHECK_INSTANCE_TYPE (t, cases[i].wrapper ()));
      g_object_get (t, "transport", &sock, NULL);
      g_assert_true (THRIFT_IS_SOCKET (sock));
      g_object_add_weak_pointer (G_OBJECT (sock), (gpointer *) &sock);
      g_object_unref (sock); /* g_object_get's reference */
    }
    else
    {
      g_assert_true (THRIFT_IS_SOCKET (t));
      sock = t;
    }
    g_object_get (sock, "hostname", &host, "port", &port, NULL);
    g_assert_cmpstr (host, ==, "example.invalid");
    g_assert_cmpuint (port, ==, 4242);
    g_free (host);
    g_assert_false (thrift_transport_is_open (t));
    g_object_unref (t);
    if (cases[i].wrapper != NULL)
      g_assert_null (sock); /* freed with its wrapper */
  }
}

/* A pass-through factory of the URI helpers hands out the connection itself as a reference
 * of its own: ThriftSimpleServer unrefs what the factories return and then the connection. */
static void
assert_pass_through_owned (ThriftTransportFactory *f)
{
  ThriftTransport *t = g_object_new (THRIFT_TYPE_MEMORY_BUFFER, NULL);
  ThriftTransport *got = THRIFT_TRANSPORT_FACTORY_GET_CLASS (f)->get_transport (f, t);

  g_assert_true (got == t);
  g_assert_cmpuint (G_OBJECT (t)->ref_count, ==, 2);
  g_object_unref (got);
  g_object_unref (t);
}

/* tcp:// servers: ThriftServerSocket on the port, with factories that match the framing. */
static void
test_tcp_server (void)
{
  static const struct
  {
    const gchar *uri;
    GType (*factory) (void);
    guint backlog;
  } cases[] = {
    { "tcp://:4243", thrift_checked_framed_transport_factory_get_type, 1024 },
    { "tcp://0.0.0.0:4243?framing=buffered&backlog=7", thrift_buffered_transport_factory_get_type,
      7 },
    { "tcp://:4243?framing=none", NULL, 1024 },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
  {
    ThriftTransportFactory *in_f = NULL, *out_f = NULL;
    GError *error = NULL;
    ThriftServerTransport *st = thrift_server_transport_new_for_uri (cases[i].uri, &in_f, &out_f,
                                                                     &error);
    guint port = 0, backlog = 0;

    g_assert_no_error (error);
    g_assert_true (THRIFT_IS_SERVER_SOCKET (st));
    g_object_get (st, "port", &port, "backlog", &backlog, NULL);
    g_assert_cmpuint (port, ==, 4243);
    g_assert_cmpuint (backlog, ==, cases[i].backlog);
    if (cases[i].factory != NULL)
    {
      g_assert_true (G_OBJECT_TYPE (in_f) == cases[i].factory ());
      g_assert_true (G_OBJECT_TYPE (out_f) == cases[i].factory ());
    }
    else
    {
      assert_pass_through_owned (in_f);
      assert_pass_through_owned (out_f);
    }
    g_assert_true (in_f != out_f);
    g_object_unref (in_f);
    g_object_unref (out_f);
    g_object_unref (st);
  }
}

/* rdma:// clients: one ThriftRdma (no wrapper) with the URI's settings; defaults otherwise. */
static void
test_rdma_client (void)
{
  GError *error = NULL;
  ThriftTransport *t;
  gchar *host = NULL;
  guint port = 0, connect_ms = 0, call_ms = 1;
  ThriftRdmaPolling polling = THRIFT_RDMA_POLLING_HYBRID;

  t = thrift_transport_new_for_uri (
      "rdma://[::1]:4244?polling=busy&connect-timeout=250&call-timeout=0", &error);
  g_assert_no_error (error);
  g_assert_true (THRIFT_IS_RDMA (t));
  g_object_get (t, "hostname", &host, "port", &port, "polling", &polling, "connect-timeout",
                &connect_ms, "call-timeout", &call_ms, NULL);
  g_assert_cmpstr (host, ==, "::1");
  g_assert_cmpuint (port, ==, 4244);
  g_assert_cmpint (polling, ==, THRIFT_RDMA_POLLING_BUSY);
  g_assert_cmpuint (connect_ms, ==, 250);
  g_assert_cmpuint (call_ms, ==, 0);
  g_free (host);
  g_object_unref (t);

  t = thrift_transport_new_for_uri ("rdma://10.77.0.1:9090", &error);
  g_assert_no_error (error);
  g_object_get (t, "polling", &polling, "connect-timeout", &connect_ms, "call-timeout", &call_ms,
                NULL);
  g_assert_cmpint (polling, ==, THRIFT_RDMA_DEFAULT_POLLING);
  g_assert_cmpuint (connect_ms, ==, THRIFT_RDMA_DEFAULT_CONNECT_TIMEOUT_MS);
  g_assert_cmpuint (call_ms, ==, THRIFT_RDMA_DEFAULT_CALL_TIMEOUT_MS);
  g_object_unref (t);
}

/* rdma:// servers: ThriftServerRdma on the address (none: every address), pass-through
 * factories (ThriftRdma is message-oriented). */
static void
test_rdma_server (void)
{
  ThriftTransportFactory *in_f = NULL, *out_f = NULL;
  GError *error = NULL;
  ThriftServerTransport *st;
  gchar *host = NULL;
  guint port = 0;
  gint backlog = 0;
  ThriftRdmaPolling polling = THRIFT_RDMA_POLLING_BUSY;

  st = thrift_server_transport_new_for_uri ("rdma://10.77.0.1:4245?polling=event&backlog=9", &in_f,
                                            &out_f, &error);
  g_assert_no_error (error);
  g_assert_true (THRIFT_IS_SERVER_RDMA (st));
  g_object_get (st, "hostname", &host, "port", &port, "backlog", &backlog, "polling", &polling,
                NULL);
  g_assert_cmpstr (host, ==, "10.77.0.1");
  g_assert_cmpuint (port, ==, 4245);
  g_assert_cmpint (backlog, ==, 9);
  g_assert_cmpint (polling, ==, THRIFT_RDMA_POLLING_EVENT);
  assert_pass_through_owned (in_f);
  assert_pass_through_owned (out_f);
  g_free (host);
  g_object_unref (in_f);
  g_object_unref (out_f);
  g_object_unref (st);

  st = thrift_server_transport_new_for_uri ("rdma://:4245", NULL, NULL, &error);
  g_assert_no_error (error);
  g_object_get (st, "hostname", &host, "backlog", &backlog, NULL);
  g_assert_null (host);
  g_assert_cmpint (backlog, ==, THRIFT_SERVER_RDMA_DEFAULT_BACKLOG);
  g_object_unref (st);
}

/* max-pinned-bytes reaches the property of every RDMA transport a URI makes, client and
 * server, rdma:// and hybrid:// (and is in the description). */
static void
test_max_pinned_bytes (void)
{
  static const gchar *const clients[] = {
    "rdma://h:1?max-pinned-bytes=33554432",
    "hybrid://h:1?max-pinned-bytes=33554432",
    "rdma://h:1?fallback=tcp&max-pinned-bytes=33554432",
  };
  static const gchar *const servers[] = {
    "rdma://:1?max-pinned-bytes=33554432",
    "hybrid://:1?max-pinned-bytes=33554432",
  };
  GError *error = NULL;
  guint64 v;

  for (guint i = 0; i < G_N_ELEMENTS (clients); i++)
  {
    ThriftTransport *t = thrift_transport_new_for_uri (clients[i], &error);
    ThriftTransportUri *u = thrift_transport_uri_parse (clients[i], FALSE, &error);
    g_autofree gchar *d = NULL;

    g_assert_no_error (error);
    v = 0;
    g_object_get (t, "max-pinned-bytes", &v, NULL);
    g_assert_cmpuint (v, ==, 32u << 20);
    d = thrift_transport_uri_describe (u);
    g_assert_nonnull (strstr (d, "max-pinned-bytes=33554432"));
    thrift_transport_uri_free (u);
    g_object_unref (t);
  }
  for (guint i = 0; i < G_N_ELEMENTS (servers); i++)
  {
    ThriftServerTransport *st = thrift_server_transport_new_for_uri (servers[i], NULL, NULL,
                                                                     &error);
    g_assert_no_error (error);
    v = 0;
    g_object_get (st, "max-pinned-bytes", &v, NULL);
    g_assert_cmpuint (v, ==, 32u << 20);
    g_object_unref (st);
  }
  /* unset: 0, the process's default budget */
  {
    ThriftTransport *t = thrift_transport_new_for_uri ("rdma://h:1", &error);
    v = 1;
    g_object_get (t, "max-pinned-bytes", &v, NULL);
    g_assert_cmpuint (v, ==, 0);
    g_object_unref (t);
  }
}

/* A client that cannot connect gets a transport error, not a crash or a hang. */
static void
test_tcp_refused (void)
{
  GError *error = NULL;
  ThriftTransport *t = thrift_transport_new_for_uri ("tcp://127.0.0.1:1", &error);

  g_assert_no_error (error);
  g_assert_false (thrift_transport_open (t, &error));
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_CONNECT);
  g_clear_error (&error);
  g_object_unref (t);
}

/* Several threads parse at the same moment, the first parses of a fresh process (GLib sets up
 * its C locale on the first g_ascii_strtoll of a process, and the threads that waited for it
 * came back with errno set, which the parser took for a bad number).  Hence a process per
 * round, started before g_test_init, which parses numbers itself. */
#define RACE_THREADS 6
#define RACE_ROUNDS 300

static const gchar *const race_uris[] = { "hybrid://:9300", "tcp://:9301", "rdma://:9302" };
static gint race_ready, race_failed;
static volatile gint race_go;

static gpointer
race_thread (gpointer data)
{
  guint i = GPOINTER_TO_UINT (data);
  const gchar *uri = race_uris[i % G_N_ELEMENTS (race_uris)];
  GError *error = NULL;
  gboolean ok;

  g_atomic_int_inc (&race_ready);
  while (!g_atomic_int_get (&race_go))
    ;
  if (i % 2 == 0)
  {
    ThriftTransportUri *u = thrift_transport_uri_parse (uri, TRUE, &error);
    ok = u != NULL;
    thrift_transport_uri_free (u);
  }
  else
  {
    ThriftServerTransport *s = thrift_server_transport_new_for_uri (uri, NULL, NULL, &error);
    ok = s != NULL;
    g_clear_object (&s);
  }
  if (!ok)
  {
    g_printerr ("%s: %s\n", uri, error->message);
    g_atomic_int_inc (&race_failed);
  }
  g_clear_error (&error);
  return NULL;
}

static int
race_child (void)
{
  GThread *threads[RACE_THREADS];
  guint i;

  for (i = 0; i < RACE_THREADS; i++)
    threads[i] = g_thread_new ("parse", race_thread, GUINT_TO_POINTER (i));
  while (g_atomic_int_get (&race_ready) < RACE_THREADS)
    ;
  g_atomic_int_set (&race_go, 1);
  for (i = 0; i < RACE_THREADS; i++)
    g_thread_join (threads[i]);
  return race_failed == 0 ? 0 : 1;
}

static void
test_parse_concurrent (void)
{
  gchar *argv[] = { (gchar *) "/proc/self/exe", (gchar *) "--race-child", NULL };
  guint round, failed = 0;

  for (round = 0; round < RACE_ROUNDS; round++)
  {
    g_autofree gchar *err = NULL;
    GError *error = NULL;
    gint status;

    g_assert_true (
        g_spawn_sync (NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, &err, &status, &error));
    g_assert_no_error (error);
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      g_test_message ("round %u: %s", round, err);
      failed++;
    }
  }
  g_assert_cmpuint (failed, ==, 0);
}

int
main (int argc, char **argv)
{
  if (argc == 2 && strcmp (argv[1], "--race-child") == 0)
    return race_child ();
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/transport_uri/parse/good", test_parse_good);
  g_test_add_func ("/transport_uri/parse/bad", test_parse_bad);
  g_test_add_func ("/transport_uri/parse/concurrent", test_parse_concurrent);
  g_test_add_func ("/transport_uri/describe", test_describe);
  g_test_add_func ("/transport_uri/tcp/client", test_tcp_client);
  g_test_add_func ("/transport_uri/tcp/server", test_tcp_server);
  g_test_add_func ("/transport_uri/tcp/refused", test_tcp_refused);
  g_test_add_func ("/transport_uri/rdma/client", test_rdma_client);
  g_test_add_func ("/transport_uri/rdma/server", test_rdma_server);
  g_test_add_func ("/transport_uri/max-pinned-bytes", test_max_pinned_bytes);
  return g_test_run ();
}
