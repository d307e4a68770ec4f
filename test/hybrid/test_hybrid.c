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
 * test_hybrid: hybrid:// on a host without RDMA: the handshake's wire format, URIs, a server
 * and a client that fall back to TCP alone (every call, oneway and exception on it, byte for
 * byte), the errors without fallback, a stock client and silent clients at a hybrid server.
 * Both legs are tested in the guest (test/rdma/test_hybrid_rdma.c).
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>

#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/protocol/thrift_compact_protocol.h>
#include <thrift/c_glib/transport/thrift_framed_transport.h>
#include <thrift/c_glib/transport/thrift_memory_buffer.h>
#include <thrift/c_glib/transport/thrift_hybrid.h>
#include <thrift/c_glib/transport/thrift_rdma_version.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "lib/c_glib/transport/hybrid/hybrid_wire.h"
#include "legs_util.h"

/* Warnings and messages, recorded (not fatal): the server logs from its own threads, at
 * moments the test does not choose. */
static GMutex log_lock;
static GPtrArray *logged;

static void
record (const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
  g_mutex_lock (&log_lock);
  g_ptr_array_add (
      logged,
      g_strdup_printf ("%s: %s", (level & G_LOG_LEVEL_WARNING) ? "warning" : "message", message));
  g_mutex_unlock (&log_lock);
}

/* Whether a recorded line matches @pattern (g_pattern_match_simple); forgets it if so. */
static gboolean
logged_take (const gchar *pattern)
{
  gboolean found = FALSE;

  g_mutex_lock (&log_lock);
  for (guint i = 0; i < logged->len && !found; i++)
    if (g_pattern_match_simple (pattern, logged->pdata[i]))
    {
      g_ptr_array_remove_index (logged, i);
      found = TRUE;
    }
  g_mutex_unlock (&log_lock);
  return found;
}

static gboolean
no_rdma_here (void)
{
  if (thrift_rdma_device_available (NULL))
  {
    g_test_skip ("this host has an RDMA device; the fallback tests need one without");
    return FALSE;
  }
  return TRUE;
}

/* ---- the handshake's messages ---- */

static void
test_wire_roundtrip (void)
{
  guint8 hello[HYBRID_HELLO_LEN], welcome[HYBRID_WELCOME_LEN], commit[HYBRID_COMMIT_LEN];
  guint8 token[HYBRID_TOKEN_LEN];
  HybridMessage m;
  GError *error = NULL;

  for (guint i = 0; i < HYBRID_TOKEN_LEN; i++)
    token[i] = (guint8) (0xa0 + i);
  hybrid_wire_hello (hello, HYBRID_WANT_RDMA);
  g_assert_true (hybrid_wire_parse_hello (hello, sizeof hello, &m, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (m.flags, ==, HYBRID_WANT_RDMA);
  g_assert_cmpuint (m.version, ==, HYBRID_WIRE_VERSION);

  hybrid_wire_welcome (welcome, HYBRID_STATUS_OK, HYBRID_HAS_RDMA, token);
  g_assert_true (hybrid_wire_parse_welcome (welcome, sizeof welcome, &m, &error));
  g_assert_cmpuint (m.status, ==, HYBRID_STATUS_OK);
  g_assert_cmpuint (m.flags, ==, HYBRID_HAS_RDMA);
  g_assert_cmpmem (m.token, sizeof m.token, token, sizeof token);

  hybrid_wire_commit (commit, HYBRID_COMMIT_TCP_ONLY);
  g_assert_true (hybrid_wire_parse_commit (commit, sizeof commit, &m, &error));
  g_assert_cmpuint (m.commit, ==, HYBRID_COMMIT_TCP_ONLY);

  /* read as a frame length, the magic is negative: no framed peer sends it */
  g_assert_cmpint ((gint32) ((guint32) hello[0] << 24 | hello[1] << 16 | hello[2] << 8 | hello[3]),
                   <, 0);
}

typedef struct
{
  const gchar *what;
  guint offset; /* byte to change, of a hello (or a commit, or a welcome) */
  guint8 value;
  const gchar *named; /* what the message must say */
} Corrupt;

static void
test_wire_corrupt (void)
{
  static const Corrupt hello_cases[] = {
    { "magic", 0, 0x00, "expected a hello" },
    { "magic", 3, 0x00, "expected a hello" },
    { "version", 4, 9, "version 9" },
    { "flags", 5, 0x80, "flags" },
  };
  static const Corrupt commit_cases[] = {
    { "commit", 5, 0, "unknown commit" },
    { "commit", 5, 3, "unknown commit" },
  };
  guint8 b[HYBRID_WELCOME_LEN];
  HybridMessage m;
  GError *error = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (hello_cases); i++)
  {
    hybrid_wire_hello (b, 0);
    b[hello_cases[i].offset] = hello_cases[i].value;
    g_assert_false (hybrid_wire_parse_hello (b, HYBRID_HELLO_LEN, &m, &error));
    g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE);
    g_assert_nonnull (strstr (error->message, hello_cases[i].named));
    g_clear_error (&error);
  }
  for (guint i = 0; i < G_N_ELEMENTS (commit_cases); i++)
  {
    hybrid_wire_commit (b, HYBRID_COMMIT_RDMA);
    b[commit_cases[i].offset] = commit_cases[i].value;
    g_assert_false (hybrid_wire_parse_commit (b, HYBRID_COMMIT_LEN, &m, &error));
    g_assert_nonnull (strstr (error->message, commit_cases[i].named));
    g_clear_error (&error);
  }
  hybrid_wire_welcome (b, HYBRID_STATUS_OK, 0, NULL);
  b[5] = 77;
  g_assert_false (hybrid_wire_parse_welcome (b, HYBRID_WELCOME_LEN, &m, &error));
  g_assert_nonnull (strstr (error->message, "status 77"));
  g_clear_error (&error);
  /* short: one byte missing of each */
  hybrid_wire_hello (b, 0);
  g_assert_false (hybrid_wire_parse_hello (b, HYBRID_HELLO_LEN - 1, &m, &error));
  g_assert_nonnull (strstr (error->message, "too short"));
  g_clear_error (&error);
  g_assert_false (hybrid_wire_parse_welcome (b, HYBRID_WELCOME_LEN - 1, &m, &error));
  g_assert_nonnull (strstr (error->message, "too short"));
  g_clear_error (&error);
}

/* The first byte of what stock c_glib clients write (binary and compact, framed and
 * buffered) and of a hello: each is told apart. */
static void
test_wire_first_byte (void)
{
  guint8 hello[HYBRID_HELLO_LEN];

  hybrid_wire_hello (hello, HYBRID_WANT_RDMA);
  g_assert_cmpint (hybrid_wire_first_byte (hello[0]), ==, HYBRID_PEER_HYBRID);
  for (guint compact = 0; compact < 2; compact++)
    for (guint framed = 0; framed < 2; framed++)
    {
      ThriftMemoryBuffer *mem = g_object_new (THRIFT_TYPE_MEMORY_BUFFER, NULL);
      ThriftTransport *t = framed
                               ? g_object_new (THRIFT_TYPE_FRAMED_TRANSPORT, "transport", mem, NULL)
                               : g_object_ref (THRIFT_TRANSPORT (mem));
      ThriftProtocol *p = g_object_new (compact ? THRIFT_TYPE_COMPACT_PROTOCOL
                                                : THRIFT_TYPE_BINARY_PROTOCOL,
                                        "transport", t, NULL);
      GError *error = NULL;
      guint8 first = 0;

      g_assert_cmpint (thrift_protocol_write_message_begin (p, "noted", T_CALL, 1, &error), >, 0);
      g_assert_cmpint (thrift_protocol_write_message_end (p, &error), >=, 0);
      g_assert_true (thrift_transport_flush (t, &error));
      g_assert_no_error (error);
      g_assert_cmpint (thrift_transport_read (THRIFT_TRANSPORT (mem), &first, 1, &error), ==, 1);
      g_assert_cmpint (hybrid_wire_first_byte (first), ==,
                       framed ? HYBRID_PEER_FRAMED : HYBRID_PEER_BUFFERED);
      g_object_unref (p);
      g_object_unref (t);
      g_object_unref (mem);
    }
}

static void
test_wire_token (void)
{
  guint8 a[HYBRID_TOKEN_LEN], b[HYBRID_TOKEN_LEN], zero[HYBRID_TOKEN_LEN] = { 0 };
  GError *error = NULL;

  g_assert_true (hybrid_wire_new_token (a, &error));
  g_assert_true (hybrid_wire_new_token (b, &error));
  g_assert_no_error (error);
  g_assert_true (memcmp (a, b, sizeof a) != 0);
  g_assert_true (memcmp (a, zero, sizeof a) != 0);
}

/* ---- URIs ---- */

/* @uri makes a ThriftHybrid with these properties. */
static void
assert_hybrid_from_uri (const gchar *uri, gboolean by_hints, gboolean fallback)
{
  GError *error = NULL;
  ThriftTransport *t = thrift_transport_new_for_uri (uri, &error);
  gboolean got_by_hints, got_fallback;

  g_assert_no_error (error);
  g_assert_true (THRIFT_IS_HYBRID (t));
  g_object_get (t, "use-transport-hints", &got_by_hints, "fallback", &got_fallback, NULL);
  g_assert_cmpint (got_by_hints, ==, by_hints);
  g_assert_cmpint (got_fallback, ==, fallback);
  g_object_unref (t);
}

static void
test_uri (void)
{
  GError *error = NULL;
  ThriftTransportUri *u = thrift_transport_uri_parse ("hybrid://10.77.0.1:9095?fallback=tcp&"
                                                      "polling=busy",
                                                      FALSE, &error);
  g_autofree gchar *text = NULL;

  g_assert_no_error (error);
  g_assert_cmpint (u->scheme, ==, THRIFT_TRANSPORT_URI_HYBRID);
  g_assert_true (u->fallback);
  g_assert_cmpint (u->polling, ==, THRIFT_TRANSPORT_URI_POLLING_BUSY);
  text = thrift_transport_uri_describe (u);
  g_assert_nonnull (strstr (text, "hybrid 10.77.0.1:9095"));
  g_assert_nonnull (strstr (text, "fallback=tcp"));
  thrift_transport_uri_free (u);

  /* what does not apply is refused, saying so */
  g_assert_null (thrift_transport_uri_parse ("tcp://h:1?fallback=tcp", FALSE, &error));
  g_assert_error (error, THRIFT_TRANSPORT_URI_ERROR, THRIFT_TRANSPORT_URI_ERROR_OPTION);
  g_assert_nonnull (strstr (error->message, "does not apply to tcp://"));
  g_clear_error (&error);
  g_assert_null (thrift_transport_uri_parse ("hybrid://h:1?framing=buffered", FALSE, &error));
  g_assert_nonnull (strstr (error->message, "does not apply to hybrid://"));
  g_clear_error (&error);
  g_assert_null (thrift_transport_uri_parse ("rdma://h:1?fallback=udp", FALSE, &error));
  g_assert_nonnull (strstr (error->message, "allowed: tcp | none"));
  g_clear_error (&error);
  g_assert_null (thrift_transport_uri_parse ("hybird://h:1", FALSE, &error));
  g_assert_nonnull (strstr (error->message, "allowed: tcp, rdma, hybrid"));
  g_clear_error (&error);

  /* hybrid://, and rdma:// with fallback, are ThriftHybrid; the latter ignores transport
   * hints (every call by RDMA while it has an RDMA leg) */
  assert_hybrid_from_uri ("hybrid://h:1", TRUE, FALSE);
  assert_hybrid_from_uri ("rdma://h:1?fallback=tcp", FALSE, TRUE);
}

/* ---- TCP alone ---- */

static gchar *
uri_at (const gchar *scheme, gboolean server, guint port, const gchar *options)
{
  return g_strdup_printf ("%s://%s:%u%s%s", scheme, server ? "127.0.0.1" : "127.0.0.1", port,
                          options != NULL ? "?" : "", options != NULL ? options : "");
}

static void
start_tcp_alone (LegsTestServer *s, guint port, const gchar *options)
{
  g_autofree gchar *uri = uri_at ("hybrid", TRUE, port, options);
  GError *error = NULL;

  g_assert_true (legs_server_start (s, uri, &error));
  g_assert_no_error (error);
  g_assert_true (logged_take ("warning: hybrid: serving port * over TCP alone (fallback): "
                              "no RDMA*"));
}

static void
open_tcp_alone (LegsTestClient *c, guint port)
{
  g_autofree gchar *uri = uri_at ("hybrid", FALSE, port, "fallback=tcp");

  legs_assert_open (c, uri);
  g_assert_true (logged_take ("warning: hybrid://127.0.0.1:*: no RDMA leg, every call goes by "
                              "TCP (fallback): this host has no RDMA device"));
}

static void
test_tcp_alone_calls (void)
{
  static const guint sizes[] = { 0, 1, 100, 4096, 4097, 70000 };
  guint port = test_free_port ();
  LegsTestServer s;
  LegsTestClient c;
  GError *error = NULL;
  gint64 sum = 0, got = 0;
  Oops *oops = NULL;
  gint32 r = -1;

  if (!no_rdma_here ())
    return;
  start_tcp_alone (&s, port, "fallback=tcp");
  open_tcp_alone (&c, port);
  g_assert_null (thrift_hybrid_get_rdma (THRIFT_HYBRID (c.transport)));
  g_assert_nonnull (
      strstr (thrift_hybrid_get_fallback_reason (THRIFT_HYBRID (c.transport)), "no RDMA device"));
  g_assert_cmpint (thrift_hybrid_get_last_leg (THRIFT_HYBRID (c.transport)), ==,
                   THRIFT_HYBRID_LEG_NONE);

  for (guint i = 0; i < 300; i++)
  {
    g_autoptr (GByteArray) in = legs_payload (sizes[i % G_N_ELEMENTS (sizes)], i);
    GByteArray *out = NULL;
    gboolean ok;

    switch (i % 3)
    {
    case 0:
      ok = legs_if_bulk (c.client, &out, in, &error);
      break;
    case 1:
      ok = legs_if_quick (c.client, &out, in, &error);
      break;
    default:
      ok = legs_if_plain (c.client, &out, in, &error);
      break;
    }
    g_assert_no_error (error);
    g_assert_true (ok);
    g_assert_cmpmem (out->data, out->len, in->data, in->len);
    g_byte_array_unref (out);
    /* with no RDMA leg, every call went by TCP, whatever its hint */
    g_assert_cmpint (thrift_hybrid_get_last_leg (THRIFT_HYBRID (c.transport)), ==,
                     THRIFT_HYBRID_LEG_TCP);
  }
  for (gint i = 1; i <= 100; i++)
  {
    g_assert_true (i % 2 ? legs_if_note_tcp (c.client, i, &error)
                         : legs_if_note_rdma (c.client, i, &error));
    sum += i;
  }
  g_assert_true (legs_if_noted (c.client, &got, 0, &error));
  g_assert_no_error (error);
  g_assert_cmpint (got, ==, sum);

  g_assert_false (legs_if_fail_tcp (c.client, &r, 7, &oops, &error));
  g_assert_nonnull (oops);
  {
    gint32 code = 0;
    g_object_get (oops, "code", &code, NULL);
    g_assert_cmpint (code, ==, 7);
  }
  g_clear_object (&oops);
  g_clear_error (&error);
  g_assert_true (legs_if_fail_rdma (c.client, &r, 0, &oops, &error));
  g_assert_no_error (error);
  g_assert_null (oops);

  legs_client_clear (&c);
  legs_server_stop (&s);
}

static void
test_no_fallback (void)
{
  guint port = test_free_port ();
  g_autofree gchar *server_uri = uri_at ("hybrid", TRUE, port, NULL);
  g_autofree gchar *client_uri = uri_at ("hybrid", FALSE, port, NULL);
  LegsTestServer s;
  LegsTestClient c;
  GError *error = NULL;

  if (!no_rdma_here ())
    return;
  /* a server that cannot listen for RDMA, asked for no fallback: the error, and why */
  g_assert_false (legs_server_start (&s, server_uri, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "cannot listen for RDMA"));
  g_assert_nonnull (strstr (error->message, "fallback=tcp"));
  g_clear_error (&error);

  /* a client asked for no fallback gets the error, not TCP in silence */
  start_tcp_alone (&s, port, "fallback=tcp");
  g_assert_false (legs_client_open (&c, client_uri, &error));
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_CONNECT);
  g_assert_nonnull (strstr (error->message, "no RDMA leg: this host has no RDMA device"));
  g_assert_nonnull (strstr (error->message, "fallback=tcp"));
  g_clear_error (&error);

  /* the server goes on serving */
  open_tcp_alone (&c, port);
  {
    gint64 got = -1;
    g_assert_true (legs_if_noted (c.client, &got, 0, &error));
    g_assert_no_error (error);
  }
  legs_client_clear (&c);
  legs_server_stop (&s);
}

/* Echo calls of every size (and an exception) on @c, checked byte for byte. */
static void
assert_echoes (LegsTestClient *c, guint calls)
{
  static const guint sizes[] = { 0, 1, 100, 4096, 4097, 70000 };
  GError *error = NULL;
  Oops *oops = NULL;
  gint32 r = -1, code = 0;

  for (guint i = 0; i < calls; i++)
  {
    g_autoptr (GByteArray) in = legs_payload (sizes[i % G_N_ELEMENTS (sizes)], i);
    GByteArray *out = NULL;
    gboolean ok = i % 2 ? legs_if_quick (c->client, &out, in, &error)
                        : legs_if_plain (c->client, &out, in, &error);

    g_assert_no_error (error);
    g_assert_true (ok);
    g_assert_cmpmem (out->data, out->len, in->data, in->len);
    g_byte_array_unref (out);
  }
  g_assert_false (legs_if_fail_tcp (c->client, &r, 9, &oops, &error));
  g_clear_error (&error); /* c_glib's generated client says so too */
  g_assert_nonnull (oops);
  g_object_get (oops, "code", &code, NULL);
  g_assert_cmpint (code, ==, 9);
  g_clear_object (&oops);
}

/* Stock Thrift clients on the hybrid port (no hello), framed and buffered: served over TCP in
 * the server's protocol, beside a hybrid client.  One in another protocol gets an error, not
 * a hang, and the server goes on. */
static void
test_stock_clients (void)
{
  static const gchar *const framings[] = { NULL, "framing=buffered" };
  guint port = test_free_port ();
  LegsTestServer s;
  LegsTestClient hybrid, c;
  GError *error = NULL;
  gint64 got = -1, t0;

  if (!no_rdma_here ())
    return;
  start_tcp_alone (&s, port, "fallback=tcp");
  open_tcp_alone (&hybrid, port);
  for (guint f = 0; f < G_N_ELEMENTS (framings); f++)
  {
    g_autofree gchar *uri = uri_at ("tcp", FALSE, port, framings[f]);

    g_test_message ("a stock client at %s", uri);
    legs_assert_open (&c, uri);
    assert_echoes (&c, 60);
    /* the hybrid client, served meanwhile */
    g_assert_true (legs_if_noted (hybrid.client, &got, 0, &error));
    g_assert_no_error (error);
    assert_echoes (&c, 6);
    legs_client_clear (&c);
  }

  /* compact against the server's binary protocol: an error within the bound, no hang */
  {
    g_autofree gchar *uri = uri_at ("tcp", FALSE, port, NULL);

    legs_assert_open (&c, uri);
    g_clear_object (&c.client);
    g_clear_object (&c.protocol);
    c.protocol = g_object_new (THRIFT_TYPE_COMPACT_PROTOCOL, "transport", c.transport, NULL);
    c.client = g_object_new (TYPE_LEGS_CLIENT, "input_protocol", c.protocol, "output_protocol",
                             c.protocol, NULL);
    t0 = g_get_monotonic_time ();
    g_assert_false (legs_if_noted (c.client, &got, 0, &error));
    g_assert_nonnull (error);
    g_assert_cmpint (g_get_monotonic_time () - t0, <, 5 * G_USEC_PER_SEC);
    g_clear_error (&error);
    legs_client_clear (&c);
  }
  g_assert_true (legs_if_noted (hybrid.client, &got, 0, &error));
  g_assert_no_error (error);
  legs_client_clear (&hybrid);
  legs_server_stop (&s);
}

/* Seconds until @fd reads the end of the stream (the server dropped it); -1 past @limit_s. */
static gdouble
seconds_to_eof (int fd, gdouble limit_s)
{
  gint64 t0 = g_get_monotonic_time ();
  struct timeval tv = { .tv_sec = (time_t) limit_s, .tv_usec = 0 };
  guint8 b[64];
  ssize_t n;

  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  while ((n = recv (fd, b, sizeof b, 0)) > 0)
    ;
  if (n < 0)
    return -1;
  return (g_get_monotonic_time () - t0) / 1e6;
}

static int
connect_raw (guint port)
{
  struct sockaddr_in a = { .sin_family = AF_INET,
                           .sin_port = htons (port),
                           .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int fd = socket (AF_INET, SOCK_STREAM, 0);

  g_assert_cmpint (connect (fd, (struct sockaddr *) &a, sizeof a), ==, 0);
  return fd;
}

/* One echo call whose request is split into two frames @split bytes into it (inside the
 * binary argument), sent on a raw socket to @port; the reply read back as a stock framed
 * client would.  The echo must be the argument, byte for byte. */
static void
assert_split_echo (guint port, guint len, guint split)
{
  ThriftMemoryBuffer *mem = g_object_new (THRIFT_TYPE_MEMORY_BUFFER, "buf_size", 1 << 20, NULL);
  ThriftProtocol *mp = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", mem, NULL);
  LegsClient *writer = g_object_new (TYPE_LEGS_CLIENT, "output_protocol", mp, NULL);
  g_autoptr (GByteArray) in = legs_payload (len, 3);
  g_autofree guint8 *req = g_malloc (len + 256);
  ThriftSocket *sock;
  ThriftTransport *framed;
  ThriftProtocol *p;
  LegsClient *reader;
  GByteArray *out = NULL;
  GError *error = NULL;
  gint32 n;
  guint32 be;
  int fd = connect_raw (port);

  g_assert_true (legs_client_send_plain (LEGS_IF (writer), in, &error));
  g_assert_no_error (error);
  n = thrift_transport_read (THRIFT_TRANSPORT (mem), req, len + 256, &error);
  g_assert_cmpint (n, >, (gint32) split);
  be = htonl (split);
  g_assert_cmpint (send (fd, &be, 4, 0), ==, 4);
  g_assert_cmpint (send (fd, req, split, 0), ==, (ssize_t) split);
  be = htonl ((guint32) n - split);
  g_assert_cmpint (send (fd, &be, 4, 0), ==, 4);
  g_assert_cmpint (send (fd, req + split, n - split, 0), ==, (ssize_t) (n - split));

  sock = g_object_new (THRIFT_TYPE_SOCKET, NULL);
  sock->sd = fd;
  framed = g_object_new (THRIFT_TYPE_FRAMED_TRANSPORT, "transport", sock, NULL);
  p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", framed, NULL);
  reader = g_object_new (TYPE_LEGS_CLIENT, "input_protocol", p, NULL);
  g_assert_true (legs_client_recv_plain (LEGS_IF (reader), &out, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (out->data, out->len, in->data, in->len);
  g_byte_array_unref (out);
  thrift_transport_close (THRIFT_TRANSPORT (sock), NULL);
  g_object_unref (reader);
  g_object_unref (p);
  g_object_unref (framed);
  g_object_unref (sock);
  g_object_unref (writer);
  g_object_unref (mp);
  g_object_unref (mem);
}

/* A call split into two frames inside an argument (a stock framed peer that flushes in the
 * middle of a message, or a hostile one): tcp:// and the hybrid TCP leg read it whole.  Thrift
 * 0.17's ThriftFramedTransport copies the first frame's tail from its GByteArray's header
 * instead of its data (THRIFT-6094; thrift_checked_framed_transport.h). */
static void
test_split_frames (void)
{
  static const gchar *const schemes[] = { "tcp", "hybrid" };

  if (!no_rdma_here ())
    return;
  for (guint k = 0; k < G_N_ELEMENTS (schemes); k++)
  {
    guint port = test_free_port ();
    g_autofree gchar *uri = uri_at (schemes[k], TRUE, port, "fallback=tcp");
    LegsTestServer s;
    GError *error = NULL;

    if (k == 0)
    {
      g_free (uri);
      uri = uri_at (schemes[k], TRUE, port, NULL);
      g_assert_true (legs_server_start (&s, uri, &error));
      g_assert_no_error (error);
    }
    else
    {
      start_tcp_alone (&s, port, "fallback=tcp");
    }
    /* the first frame ends 16 and 216 bytes into a binary argument of 100 and 4,000 bytes */
    assert_split_echo (port, 100, 40);
    assert_split_echo (port, 4000, 240);
    legs_server_stop (&s);
  }
}

/* Clients that connect and say nothing, or stop halfway, are dropped at the connect-timeout;
 * the server serves others meanwhile. */
static void
test_silent_clients (void)
{
  guint port = test_free_port ();
  guint8 hello[HYBRID_HELLO_LEN];
  LegsTestServer s;
  LegsTestClient c;
  GError *error = NULL;
  gint64 got = -1;
  int mute, half;
  gdouble t;

  if (!no_rdma_here ())
    return;
  start_tcp_alone (&s, port, "fallback=tcp&connect-timeout=300");
  mute = connect_raw (port);
  half = connect_raw (port);
  hybrid_wire_hello (hello, 0);
  g_assert_cmpint (send (half, hello, sizeof hello, 0), ==, sizeof hello);

  open_tcp_alone (&c, port);
  g_assert_true (legs_if_noted (c.client, &got, 0, &error));
  g_assert_no_error (error);

  t = seconds_to_eof (mute, 5);
  g_assert_cmpfloat (t, >=, 0);
  g_assert_cmpfloat (t, <, 3);
  t = seconds_to_eof (half, 5); /* the welcome came, then the end */
  g_assert_cmpfloat (t, >=, 0);
  g_assert_cmpfloat (t, <, 3);
  close (mute);
  close (half);
  legs_client_clear (&c);
  legs_server_stop (&s);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  logged = g_ptr_array_new_with_free_func (g_free);
  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  g_log_set_handler (NULL, G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE, record, NULL);
  g_test_add_func ("/hybrid/wire/roundtrip", test_wire_roundtrip);
  g_test_add_func ("/hybrid/wire/corrupt", test_wire_corrupt);
  g_test_add_func ("/hybrid/wire/token", test_wire_token);
  g_test_add_func ("/hybrid/wire/first-byte", test_wire_first_byte);
  g_test_add_func ("/hybrid/uri", test_uri);
  g_test_add_func ("/hybrid/tcp-alone/calls", test_tcp_alone_calls);
  g_test_add_func ("/hybrid/tcp-alone/no-fallback", test_no_fallback);
  g_test_add_func ("/hybrid/tcp-alone/stock-clients", test_stock_clients);
  g_test_add_func ("/hybrid/tcp-alone/silent-clients", test_silent_clients);
  g_test_add_func ("/hybrid/tcp-alone/split-frames", test_split_frames);
  return g_test_run ();
}
