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
 * ycsb_record.h: YCSB's core workload records as HatKV stores them.  A key is "user" and the
 * 64-bit FNV-1a hash of the record number in 20 decimal digits: 24 bytes, spread over the key
 * space as YCSB's hashed insert order spreads them.  A value is 10 fields of 100 bytes; it
 * starts with the record number and a version (8 bytes each, little-endian) and the rest is
 * a pattern of both, so a value can be checked on its own: that it is whole and belongs to
 * its key, and which write made it.
 */
#ifndef _YCSB_RECORD_H
#define _YCSB_RECORD_H

#include <glib.h>

G_BEGIN_DECLS

#define YCSB_KEY_LEN 24
#define YCSB_FIELDS 10
#define YCSB_FIELD_LEN 100
#define YCSB_VALUE_LEN (YCSB_FIELDS * YCSB_FIELD_LEN)

/* 64-bit FNV-1a of the 8 bytes of @v (little-endian), as YCSB's Utils.fnvhash64 hashes. */
guint64 ycsb_fnv64 (guint64 v);

/* The key of record @n. */
GByteArray *ycsb_key (guint64 n);

/* The value of record @n as written by the write numbered @version (>= 1). */
GByteArray *ycsb_value (guint64 n, guint64 version);

/* TRUE if @value is a whole value of record @n; *@version gets the write that made it.  FALSE
 * with the reason in @why (static text) otherwise. */
gboolean ycsb_value_check (const GByteArray *value, guint64 n, guint64 *version, const gchar **why);

G_END_DECLS

#endif
