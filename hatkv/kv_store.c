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

/* kv_store.c: HatKV's LMDB storage and its commit strategies (see kv_store.h). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>
#include <lmdb.h>

#include "kv_store.h"

/* the domain is spelled out as it is, not an expression */
/* clang-format off */
G_DEFINE_QUARK (kv-store-error-quark, kv_store_error)
/* clang-format on */

/* A write waiting for the group commit that will carry it. */
typedef struct
{
  const GPtrArray *keys, *values;
  gboolean done;
  GError *error;
} GroupWrite;

struct _KvStore
{
  MDB_env *env;
  MDB_dbi dbi;
  KvTuning tuning;
  gchar *path;

  GMutex lock; /* the group queue and the stats */
  GCond cond;
  GPtrArray *queue;    /* GroupWrite waiting for a commit */
  gboolean committing; /* a leader is committing a batch */
  KvStoreStats stats;
};

static const gchar *const sync_names[] = { "durable", "group", "nosync" };

const gchar *
kv_sync_name (KvSync sync)
{
  return (guint) sync < G_N_ELEMENTS (sync_names) ? sync_names[sync] : NULL;
}

gboolean
kv_sync_parse (const gchar *text, KvSync *out)
{
  for (guint i = 0; i < G_N_ELEMENTS (sync_names); i++)
    if (g_strcmp0 (text, sync_names[i]) == 0)
    {
      *out = (KvSync) i;
      return TRUE;
    }
  return FALSE;
}

/* An LMDB return code as a GError; @what says what was being done. */
static gboolean
lmdb_failed (KvStore *store, int rc, const gchar *what, GError **error)
{
  if (rc == MDB_MAP_FULL)
    g_set_error (error, KV_STORE_ERROR, KV_STORE_ERROR_FULL,
                 "%s: the store is full (map size %" G_GUINT64_FORMAT " bytes); restart the "
                 "server with a larger --map-size",
                 what, store->tuning.map_size);
  else if (rc == MDB_READERS_FULL)
    g_set_error (error, KV_STORE_ERROR, KV_STORE_ERROR_READERS,
                 "%s: more than %u reads at once (max readers); restart the server with a "
                 "larger --max-readers or concurrency hint",
                 what, store->tuning.max_readers);
  else
    g_set_error (error, KV_STORE_ERROR, KV_STORE_ERROR_LMDB, "%s: %s", what, mdb_strerror (rc));
  return FALSE;
}

KvStore *
kv_store_open (const gchar *path, const KvTuning *tuning, GError **error)
{
  KvStore *store = g_new0 (KvStore, 1);
  unsigned int flags = MDB_NOTLS | (tuning->sync == KV_SYNC_NOSYNC ? MDB_NOSYNC : 0);
  MDB_txn *txn = NULL;
  MDB_envinfo info;
  int rc;

  store->tuning = *tuning;
  store->path = g_strdup (path);
  g_mutex_init (&store->lock);
  g_cond_init (&store->cond);
  store->queue = g_ptr_array_new ();

  if (g_mkdir_with_parents (path, 0775) != 0)
  {
    g_set_error (error, KV_STORE_ERROR, KV_STORE_ERROR_LMDB, "cannot make %s: %s", path,
                 g_strerror (errno));
    kv_store_close (store);
    return NULL;
  }
  if ((rc = mdb_env_create (&store->env)) != 0
      || (rc = mdb_env_set_mapsize (store->env, tuning->map_size)) != 0
      || (rc = mdb_env_set_maxreaders (store->env, tuning->max_readers)) != 0
      || (rc = mdb_env_open (store->env, path, flags, 0664)) != 0)
  {
    gchar *what = g_strdup_printf ("cannot open the store in %s", path);
    lmdb_failed (store, rc, what, error);
    g_free (what);
    kv_store_close (store);
    return NULL;
  }
  if ((rc = mdb_txn_begin (store->env, NULL, 0, &txn)) != 0
      || (rc = mdb_dbi_open (txn, NULL, 0, &store->dbi)) != 0 || (rc = mdb_txn_commit (txn)) != 0)
  {
    if (txn != NULL && rc != 0)
      mdb_txn_abort (txn);
    lmdb_failed (store, rc, "cannot open the store's database", error);
    kv_store_close (store);
    return NULL;
  }
  if (mdb_env_info (store->env, &info) == 0)
    store->tuning.map_size = info.me_mapsize;
  return store;
}

void
kv_store_close (KvStore *store)
{
  if (store == NULL)
    return;
  if (store->env != NULL)
  {
    mdb_env_sync (store->env, 1);
    mdb_env_close (store->env);
  }
  g_ptr_array_unref (store->queue);
  g_cond_clear (&store->cond);
  g_mutex_clear (&store->lock);
  g_free (store->path);
  g_free (store);
}

static gboolean
read_begin (KvStore *store, MDB_txn **txn, GError **error)
{
  int rc = mdb_txn_begin (store->env, NULL, MDB_RDONLY, txn);
  return rc == 0 || lmdb_failed (store, rc, "cannot begin a read", error);
}

static gboolean
check_key (const GByteArray *key, GError **error)
{
  if (key == NULL || key->len == 0 || key->len > KV_STORE_MAX_KEY)
  {
    g_set_error (error, KV_STORE_ERROR, KV_STORE_ERROR_REQUEST,
                 "a key must be 1 to %d bytes, not %u", KV_STORE_MAX_KEY,
                 key != NULL ? key->len : 0);
    return FALSE;
  }
  return TRUE;
}

/* mdb_get of @key into a new array (NULL if missing). */
static gboolean
read_one (KvStore *store, MDB_txn *txn, const GByteArray *key, GByteArray **value, GError **error)
{
  MDB_val k = { key->len, key->data }, v;
  int rc = mdb_get (txn, store->dbi, &k, &v);

  *value = NULL;
  if (rc == MDB_NOTFOUND)
    return TRUE;
  if (rc != 0)
    return lmdb_failed (store, rc, "cannot read", error);
  *value = g_byte_array_sized_new (v.mv_size);
  g_byte_array_append (*value, v.mv_data, v.mv_size);
  return TRUE;
}

gboolean
kv_store_get (KvStore *store, const GByteArray *key, GByteArray **value, GError **error)
{
  MDB_txn *txn;
  gboolean ok;

  *value = NULL;
  if (!check_key (key, error) || !read_begin (store, &txn, error))
    return FALSE;
  ok = read_one (store, txn, key, value, error);
  mdb_txn_abort (txn);
  g_mutex_lock (&store->lock);
  store->stats.gets++;
  g_mutex_unlock (&store->lock);
  return ok;
}

gboolean
kv_store_get_many (KvStore *store, const GPtrArray *keys, GPtrArray **values, GError **error)
{
  MDB_txn *txn;
  gboolean ok = TRUE;

  *values = NULL;
  if (keys->len > KV_STORE_MAX_BATCH)
  {
    g_set_error (error, KV_STORE_ERROR, KV_STORE_ERROR_REQUEST,
                 "a read takes at most %d keys, not %u", KV_STORE_MAX_BATCH, keys->len);
    return FALSE;
  }
  for (guint i = 0; i < keys->len; i++)
    if (!check_key (keys->pdata[i], error))
      return FALSE;
  if (!read_begin (store, &txn, error))
    return FALSE;
  *values = g_ptr_array_new_with_free_func ((GDestroyNotify) g_byte_array_unref);
  for (guint i = 0; ok && i < keys->len; i++)
  {
    GByteArray *v = NULL;
    ok = read_one (store, txn, keys->pdata[i], &v, error);
    g_ptr_array_add (*values, v != NULL ? v : g_byte_array_new ());
  }
  mdb_txn_abort (txn);
  if (!ok)
    g_clear_pointer (values, g_ptr_array_unref);
  g_mutex_lock (&store->lock);
  store->stats.gets += keys->len;
  g_mutex_unlock (&store->lock);
  return ok;
}

static gboolean
check_write (const GPtrArray *keys, const GPtrArray *values, GError **error)
{
  if (keys == NULL || values == NULL || keys->len != values->len || keys->len == 0
      || keys->len > KV_STORE_MAX_BATCH)
  {
    g_set_error (error, KV_STORE_ERROR, KV_STORE_ERROR_REQUEST,
                 "a write takes 1 to %d keys and as many values, not %u keys and %u values",
                 KV_STORE_MAX_BATCH, keys != NULL ? keys->len : 0,
                 values != NULL ? values->len : 0);
    return FALSE;
  }
  for (guint i = 0; i < keys->len; i++)
  {
    const GByteArray *v = values->pdata[i];
    if (!check_key (keys->pdata[i], error))
      return FALSE;
    if (v == NULL || v->len == 0)
    {
      g_set_error (error, KV_STORE_ERROR, KV_STORE_ERROR_REQUEST,
                   "value %u is empty: HatKV stores no empty values", i);
      return FALSE;
    }
  }
  return TRUE;
}

/* The mdb_put of one write into @txn. */
static int
apply (KvStore *store, MDB_txn *txn, const GPtrArray *keys, const GPtrArray *values)
{
  for (guint i = 0; i < keys->len; i++)
  {
    const GByteArray *key = keys->pdata[i], *value = values->pdata[i];
    MDB_val k = { key->len, key->data }, v = { value->len, value->data };
    int rc = mdb_put (txn, store->dbi, &k, &v, 0);
    if (rc != 0)
      return rc;
  }
  return 0;
}

/* Commits @writes (GroupWrite) in one transaction; with sync unless MDB_NOSYNC. */
static gboolean
commit (KvStore *store, GroupWrite *const *writes, guint n, GError **error)
{
  MDB_txn *txn;
  guint64 keys = 0;
  int rc = mdb_txn_begin (store->env, NULL, 0, &txn);

  if (rc != 0)
    return lmdb_failed (store, rc, "cannot begin a write", error);
  for (guint i = 0; rc == 0 && i < n; i++)
  {
    rc = apply (store, txn, writes[i]->keys, writes[i]->values);
    keys += writes[i]->keys->len;
  }
  if (rc != 0)
  {
    mdb_txn_abort (txn);
    return lmdb_failed (store, rc, "cannot write", error);
  }
  if ((rc = mdb_txn_commit (txn)) != 0)
    return lmdb_failed (store, rc, "cannot commit", error);
  g_mutex_lock (&store->lock);
  store->stats.puts += keys;
  store->stats.commits++;
  store->stats.batches_max = MAX (store->stats.batches_max, n);
  g_mutex_unlock (&store->lock);
  return TRUE;
}

/* Group commit without a thread of its own: the first writer to find no commit running
 * takes the whole queue and commits it; the others wait for the commit that carried
 * theirs. */
static gboolean
group_write (KvStore *store, GroupWrite *w, GError **error)
{
  g_mutex_lock (&store->lock);
  g_ptr_array_add (store->queue, w);
  while (!w->done)
  {
    if (!store->committing)
    {
      GPtrArray *batch = store->queue;
      GError *e = NULL;
      gboolean ok;

      store->queue = g_ptr_array_new ();
      store->committing = TRUE;
      g_mutex_unlock (&store->lock);
      ok = commit (store, (GroupWrite *const *) batch->pdata, batch->len, &e);
      g_mutex_lock (&store->lock);
      for (guint i = 0; i < batch->len; i++)
      {
        GroupWrite *b = batch->pdata[i];
        b->done = TRUE;
        if (!ok)
          b->error = g_error_copy (e);
      }
      g_clear_error (&e);
      g_ptr_array_unref (batch);
      store->committing = FALSE;
      g_cond_broadcast (&store->cond);
    }
    else
      g_cond_wait (&store->cond, &store->lock);
  }
  g_mutex_unlock (&store->lock);
  if (w->error != NULL)
  {
    g_propagate_error (error, w->error);
    return FALSE;
  }
  return TRUE;
}

gboolean
kv_store_put_many (KvStore *store, const GPtrArray *keys, const GPtrArray *values, GError **error)
{
  GroupWrite w = { keys, values, FALSE, NULL };
  GroupWrite *one = &w;

  if (!check_write (keys, values, error))
    return FALSE;
  if (store->tuning.sync == KV_SYNC_GROUP)
    return group_write (store, &w, error);
  return commit (store, &one, 1, error);
}

gboolean
kv_store_put (KvStore *store, const GByteArray *key, const GByteArray *value, GError **error)
{
  GPtrArray keys = { (gpointer *) &key, 1 }, values = { (gpointer *) &value, 1 };
  return kv_store_put_many (store, &keys, &values, error);
}

void
kv_store_get_stats (KvStore *store, KvStoreStats *out)
{
  g_mutex_lock (&store->lock);
  *out = store->stats;
  g_mutex_unlock (&store->lock);
}

void
kv_store_get_tuning (KvStore *store, KvTuning *out)
{
  *out = store->tuning;
}
