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
 * test_zero_copy_runtime.c: the code thrift-hatrpc generates from test/compiler/zero_copy.thrift
 * with `--gen c_glib:zero_copy_binary` (issue 10), run over a ThriftMemoryBuffer.  Structs,
 * a service's _args structs and the client's recv_<function> are written and read back with
 * empty, small and 1 MiB binaries in fields and in list, set and map elements, by the binary
 * and the compact protocol and this project's ThriftCheckedBinaryProtocol; every value must
 * come back byte for byte.
 *
 * That nothing is copied is checked through a recording protocol (a ThriftProtocolDecorator)
 * that notes each buffer its read_binary hands out: every non-empty GByteArray read must hold
 * one of those buffers as its data, and each buffer must end up in exactly one of them.
 * Stock Thrift's code (a copy into a new array, then g_free of the buffer) fails this.
 *
 * Also: a binary field sent twice releases the first value; a result read into a non-empty
 * GByteArray releases that array; a negative length from the binary protocol (which hands it
 * on with a NULL buffer) is an error, as the compact protocol's own check makes it.
 *
 * The processor: its handler replies with NEW binaries (a 1 MiB binary, a list, a map, a
 * struct, a declared exception holding one, an application exception with an 8 KiB message)
 * over a LendingBuffer, a transport that keeps the pointer of every large write instead of
 * copying it, as ThriftRdma's bulk transfer lends a large field until the peer has read it
 * during the flush.  The flush reads each lent range again and checks it against the digest
 * taken at the write: stock code frees the reply before the flush, which fails there (ASan:
 * heap-use-after-free).  The client reads the reply back, byte for byte.  Its calls go
 * through a LendingBuffer too (send_<function> writes from the caller's arguments).  A oneway
 * function writes nothing, also when its handler fails.
 *
 * Built with ASan/UBSan and run with G_SLICE=always-malloc (the program sets it and runs
 * itself again), so that every GByteArray and buffer is a malloc block that LeakSanitizer
 * sees: a leak, a double free or a use after free fails the test.  Two leaks of stock Thrift
 * are suppressed (see __lsan_default_suppressions).
 */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/thrift_application_exception.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/protocol/thrift_checked_binary_protocol.h>
#include <thrift/c_glib/protocol/thrift_compact_protocol.h>
#include <thrift/c_glib/protocol/thrift_protocol_decorator.h>
#include <thrift/c_glib/transport/thrift_memory_buffer.h>

#include "zc.h"
#include "zero_copy_types.h"

#define BIG (1024 * 1024)

/* Stock Thrift 0.17's generated structs and its ThriftMemoryBuffer do not chain their finalize
 * up to GObject's, so the GData that g_object_unref attaches (its notify queue) outlives
 * every such object; nothing that this test checks is allocated under g_object_unref.  Full
 * stacks (GLib has no frame pointers) so that the suppression sees g_object_unref. */
const char *__asan_default_options (void);
const char *__lsan_default_suppressions (void);

const char *
__asan_default_options (void)
{
  return "fast_unwind_on_malloc=0";
}

const char *
__lsan_default_suppressions (void)
{
  return "leak:g_object_unref\n";
}

/* ---- RecordingProtocol: notes every buffer that read_binary hands out ---- */

typedef struct
{
  ThriftProtocolDecorator parent;
  GHashTable *taken; /* buffers handed out and not yet found in a GByteArray */
  guint nonempty;    /* read_binary calls that gave a buffer */
} RecordingProtocol;

typedef struct
{
  ThriftProtocolDecoratorClass parent;
} RecordingProtocolClass;

static GType recording_protocol_get_type (void);
G_DEFINE_TYPE (RecordingProtocol, recording_protocol, THRIFT_TYPE_PROTOCOL_DECORATOR)

static gint32
recording_read_binary (ThriftProtocol *protocol, gpointer *buf, guint32 *len, GError **error)
{
  RecordingProtocol *self = (RecordingProtocol *) protocol;
  gint32 ret = THRIFT_PROTOCOL_CLASS (recording_protocol_parent_class)
                   ->read_binary (protocol, buf, len, error);

  if (ret >= 0 && *buf != NULL)
  {
    g_hash_table_add (self->taken, *buf);
    self->nonempty++;
  }
  return ret;
}

static void
recording_protocol_finalize (GObject *object)
{
  g_hash_table_unref (((RecordingProtocol *) object)->taken);
  G_OBJECT_CLASS (recording_protocol_parent_class)->finalize (object);
}

static void
recording_protocol_init (RecordingProtocol *self)
{
  self->taken = g_hash_table_new (g_direct_hash, g_direct_equal);
}

static void
recording_protocol_class_init (RecordingProtocolClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = recording_protocol_finalize;
  THRIFT_PROTOCOL_CLASS (klass)->read_binary = recording_read_binary;
}

/* ---- a memory buffer, a protocol on it to write with, a recording one to read with ---- */

/* the binary and compact protocols of Thrift 0.17, and this project's checked binary protocol
 * (the one servers here use) */
typedef enum
{
  BINARY,
  COMPACT,
  CHECKED
} Kind;


typedef struct
{
  ThriftTransport *transport;
  ThriftProtocol *out;   /* the concrete protocol */
  RecordingProtocol *in; /* the same, recording */
} Pipe;

static ThriftProtocol *
protocol_on (Kind kind, gpointer transport)
{
  return g_object_new (kind == BINARY    ? THRIFT_TYPE_BINARY_PROTOCOL
                       : kind == COMPACT ? THRIFT_TYPE_COMPACT_PROTOCOL
                                         : THRIFT_TYPE_CHECKED_BINARY_PROTOCOL,
                       "transport", transport, NULL);
}

static void
pipe_open (Pipe *p, Kind kind)
{
  p->transport = g_object_new (THRIFT_TYPE_MEMORY_BUFFER, "buf_size", 16 * BIG, NULL);
  p->out = protocol_on (kind, p->transport);
  p->in = g_object_new (recording_protocol_get_type (), "transport", p->transport, "protocol",
                        p->out, NULL);
}

/* Every buffer read_binary handed out was found in exactly one array, and the message was
 * read to its end. */
static void
pipe_close (Pipe *p)
{
  g_assert_cmpuint (g_hash_table_size (p->in->taken), ==, 0);
  g_assert_cmpuint (THRIFT_MEMORY_BUFFER (p->transport)->buf->len, ==, 0);
  g_object_unref (p->in);
  g_object_unref (p->out);
  g_object_unref (p->transport);
}

/* ---- values ---- */

/* LEN bytes of a pattern that differs with SEED, so a value read in the wrong place shows */
static GByteArray *
value (guint len, guint seed)
{
  GByteArray *a = g_byte_array_sized_new (len);
  guint i;

  for (i = 0; i < len; i++)
  {
    guint8 b = (guint8) (i * 31u + seed * 101u + (i >> 9));
    g_byte_array_append (a, &b, 1);
  }
  return a;
}

/* GOT has WANT's bytes and holds one of the buffers read_binary handed out (which it now
 * owns, so it is crossed off); an empty value has no buffer to take. */
static void
assert_taken (Pipe *p, const GByteArray *got, const GByteArray *want)
{
  g_assert_nonnull (got);
  g_assert_cmpuint (got->len, ==, want->len);
  if (want->len == 0)
    return;
  g_assert_true (memcmp (got->data, want->data, want->len) == 0);
  g_assert_true (g_hash_table_remove (p->in->taken, got->data));
}

/* The generated code's own containers of binaries (free functions as in the generated
 * _instance_init).  Each map and set in these tests holds one binary key: the generator hashes
 * and compares binary keys with g_str_hash and g_str_equal on the GByteArray pointer (a stock
 * Thrift bug, the same with and without zero_copy_binary), so two distinct keys can be taken
 * for one. */
static GPtrArray *
list_of (GByteArray *a, GByteArray *b, GByteArray *c)
{
  GPtrArray *l = g_ptr_array_new_with_free_func (thrift_string_free);
  g_ptr_array_add (l, a);
  g_ptr_array_add (l, b);
  if (c)
    g_ptr_array_add (l, c);
  return l;
}

static GHashTable *
map_of (GByteArray *k, GByteArray *v)
{
  GHashTable *m = g_hash_table_new_full (g_str_hash, g_str_equal, thrift_string_free,
                                         thrift_string_free);
  if (k)
    g_hash_table_insert (m, k, v);
  return m;
}

static void
assert_list (Pipe *p, const GPtrArray *got, const GPtrArray *want)
{
  guint i;

  g_assert_nonnull (got);
  g_assert_cmpuint (got->len, ==, want->len);
  for (i = 0; i < want->len; i++)
    assert_taken (p, g_ptr_array_index (got, i), g_ptr_array_index (want, i));
}

/* a map or set of one binary key (and binary value, unless VAL is NULL) */
static void
assert_single (Pipe *p, GHashTable *got, const GByteArray *key, const GByteArray *val)
{
  GHashTableIter it;
  gpointer k, v;

  g_assert_nonnull (got);
  g_assert_cmpuint (g_hash_table_size (got), ==, 1);
  g_hash_table_iter_init (&it, got);
  g_assert_true (g_hash_table_iter_next (&it, &k, &v));
  assert_taken (p, k, key);
  if (val)
    assert_taken (p, v, val);
}

/* ---- structs and exceptions ---- */

/* A Blobs with every kind of binary field and container, empty, small and 1 MiB values. */
static Blobs *
blobs_new (void)
{
  Blobs *b = g_object_new (TYPE_BLOBS, NULL);

  b->one = value (0, 1);
  b->__isset_one = TRUE;
  b->opt = value (5, 2);
  b->__isset_opt = TRUE;
  b->req = value (BIG, 3);
  g_ptr_array_add (b->blist, value (0, 4));
  g_ptr_array_add (b->blist, value (7, 5));
  g_ptr_array_add (b->blist, value (BIG, 6));
  b->__isset_blist = TRUE;
  g_hash_table_add (b->bset, value (BIG, 7));
  b->__isset_bset = TRUE;
  g_hash_table_insert (b->bmap, value (9, 8), value (BIG, 9));
  b->__isset_bmap = TRUE;
  g_hash_table_insert (b->nested, g_strdup ("a"), list_of (value (BIG, 10), value (0, 11), NULL));
  g_hash_table_insert (b->nested, g_strdup ("b"), list_of (value (3, 12), value (BIG, 13), NULL));
  b->__isset_nested = TRUE;
  b->text = g_strdup ("text");
  b->__isset_text = TRUE;
  return b;
}

static GByteArray *
single_key (GHashTable *h)
{
  GHashTableIter it;
  gpointer k = NULL;

  g_hash_table_iter_init (&it, h);
  g_assert_true (g_hash_table_iter_next (&it, &k, NULL));
  return k;
}

static void
assert_blobs (Pipe *p, Blobs *got, Blobs *want)
{
  const gchar *keys[] = { "a", "b" };
  guint i;

  assert_taken (p, got->one, want->one);
  g_assert_true (got->__isset_one);
  assert_taken (p, got->opt, want->opt);
  g_assert_true (got->__isset_opt);
  assert_taken (p, got->req, want->req);
  assert_list (p, got->blist, want->blist);
  assert_single (p, got->bset, single_key (want->bset), NULL);
  assert_single (p, got->bmap, single_key (want->bmap),
                 g_hash_table_lookup (want->bmap, single_key (want->bmap)));
  g_assert_cmpuint (g_hash_table_size (got->nested), ==, 2);
  for (i = 0; i < G_N_ELEMENTS (keys); i++)
    assert_list (p, g_hash_table_lookup (got->nested, keys[i]),
                 g_hash_table_lookup (want->nested, keys[i]));
  g_assert_cmpstr (got->text, ==, want->text);
}

static void
test_blobs (gconstpointer data)
{
  Kind kind = GPOINTER_TO_INT (data);
  GError *error = NULL;
  Pipe p;
  Blobs *want = blobs_new ();
  Blobs *got = g_object_new (TYPE_BLOBS, NULL);

  pipe_open (&p, kind);
  g_assert_cmpint (thrift_struct_write (THRIFT_STRUCT (want), p.out, &error), >, 0);
  g_assert_no_error (error);
  g_assert_cmpint (thrift_struct_read (THRIFT_STRUCT (got), THRIFT_PROTOCOL (p.in), &error), >, 0);
  g_assert_no_error (error);
  /* opt, req, two of blist, bset, bmap's key and value, three in nested */
  g_assert_cmpuint (p.in->nonempty, ==, 10);
  assert_blobs (&p, got, want);
  pipe_close (&p);
  g_object_unref (got);
  g_object_unref (want);
}

/* An exception with a binary field. */
static void
test_exception (gconstpointer data)
{
  GError *error = NULL;
  Pipe p;
  Oops *want = g_object_new (TYPE_OOPS, NULL);
  Oops *got = g_object_new (TYPE_OOPS, NULL);

  want->why = value (BIG, 20);
  want->__isset_why = TRUE;
  pipe_open (&p, GPOINTER_TO_INT (data));
  g_assert_cmpint (thrift_struct_write (THRIFT_STRUCT (want), p.out, &error), >, 0);
  g_assert_cmpint (thrift_struct_read (THRIFT_STRUCT (got), THRIFT_PROTOCOL (p.in), &error), >, 0);
  g_assert_no_error (error);
  assert_taken (&p, got->why, want->why);
  pipe_close (&p);
  g_object_unref (got);
  g_object_unref (want);
}

/* ---- a service's arguments, as process_<function> reads them ---- */

static void
test_args (gconstpointer data)
{
  Kind kind = GPOINTER_TO_INT (data);
  GError *error = NULL;
  Pipe p;
  ZcEchoArgs *echo = g_object_new (TYPE_ZC_ECHO_ARGS, NULL);
  ZcEchoArgs *echo_got = g_object_new (TYPE_ZC_ECHO_ARGS, NULL);
  ZcManyArgs *many = g_object_new (TYPE_ZC_MANY_ARGS, NULL);
  ZcManyArgs *many_got = g_object_new (TYPE_ZC_MANY_ARGS, NULL);
  ZcPairsArgs *pairs = g_object_new (TYPE_ZC_PAIRS_ARGS, NULL);
  ZcPairsArgs *pairs_got = g_object_new (TYPE_ZC_PAIRS_ARGS, NULL);

  echo->data = value (BIG, 30);
  echo->__isset_data = TRUE;
  g_ptr_array_add (echo->more, value (11, 31));
  g_ptr_array_add (echo->more, value (0, 32));
  g_ptr_array_add (echo->more, value (BIG, 33));
  echo->__isset_more = TRUE;
  g_hash_table_insert (many->m, value (0, 34), value (BIG, 35));
  many->__isset_m = TRUE;
  g_hash_table_add (pairs->s, value (13, 36));
  pairs->__isset_s = TRUE;

  pipe_open (&p, kind);
  g_assert_cmpint (thrift_struct_write (THRIFT_STRUCT (echo), p.out, &error), >, 0);
  g_assert_cmpint (thrift_struct_write (THRIFT_STRUCT (many), p.out, &error), >, 0);
  g_assert_cmpint (thrift_struct_write (THRIFT_STRUCT (pairs), p.out, &error), >, 0);
  g_assert_no_error (error);
  g_assert_cmpint (thrift_struct_read (THRIFT_STRUCT (echo_got), THRIFT_PROTOCOL (p.in), &error), >,
                   0);
  g_assert_cmpint (thrift_struct_read (THRIFT_STRUCT (many_got), THRIFT_PROTOCOL (p.in), &error), >,
                   0);
  g_assert_cmpint (thrift_struct_read (THRIFT_STRUCT (pairs_got), THRIFT_PROTOCOL (p.in), &error),
                   >, 0);
  g_assert_no_error (error);
  assert_taken (&p, echo_got->data, echo->data);
  assert_list (&p, echo_got->more, echo->more);
  assert_single (&p, many_got->m, single_key (many->m),
                 g_hash_table_lookup (many->m, single_key (many->m)));
  assert_single (&p, pairs_got->s, single_key (pairs->s), NULL);
  pipe_close (&p);
  g_object_unref (echo);
  g_object_unref (echo_got);
  g_object_unref (many);
  g_object_unref (many_got);
  g_object_unref (pairs);
  g_object_unref (pairs_got);
}

/* ---- results, as the client's recv_<function> reads them ---- */

/* writes a reply to NAME holding RESULT (a _result struct) */
static void
write_reply (Pipe *p, const gchar *name, gpointer result)
{
  GError *error = NULL;

  g_assert_cmpint (thrift_protocol_write_message_begin (p->out, name, T_REPLY, 1, &error), >, 0);
  g_assert_cmpint (thrift_struct_write (THRIFT_STRUCT (result), p->out, &error), >, 0);
  g_assert_cmpint (thrift_protocol_write_message_end (p->out, &error), >=, 0);
  g_assert_no_error (error);
  g_object_unref (result);
}

static void
test_recv (gconstpointer data)
{
  GError *error = NULL;
  Pipe p;
  ZcClient *client;
  ZcIf *iface;
  GByteArray *echo_want = value (BIG, 40), *why_want = value (17, 41);
  GPtrArray *many_want = list_of (value (BIG, 42), value (0, 43), value (19, 44));
  GHashTable *pairs_want = map_of (value (BIG, 45), value (0, 46));
  Blobs *blobs_want = blobs_new ();
  /* a result is read into what the caller passes: here a non-empty array to be released */
  GByteArray *echo_got = value (23, 47);
  GPtrArray *many_got = g_ptr_array_new_with_free_func (thrift_string_free);
  GHashTable *pairs_got = map_of (NULL, NULL);
  Blobs *blobs_got = g_object_new (TYPE_BLOBS, NULL);
  Oops *e = NULL;
  ZcEchoResult *echo_r = g_object_new (TYPE_ZC_ECHO_RESULT, NULL);
  ZcEchoResult *oops_r = g_object_new (TYPE_ZC_ECHO_RESULT, NULL);
  ZcManyResult *many_r = g_object_new (TYPE_ZC_MANY_RESULT, NULL);
  ZcPairsResult *pairs_r = g_object_new (TYPE_ZC_PAIRS_RESULT, NULL);
  ZcBlobsResult *blobs_r = g_object_new (TYPE_ZC_BLOBS_RESULT, NULL);
  guint i;

  pipe_open (&p, GPOINTER_TO_INT (data));
  client = g_object_new (TYPE_ZC_CLIENT, "input_protocol", p.in, "output_protocol", p.out, NULL);
  iface = ZC_IF (client);

  echo_r->success = g_byte_array_ref (echo_want);
  echo_r->__isset_success = TRUE;
  write_reply (&p, "echo", echo_r);
  oops_r->e = g_object_new (TYPE_OOPS, NULL);
  oops_r->e->why = g_byte_array_ref (why_want);
  oops_r->e->__isset_why = TRUE;
  oops_r->__isset_e = TRUE;
  write_reply (&p, "echo", oops_r);
  for (i = 0; i < many_want->len; i++)
    g_ptr_array_add (many_r->success, g_byte_array_ref (g_ptr_array_index (many_want, i)));
  many_r->__isset_success = TRUE;
  write_reply (&p, "many", many_r);
  g_hash_table_insert (
      pairs_r->success, g_byte_array_ref (single_key (pairs_want)),
      g_byte_array_ref (g_hash_table_lookup (pairs_want, single_key (pairs_want))));
  pairs_r->__isset_success = TRUE;
  write_reply (&p, "pairs", pairs_r);
  g_object_unref (blobs_r->success);
  blobs_r->success = g_object_ref (blobs_want);
  blobs_r->__isset_success = TRUE;
  write_reply (&p, "blobs", blobs_r);

  g_assert_true (zc_client_recv_echo (iface, &echo_got, &e, &error));
  g_assert_no_error (error);
  g_assert_null (e);
  assert_taken (&p, echo_got, echo_want);

  /* the exception's binary is read (into a new Oops) as well */
  g_assert_false (zc_client_recv_echo (iface, &echo_got, &e, &error));
  g_assert_error (error, OOPS_ERROR, OOPS_ERROR_CODE);
  g_clear_error (&error);
  g_assert_nonnull (e);
  assert_taken (&p, e->why, why_want);

  g_assert_true (zc_client_recv_many (iface, &many_got, &error));
  g_assert_no_error (error);
  assert_list (&p, many_got, many_want);

  g_assert_true (zc_client_recv_pairs (iface, &pairs_got, &error));
  g_assert_no_error (error);
  assert_single (&p, pairs_got, single_key (pairs_want),
                 g_hash_table_lookup (pairs_want, single_key (pairs_want)));

  g_assert_true (zc_client_recv_blobs (iface, &blobs_got, &error));
  g_assert_no_error (error);
  assert_blobs (&p, blobs_got, blobs_want);

  pipe_close (&p);
  g_object_unref (client);
  g_object_unref (e);
  g_byte_array_unref (echo_got);
  g_byte_array_unref (echo_want);
  g_byte_array_unref (why_want);
  g_ptr_array_unref (many_got);
  g_ptr_array_unref (many_want);
  g_hash_table_unref (pairs_got);
  g_hash_table_unref (pairs_want);
  g_object_unref (blobs_got);
  g_object_unref (blobs_want);
}

/* ---- the processor: a reply lent to the transport lives until the flush ---- */

/* From this size on, LendingBuffer lends a write instead of copying it (ThriftRdma's
 * bulk-threshold is of this order; every large value below is far above it, every header and
 * length far below). */
#define LEND_MIN 4096

typedef struct
{
  const guint8 *lent; /* the writer's memory, or NULL: copied, at offset in copied */
  gsize offset;
  guint32 len;
  guint64 digest; /* of the lent bytes when they were written */
} Piece;

/* FNV-1a over LEN bytes at P, read here rather than in an uninstrumented library, so that
 * ASan sees a read of freed memory */
static guint64
digest (const guint8 *p, gsize len)
{
  guint64 h = G_GUINT64_CONSTANT (0xcbf29ce484222325);
  gsize i;

  for (i = 0; i < len; i++)
    h = (h ^ p[i]) * G_GUINT64_CONSTANT (0x100000001b3);
  return h;
}

/* LendingBuffer: a ThriftMemoryBuffer whose writes wait for the flush.  A small write is
 * copied (as into registered memory); a large one is lent: only its pointer, length and digest
 * are kept, and the flush reads the bytes from where the writer had them. */
typedef struct
{
  ThriftMemoryBuffer parent;
  GArray *pieces; /* of Piece, in the order written */
  GByteArray *copied;
  guint writes; /* write calls since the last flush */
  guint lent;   /* lent writes found intact by a flush */
  guint flushes;
} LendingBuffer;

typedef struct
{
  ThriftMemoryBufferClass parent;
} LendingBufferClass;

static GType lending_buffer_get_type (void);
G_DEFINE_TYPE (LendingBuffer, lending_buffer, THRIFT_TYPE_MEMORY_BUFFER)

static gboolean
lending_write (ThriftTransport *transport, const gpointer buf, const guint32 len, GError **error)
{
  LendingBuffer *self = (LendingBuffer *) transport;
  Piece p = { NULL, 0, len, 0 };

  THRIFT_UNUSED_VAR (error);
  if (len >= LEND_MIN)
  {
    p.lent = buf;
    p.digest = digest (buf, len);
  }
  else
  {
    p.offset = self->copied->len;
    g_byte_array_append (self->copied, buf, len);
  }
  g_array_append_val (self->pieces, p);
  self->writes++;
  return TRUE;
}

/* The message goes out now: each lent range must still hold what was written (reading it is
 * what ASan checks), and the bytes the reader gets are the ones there at this moment. */
static gboolean
lending_flush (ThriftTransport *transport, GError **error)
{
  LendingBuffer *self = (LendingBuffer *) transport;
  ThriftTransportClass *parent = THRIFT_TRANSPORT_CLASS (lending_buffer_parent_class);
  guint i;

  for (i = 0; i < self->pieces->len; i++)
  {
    Piece *p = &g_array_index (self->pieces, Piece, i);
    const guint8 *bytes = p->lent != NULL ? p->lent : self->copied->data + p->offset;

    if (p->lent != NULL)
    {
      g_assert_cmphex (digest (p->lent, p->len), ==, p->digest);
      self->lent++;
    }
    g_assert_true (parent->write (transport, (gpointer) bytes, p->len, error));
  }
  g_array_set_size (self->pieces, 0);
  g_byte_array_set_size (self->copied, 0);
  self->writes = 0;
  self->flushes++;
  return parent->flush (transport, error);
}

static void
lending_buffer_finalize (GObject *object)
{
  LendingBuffer *self = (LendingBuffer *) object;

  g_assert_cmpuint (self->pieces->len, ==, 0);
  g_array_unref (self->pieces);
  g_byte_array_unref (self->copied);
  G_OBJECT_CLASS (lending_buffer_parent_class)->finalize (object);
}

static void
lending_buffer_init (LendingBuffer *self)
{
  self->pieces = g_array_new (FALSE, FALSE, sizeof (Piece));
  self->copied = g_byte_array_new ();
}

static void
lending_buffer_class_init (LendingBufferClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = lending_buffer_finalize;
  THRIFT_TRANSPORT_CLASS (klass)->write = lending_write;
  THRIFT_TRANSPORT_CLASS (klass)->flush = lending_flush;
}

/* What the handler does: reply with new values, with (echo) the argument it got, throw the
 * declared exception, or fail with an error (an application exception). */
typedef enum
{
  REPLY_NEW,
  REPLY_ARG,
  REPLY_OOPS,
  REPLY_ERROR
} Reply;

/* the seeds of the values the handler makes (the test makes its own to compare) */
enum
{
  S_ECHO = 60,
  S_OOPS,
  S_MANY,
  S_PAIRS = S_MANY + 3,
  S_BLOBS = S_PAIRS + 2
};

/* an application exception's message: long enough to be lent */
static gchar *
long_message (void)
{
  GString *m = g_string_new (NULL);

  while (m->len < 2 * LEND_MIN)
    g_string_append_printf (m, "failure %u; ", (guint) m->len);
  return g_string_free (m, FALSE);
}

typedef struct
{
  ZcHandler parent;
  Reply reply;
  guint calls;
} TestHandler;

typedef struct
{
  ZcHandlerClass parent;
} TestHandlerClass;

static GType test_handler_get_type (void);
G_DEFINE_TYPE (TestHandler, test_handler, TYPE_ZC_HANDLER)

/* counts the call and fails it with an error if the handler was told to: TRUE if it did */
static gboolean
handler_fails (ZcIf *iface, GError **error)
{
  TestHandler *self = (TestHandler *) iface;

  self->calls++;
  if (self->reply != REPLY_ERROR)
    return FALSE;
  {
    gchar *m = long_message ();
    g_set_error (error, THRIFT_APPLICATION_EXCEPTION_ERROR,
                 THRIFT_APPLICATION_EXCEPTION_ERROR_INTERNAL_ERROR, "%s", m);
    g_free (m);
  }
  return TRUE;
}

static gboolean
handler_echo (ZcIf *iface, GByteArray **_return, const GByteArray *data, const GPtrArray *more,
              Oops **e, GError **error)
{
  TestHandler *self = (TestHandler *) iface;

  g_assert_cmpuint (more->len, ==, 1);
  if (handler_fails (iface, error))
    return FALSE;
  if (self->reply == REPLY_OOPS)
  {
    *e = g_object_new (TYPE_OOPS, NULL);
    (*e)->why = value (BIG, S_OOPS);
    (*e)->__isset_why = TRUE;
    return FALSE;
  }
  if (*_return != NULL)
    g_byte_array_unref (*_return);
  *_return = self->reply == REPLY_ARG ? g_byte_array_ref ((GByteArray *) data)
                                      : value (BIG, S_ECHO);
  return TRUE;
}

/* many, pairs and blobs fill the result's own container or struct, as handlers do */
static gboolean
handler_many (ZcIf *iface, GPtrArray **_return, const GHashTable *m, GError **error)
{
  g_assert_cmpuint (g_hash_table_size ((GHashTable *) m), ==, 1);
  if (handler_fails (iface, error))
    return FALSE;
  g_ptr_array_add (*_return, value (BIG, S_MANY));
  g_ptr_array_add (*_return, value (0, S_MANY + 1));
  g_ptr_array_add (*_return, value (9, S_MANY + 2));
  return TRUE;
}

static gboolean
handler_pairs (ZcIf *iface, GHashTable **_return, const GHashTable *s, GError **error)
{
  g_assert_cmpuint (g_hash_table_size ((GHashTable *) s), ==, 1);
  if (handler_fails (iface, error))
    return FALSE;
  g_hash_table_insert (*_return, value (5, S_PAIRS), value (BIG, S_PAIRS + 1));
  return TRUE;
}

/* the Blobs that blobs replies with (the handler's or the test's own) */
static void
blobs_fill (Blobs *b)
{
  b->req = value (BIG, S_BLOBS);
  b->opt = value (BIG, S_BLOBS + 1);
  b->__isset_opt = TRUE;
  g_ptr_array_add (b->blist, value (BIG, S_BLOBS + 2));
  b->__isset_blist = TRUE;
  g_hash_table_insert (b->nested, g_strdup ("n"),
                       list_of (value (BIG, S_BLOBS + 3), value (1, S_BLOBS + 4), NULL));
  b->__isset_nested = TRUE;
}

static gboolean
handler_blobs (ZcIf *iface, Blobs **_return, const Blobs *b, GError **error)
{
  g_assert_nonnull (b->req);
  if (handler_fails (iface, error))
    return FALSE;
  blobs_fill (*_return);
  return TRUE;
}

static gboolean
handler_drop (ZcIf *iface, const GByteArray *data, GError **error)
{
  g_assert_cmpuint (data->len, ==, BIG);
  return !handler_fails (iface, error);
}

static void
test_handler_init (TestHandler *self)
{
  THRIFT_UNUSED_VAR (self);
}

static void
test_handler_class_init (TestHandlerClass *klass)
{
  ZcHandlerClass *h = ZC_HANDLER_CLASS (klass);

  h->echo = handler_echo;
  h->many = handler_many;
  h->pairs = handler_pairs;
  h->blobs = handler_blobs;
  h->drop = handler_drop;
}

/* A client and a processor: the client's calls go through a LendingBuffer to the processor,
 * whose replies go through another back to the client. */
typedef struct
{
  LendingBuffer *calls;
  LendingBuffer *replies;
  ThriftProtocol *c_out, *s_in, *s_out, *c_in;
  ZcClient *client;
  ZcIf *iface;
  TestHandler *handler;
  ThriftProcessor *processor;
} Server;

static void
server_open (Server *s, Kind kind, Reply reply)
{
  s->calls = g_object_new (lending_buffer_get_type (), "buf_size", 16 * BIG, NULL);
  s->replies = g_object_new (lending_buffer_get_type (), "buf_size", 16 * BIG, NULL);
  s->c_out = protocol_on (kind, s->calls);
  s->s_in = protocol_on (kind, s->calls);
  s->s_out = protocol_on (kind, s->replies);
  s->c_in = protocol_on (kind, s->replies);
  s->client = g_object_new (TYPE_ZC_CLIENT, "input_protocol", s->c_in, "output_protocol", s->c_out,
                            NULL);
  s->iface = ZC_IF (s->client);
  s->handler = g_object_new (test_handler_get_type (), NULL);
  s->handler->reply = reply;
  s->processor = g_object_new (TYPE_ZC_PROCESSOR, "handler", s->handler, NULL);
}

/* The client sent one call, whose large values (LENT of them) were lent and intact at its
 * flush: send_<function> writes from the caller's own values, which live through the call. */
static void
sent (Server *s, guint lent)
{
  g_assert_cmpuint (s->calls->flushes, ==, 1);
  g_assert_cmpuint (s->calls->writes, ==, 0);
  g_assert_cmpuint (s->calls->lent, ==, lent);
}

/* The processor takes the call that was sent and writes its reply: one flush, in which every
 * write of a large value was lent and found intact.  LENT: how many large values the reply
 * holds. */
static void
serve (Server *s, guint lent)
{
  GError *error = NULL;

  g_assert_true (thrift_processor_process (s->processor, s->s_in, s->s_out, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (s->handler->calls, ==, 1);
  g_assert_cmpuint (s->replies->flushes, ==, 1);
  g_assert_cmpuint (s->replies->writes, ==, 0);
  g_assert_cmpuint (s->replies->lent, ==, lent);
}

static void
server_close (Server *s)
{
  g_assert_cmpuint (THRIFT_MEMORY_BUFFER (s->calls)->buf->len, ==, 0);
  g_assert_cmpuint (THRIFT_MEMORY_BUFFER (s->replies)->buf->len, ==, 0);
  g_object_unref (s->processor);
  g_object_unref (s->handler);
  g_object_unref (s->client);
  g_object_unref (s->c_out);
  g_object_unref (s->s_in);
  g_object_unref (s->s_out);
  g_object_unref (s->c_in);
  g_object_unref (s->calls);
  g_object_unref (s->replies);
}

static void
assert_same (const GByteArray *got, const GByteArray *want)
{
  g_assert_nonnull (got);
  g_assert_cmpuint (got->len, ==, want->len);
  /* an empty array may have no data */
  g_assert_true (want->len == 0 || memcmp (got->data, want->data, want->len) == 0);
}

/* the application exception the client gets for REPLY_ERROR */
static void
assert_application_error (GError *error)
{
  gchar *m = long_message ();

  g_assert_error (error, THRIFT_APPLICATION_EXCEPTION_ERROR,
                  THRIFT_APPLICATION_EXCEPTION_ERROR_INTERNAL_ERROR);
  g_assert_true (g_str_has_suffix (error->message, m));
  g_free (m);
}

/* DATA: the protocol's Kind + 16 * the Reply */
static void
test_reply_echo (gconstpointer data)
{
  Kind kind = GPOINTER_TO_INT (data) % 16;
  Reply reply = GPOINTER_TO_INT (data) / 16;
  GError *error = NULL;
  Server s;
  GByteArray *arg = value (BIG, 70), *got = NULL, *want;
  GPtrArray *more = g_ptr_array_new_with_free_func (thrift_string_free);
  Oops *e = NULL;
  gboolean ok;

  g_ptr_array_add (more, value (11, 71));
  server_open (&s, kind, reply);
  g_assert_true (zc_client_send_echo (s.iface, arg, more, &error));
  g_assert_no_error (error);
  sent (&s, 1);
  /* the 1 MiB value, the 1 MiB exception field, or the 8 KiB message */
  serve (&s, 1);
  ok = zc_client_recv_echo (s.iface, &got, &e, &error);
  switch (reply)
  {
  case REPLY_NEW:
  case REPLY_ARG:
    g_assert_no_error (error);
    g_assert_true (ok);
    want = reply == REPLY_ARG ? g_byte_array_ref (arg) : value (BIG, S_ECHO);
    assert_same (got, want);
    g_byte_array_unref (want);
    break;
  case REPLY_OOPS:
    g_assert_error (error, OOPS_ERROR, OOPS_ERROR_CODE);
    g_assert_false (ok);
    g_assert_nonnull (e);
    want = value (BIG, S_OOPS);
    assert_same (e->why, want);
    g_byte_array_unref (want);
    g_object_unref (e);
    break;
  case REPLY_ERROR:
    assert_application_error (error);
    g_assert_false (ok);
    g_assert_null (e);
    break;
  }
  g_clear_error (&error);
  server_close (&s);
  if (got != NULL)
    g_byte_array_unref (got);
  g_byte_array_unref (arg);
  g_ptr_array_unref (more);
}

/* many, pairs and blobs reply with new values in the result's container or struct */
static void
test_reply_containers (gconstpointer data)
{
  GError *error = NULL;
  Server s;
  GHashTable *m = map_of (value (2, 82), value (3, 83));
  GHashTable *set = g_hash_table_new_full (g_str_hash, g_str_equal, thrift_string_free, NULL);
  Blobs *b = g_object_new (TYPE_BLOBS, NULL);
  GPtrArray *many_got = g_ptr_array_new_with_free_func (thrift_string_free);
  GPtrArray *many_want = list_of (value (BIG, S_MANY), value (0, S_MANY + 1),
                                  value (9, S_MANY + 2));
  GHashTable *pairs_got = map_of (NULL, NULL);
  GByteArray *key = value (5, S_PAIRS), *val = value (BIG, S_PAIRS + 1);
  Blobs *blobs_got = g_object_new (TYPE_BLOBS, NULL);
  Blobs *blobs_want = g_object_new (TYPE_BLOBS, NULL);
  GPtrArray *nested;
  guint i;

  g_hash_table_add (set, value (4, 84));
  b->req = value (1, 85);
  blobs_fill (blobs_want);

  server_open (&s, GPOINTER_TO_INT (data), REPLY_NEW);
  g_assert_true (zc_client_send_many (s.iface, m, &error));
  sent (&s, 0);
  serve (&s, 1);
  g_assert_true (zc_client_recv_many (s.iface, &many_got, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (many_got->len, ==, many_want->len);
  for (i = 0; i < many_want->len; i++)
    assert_same (g_ptr_array_index (many_got, i), g_ptr_array_index (many_want, i));
  server_close (&s);

  server_open (&s, GPOINTER_TO_INT (data), REPLY_NEW);
  g_assert_true (zc_client_send_pairs (s.iface, set, &error));
  sent (&s, 0);
  serve (&s, 1);
  g_assert_true (zc_client_recv_pairs (s.iface, &pairs_got, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (g_hash_table_size (pairs_got), ==, 1);
  assert_same (single_key (pairs_got), key);
  assert_same (g_hash_table_lookup (pairs_got, single_key (pairs_got)), val);
  server_close (&s);

  server_open (&s, GPOINTER_TO_INT (data), REPLY_NEW);
  g_assert_true (zc_client_send_blobs (s.iface, b, &error));
  sent (&s, 0);
  /* req, opt, the element of blist, the large element of nested */
  serve (&s, 4);
  g_assert_true (zc_client_recv_blobs (s.iface, &blobs_got, &error));
  g_assert_no_error (error);
  assert_same (blobs_got->req, blobs_want->req);
  assert_same (blobs_got->opt, blobs_want->opt);
  g_assert_cmpuint (blobs_got->blist->len, ==, 1);
  assert_same (g_ptr_array_index (blobs_got->blist, 0), g_ptr_array_index (blobs_want->blist, 0));
  nested = g_hash_table_lookup (blobs_got->nested, "n");
  g_assert_nonnull (nested);
  g_assert_cmpuint (nested->len, ==, 2);
  for (i = 0; i < 2; i++)
    assert_same (
        g_ptr_array_index (nested, i),
        g_ptr_array_index ((GPtrArray *) g_hash_table_lookup (blobs_want->nested, "n"), i));
  server_close (&s);

  g_hash_table_unref (m);
  g_hash_table_unref (set);
  g_object_unref (b);
  g_ptr_array_unref (many_got);
  g_ptr_array_unref (many_want);
  g_hash_table_unref (pairs_got);
  g_byte_array_unref (key);
  g_byte_array_unref (val);
  g_object_unref (blobs_got);
  g_object_unref (blobs_want);
}

/* The same three failing: the application exception's message is what is lent. */
static void
test_reply_containers_error (gconstpointer data)
{
  GError *error = NULL;
  Server s;
  GHashTable *m = map_of (value (2, 86), value (3, 87));
  GPtrArray *many_got = g_ptr_array_new_with_free_func (thrift_string_free);

  server_open (&s, GPOINTER_TO_INT (data), REPLY_ERROR);
  g_assert_true (zc_client_send_many (s.iface, m, &error));
  sent (&s, 0);
  serve (&s, 1);
  g_assert_false (zc_client_recv_many (s.iface, &many_got, &error));
  assert_application_error (error);
  g_clear_error (&error);
  server_close (&s);
  g_hash_table_unref (m);
  g_ptr_array_unref (many_got);
}

/* oneway: the handler runs, and nothing is written, whether it succeeds or fails */
static void
test_reply_oneway (gconstpointer data)
{
  static const Reply replies[] = { REPLY_NEW, REPLY_ERROR };
  GError *error = NULL;
  GByteArray *big = value (BIG, 88);
  guint i;

  for (i = 0; i < G_N_ELEMENTS (replies); i++)
  {
    Server s;

    server_open (&s, GPOINTER_TO_INT (data), replies[i]);
    g_assert_true (zc_client_send_drop (s.iface, big, &error));
    g_assert_no_error (error);
    sent (&s, 1);
    g_assert_true (thrift_processor_process (s.processor, s.s_in, s.s_out, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (s.handler->calls, ==, 1);
    g_assert_cmpuint (s.replies->writes, ==, 0);
    g_assert_cmpuint (s.replies->flushes, ==, 0);
    server_close (&s);
  }
  g_byte_array_unref (big);
}

/* ---- malformed input ---- */

/* A field sent twice: the second value is kept, the first released (LeakSanitizer). */
static void
test_field_twice (gconstpointer data)
{
  GError *error = NULL;
  Pipe p;
  GByteArray *first = value (BIG, 50), *second = value (29, 51), *req = value (2, 52);
  Blobs *got = g_object_new (TYPE_BLOBS, NULL);
  GByteArray *fields[] = { first, second, req };
  gint16 ids[] = { 1, 1, 3 };
  guint i;

  pipe_open (&p, GPOINTER_TO_INT (data));
  g_assert_cmpint (thrift_protocol_write_struct_begin (p.out, "Blobs", &error), >=, 0);
  for (i = 0; i < G_N_ELEMENTS (fields); i++)
  {
    g_assert_cmpint (thrift_protocol_write_field_begin (p.out, "f", T_STRING, ids[i], &error), >,
                     0);
    g_assert_cmpint (thrift_protocol_write_binary (p.out, fields[i]->data, fields[i]->len, &error),
                     >, 0);
    g_assert_cmpint (thrift_protocol_write_field_end (p.out, &error), >=, 0);
  }
  g_assert_cmpint (thrift_protocol_write_field_stop (p.out, &error), >, 0);
  g_assert_cmpint (thrift_protocol_write_struct_end (p.out, &error), >=, 0);
  g_assert_no_error (error);

  g_assert_cmpint (thrift_struct_read (THRIFT_STRUCT (got), THRIFT_PROTOCOL (p.in), &error), >, 0);
  g_assert_no_error (error);
  g_assert_cmpuint (p.in->nonempty, ==, 3);
  assert_taken (&p, got->one, second);
  assert_taken (&p, got->req, req);
  /* what is left is the first value's buffer, released with its array when the second came
   * (LeakSanitizer sees it if not); under ASan's quarantine it cannot be the second's too */
  g_assert_cmpuint (g_hash_table_size (p.in->taken), ==, 1);
  g_hash_table_remove_all (p.in->taken);
  pipe_close (&p);
  g_object_unref (got);
  g_byte_array_unref (first);
  g_byte_array_unref (second);
  g_byte_array_unref (req);
}

/* A negative length, as a struct field (FIELD 1) or as a list element (FIELD 4): the read
 * fails with THRIFT_PROTOCOL_ERROR_NEGATIVE_SIZE and leaves no array of that length.  The
 * binary protocol hands such a length on with a NULL buffer (the generated code checks); the
 * compact and the checked protocol refuse it themselves. */
static void
negative (Kind kind, gint16 field)
{
  /* compact: field 1 or 4 (delta in the high nibble), type binary (8) or list (9); a list
   * header of one binary element; the length as a varint of 0xffffffff, that is (gint32) -1 */
  static const guint8 compact_field1[] = { 0x18, 0xff, 0xff, 0xff, 0xff, 0x0f };
  static const guint8 compact_field4[] = { 0x49, 0x18, 0xff, 0xff, 0xff, 0xff, 0x0f };
  GError *error = NULL;
  Pipe p;
  Blobs *got = g_object_new (TYPE_BLOBS, NULL);

  pipe_open (&p, kind);
  if (kind != COMPACT)
  {
    g_assert_cmpint (thrift_protocol_write_field_begin (p.out, "f", field == 1 ? T_STRING : T_LIST,
                                                        field, &error),
                     >, 0);
    if (field == 4)
      g_assert_cmpint (thrift_protocol_write_list_begin (p.out, T_STRING, 1, &error), >, 0);
    g_assert_cmpint (thrift_protocol_write_i32 (p.out, -1, &error), >, 0);
    /* the struct ends there, so that a reader that took the length reads on, not waits */
    g_assert_cmpint (thrift_protocol_write_field_stop (p.out, &error), >, 0);
  }
  else
  {
    const guint8 *b = field == 1 ? compact_field1 : compact_field4;
    guint len = field == 1 ? sizeof compact_field1 : sizeof compact_field4;
    g_assert_true (thrift_transport_write (p.transport, (gpointer) b, len, &error));
  }
  g_assert_no_error (error);

  g_assert_cmpint (thrift_struct_read (THRIFT_STRUCT (got), THRIFT_PROTOCOL (p.in), &error), <, 0);
  g_assert_error (error, THRIFT_PROTOCOL_ERROR, THRIFT_PROTOCOL_ERROR_NEGATIVE_SIZE);
  g_clear_error (&error);
  /* the compact protocol's stack of field ids (one entry per struct being read) is popped
   * only by read_struct_end, and it has no finalize: pop it, or LeakSanitizer reports it */
  thrift_protocol_read_struct_end (p.out, NULL);
  g_assert_null (got->one);
  g_assert_cmpuint (got->blist->len, ==, 0);
  g_assert_cmpuint (p.in->nonempty, ==, 0);
  g_object_unref (p.in);
  g_object_unref (p.out);
  g_object_unref (p.transport);
  g_object_unref (got);
}

static void
test_negative (gconstpointer data)
{
  negative (GPOINTER_TO_INT (data), 1);
  negative (GPOINTER_TO_INT (data), 4);
}

int
main (int argc, char **argv)
{
  /* each test gets the protocol's Kind plus 16 times its reply, which only test_reply_echo
   * reads */
  static const struct
  {
    const gchar *name;
    GTestDataFunc fn;
    Reply reply;
  } tests[] = {
    { "blobs", test_blobs, 0 },
    { "exception", test_exception, 0 },
    { "args", test_args, 0 },
    { "recv", test_recv, 0 },
    { "field-twice", test_field_twice, 0 },
    { "negative-length", test_negative, 0 },
    { "reply/echo-new", test_reply_echo, REPLY_NEW },
    { "reply/echo-arg", test_reply_echo, REPLY_ARG },
    { "reply/echo-oops", test_reply_echo, REPLY_OOPS },
    { "reply/echo-error", test_reply_echo, REPLY_ERROR },
    { "reply/containers", test_reply_containers, 0 },
    { "reply/containers-error", test_reply_containers_error, 0 },
    { "reply/oneway", test_reply_oneway, 0 },
  };
  static const gchar *kinds[] = { "binary", "compact", "checked" };
  guint i, k;

  /* GLib's slice allocator would hide GByteArrays from LeakSanitizer: run again with every
   * slice a malloc block (G_SLICE is read before main, so it must be set before the start). */
  if (getenv ("G_SLICE") == NULL || strcmp (getenv ("G_SLICE"), "always-malloc") != 0)
  {
    setenv ("G_SLICE", "always-malloc", 1);
    execv ("/proc/self/exe", argv);
    g_printerr ("cannot run again with G_SLICE=always-malloc\n");
    return 1;
  }

  g_test_init (&argc, &argv, NULL);
  for (i = 0; i < G_N_ELEMENTS (tests); i++)
    for (k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      gchar *path = g_strdup_printf ("/zero_copy/%s/%s", tests[i].name, kinds[k]);
      g_test_add_data_func (path, GINT_TO_POINTER ((gint) k + 16 * (gint) tests[i].reply),
                            tests[i].fn);
      g_free (path);
    }
  return g_test_run ();
}
