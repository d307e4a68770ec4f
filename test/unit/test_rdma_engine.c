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
 * Host-side tests of the RDMA engine's pure parts (no device needed): header and handshake
 * validation, credit accounting, the protocol registry, status strings and errors (the
 * engine's domain and its mapping to THRIFT_TRANSPORT_ERROR and ThriftRdmaStatus), and the
 * no-device error of ThriftRdma.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include <glib.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_rdma_version.h>
#include <thrift/c_glib/transport/thrift_server_rdma.h>
#include <thrift/c_glib/transport/thrift_transport.h>

/* a white-box test: it looks inside connections (the engine-internal header) */
#include "lib/c_glib/transport/rdma/rdma_conn_private.h"
#include "lib/c_glib/transport/rdma/rdma_poll.h"
#include "lib/c_glib/transport/rdma/rdma_credit.h"
#include "lib/c_glib/transport/rdma/rdma_lend_cost.h"
#include "lib/c_glib/transport/rdma/rdma_machine.h"
#include "lib/c_glib/transport/rdma/proto/rdma_rndv.h"
#include "lib/c_glib/transport/rdma/rdma_proto.h"
#include "lib/c_glib/transport/rdma/rdma_select.h"
#include "lib/c_glib/transport/rdma/rdma_signal.h"
#include "lib/c_glib/transport/rdma/rdma_spin.h"
#include "lib/c_glib/transport/rdma/rdma_status.h"
#include "lib/c_glib/transport/rdma/rdma_transport.h"
#include "lib/c_glib/transport/rdma/rdma_wire.h"

#define MAX_MSG 1000u

/* A slot with a header and @frag payload bytes. */
static guint32
make_slot (guint8 *slot, guint8 type, guint8 flags, guint32 credits, guint32 frag, guint32 msg)
{
  rdma_wire_header_write (slot, RDMA_PROTO_EAGER, type, flags, credits, frag, msg);
  memset (slot + RDMA_WIRE_HEADER_SIZE, 0x5a, frag);
  return RDMA_WIRE_HEADER_SIZE + frag;
}

static void
expect_bad (const guint8 *slot, guint32 byte_len, RdmaStatus status, const gchar *words)
{
  RdmaWireHeader h;
  GError *error = NULL;

  g_assert_false (rdma_wire_header_parse (slot, byte_len, MAX_MSG, &h, &error));
  g_assert_error (error, RDMA_ENGINE_ERROR, (gint) status);
  if (strstr (error->message, words) == NULL)
    g_error ("message '%s' does not say '%s'", error->message, words);
  g_error_free (error);
}

static void
test_header_roundtrip (void)
{
  guint8 slot[256];
  RdmaWireHeader h;
  GError *error = NULL;
  guint32 n = make_slot (slot, RDMA_WIRE_DATA, RDMA_WIRE_FIRST, 7, 100, 900);

  g_assert_true (rdma_wire_header_parse (slot, n, MAX_MSG, &h, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (h.type, ==, RDMA_WIRE_DATA);
  g_assert_cmpuint (h.flags, ==, RDMA_WIRE_FIRST);
  g_assert_cmpuint (h.credits, ==, 7);
  g_assert_cmpuint (h.frag_len, ==, 100);
  g_assert_cmpuint (h.msg_len, ==, 900);
  g_assert_cmpuint (h.proto, ==, RDMA_PROTO_EAGER);
  /* little-endian on the wire, whatever the host: credits at bytes 8..11 */
  g_assert_cmpuint (slot[8], ==, 7);
  g_assert_cmpuint (slot[9] | slot[10] | slot[11], ==, 0);
}

static void
test_header_bad (void)
{
  guint8 slot[256];
  guint32 n;

  n = make_slot (slot, RDMA_WIRE_DATA, RDMA_WIRE_FIRST | RDMA_WIRE_LAST, 0, 10, 10);
  expect_bad (slot, 5, RDMA_ERR_PROTOCOL, "truncated");
  expect_bad (slot, n - 1, RDMA_ERR_PROTOCOL, "truncated");
  slot[0] ^= 0xff;
  expect_bad (slot, n, RDMA_ERR_PROTOCOL, "garbage framing");
  slot[0] ^= 0xff;
  slot[1] = THRIFT_RDMA_WIRE_VERSION + 1;
  expect_bad (slot, n, RDMA_ERR_PROTOCOL, "version");

  n = make_slot (slot, RDMA_WIRE_DATA, RDMA_WIRE_FIRST, 0, 10, MAX_MSG + 1);
  expect_bad (slot, n, RDMA_ERR_TOO_LARGE, "max message size");
  n = make_slot (slot, 9, RDMA_WIRE_FIRST, 0, 10, 10);
  expect_bad (slot, n, RDMA_ERR_PROTOCOL, "unknown message type");
  n = make_slot (slot, RDMA_WIRE_DATA, RDMA_WIRE_FIRST | RDMA_WIRE_LAST, 0, 10, 20);
  expect_bad (slot, n, RDMA_ERR_PROTOCOL, "garbage framing");
  n = make_slot (slot, RDMA_WIRE_DATA, RDMA_WIRE_FIRST, 0, 30, 20);
  expect_bad (slot, n, RDMA_ERR_PROTOCOL, "garbage framing");
  n = make_slot (slot, RDMA_WIRE_DATA, 0x80, 0, 10, 20);
  expect_bad (slot, n, RDMA_ERR_PROTOCOL, "flags");
  n = make_slot (slot, RDMA_WIRE_CREDIT, 0, 3, 4, 0);
  expect_bad (slot, n, RDMA_ERR_PROTOCOL, "credit message");
}

static void
test_hello (void)
{
  RdmaWireHello h, out;
  GError *error = NULL;
  guint8 padded[56] = { 0 };

  rdma_wire_hello_init (&h, THRIFT_RDMA_WIRE_VERSION);
  h.credits = GUINT32_TO_LE (32);
  h.slot_size = GUINT32_TO_LE (4096);
  h.max_message = GUINT32_TO_LE (12345);
  memcpy (padded, &h, sizeof h);
  /* CM pads private data: a longer buffer is fine */
  g_assert_true (rdma_wire_hello_parse (padded, sizeof padded, &out, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (out.credits, ==, 32);
  g_assert_cmpuint (out.max_message, ==, 12345);

  g_assert_false (rdma_wire_hello_parse (padded, 10, &out, &error));
  g_assert_error (error, RDMA_ENGINE_ERROR, RDMA_ERR_VERSION);
  g_clear_error (&error);

  rdma_wire_hello_init (&h, THRIFT_RDMA_WIRE_VERSION + 1);
  h.credits = GUINT32_TO_LE (32);
  h.slot_size = GUINT32_TO_LE (4096);
  g_assert_false (rdma_wire_hello_parse (&h, sizeof h, &out, &error));
  g_assert_error (error, RDMA_ENGINE_ERROR, RDMA_ERR_VERSION);
  g_assert_nonnull (strstr (error->message, "wire version"));
  g_clear_error (&error);

  memset (&h, 0, sizeof h);
  g_assert_false (rdma_wire_hello_parse (&h, sizeof h, &out, &error));
  g_assert_nonnull (strstr (error->message, "not a ThriftRdma hello"));
  g_clear_error (&error);
}

static void
test_credits (void)
{
  RdmaCredits c;
  guint sent = 0;

  rdma_credit_init (&c, 8, 4);
  while (rdma_credit_take (&c))
    sent++;
  g_assert_cmpuint (sent, ==, 4);             /* the peer's window, not ours */
  g_assert_false (rdma_credit_grant (&c, 5)); /* more than outstanding: protocol error */
  g_assert_true (rdma_credit_grant (&c, 3));
  g_assert_true (rdma_credit_take (&c));
  g_assert_true (rdma_credit_take (&c));
  g_assert_true (rdma_credit_take (&c));
  g_assert_false (rdma_credit_take (&c));

  /* the receive side: explicit return at half of our 8 slots */
  for (guint i = 0; i < 3; i++)
    rdma_credit_slot_freed (&c);
  g_assert_false (rdma_credit_need_explicit (&c));
  rdma_credit_slot_freed (&c);
  g_assert_true (rdma_credit_need_explicit (&c));
  g_assert_cmpuint (rdma_credit_piggyback (&c), ==, 4);
  g_assert_cmpuint (rdma_credit_piggyback (&c), ==, 0);
  g_assert_false (rdma_credit_need_explicit (&c));

  /* a window of one still returns credits */
  rdma_credit_init (&c, 1, 1);
  rdma_credit_slot_freed (&c);
  g_assert_true (rdma_credit_need_explicit (&c));
}

static void
test_registry_complete (void)
{
  guint n = 0;

  for (guint i = 0; i < RDMA_PROTO_COUNT; i++)
  {
    const RdmaProtoOps *o = rdma_proto_registry[i];
    if (o == NULL)
    {
      g_assert_null (rdma_proto_by_id (i));
      continue;
    }
    n++;
    g_test_message ("protocol %s", o->name);
    g_assert_cmpuint (o->id, ==, i); /* indexed by its wire id */
    g_assert_true (rdma_proto_by_id (o->id) == o);
    g_assert_true (rdma_proto_by_name (o->name) == o);
    g_assert_true (rdma_proto_for_hint (o->hint) == o);
    /* spelled as the IDL's proto hint */
    g_assert_cmpstr (o->name, ==, thrift_hint_proto_to_string (o->hint));
    g_assert_true (rdma_proto_implemented () & (1u << i));
    g_assert_nonnull (o->send_message);
    /* a protocol must be able to receive what it sends */
    g_assert_true (o->on_receive != NULL || o->on_imm != NULL);
  }
  /* every wire id has its protocol, and every proto hint its protocol (eager_rndv is a pair
   * of two: the plan splits it), so no proto hint goes unheeded */
  g_assert_cmpuint (n, ==, RDMA_PROTO_COUNT);
  for (ThriftHintProto p = THRIFT_HINT_PROTO_EAGER; p <= THRIFT_HINT_PROTO_EAGER_RNDV; p++)
  {
    if (p == THRIFT_HINT_PROTO_EAGER_RNDV)
    {
      g_assert_nonnull (rdma_proto_for_hint (THRIFT_HINT_PROTO_EAGER));
      g_assert_nonnull (rdma_proto_for_hint (THRIFT_HINT_PROTO_READ_RNDV));
    }
    else
    {
      g_assert_nonnull (rdma_proto_for_hint (p));
    }
  }
  g_assert_true (rdma_proto_implemented () & (1u << RDMA_PROTO_EAGER));
  g_assert_null (rdma_proto_by_id (RDMA_PROTO_COUNT));
  g_assert_null (rdma_proto_by_id (200));
  g_assert_null (rdma_proto_by_name ("no_such_protocol"));
}

/* A message whose bytes are still coming (a rendezvous READ) keeps its place: the one
 * received after it is read after it. */
static void
test_deliver_pending (void)
{
  RdmaConn conn = { .state = RDMA_CONN_IDLE };
  guint8 first[3] = { 1, 2, 3 };
  RdmaMessage *pending, *msg;

  g_queue_init (&conn.received);
  pending = rdma_conn_deliver_pending (&conn, &rdma_proto_read_rndv_ops, 3, 42);
  rdma_conn_deliver (&conn, &rdma_proto_eager_ops, (guint8 *) g_strdup ("abcd"), 4,
                     RDMA_MSG_ON_HEAP, -1, 0);
  g_assert_cmpuint (conn.unread_bytes, ==, 7);
  g_assert_cmpuint (conn.stats.messages_received, ==, 2);
  g_assert_null (rdma_conn_ready_message (&conn));
  /* nothing to release while the oldest is not readable */
  g_assert_true (rdma_conn_release_message (&conn, NULL));
  g_assert_cmpuint (g_queue_get_length (&conn.received), ==, 2);

  rdma_conn_deliver_ready (&conn, pending, first);
  msg = rdma_conn_ready_message (&conn);
  g_assert_true (msg == pending);
  g_assert_true (msg->data == first && msg->len == 3 && msg->token == 42);
  g_assert_true (rdma_conn_release_message (&conn, NULL));
  msg = rdma_conn_ready_message (&conn);
  g_assert_nonnull (msg);
  g_assert_cmpmem (msg->data, msg->len, "abcd", 4);
  g_assert_true (rdma_conn_release_message (&conn, NULL));
  g_assert_true (g_queue_is_empty (&conn.received));
  g_assert_cmpuint (conn.unread_bytes, ==, 0);
}

/* The rendezvous protocols' messages: round trip, and a wrong size refused. */
static void
test_rndv_wire (void)
{
  RdmaRndvMsg m = { .kind = RDMA_RNDV_RTS,
                    .seq = 7,
                    .len = 100u << 20,
                    .rkey = 0xabcd,
                    .addr = G_GUINT64_CONSTANT (0x123456789a) },
              out;
  guint8 buf[sizeof (RdmaRndvWire) + 1];
  GError *error = NULL;

  rdma_rndv_encode (buf, &m);
  g_assert_true (
      rdma_rndv_decode (&rdma_proto_read_rndv_ops, buf, sizeof (RdmaRndvWire), &out, &error));
  g_assert_no_error (error);
  g_assert_true (out.kind == m.kind && out.seq == m.seq && out.len == m.len && out.rkey == m.rkey
                 && out.addr == m.addr);
  g_assert_false (rdma_rndv_decode (&rdma_proto_read_rndv_ops, buf, sizeof buf, &out, &error));
  g_assert_error (error, RDMA_ENGINE_ERROR, RDMA_ERR_PROTOCOL);
  g_clear_error (&error);
}

static void
test_status (void)
{
  GError *error = NULL;

  for (guint s = 0; s < RDMA_STATUS_COUNT; s++)
  {
    g_assert_true (g_str_has_prefix (rdma_status_name (s), "RDMA_"));
    g_assert_cmpuint (strlen (rdma_status_text (s)), >, 3);
  }
  g_assert_cmpint (rdma_status_from_errno (ENOMEM), ==, RDMA_ERR_NO_MEMORY);
  g_assert_cmpint (rdma_status_from_errno (ECONNREFUSED), ==, RDMA_ERR_REFUSED);
  g_assert_cmpint (rdma_status_from_wc (IBV_WC_RETRY_EXC_ERR), ==, RDMA_ERR_PEER_GONE);
  rdma_status_set_error (&error, RDMA_ERR_PEER_GONE, "ibv_poll_cq", ETIMEDOUT, IBV_WC_RETRY_EXC_ERR,
                         "send of %d bytes", 5);
  g_assert_error (error, RDMA_ENGINE_ERROR, RDMA_ERR_PEER_GONE);
  g_assert_nonnull (strstr (error->message, "ibv_poll_cq"));
  g_assert_nonnull (strstr (error->message, "send of 5 bytes"));
  g_assert_nonnull (strstr (error->message, g_strerror (ETIMEDOUT)));
  g_assert_nonnull (strstr (error->message, ibv_wc_status_str (IBV_WC_RETRY_EXC_ERR)));
  g_clear_error (&error);
  rdma_status_set_error (&error, RDMA_ERR_NO_MEMORY, "ibv_reg_mr", ENOMEM, -1, NULL);
  g_assert_nonnull (strstr (error->message, "ulimit -l"));
  g_clear_error (&error);
}

/* The boundary: every engine status leaves the shells as its THRIFT_TRANSPORT_ERROR code with
 * the message unchanged, and thrift_rdma_error_status gives its public twin (same name);
 * no other error gets a status. */
static void
test_status_boundary (void)
{
  GEnumClass *public = g_type_class_ref (THRIFT_TYPE_RDMA_STATUS);
  GError *other;

  g_assert_cmpuint (public->n_values, ==, RDMA_STATUS_COUNT);
  g_assert_cmpint (rdma_error_to_thrift (NULL), ==, THRIFT_RDMA_STATUS_OK);
  g_assert_cmpint (thrift_rdma_error_status (NULL), ==, THRIFT_RDMA_STATUS_OK);
  for (guint s = 1; s < RDMA_STATUS_COUNT; s++)
  {
    const gchar *name = rdma_status_name (s);
    g_autofree gchar *twin = g_strconcat ("THRIFT_RDMA_STATUS_", name + strlen ("RDMA_ERR_"), NULL);
    GError *error = NULL, *copy;
    g_autofree gchar *message = NULL;
    ThriftRdmaStatus st;
    GEnumValue *v;

    g_assert_true (g_str_has_prefix (name, "RDMA_ERR_"));
    rdma_status_set_error (&error, s, "ibv_post_send", EINVAL, -1, "status %u", s);
    g_assert_error (error, RDMA_ENGINE_ERROR, (gint) s);
    message = g_strdup (error->message);
    st = rdma_error_to_thrift (&error);
    g_test_message ("%s -> %d -> %s: %s", name, error->code, twin, error->message);
    g_assert_error (error, THRIFT_TRANSPORT_ERROR, rdma_status_thrift_code (s));
    g_assert_cmpstr (error->message, ==, message);
    v = g_enum_get_value (public, st);
    g_assert_nonnull (v);
    g_assert_cmpstr (v->value_name, ==, twin);
    g_assert_cmpint (thrift_rdma_error_status (error), ==, st);
    /* a copy and a prefixed one are the same error */
    copy = g_error_copy (error);
    g_prefix_error (&copy, "calling Kv.get: ");
    g_assert_cmpint (thrift_rdma_error_status (copy), ==, st);
    /* mapping twice changes nothing */
    g_assert_cmpint (rdma_error_to_thrift (&copy), ==, THRIFT_RDMA_STATUS_OK);
    g_assert_error (copy, THRIFT_TRANSPORT_ERROR, rdma_status_thrift_code (s));
    g_error_free (copy);
    g_error_free (error);
  }
  /* the codes a socket transport would use; several causes share one */
  g_assert_cmpint (rdma_status_thrift_code (RDMA_ERR_NO_DEVICE), ==, THRIFT_TRANSPORT_ERROR_SOCKET);
  g_assert_cmpint (rdma_status_thrift_code (RDMA_ERR_INTERRUPTED), ==,
                   THRIFT_TRANSPORT_ERROR_SOCKET);
  g_assert_cmpint (rdma_status_thrift_code (RDMA_ERR_TIMED_OUT), ==,
                   THRIFT_TRANSPORT_ERROR_RECEIVE);
  g_assert_cmpint (rdma_status_thrift_code (RDMA_ERR_PEER_GONE), ==,
                   THRIFT_TRANSPORT_ERROR_RECEIVE);
  g_assert_cmpint (rdma_status_thrift_code (RDMA_ERR_REFUSED), ==, THRIFT_TRANSPORT_ERROR_CONNECT);
  /* an error no RDMA transport set, or one a later error superseded, has no status */
  other = g_error_new_literal (THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                               "recv failed");
  g_assert_cmpint (thrift_rdma_error_status (other), ==, THRIFT_RDMA_STATUS_OK);
  g_error_free (other);
  g_type_class_unref (public);
}

/* Each thread has its own last error: one thread's errors never answer for another's. */
static gpointer
other_thread_status (gpointer data)
{
  return GINT_TO_POINTER (thrift_rdma_error_status (data));
}

static void
test_status_per_thread (void)
{
  GError *error = NULL;
  GThread *t;

  rdma_status_set_error (&error, RDMA_ERR_TIMED_OUT, NULL, 0, -1, "ThriftRdma: a read");
  g_assert_cmpint (rdma_error_to_thrift (&error), ==, THRIFT_RDMA_STATUS_TIMED_OUT);
  t = g_thread_new ("other", other_thread_status, error);
  g_assert_cmpint (GPOINTER_TO_INT (g_thread_join (t)), ==, THRIFT_RDMA_STATUS_OK);
  g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_TIMED_OUT);
  g_error_free (error);
}

/* Without a device (the build host), open and listen fail with a message that says so. */
static void
test_no_device (void)
{
  ThriftTransport *t;
  ThriftServerTransport *s;
  GError *error = NULL;

  if (g_file_test ("/sys/class/infiniband", G_FILE_TEST_IS_DIR))
  {
    GDir *d = g_dir_open ("/sys/class/infiniband", 0, NULL);
    gboolean any = d != NULL && g_dir_read_name (d) != NULL;
    if (d)
      g_dir_close (d);
    if (any)
    {
      g_test_skip ("this host has an RDMA device");
      return;
    }
  }
  t = thrift_rdma_new ("10.77.0.1", 9999);
  g_assert_false (thrift_transport_open (t, &error));
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET);
  g_assert_nonnull (strstr (error->message, "no RDMA device"));
  g_assert_false (thrift_transport_is_open (t));
  /* the cause, from the error and from the object */
  g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_NO_DEVICE);
  g_assert_cmpint (thrift_rdma_get_last_status (THRIFT_RDMA (t)), ==, THRIFT_RDMA_STATUS_NO_DEVICE);
  g_clear_error (&error);
  /* a call on the unopened transport: not open, a cause of its own */
  g_assert_false (thrift_transport_write (t, "x", 1, &error));
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET);
  g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_NOT_OPEN);
  g_assert_cmpint (thrift_rdma_get_last_status (THRIFT_RDMA (t)), ==, THRIFT_RDMA_STATUS_NOT_OPEN);
  g_clear_error (&error);
  g_assert_false (thrift_transport_peek (t, &error));
  g_assert_no_error (error);
  g_object_unref (t);

  s = g_object_new (THRIFT_TYPE_SERVER_RDMA, "port", 0, NULL);
  g_assert_false (thrift_server_transport_listen (s, &error));
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET);
  g_assert_nonnull (strstr (error->message, "no RDMA device"));
  g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_NO_DEVICE);
  g_assert_cmpint (thrift_server_rdma_get_last_status (THRIFT_SERVER_RDMA (s)), ==,
                   THRIFT_RDMA_STATUS_NO_DEVICE);
  g_clear_error (&error);
  g_assert_null (thrift_server_transport_accept (s, &error));
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET);
  g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_NOT_OPEN);
  g_clear_error (&error);
  g_object_unref (s);

  /* the device check of the public API */
  g_assert_false (thrift_rdma_device_available (&error));
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET);
  g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_NO_DEVICE);
  g_clear_error (&error);
}

static void
test_properties (void)
{
  ThriftTransport *t = thrift_rdma_new ("h", 1234);
  gchar *host = NULL;
  guint port, ct, calt;
  ThriftRdmaPolling polling;
  GParamSpec *ps = g_object_class_find_property (G_OBJECT_GET_CLASS (t), "polling");

  g_assert_true (G_IS_PARAM_SPEC_ENUM (ps));
  g_object_get (t, "hostname", &host, "port", &port, "polling", &polling, "connect-timeout", &ct,
                "call-timeout", &calt, NULL);
  g_assert_cmpstr (host, ==, "h");
  g_assert_cmpuint (port, ==, 1234);
  g_assert_cmpint (polling, ==, THRIFT_RDMA_DEFAULT_POLLING);
  g_assert_cmpuint (ct, ==, THRIFT_RDMA_DEFAULT_CONNECT_TIMEOUT_MS);
  g_assert_cmpuint (calt, ==, THRIFT_RDMA_DEFAULT_CALL_TIMEOUT_MS);
  g_free (host);
  g_assert_true (G_TYPE_CHECK_INSTANCE_TYPE (t, THRIFT_TYPE_HINT_RECEIVER));
  /* the eight core slots are ours, not the base class's dispatchers */
  {
    ThriftTransportClass *mine = THRIFT_TRANSPORT_GET_CLASS (t);
    ThriftTransportClass *base = g_type_class_ref (THRIFT_TYPE_TRANSPORT);
    g_assert_true (mine->is_open != base->is_open && mine->peek != base->peek
                   && mine->open != base->open && mine->close != base->close
                   && mine->read != base->read && mine->read_end != base->read_end
                   && mine->write != base->write && mine->write_end != base->write_end
                   && mine->flush != base->flush);
    g_type_class_unref (base);
  }
  g_object_unref (t);
}

/* Hints that are accepted but not acted on yet are reported, once per hint set; payload_size
 * is used (it decides small or large: rdma_plan.c) and is not reported. */
static void
test_select_warnings (void)
{
  static ThriftHintSet h = {
    .version = THRIFT_HINT_SET_VERSION,
    .service = "Kv",
    .function = "put",
    .side = THRIFT_HINT_SIDE_CLIENT,
    .set = THRIFT_HINT_HAS_TRANSPORT | THRIFT_HINT_HAS_NUMA | THRIFT_HINT_HAS_PAYLOAD_SIZE,
    .transport = THRIFT_HINT_TRANSPORT_TCP,
    .numa = 1,
    .payload_size = 65536,
  };
  static const ThriftHintSet eager = {
    .version = THRIFT_HINT_SET_VERSION,
    .service = "Kv",
    .function = "get",
    .set = THRIFT_HINT_HAS_PROTO | THRIFT_HINT_HAS_POLLING,
    .proto = THRIFT_HINT_PROTO_EAGER,
    .polling = THRIFT_HINT_POLLING_BUSY,
  };
  guint expected = 1; /* transport; numa is acted on (rdma_numa.h) */

  g_test_expect_message (NULL, G_LOG_LEVEL_WARNING,
                         "*Kv.put (client side): hint transport = tcp cannot be followed on "
                         "an rdma:// connection*");
  g_assert_cmpuint (rdma_select_warn_unimplemented (&h), ==, expected);
  g_test_assert_expected_messages ();
  /* once per set */
  g_assert_cmpuint (rdma_select_warn_unimplemented (&h), ==, 0);
  g_assert_cmpuint (rdma_select_warn_unimplemented (&eager), ==, 0);
  /* eager_rndv is a pair of implemented protocols, not a protocol to warn about */
  {
    static const ThriftHintSet pair = {
      .version = THRIFT_HINT_SET_VERSION,
      .service = "Kv",
      .function = "scan",
      .set = THRIFT_HINT_HAS_PROTO,
      .proto = THRIFT_HINT_PROTO_EAGER_RNDV,
    };
    g_assert_cmpuint (rdma_select_warn_unimplemented (&pair), ==, 0);
  }
  /* transport = rdma is what an RDMA connection does: nothing to say */
  {
    static const ThriftHintSet on_rdma = {
      .version = THRIFT_HINT_SET_VERSION,
      .service = "Kv",
      .function = "quick",
      .set = THRIFT_HINT_HAS_TRANSPORT,
      .transport = THRIFT_HINT_TRANSPORT_RDMA,
    };
    g_assert_cmpuint (rdma_select_warn_unimplemented (&on_rdma), ==, 0);
  }
  g_assert_cmpint (rdma_select_polling (&eager, THRIFT_RDMA_POLLING_EVENT, NULL), ==,
                   THRIFT_RDMA_POLLING_BUSY);
  g_assert_cmpint (rdma_select_polling (NULL, THRIFT_RDMA_POLLING_EVENT, NULL), ==,
                   THRIFT_RDMA_POLLING_EVENT);
}

/* Busy polling with more spinning threads than cores is reported. */
static void
test_select_oversubscribed (void)
{
  ThriftHintSet h = {
    .version = THRIFT_HINT_SET_VERSION,
    .service = "Kv",
    .function = "scan",
    .set = THRIFT_HINT_HAS_POLLING | THRIFT_HINT_HAS_CONCURRENCY,
    .polling = THRIFT_HINT_POLLING_BUSY,
    .concurrency = rdma_machine_get ()->cores + 1,
  };

  g_test_expect_message (NULL, G_LOG_LEVEL_WARNING, "*busy polling with concurrency*");
  g_assert_cmpuint (rdma_select_warn_unimplemented (&h), ==, 1);
  g_test_assert_expected_messages ();
  /* perf_goal = latency falls back to hybrid polling when oversubscribed */
  h.set = THRIFT_HINT_HAS_PERF_GOAL | THRIFT_HINT_HAS_CONCURRENCY;
  h.perf_goal = THRIFT_HINT_PERF_GOAL_LATENCY;
  g_assert_cmpint (rdma_select_polling (&h, THRIFT_RDMA_POLLING_EVENT, NULL), ==,
                   THRIFT_RDMA_POLLING_HYBRID);
  h.concurrency = 1;
  g_assert_cmpint (rdma_select_polling (&h, THRIFT_RDMA_POLLING_EVENT, NULL), ==,
                   THRIFT_RDMA_POLLING_BUSY);
}

/* rdma_select_polling follows HatRPC Fig. 6 (rdma_plan_make): under-subscribed
 * throughput polls by event for small messages and busy for large ones, so payload_size
 * decides; res_util waits by event; without perf_goal the transport's polling applies. */
static void
test_select_polling_table (void)
{
  ThriftHintSet h = {
    .version = THRIFT_HINT_SET_VERSION,
    .service = "Kv",
    .function = "scan",
    .set = THRIFT_HINT_HAS_PERF_GOAL | THRIFT_HINT_HAS_CONCURRENCY,
    .perf_goal = THRIFT_HINT_PERF_GOAL_THROUGHPUT,
    .concurrency = 1,
  };

  g_assert_cmpint (rdma_select_polling (&h, THRIFT_RDMA_POLLING_HYBRID, NULL), ==,
                   THRIFT_RDMA_POLLING_EVENT);
  h.set |= THRIFT_HINT_HAS_PAYLOAD_SIZE;
  h.payload_size = 4097;
  g_assert_cmpint (rdma_select_polling (&h, THRIFT_RDMA_POLLING_HYBRID, NULL), ==,
                   THRIFT_RDMA_POLLING_BUSY);
  h.payload_size = 4096;
  g_assert_cmpint (rdma_select_polling (&h, THRIFT_RDMA_POLLING_HYBRID, NULL), ==,
                   THRIFT_RDMA_POLLING_EVENT);
  h.perf_goal = THRIFT_HINT_PERF_GOAL_RES_UTIL;
  g_assert_cmpint (rdma_select_polling (&h, THRIFT_RDMA_POLLING_HYBRID, NULL), ==,
                   THRIFT_RDMA_POLLING_EVENT);
  h.set = THRIFT_HINT_HAS_CONCURRENCY;
  g_assert_cmpint (rdma_select_polling (&h, THRIFT_RDMA_POLLING_HYBRID, NULL), ==,
                   THRIFT_RDMA_POLLING_HYBRID);
}

static void
on_signal (int sig)
{
}

/* EINTR ends a wait exactly when recv (2) would fail: a handler without SA_RESTART is
 * installed, or one was noted and has reset itself (SA_RESETHAND, as upstream's tutorial). */
static void
test_signal_policy (void)
{
  struct sigaction sa = { 0 }, old;

  g_assert_cmpint (sigaction (SIGUSR1, NULL, &old), ==, 0);
  rdma_signal_snapshot ();
  g_assert_false (rdma_signal_interrupts_waits ());

  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  g_assert_cmpint (sigaction (SIGUSR1, &sa, NULL), ==, 0);
  g_assert_false (rdma_signal_interrupts_waits ());

  sa.sa_flags = 0;
  g_assert_cmpint (sigaction (SIGUSR1, &sa, NULL), ==, 0);
  g_assert_true (rdma_signal_interrupts_waits ());

  /* noted, then reset to the default by SA_RESETHAND: reported once */
  sa.sa_flags = SA_RESETHAND;
  g_assert_cmpint (sigaction (SIGUSR1, &sa, NULL), ==, 0);
  rdma_signal_snapshot ();
  g_assert_cmpint (raise (SIGUSR1), ==, 0);
  g_assert_true (rdma_signal_interrupts_waits ());
  g_assert_false (rdma_signal_interrupts_waits ());
  g_assert_cmpint (sigaction (SIGUSR1, &old, NULL), ==, 0);
}

/* Hybrid polling spins as long as recent waits took when that is short, and blocks after
 * its fixed spin when they are long (a slow peer is not spun for). */
static void
test_hybrid_spin (void)
{
  RdmaPoller p;
  guint fixed = 50;

  rdma_poller_init (&p, NULL, NULL, THRIFT_RDMA_POLLING_HYBRID, fixed, NULL);
  g_assert_cmpuint (rdma_poller_spin_budget (&p), ==, fixed);
  /* replies ~150 us after the request (a round trip under emulation) */
  for (guint i = 0; i < 40; i++)
    rdma_poller_learn (&p, 150);
  g_assert_cmpuint (rdma_poller_spin_budget (&p), >=, 2 * 150 - 2);
  g_assert_cmpuint (rdma_poller_spin_budget (&p), <=, 2 * 150 + 2);
  /* a faster peer: the spin follows it down, never under the fixed one */
  for (guint i = 0; i < 80; i++)
    rdma_poller_learn (&p, 5);
  g_assert_cmpuint (rdma_poller_spin_budget (&p), ==, fixed);
  /* a slow handler (ms per call): spinning that long would only burn the core */
  for (guint i = 0; i < 80; i++)
    rdma_poller_learn (&p, 3000);
  g_assert_cmpuint (rdma_poller_spin_budget (&p), ==, fixed);
  /* one slow call among fast ones moves the average, not the mode */
  for (guint i = 0; i < 80; i++)
    rdma_poller_learn (&p, 200);
  rdma_poller_learn (&p, 5000);
  g_assert_cmpuint (rdma_poller_spin_budget (&p), <=, RDMA_POLL_SPIN_MAX_US);
  g_assert_cmpuint (rdma_poller_spin_budget (&p), >, 2 * 200);
}

/* A wait of the way rdma_poller_choose gives, which took @through_us spun through and
 * @blocking_us otherwise; returns its way. */
static RdmaSpinWay
simulate_wait (RdmaPoller *p, gint64 through_us, gint64 blocking_us)
{
  guint budget = 0;
  RdmaSpinWay way = rdma_poller_choose (p, &budget);
  gint64 took = budget >= through_us ? through_us : blocking_us;

  if (way == RDMA_SPIN_BLOCK)
    g_assert_cmpuint (budget, ==, p->spin_us);
  rdma_poller_learn (p, took);
  rdma_poller_learn_way (p, way, took);
  return way;
}

/* Long waits (round trips past RDMA_POLL_SPIN_MAX_US / 2) are spun through where blocking
 * was measured to make them notably longer (under emulation a wake-up costs more than the
 * round trip), and block early where it does not (a slow handler on a fabric whose wake-up is
 * cheap); the way not chosen is tried now and then, so a change is seen. */
static void
test_hybrid_spin_long (void)
{
  const guint fixed = 50, n = 160;
  guint through = 0;
  RdmaPoller p;

  /* 700 us spun through, 1,500 us when the wait blocks */
  rdma_poller_init (&p, NULL, NULL, THRIFT_RDMA_POLLING_HYBRID, fixed, NULL);
  for (guint i = 0; i < n; i++)
    through += simulate_wait (&p, 700, 1500) == RDMA_SPIN_THROUGH;
  g_assert_cmpuint (through, >=, n * 3 / 4);
  g_assert_cmpuint (rdma_poller_spin_budget (&p), >=, 2 * 700 - 20);
  g_assert_cmpuint (rdma_poller_spin_budget (&p), <=, 2 * 700 + 20);

  /* 3,000 us either way (10 us more when blocked): only the tries spin */
  through = 0;
  rdma_poller_init (&p, NULL, NULL, THRIFT_RDMA_POLLING_HYBRID, fixed, NULL);
  for (guint i = 0; i < n; i++)
    through += simulate_wait (&p, 3000, 3010) == RDMA_SPIN_THROUGH;
  g_assert_cmpuint (through, <=, n / RDMA_POLL_TRY_EVERY + 1);
  g_assert_cmpuint (rdma_poller_spin_budget (&p), ==, fixed);

  /* the wake-up gets cheap (the host is no longer emulated, say): back to blocking early */
  rdma_poller_init (&p, NULL, NULL, THRIFT_RDMA_POLLING_HYBRID, fixed, NULL);
  for (guint i = 0; i < n; i++)
    simulate_wait (&p, 700, 1500);
  g_assert_cmpuint (rdma_poller_spin_budget (&p), >, fixed);
  for (guint i = 0; i < 4 * n; i++)
    simulate_wait (&p, 700, 720);
  g_assert_cmpuint (rdma_poller_spin_budget (&p), ==, fixed);
}

/* A fabric as a measured call sees it: a spun call takes @spin_us (if its spin lasts that
 * long; else it blocks after its budget, then takes @block_wall_us more), and that much of
 * its thread's CPU; a blocked call takes @block_wall_us and @block_cpu_us of CPU. */
typedef struct
{
  gint64 spin_us, block_wall_us, block_cpu_us;
} Fabric;

#define SPIN RDMA_POLL_COST_SPIN
#define BLOCK RDMA_POLL_COST_BLOCK

/* @n calls measured by @m on @f, learnt as the poller does (a run's settling calls not);
 * returns how many spun. */
static guint
simulate_cost (RdmaPollCost *c, RdmaMeasure m, const Fabric *f, guint n)
{
  guint spun = 0;

  for (guint i = 0; i < n; i++)
  {
    guint budget = 0;
    RdmaPollCostWay way = rdma_poll_cost_choose (c, m, &budget);
    gboolean learn = !c->choice.settling, sample = rdma_poll_cost_sample_cpu (c, m);

    if (way == SPIN)
    {
      gint64 took = budget >= f->spin_us ? f->spin_us : budget + f->block_wall_us;

      g_assert_cmpuint (budget, >, 0);
      g_assert_cmpuint (budget, <=, RDMA_POLL_COST_SPIN_MAX_US);
      if (learn)
        rdma_poll_cost_learn (c, way, took, sample ? took : -1);
      spun++;
    }
    else
    {
      g_assert_cmpuint (budget, ==, 0);
      if (learn)
        rdma_poll_cost_learn (c, way, f->block_wall_us, sample ? f->block_cpu_us : -1);
    }
  }
  return spun;
}

/* The same plan (event polling left to measurement) spins where a wake-up costs more than it
 * saves and blocks where it costs less: a slow wake-up (soft-RoCE under emulation: a blocked
 * call 3.5x a spun one) against a cheap one (a NIC's host: a few us of CPU for a wake-up, a
 * handler that takes a while).  Before anything is measured it takes the measure's prior
 * (spinning by call time, the default's way; blocking by CPU, the table's), but for a first
 * run of calls that takes the other way to measure it. */
static void
test_poll_cost_fabrics (void)
{
  const Fabric slow_wake = { 170, 600, 250 }, cheap_wake = { 400, 420, 6 };
  const guint n = 320, runs = (n + RDMA_POLL_COST_TRY_EVERY - 1) / RDMA_POLL_COST_TRY_EVERY;
  RdmaPollCost c = { 0 };
  guint budget;

  g_assert_cmpint (rdma_poll_cost_prior (RDMA_MEASURE_WALL), ==, SPIN);
  g_assert_cmpint (rdma_poll_cost_prior (RDMA_MEASURE_CPU), ==, BLOCK);
  /* explain, before a call: the way the first will take after its run */
  {
    g_autofree gchar *wall = rdma_poll_cost_describe (&c, RDMA_MEASURE_WALL);
    g_autofree gchar *cpu = rdma_poll_cost_describe (&c, RDMA_MEASURE_CPU);

    g_assert_true (g_str_has_suffix (wall, "(by call time, over 0 calls): spins, 0 changes"));
    g_assert_true (g_str_has_suffix (cpu, "(by CPU per call, over 0 calls): blocks, 0 changes"));
  }
  for (RdmaMeasure m = RDMA_MEASURE_WALL; m <= RDMA_MEASURE_CPU; m++)
  {
    RdmaPollCostWay prior = rdma_poll_cost_prior (m);

    c = (RdmaPollCost){ 0 };
    for (guint i = 0; i < RDMA_POLL_COST_RUN; i++)
    {
      g_assert_cmpint (rdma_poll_cost_choose (&c, m, &budget), !=, prior);
      g_assert_cmpuint (budget, ==, prior == BLOCK ? RDMA_POLL_COST_SPIN_FIRST_US : 0);
      /* the first half of the run settles: not learnt from */
      g_assert_cmpint (c.choice.settling, ==, i < RDMA_POLL_COST_RUN / 2);
    }
    g_assert_cmpint (rdma_poll_cost_choose (&c, m, &budget), ==, prior);
    g_assert_cmpint (rdma_poll_cost_spins (&c), ==, prior == SPIN);
    /* nothing measured yet: a spin has the first budget */
    g_assert_cmpuint (budget, ==, prior == SPIN ? RDMA_POLL_COST_SPIN_FIRST_US : 0);
  }

  /* slow wake-ups: spinning wins by either measure; all calls spin but the runs that try
   * blocking, and by CPU the first until the persistence is met (one change) */
  for (RdmaMeasure m = RDMA_MEASURE_WALL; m <= RDMA_MEASURE_CPU; m++)
  {
    gboolean changes = rdma_poll_cost_prior (m) == BLOCK;

    c = (RdmaPollCost){ 0 };
    g_assert_cmpuint (simulate_cost (&c, m, &slow_wake, n), >=,
                      n - RDMA_POLL_COST_RUN - (changes ? RDMA_POLL_COST_PERSIST : 0)
                          - runs * RDMA_POLL_COST_RUN - 4);
    g_assert_true (rdma_poll_cost_spins (&c));
    g_assert_cmpuint (c.choice.switches, ==, changes ? 1 : 0);
  }
  /* cheap wake-ups: a blocked call is about as long as a spun one (time does not tell them
   * apart: its prior, spinning, stays), and costs its thread 6 us of CPU against 400 (by
   * CPU, its prior, blocking, stays) */
  c = (RdmaPollCost){ 0 };
  g_assert_cmpuint (simulate_cost (&c, RDMA_MEASURE_CPU, &cheap_wake, n), <=,
                    runs * RDMA_POLL_COST_RUN);
  g_assert_false (rdma_poll_cost_spins (&c));
  g_assert_cmpuint (c.cpu_us[BLOCK], >=, 5);
  g_assert_cmpuint (c.cpu_us[BLOCK], <=, 7);
  /* a spin tried there (a run begins) is bounded by twice a blocked call's CPU: it blocks
   * after 12 us */
  c.choice.since = 0;
  g_assert_cmpint (rdma_poll_cost_choose (&c, RDMA_MEASURE_CPU, &budget), ==, SPIN);
  g_assert_cmpuint (budget, ==, 2 * c.cpu_us[BLOCK]);
  c = (RdmaPollCost){ 0 };
  g_assert_cmpuint (simulate_cost (&c, RDMA_MEASURE_WALL, &cheap_wake, n), >=,
                    n - runs * RDMA_POLL_COST_RUN);
  g_assert_true (rdma_poll_cost_spins (&c));
  g_assert_cmpuint (c.choice.switches, ==, 0);
  /* by time, a spin lasts four times a spun call, or twice a blocked one if longer */
  g_assert_cmpint (rdma_poll_cost_current (&c, RDMA_MEASURE_WALL, &budget), ==, SPIN);
  g_assert_cmpuint (budget, ==, MAX (4 * c.wall_us[SPIN], 2 * c.wall_us[BLOCK]));

  /* blocking measured a fifth shorter by time (a fabric whose wake-up is cheap and whose
   * spinning thread slows its peer): the way changes to it, once */
  {
    const Fabric block_shorter = { 500, 400, 6 };

    c = (RdmaPollCost){ 0 };
    simulate_cost (&c, RDMA_MEASURE_WALL, &block_shorter, n);
    g_assert_false (rdma_poll_cost_spins (&c));
    g_assert_cmpuint (c.choice.switches, ==, 1);
  }
}

/* A steady workload whose two ways cost about the same, with noise, changes its way at most
 * once over 10,000 calls (hysteresis), and the runs keep both ways measured; stalls do not
 * change it; a real change of the fabric is followed. */
static void
test_poll_cost_steady (void)
{
  RdmaPollCost c = { 0 };
  GRand *r = g_rand_new_with_seed (23);
  guint spun = 0;

  for (guint i = 0; i < 10000; i++)
  {
    Fabric f = { 104 + g_rand_int_range (r, -12, 13), 104 + g_rand_int_range (r, -12, 13),
                 104 + g_rand_int_range (r, -12, 13) };

    spun += simulate_cost (&c, RDMA_MEASURE_WALL, &f, 1);
  }
  g_test_message ("spun %u of 10000, %u switches", spun, c.choice.switches);
  g_assert_cmpuint (c.choice.switches, <=, 1);
  g_assert_cmpuint (c.wall_us[SPIN], >, 0);
  g_assert_cmpuint (c.wall_us[BLOCK], >, 0);

  /* a stall now and then (a preemption, a retransmission: 8 ms against 150 us) does not
   * change the way a connection spins */
  {
    const Fabric usual = { 150, 300, 60 },
                 stall = { RDMA_POLL_COST_SPIN_MAX_US, RDMA_POLL_COST_SPIN_MAX_US, 60 };
    RdmaPollCost s = { 0 };
    guint before;

    simulate_cost (&s, RDMA_MEASURE_WALL, &usual, 64);
    g_assert_true (rdma_poll_cost_spins (&s));
    before = s.choice.switches;
    for (guint i = 0; i < 2000; i++)
      simulate_cost (&s, RDMA_MEASURE_WALL, i % 50 == 0 ? &stall : &usual, 1);
    g_assert_true (rdma_poll_cost_spins (&s));
    g_assert_cmpuint (s.choice.switches, ==, before);
    /* nor does a stall of twenty calls in a row */
    simulate_cost (&s, RDMA_MEASURE_WALL, &stall, 20);
    simulate_cost (&s, RDMA_MEASURE_WALL, &usual, 500);
    g_assert_true (rdma_poll_cost_spins (&s));
    g_assert_cmpuint (s.choice.switches, ==, before);
  }

  /* a load that makes both ways dearer (the guest's host busy: a spun call 600 -> 1,500 us, a
   * blocked one 900 -> 2,200) shows first as the way in use dearer than the other's figure
   * from before it; the other is measured again before anything changes, and nothing does */
  {
    const Fabric usual = { 600, 900, 60 }, loaded = { 1500, 2200, 60 };
    RdmaPollCost s = { 0 };

    /* (the load begins a little after a run tried blocking) */
    guint before;

    simulate_cost (&s, RDMA_MEASURE_WALL, &usual, 2 * RDMA_POLL_COST_TRY_EVERY + 20);
    g_assert_true (rdma_poll_cost_spins (&s));
    before = s.choice.switches;
    simulate_cost (&s, RDMA_MEASURE_WALL, &loaded, 600);
    simulate_cost (&s, RDMA_MEASURE_WALL, &usual, 2000);
    g_assert_true (rdma_poll_cost_spins (&s));
    g_assert_cmpuint (s.choice.switches, ==, before);
  }

  /* a way that stays the cheaper is checked less and less often: over 20,000 calls, fewer
   * than a quarter of the calls that runs every RDMA_POLL_COST_TRY_EVERY calls would take
   * the other way */
  {
    const Fabric spin_cheaper = { 300, 400, 60 };
    RdmaPollCost t = { 0 };
    guint blocked = 20000 - simulate_cost (&t, RDMA_MEASURE_WALL, &spin_cheaper, 20000);

    g_test_message ("a way the cheaper throughout: %u of 20000 calls took the other", blocked);
    g_assert_true (rdma_poll_cost_spins (&t));
    g_assert_cmpuint (t.choice.switches, ==, 0);
    g_assert_cmpuint (blocked, <, 20000 / RDMA_POLL_COST_TRY_EVERY * RDMA_POLL_COST_RUN / 4);
    g_assert_cmpuint (blocked, >, 0);
  }

  /* a way an eighth cheaper than the prior's is taken, within two runs of trying it (the
   * guest measured 285 against 373 us) */
  {
    const Fabric block_eighth = { 400, 350, 60 };
    RdmaPollCost t = { 0 };

    simulate_cost (&t, RDMA_MEASURE_WALL, &block_eighth, 2 * RDMA_POLL_COST_TRY_EVERY);
    g_assert_false (rdma_poll_cost_spins (&t));
    g_assert_cmpuint (t.choice.switches, ==, 1);
  }

  /* after a change, going back takes a further fifth: two ways that trade places by a
   * quarter (the soak saw 316 against 381 us, then the other way round) change once */
  {
    const Fabric spin_cheaper = { 300, 400, 60 }, block_cheaper = { 400, 300, 60 };
    RdmaPollCost t = { 0 };

    simulate_cost (&t, RDMA_MEASURE_WALL, &block_cheaper, 2 * RDMA_POLL_COST_TRY_EVERY);
    g_assert_false (rdma_poll_cost_spins (&t));
    g_assert_cmpuint (t.choice.switches, ==, 1);
    simulate_cost (&t, RDMA_MEASURE_WALL, &spin_cheaper, 8 * RDMA_POLL_COST_TRY_EVERY);
    g_assert_false (rdma_poll_cost_spins (&t));
    g_assert_cmpuint (t.choice.switches, ==, 1);
  }

  /* the wake-up becomes slow: the way follows, once (the blocked way is measured on the
   * runs that try it, at most RDMA_POLL_COST_TRY_MAX calls apart) */
  {
    const Fabric slow = { 100, 900, 300 };
    guint before = c.choice.switches;

    simulate_cost (&c, RDMA_MEASURE_WALL, &slow, 3 * RDMA_POLL_COST_TRY_MAX);
    g_assert_true (rdma_poll_cost_spins (&c));
    g_assert_cmpuint (c.choice.switches, <=, before + 1);
  }
  g_rand_free (r);
}

#undef SPIN
#undef BLOCK

/* The machine as test_spin_contention's reader shows it. */
static guint fake_runnable = 1, fake_online = 2;

static gboolean
fake_load (guint *runnable, guint *online)
{
  *runnable = fake_runnable;
  *online = fake_online;
  return TRUE;
}

/* Waits may spin while the waiters are no more than the cores, and fewer than the cores
 * already spin; a slot given back (its wait blocking now) admits the next one. */
static void
test_spin_admission (void)
{
  RdmaSpinTicket a, b, c, d, e;

  /* (a machine whose other threads leave the cores free: test_spin_contention) */
  fake_runnable = 1;
  rdma_spin_set_load_reader (fake_load);
  rdma_spin_set_cores (2);
  g_assert_true (rdma_spin_begin (&a, TRUE));
  g_assert_true (rdma_spin_begin (&b, TRUE));
  /* a third waiter: they outnumber the cores */
  g_assert_false (rdma_spin_begin (&c, TRUE));
  g_assert_cmpuint (rdma_spin_waiters (), ==, 3);
  g_assert_cmpuint (rdma_spin_spinners (), ==, 2);
  rdma_spin_end (&c);
  /* two waiters, but both slots taken */
  g_assert_false (rdma_spin_begin (&d, TRUE));
  rdma_spin_end (&d);
  /* a blocks now: its slot goes back, yet it still waits (three waiters) */
  rdma_spin_stop (&a);
  g_assert_false (rdma_spin_begin (&d, TRUE));
  rdma_spin_end (&d);
  rdma_spin_end (&a);
  g_assert_true (rdma_spin_begin (&e, TRUE));
  /* a wait that does not ask to spin is counted, and gets no slot */
  g_assert_false (rdma_spin_begin (&d, FALSE));
  g_assert_cmpuint (rdma_spin_waiters (), ==, 3);
  g_assert_cmpuint (rdma_spin_spinners (), ==, 2);
  rdma_spin_end (&d);
  rdma_spin_end (&e);
  rdma_spin_end (&b);
  g_assert_cmpuint (rdma_spin_waiters (), ==, 0);
  g_assert_cmpuint (rdma_spin_spinners (), ==, 0);
  rdma_spin_set_cores (0);
  rdma_spin_set_load_reader (NULL);
  g_assert_cmpuint (rdma_spin_cores (), ==, rdma_machine_get ()->cores);
}

/* Whether a wait is let spin after the reading that the next wait takes (one per
 * RDMA_SPIN_SAMPLE_US). */
static gboolean
spins_after_reading (void)
{
  RdmaSpinTicket t;
  gboolean spun;

  g_usleep (RDMA_SPIN_SAMPLE_US + 1000);
  spun = rdma_spin_begin (&t, TRUE);
  rdma_spin_end (&t);
  return spun;
}

/* A machine whose runnable threads, other than the process's spinners, and the process's
 * waiters would be more than its cores is contended: once the readings say so half the
 * time, no wait spins; one reading alone does not stop them, and the process's own spinners
 * do not count against it. */
static void
test_spin_contention (void)
{
  RdmaSpinTicket a, b;
  guint i;

  rdma_spin_set_cores (2);
  rdma_spin_set_load_reader (fake_load);
  /* the reader alone is runnable */
  fake_runnable = 1;
  g_assert_true (spins_after_reading ());
  /* the peer and another process want the cores: the reader and two more, on two cores */
  fake_runnable = 3;
  g_assert_true (spins_after_reading ()); /* one instant */
  for (i = 0; i < 8 && spins_after_reading (); i++)
    ;
  g_assert_cmpuint (i, <, 8);
  g_assert_true (rdma_spin_contended ());
  g_assert_false (spins_after_reading ());
  /* the other threads are gone: spinning comes back */
  fake_runnable = 1;
  for (i = 0; i < 12 && !spins_after_reading (); i++)
    ;
  g_assert_cmpuint (i, <, 12);
  g_assert_false (rdma_spin_contended ());
  /* the process's own spinner and its reader are the runnable threads: two waiters on two
   * cores, not contended however long it lasts */
  g_assert_true (rdma_spin_begin (&a, TRUE));
  fake_runnable = 2;
  for (i = 0; i < 10; i++)
  {
    g_usleep (RDMA_SPIN_SAMPLE_US + 1000);
    g_assert_true (rdma_spin_begin (&b, TRUE));
    rdma_spin_end (&b);
  }
  g_assert_false (rdma_spin_contended ());
  rdma_spin_end (&a);
  rdma_spin_set_load_reader (NULL);
  rdma_spin_set_cores (0);
}

/* THRIFT_RDMA_SPIN_CORES sets the cores admission counts with; a value that is not a count
 * of cores is refused with a warning that names it. */
static void
test_spin_cores_env (void)
{
  if (g_test_subprocess ())
  {
    g_setenv ("THRIFT_RDMA_SPIN_CORES", "3", TRUE);
    g_assert_cmpuint (rdma_spin_cores (), ==, 3);
    return;
  }
  g_test_trap_subprocess ("/rdma_engine/poll/spin_cores_env", 0, 0);
  g_test_trap_assert_passed ();
}

static void
test_spin_cores_env_bad (void)
{
  if (g_test_subprocess ())
  {
    g_setenv ("THRIFT_RDMA_SPIN_CORES", "0x4", TRUE);
    g_test_expect_message (NULL, G_LOG_LEVEL_WARNING,
                           "THRIFT_RDMA_SPIN_CORES='0x4' is not a number of cores*");
    g_assert_cmpuint (rdma_spin_cores (), ==, rdma_machine_get ()->cores);
    g_test_assert_expected_messages ();
    return;
  }
  g_test_trap_subprocess ("/rdma_engine/poll/spin_cores_env_bad", 0, 0);
  g_test_trap_assert_passed ();
}

typedef struct
{
  gint over; /* times a spinner saw more spinners than cores */
  gint admitted;
} SpinRace;

static gpointer
spin_race_main (gpointer data)
{
  SpinRace *r = data;

  for (guint i = 0; i < 20000; i++)
  {
    RdmaSpinTicket t;

    if (rdma_spin_begin (&t, TRUE))
    {
      g_atomic_int_inc (&r->admitted);
      if (rdma_spin_spinners () > 3)
        g_atomic_int_inc (&r->over);
    }
    if (i % 3 == 0)
      rdma_spin_stop (&t);
    rdma_spin_end (&t);
  }
  return NULL;
}

/* Eight threads begin and end waits at once: never more spinners than cores, and the counts
 * come back to zero. */
static void
test_spin_admission_threads (void)
{
  SpinRace r = { 0 };
  GThread *t[8];

  fake_runnable = 1;
  rdma_spin_set_load_reader (fake_load);
  rdma_spin_set_cores (3);
  for (guint i = 0; i < G_N_ELEMENTS (t); i++)
    t[i] = g_thread_new ("spin", spin_race_main, &r);
  for (guint i = 0; i < G_N_ELEMENTS (t); i++)
    g_thread_join (t[i]);
  rdma_spin_set_cores (0);
  rdma_spin_set_load_reader (NULL);
  g_assert_cmpint (r.over, ==, 0);
  g_assert_cmpint (r.admitted, >, 0);
  g_assert_cmpuint (rdma_spin_waiters (), ==, 0);
  g_assert_cmpuint (rdma_spin_spinners (), ==, 0);
}

/* Calls of @len bytes from @k callers in a loop, one server serving them in turn, a lent call
 * in @lend_us and a copied one in @copy_us: each choice comes when a call ends (after
 * @pause_us of the caller's own), so the clock runs on by the service of the call that ends;
 * returns how many of @n copied. */
static guint
simulate_lend_paused (RdmaLendCost *c, gsize len, guint lend_us, guint copy_us, guint k, guint n,
                      guint pause_us)
{
  g_autofree RdmaLendTicket *t = g_new0 (RdmaLendTicket, k);
  g_autofree guint *service = g_new (guint, k);
  static gint64 now = 1;
  guint copied = 0;

  for (guint i = 0; i < n; i++)
  {
    guint slot = i % k;

    if (t[slot].open)
    {
      now += service[slot];
      rdma_lend_cost_end (c, &t[slot], now);
      g_assert_false (t[slot].open);
      now += pause_us;
    }
    service[slot] = rdma_lend_cost_choose (c, len, now, &t[slot]) ? lend_us : copy_us;
    copied += service[slot] == copy_us;
  }
  for (guint i = 0; i < k; i++)
    rdma_lend_cost_end (c, &t[i], now);
  return copied;
}

static guint
simulate_lend (RdmaLendCost *c, gsize len, guint lend_us, guint copy_us, guint k, guint n)
{
  return simulate_lend_paused (c, len, lend_us, copy_us, k, n, 0);
}

/* Lending and copying by what each costs, per power of two of the field's size: where a
 * copy is cheaper (soft-RoCE at 128 KB: 2,700 against 3,100 us a call) the field is copied
 * after a run that tries it, where lending is (1 MiB: 26 against 29 ms) it stays lent, and
 * neither size's calls move the other's way */
static void
test_lend_cost (void)
{
  RdmaLendCost *c = rdma_lend_cost_new ();
  g_autofree gchar *line = NULL;
  guint copied;

  g_assert_null (rdma_lend_cost_describe (c));
  /* the prior is lending; the first run tries copying */
  copied = simulate_lend (c, 128 << 10, 3100, 2700, 1, 4 * RDMA_CHOICE_TRY_EVERY);
  g_assert_true (rdma_lend_cost_copies (c, 128 << 10));
  g_assert_true (rdma_lend_cost_copies (c, 200 << 10)); /* the same power of two */
  g_assert_cmpuint (copied, >, 2 * RDMA_CHOICE_TRY_EVERY);
  copied = simulate_lend (c, 1 << 20, 26000, 29000, 1, 4 * RDMA_CHOICE_TRY_EVERY);
  g_assert_false (rdma_lend_cost_copies (c, 1 << 20));
  g_assert_cmpuint (copied, <=, 4 * RDMA_CHOICE_RUN);
  g_assert_true (rdma_lend_cost_copies (c, 128 << 10));
  g_assert_false (rdma_lend_cost_copies (c, 16 << 10)); /* never measured: the prior */
  line = rdma_lend_cost_describe (c);
  g_test_message ("%s", line);
  g_assert_nonnull (strstr (line, "128-256 KiB lent 3100 us, copied 2700 us (over 1024 calls): "
                                  "copies, 1 change"));
  g_assert_nonnull (strstr (line, "1 MiB and more, per MiB, lent 26000 us, copied 29000 us (over "
                                  "1024 calls): lends, 0 changes"));
  rdma_lend_cost_free (c);
}

/* From 1 MiB a call costs by its bytes, and the sizes share one class timed per MiB: 16 MiB
 * calls after 1 MiB ones that measured both ways take the way those chose from the first
 * (no run of 8 copies at 16 x the cost), and a size that arrives alone still learns per MiB
 * (64 MiB calls where copying costs less per MiB are copied after a run). */
static void
test_lend_cost_linear (void)
{
  RdmaLendCost *c = rdma_lend_cost_new ();
  g_autofree gchar *line = NULL;

  /* (past the run at 1,024 calls: the next comes at 2,048) */
  simulate_lend (c, 1 << 20, 26000, 29000, 1, 4 * RDMA_CHOICE_TRY_EVERY + 100);
  g_assert_false (rdma_lend_cost_copies (c, 16 << 20));
  g_assert_cmpuint (simulate_lend (c, 16 << 20, 16 * 26000, 16 * 29000, 1, 24), ==, 0);
  line = rdma_lend_cost_describe (c);
  g_test_message ("%s", line);
  g_assert_nonnull (strstr (line, "1 MiB and more, per MiB, lent 26000 us, copied 29000 us"));
  rdma_lend_cost_free (c);

  c = rdma_lend_cost_new ();
  simulate_lend (c, 64 << 20, 64 * 3100, 64 * 2700, 1, 4 * RDMA_CHOICE_TRY_EVERY);
  g_assert_true (rdma_lend_cost_copies (c, 64 << 20));
  g_assert_true (rdma_lend_cost_copies (c, 2 << 20));
  rdma_lend_cost_free (c);
}

/* With 16 calls in flight, a run of 8 copies among lent calls is over before any of its
 * calls ends, and the time between choices it sees is the lent calls': it never tells.  The
 * run is as long as twice the calls in flight, so its second half sees copies end only: the
 * fields are copied within the first 2,500 calls (the first run comes 256 calls in,
 * not at the first calls); where lending is the cheaper, at 64 in flight, the runs cost a
 * small share of the calls. */
static void
test_lend_cost_in_flight (void)
{
  RdmaLendCost *c = rdma_lend_cost_new ();
  guint copied;

  simulate_lend (c, 128 << 10, 3100, 2700, 16, 2500);
  g_assert_true (rdma_lend_cost_copies (c, 128 << 10));
  copied = simulate_lend (c, 1 << 20, 2700, 3100, 64, 4000);
  g_assert_false (rdma_lend_cost_copies (c, 1 << 20));
  g_assert_cmpuint (copied, <, 4000 / 8);
  rdma_lend_cost_free (c);
}

/* A caller that pauses 20 ms between calls of 3.1 ms lent and 2.7 ms copied: its pauses are
 * not the ways' (counted in, copying would measure 1.7% cheaper, inside the margin, and a
 * pause over a window of the way in use would make the other look cheaper) */
static void
test_lend_cost_pauses (void)
{
  RdmaLendCost *c = rdma_lend_cost_new ();

  simulate_lend_paused (c, 128 << 10, 3100, 2700, 1, 4 * RDMA_CHOICE_TRY_EVERY, 20000);
  g_assert_true (rdma_lend_cost_copies (c, 128 << 10));
  rdma_lend_cost_free (c);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/rdma_engine/wire/header_roundtrip", test_header_roundtrip);
  g_test_add_func ("/rdma_engine/wire/header_bad", test_header_bad);
  g_test_add_func ("/rdma_engine/wire/hello", test_hello);
  g_test_add_func ("/rdma_engine/credits", test_credits);
  g_test_add_func ("/rdma_engine/proto/registry_complete", test_registry_complete);
  g_test_add_func ("/rdma_engine/deliver/pending", test_deliver_pending);
  g_test_add_func ("/rdma_engine/proto/rndv_wire", test_rndv_wire);
  g_test_add_func ("/rdma_engine/status", test_status);
  g_test_add_func ("/rdma_engine/status/boundary", test_status_boundary);
  g_test_add_func ("/rdma_engine/status/per_thread", test_status_per_thread);
  g_test_add_func ("/rdma_engine/select/warnings", test_select_warnings);
  g_test_add_func ("/rdma_engine/select/oversubscribed", test_select_oversubscribed);
  g_test_add_func ("/rdma_engine/select/polling_table", test_select_polling_table);
  g_test_add_func ("/rdma_engine/signal/policy", test_signal_policy);
  g_test_add_func ("/rdma_engine/poll/hybrid_spin", test_hybrid_spin);
  g_test_add_func ("/rdma_engine/poll/hybrid_spin_long", test_hybrid_spin_long);
  g_test_add_func ("/rdma_engine/poll/cost/fabrics", test_poll_cost_fabrics);
  g_test_add_func ("/rdma_engine/poll/cost/steady", test_poll_cost_steady);
  g_test_add_func ("/rdma_engine/lend/cost", test_lend_cost);
  g_test_add_func ("/rdma_engine/lend/cost/linear", test_lend_cost_linear);
  g_test_add_func ("/rdma_engine/lend/cost/in-flight", test_lend_cost_in_flight);
  g_test_add_func ("/rdma_engine/lend/cost/pauses", test_lend_cost_pauses);
  g_test_add_func ("/rdma_engine/poll/spin_admission", test_spin_admission);
  g_test_add_func ("/rdma_engine/poll/spin_admission_threads", test_spin_admission_threads);
  g_test_add_func ("/rdma_engine/poll/spin_cores_env", test_spin_cores_env);
  g_test_add_func ("/rdma_engine/poll/spin_cores_env_bad", test_spin_cores_env_bad);
  g_test_add_func ("/rdma_engine/poll/spin_contention", test_spin_contention);
  g_test_add_func ("/rdma_engine/transport/properties", test_properties);
  g_test_add_func ("/rdma_engine/transport/no_device", test_no_device);
  return g_test_run ();
}
