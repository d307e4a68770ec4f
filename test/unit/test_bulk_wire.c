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
 * test_bulk_wire.c: the framing of messages that lend fields (rdma_bulk_wire.h) and the
 * reader's view of them (rdma_bulk_msg.h), on the host: tables written and taken apart
 * again, and every kind of malformed table a peer could send refused with an error, never a
 * crash (every cut of a valid message, each field's corruption).  ASan/UBSan.
 */
#include "config.h"

#include <string.h>

#include "lib/c_glib/transport/rdma/rdma_bulk_msg.h"
#include "lib/c_glib/transport/rdma/rdma_status.h"

#define MAX_TOTAL (1u << 30)

/* A TABLE message: the envelope byte, @inline_len inline bytes (patterned), the table. */
static guint8 *
message_new (gsize inline_len, const RdmaBulkDesc *d, guint n, guint32 seq, gsize *len)
{
  gsize table = rdma_bulk_wire_table_size (n);
  guint8 *m = g_malloc (1 + inline_len + table);

  m[0] = RDMA_BULK_TABLE;
  for (gsize i = 0; i < inline_len; i++)
    m[1 + i] = (guint8) (i * 7 + 3);
  rdma_bulk_wire_write_table (m + 1 + inline_len, d, n, seq);
  *len = 1 + inline_len + table;
  return m;
}

/* Random descriptors in order within @inline_len; returns the sum of their lengths. */
static guint64
random_descs (GRand *r, gsize inline_len, RdmaBulkDesc *d, guint n)
{
  guint64 sum = 0;
  guint32 at = 0;

  for (guint i = 0; i < n; i++)
  {
    at = (guint32) g_rand_int_range (r, (gint32) at, (gint32) inline_len + 1);
    d[i] = (RdmaBulkDesc){
      .at = at,
      .len = (guint32) g_rand_int_range (r, 1, 1 << 24),
      .addr = ((guint64) g_rand_int (r) << 32) | g_rand_int (r),
      .rkey = g_rand_int (r),
    };
    if (d[i].addr > G_MAXUINT64 - d[i].len)
      d[i].addr = 0;
    sum += d[i].len;
  }
  return sum;
}

static void
test_roundtrip (void)
{
  GRand *r = g_rand_new_with_seed (1);

  for (guint round = 0; round < 500; round++)
  {
    RdmaBulkDesc d[RDMA_BULK_MAX_FIELDS];
    guint n = (guint) g_rand_int_range (r, 1, RDMA_BULK_MAX_FIELDS + 1);
    gsize inline_len = (gsize) g_rand_int_range (r, 0, 300), len;
    guint64 sum = random_descs (r, inline_len, d, n);
    guint32 seq = g_rand_int (r);
    guint8 *m = message_new (inline_len, d, n, seq, &len);
    RdmaBulkTable t;
    GError *error = NULL;

    g_assert_true (rdma_bulk_wire_parse (m, len, MAX_TOTAL, &t, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (t.n, ==, n);
    g_assert_cmpuint (t.seq, ==, seq);
    g_assert_cmpuint (t.inline_len, ==, inline_len);
    g_assert_true (t.inline_data == m + 1);
    g_assert_cmpuint (t.total, ==, inline_len + sum);
    for (guint i = 0; i < n; i++)
    {
      g_assert_cmpuint (t.desc[i].at, ==, d[i].at);
      g_assert_cmpuint (t.desc[i].len, ==, d[i].len);
      g_assert_cmpuint (t.desc[i].addr, ==, d[i].addr);
      g_assert_cmpuint (t.desc[i].rkey, ==, d[i].rkey);
    }
    g_free (m);
  }
  g_rand_free (r);
}

static void
test_plain (void)
{
  static const guint8 plain[] = { RDMA_BULK_PLAIN, 1, 2, 3 };
  RdmaBulkReader rd;
  guint8 out[8];
  GError *error = NULL;

  g_assert_true (rdma_bulk_reader_start (&rd, plain, sizeof plain, MAX_TOTAL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (rd.left, ==, 3);
  g_assert_cmpuint (rdma_bulk_reader_inline (&rd), ==, 3);
  g_assert_cmpuint (rdma_bulk_reader_copy (&rd, out, 2), ==, 2);
  g_assert_cmpuint (rdma_bulk_reader_copy (&rd, out + 2, 5), ==, 1);
  g_assert_cmpmem (out, 3, plain + 1, 3);
  g_assert_cmpuint (rd.left, ==, 0);
  g_assert_true (rd.returned);
  /* an empty message needs no envelope byte: nothing to read */
  g_assert_true (rdma_bulk_reader_start (&rd, plain, 0, MAX_TOTAL, &error));
  g_assert_cmpuint (rd.left, ==, 0);
  /* a plain message over the size is refused by the engine's own check, not here: the
   * reader's total is what Thrift wrote */
}

/* The reader stops copying where the first lent field goes, and knows the whole length. */
static void
test_reader_view (void)
{
  RdmaBulkDesc d[2] = {
    { .at = 10, .len = 5000, .addr = 4096, .rkey = 7 },
    { .at = 10, .len = 6000, .addr = 65536, .rkey = 8 },
  };
  gsize len;
  guint8 *m = message_new (25, d, 2, 3, &len);
  guint8 out[64];
  RdmaBulkReader rd;
  GError *error = NULL;

  g_assert_true (rdma_bulk_reader_start (&rd, m, len, MAX_TOTAL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (rd.left, ==, 25 + 5000 + 6000);
  g_assert_false (rd.returned);
  g_assert_cmpuint (rdma_bulk_reader_inline (&rd), ==, 10);
  g_assert_cmpuint (rdma_bulk_reader_copy (&rd, out, sizeof out), ==, 10);
  g_assert_cmpmem (out, 10, m + 1, 10);
  g_assert_cmpuint (rdma_bulk_reader_inline (&rd), ==, 0);
  g_assert_cmpuint (rd.left, ==, 15 + 5000 + 6000);
  g_free (m);
}

static void
expect_refused (const guint8 *m, gsize len, gsize max_total, gint code, const gchar *what)
{
  RdmaBulkTable t;
  GError *error = NULL;

  if (rdma_bulk_wire_parse (m, len, max_total, &t, &error))
    g_error ("%s: accepted", what);
  g_assert_error (error, RDMA_ENGINE_ERROR, code);
  g_error_free (error);
}

static void
test_malformed (void)
{
  RdmaBulkDesc d[3] = {
    { .at = 2, .len = 100, .addr = 1000, .rkey = 1 },
    { .at = 5, .len = 200, .addr = 2000, .rkey = 2 },
    { .at = 9, .len = 300, .addr = 3000, .rkey = 3 },
  };
  gsize len, table = rdma_bulk_wire_table_size (3);
  guint8 *m = message_new (9, d, 3, 1, &len), *bad;
  RdmaBulkWireDesc *w;
  guint8 unknown[] = { 0x7f, 1, 2 };

  /* every cut of the message */
  for (gsize cut = 1; cut < len; cut++)
  {
    bad = g_memdup2 (m, cut);
    expect_refused (bad, cut, MAX_TOTAL, RDMA_ERR_PROTOCOL, "a cut table");
    g_free (bad);
  }
  expect_refused (unknown, sizeof unknown, MAX_TOTAL, RDMA_ERR_PROTOCOL, "unknown envelope");
  /* over the size once the fields are in */
  expect_refused (m, len, 9 + 600 - 1, RDMA_ERR_TOO_LARGE, "too large");

  /* each corruption of a field of the table */
  for (guint k = 0; k < 8; k++)
  {
    bad = g_memdup2 (m, len);
    w = (RdmaBulkWireDesc *) (bad + len - table);
    switch (k)
    {
    case 0:
      w[1].at = GUINT32_TO_LE (1);
      break; /* out of order */
    case 1:
      w[2].at = GUINT32_TO_LE (10);
      break; /* past the inline bytes */
    case 2:
      w[0].len = 0;
      break; /* empty */
    case 3:
      w[0].addr = GUINT64_TO_LE (G_MAXUINT64 - 10);
      break; /* wraps */
    case 4:
      w[1].reserved = 1;
      break;
    case 5:
      bad[len - 1] ^= 0xff;
      break; /* magic */
    case 6:
      bad[len - 4] = 0;
      bad[len - 3] = 0;
      break; /* n = 0 */
    case 7:
      bad[len - 4] = RDMA_BULK_MAX_FIELDS + 1;
      break; /* n too large */
    }
    expect_refused (bad, len, MAX_TOTAL, RDMA_ERR_PROTOCOL, "a corrupt table");
    g_free (bad);
  }
  /* n larger than the message holds */
  bad = g_memdup2 (m, len);
  bad[len - 4] = RDMA_BULK_MAX_FIELDS;
  expect_refused (bad, len, MAX_TOTAL, RDMA_ERR_PROTOCOL, "n past the start");
  g_free (bad);
  g_free (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/bulk-wire/roundtrip", test_roundtrip);
  g_test_add_func ("/bulk-wire/plain", test_plain);
  g_test_add_func ("/bulk-wire/reader-view", test_reader_view);
  g_test_add_func ("/bulk-wire/malformed", test_malformed);
  return g_test_run ();
}
