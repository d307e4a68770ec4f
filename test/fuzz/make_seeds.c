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
 * make_seeds.c: writes the seed corpora of test/fuzz (scripts/fuzz --seeds): valid
 * encodings made with the encoders the decoders' own headers declare, the byte strings and
 * URIs the unit tests use, and a few near misses.  Run as make_seeds CORPUS_DIR; it writes
 * CORPUS_DIR/NAME/seed-* for each harness NAME and leaves other files alone.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/transport/thrift_memory_buffer.h>
#include <thrift/c_glib/transport/thrift_rdma_version.h>

#include "lib/c_glib/transport/hybrid/hybrid_wire.h"
#include "lib/c_glib/transport/rdma/rdma_bulk_wire.h"
#include "lib/c_glib/transport/rdma/rdma_wire.h"

static const gchar *corpus;

static void
seed (const gchar *harness, const gchar *name, gconstpointer data, gsize len)
{
  g_autofree gchar *dir = g_build_filename (corpus, harness, NULL);
  g_autofree gchar *base = g_strconcat ("seed-", name, NULL);
  g_autofree gchar *path = g_build_filename (dir, base, NULL);
  GError *error = NULL;

  g_mkdir_with_parents (dir, 0755);
  if (!g_file_set_contents (path, data, (gssize) len, &error))
    g_error ("%s", error->message);
}

/* ---- rdma_wire ---- */

/* A client's hello as setup_resources makes it (and test_pairing.c's sound_hello). */
static void
sound_hello (RdmaWireHello *h)
{
  rdma_wire_hello_init (h, THRIFT_RDMA_WIRE_VERSION);
  h->credits = GUINT32_TO_LE (32);
  h->slot_size = GUINT32_TO_LE (4096);
  h->max_message = GUINT32_TO_LE (1u << 20);
  h->protocols = GUINT16_TO_LE (1);
  h->flags = GUINT32_TO_LE (RDMA_WIRE_HELLO_SOLICITED);
}

static void
rdma_wire_seeds (void)
{
  /* test_pairing.c's token_a */
  static const guint8 token[RDMA_WIRE_PAIR_TOKEN_LEN] = { 0x9f, 0x01, 0x42, 0x00, 0x17, 0xee,
                                                          0x80, 0x3c, 0x00, 0x00, 0x5a, 0xa5,
                                                          0x10, 0x20, 0x30, 0x40 };
  guint8 pdata[56] = { 0 };
  RdmaWireRequest req;
  RdmaWireRefusal refusal;
  guint8 send[RDMA_WIRE_HEADER_SIZE + RDMA_WIRE_CONTROL_MAX];

  sound_hello (&req.hello);
  seed ("rdma_wire", "hello", &req.hello, sizeof req.hello);
  /* as RDMA CM delivers a connect's private data: padded with zeros to 56 bytes */
  memcpy (pdata, &req.hello, sizeof req.hello);
  seed ("rdma_wire", "hello-padded", pdata, sizeof pdata);
  memcpy (req.pair_token, token, sizeof token);
  seed ("rdma_wire", "hello-token", &req, sizeof req);
  req.hello.version = GUINT16_TO_LE (THRIFT_RDMA_WIRE_VERSION + 1);
  seed ("rdma_wire", "hello-next-version", &req.hello, sizeof req.hello);
  for (guint16 code = RDMA_WIRE_REFUSE_UNKNOWN_TOKEN; code <= RDMA_WIRE_REFUSE_TOKEN_REQUIRED;
       code++)
  {
    g_autofree gchar *name = g_strdup_printf ("refusal-%u", code);

    rdma_wire_refusal_init (&refusal, THRIFT_RDMA_WIRE_VERSION, code);
    seed ("rdma_wire", name, &refusal, sizeof refusal);
  }

  /* SENDs: a whole message, the first fragment of a longer one, credits, control, a ring
   * notice */
  memset (send, 0x5a, sizeof send);
  rdma_wire_header_write (send, 0, RDMA_WIRE_DATA, RDMA_WIRE_FIRST | RDMA_WIRE_LAST, 3, 16, 16);
  seed ("rdma_wire", "data-whole", send, RDMA_WIRE_HEADER_SIZE + 16);
  rdma_wire_header_write (send, 2, RDMA_WIRE_DATA, RDMA_WIRE_FIRST, 0, 32, 100000);
  rdma_wire_header_set_freed (send, 4);
  seed ("rdma_wire", "data-first", send, RDMA_WIRE_HEADER_SIZE + 32);
  rdma_wire_header_write (send, 0, RDMA_WIRE_CREDIT, 0, 7, 0, 0);
  seed ("rdma_wire", "credit", send, RDMA_WIRE_HEADER_SIZE);
  rdma_wire_header_write (send, RDMA_WIRE_PROTO_ENGINE, RDMA_WIRE_CONTROL, 1, 0, 8, 8);
  seed ("rdma_wire", "control", send, RDMA_WIRE_HEADER_SIZE + 8);
  rdma_wire_header_write (send, 1, RDMA_WIRE_RING, RDMA_WIRE_FIRST | RDMA_WIRE_LAST, 0, 4000, 4000);
  seed ("rdma_wire", "ring", send, RDMA_WIRE_HEADER_SIZE);
}

/* ---- bulk_wire ---- */

static void
bulk_message (const gchar *name, gsize inline_len, const RdmaBulkDesc *d, guint n)
{
  gsize len = 1 + inline_len + rdma_bulk_wire_table_size (n);
  g_autofree guint8 *m = g_malloc (len);

  m[0] = RDMA_BULK_TABLE;
  for (gsize i = 0; i < inline_len; i++)
    m[1 + i] = (guint8) (i * 7 + 3);
  rdma_bulk_wire_write_table (m + 1 + inline_len, d, n, 42);
  seed ("bulk_wire", name, m, len);
}

static void
bulk_wire_seeds (void)
{
  /* test_bulk_wire.c's plain message and unknown envelope */
  static const guint8 plain[] = { RDMA_BULK_PLAIN, 1, 2, 3 };
  static const guint8 unknown[] = { 0x7f, 1, 2 };
  RdmaBulkDesc d[RDMA_BULK_MAX_FIELDS];

  seed ("bulk_wire", "plain", plain, sizeof plain);
  seed ("bulk_wire", "unknown", unknown, sizeof unknown);
  seed ("bulk_wire", "empty", "", 0);
  for (guint i = 0; i < RDMA_BULK_MAX_FIELDS; i++)
    d[i] = (RdmaBulkDesc){
      .at = 4 * i, .len = 4096 + i, .addr = 0x7f0000000000ull + i * 8192, .rkey = 0x1000 + i
    };
  bulk_message ("one", 8, d, 1);
  bulk_message ("three", 12, d, 3);
  bulk_message ("full", 4 * RDMA_BULK_MAX_FIELDS, d, RDMA_BULK_MAX_FIELDS);
  /* a field at the very end, and two at the same place */
  d[0].at = 16;
  bulk_message ("at-end", 16, d, 1);
  d[0].at = d[1].at = 2;
  bulk_message ("same-place", 4, d, 2);
}

/* ---- hybrid_wire ---- */

static void
hybrid_wire_seeds (void)
{
  static const guint8 token[HYBRID_TOKEN_LEN] = { 0x9f, 0x01, 0x42, 0x00, 0x17, 0xee, 0x80, 0x3c,
                                                  0x00, 0x00, 0x5a, 0xa5, 0x10, 0x20, 0x30, 0x40 };
  guint8 m[HYBRID_WELCOME_LEN];

  hybrid_wire_hello (m, HYBRID_WANT_RDMA);
  seed ("hybrid_wire", "hello", m, HYBRID_HELLO_LEN);
  hybrid_wire_hello (m, 0);
  seed ("hybrid_wire", "hello-tcp", m, HYBRID_HELLO_LEN);
  hybrid_wire_welcome (m, HYBRID_STATUS_OK, HYBRID_HAS_RDMA, token);
  seed ("hybrid_wire", "welcome", m, HYBRID_WELCOME_LEN);
  hybrid_wire_welcome (m, HYBRID_STATUS_BUSY, 0, NULL);
  seed ("hybrid_wire", "welcome-busy", m, HYBRID_WELCOME_LEN);
  hybrid_wire_commit (m, HYBRID_COMMIT_RDMA);
  seed ("hybrid_wire", "commit", m, HYBRID_COMMIT_LEN);
  hybrid_wire_commit (m, HYBRID_COMMIT_TCP_ONLY);
  seed ("hybrid_wire", "commit-tcp", m, HYBRID_COMMIT_LEN);
}

/* ---- requests (checked_binary, hybrid_peer) ---- */

/* One request as a c_glib client writes it with the binary protocol: a call of @name whose
 * arguments have a field of every type. */
static void
write_request (GByteArray *out, const gchar *name, gint32 seqid, gsize blob)
{
  ThriftTransport *t = g_object_new (THRIFT_TYPE_MEMORY_BUFFER, "buf_size", 1u << 20, NULL);
  ThriftProtocol *p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
  g_autofree guint8 *bytes = g_malloc (blob);
  GError *error = NULL;

  for (gsize i = 0; i < blob; i++)
    bytes[i] = (guint8) i;
  thrift_protocol_write_message_begin (p, name, T_CALL, seqid, &error);
  thrift_protocol_write_struct_begin (p, "args", &error);
  thrift_protocol_write_field_begin (p, "text", T_STRING, 1, &error);
  thrift_protocol_write_string (p, "hello", &error);
  thrift_protocol_write_field_begin (p, "blob", T_STRING, 2, &error);
  thrift_protocol_write_binary (p, bytes, (guint32) blob, &error);
  thrift_protocol_write_field_begin (p, "n", T_I32, 3, &error);
  thrift_protocol_write_i32 (p, 1234, &error);
  thrift_protocol_write_field_begin (p, "big", T_I64, 4, &error);
  thrift_protocol_write_i64 (p, G_GINT64_CONSTANT (1) << 40, &error);
  thrift_protocol_write_field_begin (p, "x", T_DOUBLE, 5, &error);
  thrift_protocol_write_double (p, 2.5, &error);
  thrift_protocol_write_field_begin (p, "flag", T_BOOL, 6, &error);
  thrift_protocol_write_bool (p, TRUE, &error);
  thrift_protocol_write_field_begin (p, "b", T_BYTE, 7, &error);
  thrift_protocol_write_byte (p, 7, &error);
  thrift_protocol_write_field_begin (p, "s", T_I16, 8, &error);
  thrift_protocol_write_i16 (p, 300, &error);
  thrift_protocol_write_field_begin (p, "list", T_LIST, 9, &error);
  thrift_protocol_write_list_begin (p, T_I32, 2, &error);
  thrift_protocol_write_i32 (p, 1, &error);
  thrift_protocol_write_i32 (p, 2, &error);
  thrift_protocol_write_field_begin (p, "map", T_MAP, 10, &error);
  thrift_protocol_write_map_begin (p, T_STRING, T_I64, 1, &error);
  thrift_protocol_write_string (p, "k", &error);
  thrift_protocol_write_i64 (p, 9, &error);
  thrift_protocol_write_field_begin (p, "set", T_SET, 11, &error);
  thrift_protocol_write_set_begin (p, T_BYTE, 2, &error);
  thrift_protocol_write_byte (p, 1, &error);
  thrift_protocol_write_byte (p, 2, &error);
  thrift_protocol_write_field_begin (p, "inner", T_STRUCT, 12, &error);
  thrift_protocol_write_struct_begin (p, "inner", &error);
  thrift_protocol_write_field_begin (p, "name", T_STRING, 1, &error);
  thrift_protocol_write_string (p, "in", &error);
  thrift_protocol_write_field_stop (p, &error);
  thrift_protocol_write_field_stop (p, &error);
  thrift_protocol_write_message_end (p, &error);
  if (error != NULL)
    g_error ("%s", error->message);
  g_byte_array_append (out, THRIFT_MEMORY_BUFFER (t)->buf->data,
                       THRIFT_MEMORY_BUFFER (t)->buf->len);
  g_object_unref (p);
  g_object_unref (t);
}

/* @len bytes at @data as one frame (a 4-byte big-endian length first). */
static void
frame (GByteArray *out, const guint8 *data, gsize len)
{
  guint32 be = GUINT32_TO_BE ((guint32) len);

  g_byte_array_append (out, (const guint8 *) &be, 4);
  g_byte_array_append (out, data, (guint) len);
}

static void
framed_request (GByteArray *out, const gchar *name, gint32 seqid, gsize blob)
{
  GByteArray *m = g_byte_array_new ();

  write_request (m, name, seqid, blob);
  frame (out, m->data, m->len);
  g_byte_array_unref (m);
}

static void
seed_array (const gchar *harness, const gchar *name, GByteArray *a)
{
  seed (harness, name, a->data, a->len);
  g_byte_array_set_size (a, 0);
}

static void
request_seeds (void)
{
  GByteArray *a = g_byte_array_new (), *m = g_byte_array_new ();
  guint8 hs[HYBRID_HELLO_LEN];
  guint cut;

  framed_request (a, "echo", 1, 24);
  seed ("hybrid_peer", "stock-framed", a->data, a->len);
  seed_array ("checked_binary", "one", a);
  framed_request (a, "echo", 1, 0);
  framed_request (a, "ping", 2, 100);
  seed_array ("checked_binary", "two", a);
  /* a field that continues into the next frame (test_hybrid's /hybrid/tcp-alone/split-frames:
   * a 100-byte binary, the first frame ending 16 bytes into it) */
  write_request (m, "echo", 3, 100);
  cut = m->len - 100 + 16;
  frame (a, m->data, cut);
  frame (a, m->data + cut, m->len - cut);
  seed_array ("checked_binary", "split", a);
  /* a frame of length 0 where a request should begin */
  frame (a, m->data, 0);
  seed_array ("checked_binary", "empty-frame", a);
  g_byte_array_set_size (m, 0);

  /* a stock buffered client: the message unframed, its first byte 0x80 */
  write_request (a, "echo", 1, 24);
  seed_array ("hybrid_peer", "stock-buffered", a);
  /* a hybrid client: HELLO, COMMIT (TCP alone, or RDMA), then framed requests */
  hybrid_wire_hello (hs, HYBRID_WANT_RDMA);
  g_byte_array_append (a, hs, sizeof hs);
  hybrid_wire_commit (hs, HYBRID_COMMIT_TCP_ONLY);
  g_byte_array_append (a, hs, sizeof hs);
  framed_request (a, "echo", 1, 24);
  seed_array ("hybrid_peer", "hybrid-tcp", a);
  hybrid_wire_hello (hs, HYBRID_WANT_RDMA);
  g_byte_array_append (a, hs, sizeof hs);
  hybrid_wire_commit (hs, HYBRID_COMMIT_RDMA);
  g_byte_array_append (a, hs, sizeof hs);
  framed_request (a, "ping", 7, 0);
  seed_array ("hybrid_peer", "hybrid-rdma", a);
  g_byte_array_unref (a);
  g_byte_array_unref (m);
}

/* ---- uri ---- */

/* URIs of test_transport_uri.c, test_bulk_props.c and the hybrid tests, good and bad. */
static const gchar *const uris[] = {
  "tcp://127.0.0.1:9090",
  "tcp://:9090?framing=none&backlog=3",
  "tcp://0.0.0.0:4243?framing=buffered&backlog=7",
  "tcp://h:65535?framing=buffered",
  "tcp://h:80?framing=none&",
  "tcp://h:9090/x",
  "tcp://::1:9090",
  "tcp://h: 80",
  "tcp://h:+80",
  "tcp://h:65536",
  "tcp://h:1?framing=zlib",
  "tcp://:1?backlog=0",
  "://h:1",
  "hybird://h:1",
  "rdma://10.77.0.1:9090?polling=busy&connect-timeout=250&call-timeout=0",
  "rdma://[::1]:4244?polling=busy&connect-timeout=250&call-timeout=0",
  "rdma://[::]:9090?polling=hybrid&backlog=4096",
  "rdma://[fe80::1]:7?polling=event",
  "rdma://:9090?idle-timeout=60000&keepalive=5000&call-timeout=100",
  "rdma://[]:9090",
  "rdma://[::1]9090",
  "rdma://[host]:9090",
  "rdma://h:1?call-timeout=2147483648",
  "rdma://h:1?numa=1&polling=busy",
  "rdma://h:1?numa=1024",
  "rdma://h:1?fallback=tcp&max-pinned-bytes=33554432",
  "rdma://:1?bulk=20000&bulk_chunk=8192&bulk_depth=7&",
  "rdma://h:1?rcache_entries=65536&rcache_bytes=1099511627776",
  "rdma://:1?rcache_bytes=65536&fallback=tcp",
  "rdma://h:1?bulk_depth=129",
  "hybrid://10.77.0.1:9095?fallback=tcp&",
  "hybrid://:1?max-pinned-bytes=33554432",
  "hybrid://h:1?framing=buffered",
  "hybrid://:9300?connect-timeout=500&backlog=16",
  "hybrid://h:1?keepalive=2000&numa=0",
};

static void
uri_seeds (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (uris); i++)
  {
    g_autofree gchar *name = g_strdup_printf ("%02u", i);

    seed ("uri", name, uris[i], strlen (uris[i]));
  }
}

int
main (int argc, char **argv)
{
  if (argc != 2)
  {
    fprintf (stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  corpus = argv[1];
  rdma_wire_seeds ();
  bulk_wire_seeds ();
  hybrid_wire_seeds ();
  request_seeds ();
  uri_seeds ();
  return 0;
}
