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
 * test_pairing.c: the RDMA side of pairing (hybrid://) on the host, with no device: the
 * pairing token after the hello in a connection request and the refusal codes of a reject
 * (rdma_wire.h), the admission decision (rdma_admit.h), the token crossing a handshake and
 * read back on the accepted ThriftRdma (over the in-memory provider of fake_verbs.h), and
 * the client's "pair-token" property.  What needs RDMA CM itself (a real reject, the
 * client's error, accept_ready and its descriptor) is test/rdma/test_pairing.c.
 */
#include "config.h"

#include <string.h>

#include <glib.h>
#include <thrift/c_glib/thrift_configuration.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_rdma_version.h>
#include <thrift/c_glib/transport/thrift_server_rdma.h>

/* a white-box test: it looks inside connections (the engine-internal header) */
#include "lib/c_glib/transport/rdma/rdma_admit.h"
#include "lib/c_glib/transport/rdma/rdma_conn_private.h"
#include "lib/c_glib/transport/rdma/rdma_resources.h"
#include "lib/c_glib/transport/rdma/rdma_transport.h"
#include "lib/c_glib/transport/rdma/rdma_wire.h"
#include "fake_verbs.h"

#define HELLO_LEN 36     /* the hello as the wire has it (rdma_wire.h) */
#define CONNECT_PDATA 56 /* private data RDMA CM delivers with a connect on RoCE/IB */
#define REJECT_PDATA 148 /* ... and with a reject */

static const guint8 token_a[THRIFT_RDMA_PAIR_TOKEN_LEN] = { 0x9f, 0x01, 0x42, 0x00, 0x17, 0xee,
                                                            0x80, 0x3c, 0x00, 0x00, 0x5a, 0xa5,
                                                            0x10, 0x20, 0x30, 0x40 };

/* A client's hello as setup_resources makes it. */
static void
sound_hello (RdmaWireHello *h)
{
  rdma_wire_hello_init (h, THRIFT_RDMA_WIRE_VERSION);
  h->credits = GUINT32_TO_LE (32);
  h->slot_size = GUINT32_TO_LE (4096);
  h->max_message = GUINT32_TO_LE (1u << 20);
  h->protocols = GUINT16_TO_LE (1);
}

/* What a server gets from RDMA CM for a request of @sent bytes: padded with zeros. */
static void
as_delivered (guint8 *pdata, const void *sent, gsize sent_len)
{
  memset (pdata, 0, CONNECT_PDATA);
  memcpy (pdata, sent, sent_len);
}

/* ---- the wire ---- */

static void
test_wire_token (void)
{
  RdmaWireRequest req;
  RdmaWireHello out;
  guint8 pdata[CONNECT_PDATA], token[RDMA_WIRE_PAIR_TOKEN_LEN], last_only[16] = { 0 };
  GError *error = NULL;

  g_assert_cmpuint (sizeof (RdmaWireHello), ==, HELLO_LEN);
  g_assert_cmpuint (RDMA_WIRE_PAIR_TOKEN_LEN, ==, THRIFT_RDMA_PAIR_TOKEN_LEN);
  sound_hello (&req.hello);
  memcpy (req.pair_token, token_a, sizeof token_a);
  as_delivered (pdata, &req, sizeof req);
  /* the token follows the 36-byte hello and fits a connect's private data */
  g_assert_cmpuint (sizeof req, <=, CONNECT_PDATA);
  g_assert_cmpmem (pdata + HELLO_LEN, 16, token_a, 16);
  memset (token, 0, sizeof token);
  g_assert_true (rdma_wire_pair_token_parse (pdata, sizeof pdata, token));
  g_assert_cmpmem (token, 16, token_a, 16);
  /* an older server reads the hello alone, as before */
  g_assert_true (rdma_wire_hello_parse (pdata, sizeof pdata, &out, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (out.credits, ==, 32);

  /* exactly the request's length (no padding) is enough */
  g_assert_true (rdma_wire_pair_token_parse (&req, sizeof req, token));
  /* a token that is zero but for its last byte is a token */
  last_only[15] = 1;
  memcpy (req.pair_token, last_only, 16);
  as_delivered (pdata, &req, sizeof req);
  g_assert_true (rdma_wire_pair_token_parse (pdata, sizeof pdata, token));
  g_assert_cmpmem (token, 16, last_only, 16);

  /* an older client: the hello alone, padded by the CM, carries no token */
  as_delivered (pdata, &req.hello, sizeof req.hello);
  memset (token, 0x77, sizeof token);
  g_assert_false (rdma_wire_pair_token_parse (pdata, sizeof pdata, token));
  g_assert_false (rdma_wire_pair_token_parse (&req.hello, sizeof req.hello, token));
  /* nor does an all-zero one, a cut one, or nothing */
  memset (req.pair_token, 0, 16);
  g_assert_false (rdma_wire_pair_token_parse (&req, sizeof req, token));
  memcpy (req.pair_token, token_a, 16);
  g_assert_false (rdma_wire_pair_token_parse (&req, HELLO_LEN + 15, token));
  g_assert_false (rdma_wire_pair_token_parse (NULL, 0, token));
  /* @token is only written when there is one */
  for (guint i = 0; i < sizeof token; i++)
    g_assert_cmpuint (token[i], ==, 0x77);
}

static void
test_wire_refusal (void)
{
  static const guint16 codes[] = { RDMA_WIRE_REFUSE_UNKNOWN_TOKEN, RDMA_WIRE_REFUSE_NOT_PAIRING,
                                   RDMA_WIRE_REFUSE_TOKEN_REQUIRED, 77 };
  RdmaWireRefusal r;
  RdmaWireHello hello, out;
  guint8 pdata[REJECT_PDATA];
  GError *error = NULL;

  g_assert_cmpuint (sizeof r, <=, REJECT_PDATA);
  for (guint i = 0; i < G_N_ELEMENTS (codes); i++)
  {
    rdma_wire_refusal_init (&r, THRIFT_RDMA_WIRE_VERSION, codes[i]);
    memset (pdata, 0, sizeof pdata);
    memcpy (pdata, &r, sizeof r);
    g_assert_cmpuint (rdma_wire_refusal_parse (pdata, sizeof pdata), ==, codes[i]);
    g_assert_cmpuint (rdma_wire_refusal_parse (&r, sizeof r), ==, codes[i]);
    g_assert_cmpuint (rdma_wire_refusal_parse (&r, sizeof r - 1), ==, RDMA_WIRE_REFUSE_NONE);
    /* an older client sees what any reject carries: a hello of the server's version */
    g_assert_false (rdma_wire_hello_parse (pdata, sizeof pdata, &out, &error));
    g_assert_cmpuint (out.magic, ==, RDMA_WIRE_HELLO_MAGIC);
    g_assert_cmpuint (out.version, ==, THRIFT_RDMA_WIRE_VERSION);
    g_clear_error (&error);
  }
  /* a reject without a reason: a hello alone (version), nothing, zeros, another magic */
  rdma_wire_hello_init (&hello, THRIFT_RDMA_WIRE_VERSION);
  memset (pdata, 0, sizeof pdata);
  memcpy (pdata, &hello, sizeof hello);
  g_assert_cmpuint (rdma_wire_refusal_parse (pdata, sizeof pdata), ==, RDMA_WIRE_REFUSE_NONE);
  g_assert_cmpuint (rdma_wire_refusal_parse (NULL, 0), ==, RDMA_WIRE_REFUSE_NONE);
  memset (pdata, 0, sizeof pdata);
  g_assert_cmpuint (rdma_wire_refusal_parse (pdata, sizeof pdata), ==, RDMA_WIRE_REFUSE_NONE);
  rdma_wire_refusal_init (&r, THRIFT_RDMA_WIRE_VERSION, RDMA_WIRE_REFUSE_UNKNOWN_TOKEN);
  r.hello.magic ^= 0x01;
  g_assert_cmpuint (rdma_wire_refusal_parse (&r, sizeof r), ==, RDMA_WIRE_REFUSE_NONE);

  /* what the client says */
  g_assert_nonnull (strstr (rdma_wire_refusal_describe (RDMA_WIRE_REFUSE_UNKNOWN_TOKEN),
                            "pairing token is unknown or was already used"));
  g_assert_nonnull (
      strstr (rdma_wire_refusal_describe (RDMA_WIRE_REFUSE_NOT_PAIRING), "does not pair"));
  g_assert_nonnull (
      strstr (rdma_wire_refusal_describe (RDMA_WIRE_REFUSE_TOKEN_REQUIRED), "no pairing token"));
  g_assert_nonnull (rdma_wire_refusal_describe (77));
}

/* ---- admission ---- */

typedef struct
{
  gboolean admit;
  const gchar *reason; /* set on refusal (NULL: leave it unset) */
  guint calls;
  gboolean saw_token;
  guint8 token[THRIFT_RDMA_PAIR_TOKEN_LEN];
} Judge;

static gboolean
judge (const guint8 *token, gpointer user_data, gchar **reason)
{
  Judge *j = user_data;

  j->calls++;
  j->saw_token = token != NULL;
  if (token != NULL)
    memcpy (j->token, token, sizeof j->token);
  if (j->reason != NULL)
    *reason = g_strdup (j->reason); /* also when admitting: must not leak */
  return j->admit;
}

static void
test_admit (void)
{
  RdmaWireRequest req;
  guint8 with[CONNECT_PDATA], without[CONNECT_PDATA];
  gchar *reason = NULL;
  Judge j;

  sound_hello (&req.hello);
  memcpy (req.pair_token, token_a, sizeof token_a);
  as_delivered (with, &req, sizeof req);
  as_delivered (without, &req.hello, sizeof req.hello);

  /* a server that does not pair: no token admitted, a token refused */
  g_assert_cmpuint (rdma_admit_request (without, sizeof without, NULL, NULL, &reason), ==,
                    RDMA_WIRE_REFUSE_NONE);
  g_assert_null (reason);
  g_assert_cmpuint (rdma_admit_request (with, sizeof with, NULL, NULL, &reason), ==,
                    RDMA_WIRE_REFUSE_NOT_PAIRING);
  g_assert_nonnull (strstr (reason, "does not pair"));
  g_clear_pointer (&reason, g_free);

  /* the function sees the token and admits */
  j = (Judge){ .admit = TRUE, .reason = "ignored" };
  g_assert_cmpuint (rdma_admit_request (with, sizeof with, judge, &j, &reason), ==,
                    RDMA_WIRE_REFUSE_NONE);
  g_assert_null (reason);
  g_assert_cmpuint (j.calls, ==, 1);
  g_assert_true (j.saw_token);
  g_assert_cmpmem (j.token, 16, token_a, 16);
  /* ... sees none and admits */
  j = (Judge){ .admit = TRUE };
  g_assert_cmpuint (rdma_admit_request (without, sizeof without, judge, &j, &reason), ==,
                    RDMA_WIRE_REFUSE_NONE);
  g_assert_false (j.saw_token);
  g_assert_cmpuint (j.calls, ==, 1);
  /* ... refuses a token: unknown or used; its reason is what the server logs */
  j = (Judge){ .admit = FALSE, .reason = "token 9f01 not waiting" };
  g_assert_cmpuint (rdma_admit_request (with, sizeof with, judge, &j, &reason), ==,
                    RDMA_WIRE_REFUSE_UNKNOWN_TOKEN);
  g_assert_cmpstr (reason, ==, "token 9f01 not waiting");
  g_clear_pointer (&reason, g_free);
  /* ... refuses no token: a token is required; without a reason it gets one */
  j = (Judge){ .admit = FALSE };
  g_assert_cmpuint (rdma_admit_request (without, sizeof without, judge, &j, &reason), ==,
                    RDMA_WIRE_REFUSE_TOKEN_REQUIRED);
  g_assert_nonnull (reason);
  g_assert_cmpstr (reason, !=, "");
  g_clear_pointer (&reason, g_free);
}

/* ---- the token through a handshake (fake provider) ---- */

static void
assert_clean (void)
{
  RdmaResCounts r;

  rdma_res_counts (&r);
  g_assert_cmpint (r.qps + r.cqs + r.mrs + r.pds + r.cm_ids + r.cm_channels, ==, 0);
  fake_verbs_assert_clean ();
}

static void
same_token (const guint8 *seen, const guint8 *sent)
{
  if (sent == NULL)
  {
    g_assert_null (seen);
  }
  else
  {
    g_assert_nonnull (seen);
    g_assert_cmpmem (seen, 16, sent, 16);
  }
}

/* A client with @token (NULL: none) and a server, paired; the server's view of the token,
 * and one message across to show the connection works. */
static void
pair_with (const guint8 *token)
{
  RdmaConnSettings cs, ss;
  struct rdma_cm_id *a, *b;
  RdmaConn *c = NULL, *s = NULL;
  GError *error = NULL;
  RdmaMessage *msg;
  ThriftRdma *accepted;
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  rdma_conn_settings_init (&cs, 1u << 20, THRIFT_RDMA_POLLING_EVENT);
  rdma_conn_settings_init (&ss, 1u << 20, THRIFT_RDMA_POLLING_EVENT);
  cs.keepalive_ms = ss.keepalive_ms = 0;
  if (token != NULL)
    memcpy (cs.pair_token, token, THRIFT_RDMA_PAIR_TOKEN_LEN);
  fake_verbs_link (&a, &b);
  if (!rdma_conn_pair (a, b, &cs, &ss, &c, &s, &error))
    g_error ("pair: %s", error->message);
  same_token (rdma_conn_peer_pair_token (s), token);
  /* the client's own connection never has a peer token */
  g_assert_null (rdma_conn_peer_pair_token (c));
  g_assert_true (rdma_conn_send (c, (const guint8 *) "pair", 4, deadline, &error));
  msg = rdma_conn_wait_message (s, deadline, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (rdma_message_data (msg), rdma_message_len (msg), "pair", 4);
  g_assert_true (rdma_conn_release_message (s, &error));

  /* the accepted transport gives it until it is closed */
  accepted = thrift_rdma_new_accepted (s, NULL, NULL, THRIFT_RDMA_POLLING_EVENT, 30000, 0, 0);
  same_token (thrift_rdma_get_peer_pair_token (accepted), token);
  thrift_transport_close (THRIFT_TRANSPORT (accepted), NULL);
  g_assert_null (thrift_rdma_get_peer_pair_token (accepted));
  g_object_unref (accepted);
  rdma_conn_free (c);
  assert_clean ();
}

static void
test_handshake_token (void)
{
  guint8 last_only[16] = { 0 };

  pair_with (token_a);
  last_only[15] = 0x80;
  pair_with (last_only);
}

static void
test_handshake_no_token (void)
{
  pair_with (NULL);
}

/* ---- the client's property ---- */

static void
test_client_property (void)
{
  static const guint8 zeros[16] = { 0 };
  ThriftTransport *t = thrift_rdma_new ("127.0.0.1", 9);
  GBytes *good = g_bytes_new_static (token_a, sizeof token_a);
  GBytes *bad[] = { g_bytes_new_static (token_a, 15), g_bytes_new_static (zeros, 16) };
  GBytes *got = NULL;
  GError *error = NULL;

  g_object_get (t, "pair-token", &got, NULL);
  g_assert_null (got);
  g_object_set (t, "pair-token", good, NULL);
  g_object_get (t, "pair-token", &got, NULL);
  g_assert_true (g_bytes_equal (got, good));
  g_bytes_unref (got);
  /* a token the wire cannot carry fails open, before anything else is tried */
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
  {
    g_object_set (t, "pair-token", bad[i], NULL);
    g_assert_false (thrift_transport_open (t, &error));
    g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET);
    g_assert_nonnull (strstr (error->message, "pair-token"));
    g_clear_error (&error);
    g_assert_false (thrift_transport_is_open (t));
    g_bytes_unref (bad[i]);
  }
  g_object_set (t, "pair-token", NULL, NULL);
  g_object_get (t, "pair-token", &got, NULL);
  g_assert_null (got);
  /* not open: no peer token */
  g_assert_null (thrift_rdma_get_peer_pair_token (THRIFT_RDMA (t)));
  g_bytes_unref (good);
  g_object_unref (t);
}

int
main (int argc, char **argv)
{
  gint rc;

  g_test_init (&argc, &argv, NULL);
  fake_verbs_install ();
  g_test_add_func ("/pairing/wire/token", test_wire_token);
  g_test_add_func ("/pairing/wire/refusal", test_wire_refusal);
  g_test_add_func ("/pairing/admit", test_admit);
  g_test_add_func ("/pairing/handshake/token", test_handshake_token);
  g_test_add_func ("/pairing/handshake/no_token", test_handshake_no_token);
  g_test_add_func ("/pairing/client/property", test_client_property);
  rc = g_test_run ();
  fake_verbs_uninstall ();
  return rc;
}
