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
 * kv_store.h: HatKV's storage, one LMDB environment shared by every variant a server serves.
 *
 * Reads take a read-only transaction each (MDB_NOTLS: a reader slot belongs to the
 * transaction, not to the pool thread that happened to run it), a MultiGET one for its whole
 * batch, so its values are one snapshot.  Writes follow the commit strategy (KvSync):
 *
 *   durable  every PUT or MultiPUT commits its own transaction, synced to disk before it is
 *            acknowledged
 *   group    PUTs that arrive while a commit is running wait and go together in the next
 *            transaction, one sync for all; each is acknowledged after that sync (durable,
 *            and the sync is shared by concurrent writers)
 *   nosync   every write commits its own transaction without a sync (MDB_NOSYNC): it
 *            survives the server process's death (the kernel has the pages), not the
 *            machine's; the least CPU and I/O per write
 *
 * A MultiPUT is atomic in every strategy.  Errors are in KV_STORE_ERROR.
 */
#ifndef _KV_STORE_H
#define _KV_STORE_H

#include <glib.h>

G_BEGIN_DECLS

#define KV_STORE_ERROR (kv_store_error_quark ())
GQuark kv_store_error_quark (void);

typedef enum
{
  KV_STORE_ERROR_LMDB,    /* LMDB failed (the message has mdb_strerror) */
  KV_STORE_ERROR_FULL,    /* the map size is used up */
  KV_STORE_ERROR_READERS, /* more concurrent readers than max_readers */
  KV_STORE_ERROR_REQUEST  /* a bad key, value or batch */
} KvStoreError;

typedef enum
{
  KV_SYNC_DURABLE,
  KV_SYNC_GROUP,
  KV_SYNC_NOSYNC
} KvSync;

/* "durable", "group", "nosync"; NULL for anything else. */
const gchar *kv_sync_name (KvSync sync);
gboolean kv_sync_parse (const gchar *text, KvSync *out);

typedef struct
{
  guint64 map_size;  /* bytes of the memory map (LMDB's mapsize) */
  guint max_readers; /* concurrent read transactions */
  KvSync sync;
} KvTuning;

/* What a store has done so far (commits and syncs show what group commit saves). */
typedef struct
{
  guint64 gets, puts;  /* keys read and written */
  guint64 commits;     /* write transactions committed */
  guint64 batches_max; /* the most writes one commit carried */
} KvStoreStats;

typedef struct _KvStore KvStore;

/* The longest key LMDB takes (mdb_env_get_maxkeysize: 511 by default). */
#define KV_STORE_MAX_KEY 511
/* The most keys one MultiGET or MultiPUT takes. */
#define KV_STORE_MAX_BATCH 4096

/* Opens (creating it if need be) the environment in directory @path with @tuning; NULL with
 * @error if it cannot.  The map size and readers of an existing environment are set anew. */
KvStore *kv_store_open (const gchar *path, const KvTuning *tuning, GError **error);

/* Closes @store (NULL is fine); its writes are synced first, whatever the strategy. */
void kv_store_close (KvStore *store);

/* The value of @key: TRUE with *@value a new array, TRUE with *@value NULL when the store
 * does not have it, FALSE with @error. */
gboolean kv_store_get (KvStore *store, const GByteArray *key, GByteArray **value, GError **error);

/* The values of @keys (GByteArray each, at most KV_STORE_MAX_BATCH) from one snapshot:
 * *@values a new array of new arrays, an empty one for a missing key. */
gboolean kv_store_get_many (KvStore *store, const GPtrArray *keys, GPtrArray **values,
                            GError **error);

/* Stores @values[i] under @keys[i], all or none, and returns once the strategy holds them
 * (see above).  Keys must be 1 to KV_STORE_MAX_KEY bytes and values not empty; the arrays
 * the same length, 1 to KV_STORE_MAX_BATCH. */
gboolean kv_store_put_many (KvStore *store, const GPtrArray *keys, const GPtrArray *values,
                            GError **error);

/* One key and value: kv_store_put_many of one. */
gboolean kv_store_put (KvStore *store, const GByteArray *key, const GByteArray *value,
                       GError **error);

void kv_store_get_stats (KvStore *store, KvStoreStats *out);

/* The tuning the store runs with (after LMDB rounded the map size). */
void kv_store_get_tuning (KvStore *store, KvTuning *out);

G_END_DECLS

#endif
