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
 * test_hatkv.c: HatKV's parts that need no network: the LMDB store (its calls, its errors,
 * each commit strategy across a close, group commit under concurrent writers), the tuning the
 * generated hint tables give, YCSB's records and zipfian distribution, and the model.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "kv_store.h"
#include "kv_tuning.h"
#include "kv_variant.h"
#include "ycsb_model.h"
#include "ycsb_record.h"
#include "ycsb_zipf.h"

static GByteArray *
text (const gchar *s)
{
  GByteArray *b = g_byte_array_new ();
  g_byte_array_append (b, (const guint8 *) s, strlen (s));
  return b;
}

static gchar *
tmpdir (void)
{
  GError *error = NULL;
  gchar *d = g_dir_make_tmp ("test-hatkv-XXXXXX", &error);
  g_assert_no_error (error);
  return d;
}

static void
rmtree (const gchar *d)
{
  gchar *f1 = g_build_filename (d, "data.mdb", NULL), *f2 = g_build_filename (d, "lock.mdb", NULL);
  g_unlink (f1);
  g_unlink (f2);
  g_rmdir (d);
  g_free (f1);
  g_free (f2);
}

static KvStore *
open_store (const gchar *dir, KvSync sync, guint64 map_size)
{
  KvTuning t = { map_size, 16, sync };
  GError *error = NULL;
  KvStore *s = kv_store_open (dir, &t, &error);
  g_assert_no_error (error);
  g_assert_nonnull (s);
  return s;
}

static void
test_calls (void)
{
  gchar *dir = tmpdir ();
  KvStore *s = open_store (dir, KV_SYNC_DURABLE, 16 << 20);
  GByteArray *k = text ("k1"), *v = text ("value one"), *got = NULL, *empty = g_byte_array_new ();
  GPtrArray *keys = g_ptr_array_new_with_free_func ((GDestroyNotify) g_byte_array_unref);
  GPtrArray *values = g_ptr_array_new_with_free_func ((GDestroyNotify) g_byte_array_unref);
  GPtrArray *many = NULL;
  GError *error = NULL;

  g_assert_true (kv_store_get (s, k, &got, &error));
  g_assert_no_error (error);
  g_assert_null (got); /* missing: TRUE, no value */
  g_assert_true (kv_store_put (s, k, v, &error));
  g_assert_true (kv_store_get (s, k, &got, &error));
  g_assert_cmpmem (got->data, got->len, v->data, v->len);
  g_byte_array_unref (got);

  /* multi_put is all or none: a bad value in the batch leaves the good ones out */
  g_ptr_array_add (keys, text ("m1"));
  g_ptr_array_add (values, text ("one"));
  g_ptr_array_add (keys, text ("m2"));
  g_ptr_array_add (values, g_byte_array_new ());
  g_assert_false (kv_store_put_many (s, keys, values, &error));
  g_assert_error (error, KV_STORE_ERROR, KV_STORE_ERROR_REQUEST);
  g_clear_error (&error);
  g_assert_true (kv_store_get (s, keys->pdata[0], &got, &error));
  g_assert_null (got);
  g_ptr_array_remove_index (values, 1);
  g_ptr_array_add (values, text ("two"));
  g_assert_true (kv_store_put_many (s, keys, values, &error));
  g_ptr_array_add (keys, text ("absent"));
  g_assert_true (kv_store_get_many (s, keys, &many, &error));
  g_assert_cmpuint (many->len, ==, 3);
  g_assert_cmpmem (((GByteArray *) many->pdata[1])->data, ((GByteArray *) many->pdata[1])->len,
                   "two", 3);
  g_assert_cmpuint (((GByteArray *) many->pdata[2])->len, ==, 0);
  g_ptr_array_unref (many);

  /* a batch larger than a call may be */
  {
    GPtrArray *big = g_ptr_array_new_with_free_func ((GDestroyNotify) g_byte_array_unref);
    for (guint i = 0; i <= KV_STORE_MAX_BATCH; i++)
      g_ptr_array_add (big, ycsb_key (i));
    g_assert_false (kv_store_get_many (s, big, &many, &error));
    g_assert_error (error, KV_STORE_ERROR, KV_STORE_ERROR_REQUEST);
    g_assert_null (many);
    g_clear_error (&error);
    g_ptr_array_unref (big);
  }

  /* bad keys: empty, too long */
  g_assert_false (kv_store_put (s, empty, v, &error));
  g_assert_error (error, KV_STORE_ERROR, KV_STORE_ERROR_REQUEST);
  g_clear_error (&error);
  g_byte_array_set_size (empty, KV_STORE_MAX_KEY + 1);
  g_assert_false (kv_store_get (s, empty, &got, &error));
  g_assert_error (error, KV_STORE_ERROR, KV_STORE_ERROR_REQUEST);
  g_clear_error (&error);

  kv_store_close (s);
  rmtree (dir);
  g_free (dir);
  g_byte_array_unref (k);
  g_byte_array_unref (v);
  g_byte_array_unref (empty);
  g_ptr_array_unref (keys);
  g_ptr_array_unref (values);
}

/* A map that fills up gives a clear error, and the store still serves reads. */
static void
test_full (void)
{
  gchar *dir = tmpdir ();
  KvStore *s = open_store (dir, KV_SYNC_NOSYNC, 1 << 20);
  GByteArray *v = g_byte_array_sized_new (4000), *got = NULL;
  GError *error = NULL;
  guint i, stored = 0;

  g_byte_array_set_size (v, 4000);
  memset (v->data, 'x', v->len);
  for (i = 0; i < 10000 && error == NULL; i++)
  {
    GByteArray *k = ycsb_key (i);
    if (kv_store_put (s, k, v, &error))
      stored++;
    g_byte_array_unref (k);
  }
  g_assert_error (error, KV_STORE_ERROR, KV_STORE_ERROR_FULL);
  g_assert_nonnull (strstr (error->message, "--map-size"));
  g_clear_error (&error);
  g_assert_cmpuint (stored, >, 0);
  {
    GByteArray *k = ycsb_key (0);
    g_assert_true (kv_store_get (s, k, &got, &error));
    g_assert_nonnull (got);
    g_byte_array_unref (got);
    g_byte_array_unref (k);
  }
  kv_store_close (s);
  rmtree (dir);
  g_free (dir);
  g_byte_array_unref (v);
}

/* Every strategy keeps its writes across a close and a new open. */
static void
test_reopen (gconstpointer data)
{
  KvSync sync = (KvSync) GPOINTER_TO_INT (data);
  gchar *dir = tmpdir ();
  KvStore *s = open_store (dir, sync, 16 << 20);
  GError *error = NULL;

  for (guint64 i = 0; i < 200; i++)
  {
    GByteArray *k = ycsb_key (i), *v = ycsb_value (i, i + 1);
    g_assert_true (kv_store_put (s, k, v, &error));
    g_byte_array_unref (k);
    g_byte_array_unref (v);
  }
  kv_store_close (s);
  s = open_store (dir, sync, 16 << 20);
  for (guint64 i = 0; i < 200; i++)
  {
    GByteArray *k = ycsb_key (i), *got = NULL;
    guint64 version = 0;
    const gchar *why = NULL;
    g_assert_true (kv_store_get (s, k, &got, &error));
    g_assert_true (ycsb_value_check (got, i, &version, &why));
    g_assert_cmpuint (version, ==, i + 1);
    g_byte_array_unref (k);
    g_byte_array_unref (got);
  }
  kv_store_close (s);
  rmtree (dir);
  g_free (dir);
}

typedef struct
{
  KvStore *store;
  guint first;
} Writer;

static gpointer
writer (gpointer data)
{
  Writer *w = data;

  for (guint i = 0; i < 100; i++)
  {
    GByteArray *k = ycsb_key (w->first + i), *v = ycsb_value (w->first + i, 7);
    GError *error = NULL;
    g_assert_true (kv_store_put (w->store, k, v, &error));
    g_byte_array_unref (k);
    g_byte_array_unref (v);
  }
  return NULL;
}

/* Group commit: 8 writers, every write stored, and fewer commits than writes. */
static void
test_group (void)
{
  gchar *dir = tmpdir ();
  KvStore *s = open_store (dir, KV_SYNC_GROUP, 16 << 20);
  Writer w[8];
  GThread *t[8];
  KvStoreStats st;
  GError *error = NULL;

  for (guint i = 0; i < 8; i++)
  {
    w[i] = (Writer){ s, i * 1000 };
    t[i] = g_thread_new ("writer", writer, &w[i]);
  }
  for (guint i = 0; i < 8; i++)
    g_thread_join (t[i]);
  kv_store_get_stats (s, &st);
  g_assert_cmpuint (st.puts, ==, 800);
  g_assert_cmpuint (st.commits, <, 800);
  g_assert_cmpuint (st.batches_max, >, 1);
  g_test_message ("800 writes in %" G_GUINT64_FORMAT " commits, at most %" G_GUINT64_FORMAT
                  " in one",
                  st.commits, st.batches_max);
  for (guint i = 0; i < 8; i++)
    for (guint j = 0; j < 100; j += 33)
    {
      GByteArray *k = ycsb_key (i * 1000 + j), *got = NULL;
      guint64 version;
      const gchar *why;
      g_assert_true (kv_store_get (s, k, &got, &error));
      g_assert_true (ycsb_value_check (got, i * 1000 + j, &version, &why));
      g_byte_array_unref (got);
      g_byte_array_unref (k);
    }
  kv_store_close (s);
  rmtree (dir);
  g_free (dir);
}

static const ThriftHintSet *
find_set (const KvVariant *v, const gchar *fn, ThriftHintSide side)
{
  for (const ThriftHintSet *const *s = v->hint_sets; *s != NULL; s++)
    if ((*s)->side == side && strcmp ((*s)->function, fn) == 0)
      return *s;
  return NULL;
}

/* The tuning follows the generated hint tables: readers from concurrency, strategy from the
 * writes' goal, map size from the writes' payload sizes. */
static void
test_tuning (void)
{
  const KvVariant *svc = kv_variant_find ("service"), *fn = kv_variant_find ("function");
  const ThriftHintSet *put = find_set (fn, "put", THRIFT_HINT_SIDE_SERVER);
  const ThriftHintSet *mput = find_set (fn, "multi_put", THRIFT_HINT_SIDE_CLIENT);
  KvTuning a, b, c;
  GString *why = g_string_new (NULL);

  g_assert_nonnull (put);
  g_assert_nonnull (mput);
  kv_tuning_from_hints (svc->hint_sets, 1, &a, why);
  kv_tuning_from_hints (fn->hint_sets, 1, &b, NULL);
  kv_tuning_from_hints (fn->hint_sets, 3, &c, NULL);
  g_assert_true (put->set & THRIFT_HINT_HAS_CONCURRENCY);
  g_assert_cmpuint (b.max_readers, ==, put->concurrency + 8);
  g_assert_cmpuint (c.max_readers, ==, 3 * put->concurrency + 8);
  g_assert_cmpint (put->perf_goal, ==, THRIFT_HINT_PERF_GOAL_THROUGHPUT);
  g_assert_cmpint (b.sync, ==, KV_SYNC_GROUP);
  /* the function variant's writes say how large they are; the service's do not */
  g_assert_true (mput->set & THRIFT_HINT_HAS_PAYLOAD_SIZE);
  g_assert_cmpuint (
      b.map_size, ==,
      MIN (mput->payload_size * 2 * 1024 * put->concurrency, G_GUINT64_CONSTANT (64) << 30));
  g_assert_cmpuint (a.map_size, <, b.map_size);
  g_assert_nonnull (strstr (why->str, "no payload_size"));
  g_string_free (why, TRUE);
  /* no hints at all: durable, LMDB's readers */
  {
    const ThriftHintSet *none[] = { NULL };
    kv_tuning_from_hints (none, 1, &a, NULL);
    g_assert_cmpint (a.sync, ==, KV_SYNC_DURABLE);
    g_assert_cmpuint (a.max_readers, ==, 126 + 8);
  }
}

static void
test_records (void)
{
  GHashTable *seen = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                            (GDestroyNotify) g_bytes_unref, NULL);
  GByteArray *v = ycsb_value (42, 9);
  guint64 version;
  const gchar *why = NULL;

  for (guint64 i = 0; i < 20000; i++)
  {
    GByteArray *k = ycsb_key (i);
    g_assert_cmpuint (k->len, ==, YCSB_KEY_LEN);
    g_assert_true (memcmp (k->data, "user", 4) == 0);
    g_hash_table_add (seen, g_byte_array_free_to_bytes (k));
  }
  g_assert_cmpuint (g_hash_table_size (seen), ==, 20000);
  g_hash_table_unref (seen);

  g_assert_cmpuint (v->len, ==, YCSB_FIELDS * YCSB_FIELD_LEN);
  g_assert_true (ycsb_value_check (v, 42, &version, &why));
  g_assert_cmpuint (version, ==, 9);
  g_assert_false (ycsb_value_check (v, 43, &version, &why)); /* another record's */
  v->data[500] ^= 1;
  g_assert_false (ycsb_value_check (v, 42, &version, &why)); /* one bit flipped */
  g_byte_array_set_size (v, 999);
  g_assert_false (ycsb_value_check (v, 42, &version, &why)); /* cut short */
  g_byte_array_unref (v);
}

/* Zipfian: the ranks' frequencies follow 1/rank^0.99 (a rank's share computed here from the
 * definition, not from the generator), and scrambling keeps the frequencies, moving them. */
static void
test_zipf (void)
{
  const guint64 n = 1000, draws = 400000;
  YcsbZipf plain, scrambled;
  guint *count = g_new0 (guint, n), *count_s = g_new0 (guint, n);
  GRand *r = g_rand_new_with_seed (7);
  double zetan = 0;

  ycsb_zipf_init (&plain, n, YCSB_ZIPF_CONSTANT, FALSE);
  ycsb_zipf_init (&scrambled, n, YCSB_ZIPF_CONSTANT, TRUE);
  for (guint64 i = 0; i < draws; i++)
  {
    double u = g_rand_double (r);
    guint64 a = ycsb_zipf_next (&plain, u), b = ycsb_zipf_next (&scrambled, u);
    g_assert_cmpuint (a, <, n);
    g_assert_cmpuint (b, <, n);
    count[a]++;
    count_s[b]++;
    g_assert_cmpuint (b, ==, ycsb_fnv64 (a) % n);
  }
  for (guint64 i = 1; i <= n; i++)
    zetan += 1.0 / pow ((double) i, YCSB_ZIPF_CONSTANT);
  /* Gray's method is exact for the two hottest ranks and approximates the rest (as YCSB's
   * generator does): the hottest two within 5%, the share of the hottest 10 and 100 within
   * 10%, and no rank more popular than the one before it by more than noise */
  for (guint rank = 0; rank < 2; rank++)
  {
    double want = draws / pow (rank + 1.0, YCSB_ZIPF_CONSTANT) / zetan;
    g_test_message ("rank %u: %u draws, zipf says %.0f", rank, count[rank], want);
    g_assert_cmpfloat (fabs (count[rank] - want), <, 0.05 * want);
  }
  for (guint top = 10; top <= 100; top *= 10)
  {
    double want = 0, got = 0;
    for (guint rank = 0; rank < top; rank++)
    {
      want += draws / pow (rank + 1.0, YCSB_ZIPF_CONSTANT) / zetan;
      got += count[rank];
    }
    g_test_message ("hottest %u: %.0f draws, zipf says %.0f", top, got, want);
    g_assert_cmpfloat (fabs (got - want), <, 0.10 * want);
  }
  for (guint rank = 1; rank < 50; rank++)
    g_assert_cmpfloat (count[rank], <, count[rank - 1] * 1.2 + 50);
  /* the hottest record is not record 0 once scrambled */
  {
    guint64 hot = 0;
    for (guint64 i = 1; i < n; i++)
      if (count_s[i] > count_s[hot])
        hot = i;
    g_assert_cmpuint (hot, ==, ycsb_fnv64 (0) % n);
  }
  g_rand_free (r);
  g_free (count);
  g_free (count_s);
}

static void
test_model (void)
{
  YcsbModel *m = ycsb_model_new (100, 10);
  guint64 ns[3] = { 20, 20, 5 }, checks, mismatches;
  gchar *why = NULL;

  ycsb_model_lock (m, ns, 3);                               /* a duplicate is locked once */
  g_assert_true (ycsb_model_check (m, 20, FALSE, 0, NULL)); /* never written */
  g_assert_false (ycsb_model_check (m, 20, TRUE, 3, &why));
  g_assert_nonnull (why);
  g_free (why);
  ycsb_model_written (m, 20, 4, TRUE);
  g_assert_true (ycsb_model_check (m, 20, TRUE, 4, NULL));
  g_assert_false (ycsb_model_check (m, 20, TRUE, 3, &why));
  g_free (why);
  g_assert_false (ycsb_model_check (m, 20, FALSE, 0, &why));
  g_free (why);
  ycsb_model_written (m, 20, 5, FALSE); /* unknown: either write may be there */
  g_assert_true (ycsb_model_check (m, 20, TRUE, 4, NULL));
  g_assert_true (ycsb_model_check (m, 5, TRUE, 99, NULL)); /* not sampled */
  ycsb_model_unlock (m, ns, 3);
  ycsb_model_counts (m, &checks, &mismatches);
  g_assert_cmpuint (checks, ==, 6);
  g_assert_cmpuint (mismatches, ==, 3);
  ycsb_model_free (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/hatkv/store/calls", test_calls);
  g_test_add_func ("/hatkv/store/full", test_full);
  g_test_add_data_func ("/hatkv/store/reopen/durable", GINT_TO_POINTER (KV_SYNC_DURABLE),
                        test_reopen);
  g_test_add_data_func ("/hatkv/store/reopen/group", GINT_TO_POINTER (KV_SYNC_GROUP), test_reopen);
  g_test_add_data_func ("/hatkv/store/reopen/nosync", GINT_TO_POINTER (KV_SYNC_NOSYNC),
                        test_reopen);
  g_test_add_func ("/hatkv/store/group", test_group);
  g_test_add_func ("/hatkv/tuning", test_tuning);
  g_test_add_func ("/hatkv/ycsb/records", test_records);
  g_test_add_func ("/hatkv/ycsb/zipf", test_zipf);
  g_test_add_func ("/hatkv/ycsb/model", test_model);
  return g_test_run ();
}
