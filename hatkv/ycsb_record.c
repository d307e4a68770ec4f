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

/* ycsb_record.c: YCSB keys and self-checking values (see ycsb_record.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ycsb_record.h"

#define HEADER 16

guint64
ycsb_fnv64 (guint64 v)
{
  guint64 h = G_GUINT64_CONSTANT (0xcbf29ce484222325);

  for (int i = 0; i < 8; i++)
  {
    h ^= (v >> (8 * i)) & 0xff;
    h *= G_GUINT64_CONSTANT (0x100000001b3);
  }
  return h;
}

GByteArray *
ycsb_key (guint64 n)
{
  gchar text[YCSB_KEY_LEN + 1];
  GByteArray *k = g_byte_array_sized_new (YCSB_KEY_LEN);

  g_snprintf (text, sizeof text, "user%020" G_GUINT64_FORMAT, ycsb_fnv64 (n));
  g_byte_array_append (k, (const guint8 *) text, YCSB_KEY_LEN);
  return k;
}

static void
put64 (guint8 *p, guint64 v)
{
  for (int i = 0; i < 8; i++)
    p[i] = (guint8) (v >> (8 * i));
}

static guint64
get64 (const guint8 *p)
{
  guint64 v = 0;
  for (int i = 0; i < 8; i++)
    v |= (guint64) p[i] << (8 * i);
  return v;
}

/* The pattern after the header: xorshift64 from the record and version. */
static void
pattern (guint8 *out, gsize len, guint64 n, guint64 version)
{
  guint64 x = ycsb_fnv64 (n) ^ (version * G_GUINT64_CONSTANT (0x9e3779b97f4a7c15)) ^ 1;

  for (gsize i = 0; i < len; i++)
  {
    if (i % 8 == 0)
    {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
    }
    out[i] = (guint8) (x >> (8 * (i % 8)));
  }
}

GByteArray *
ycsb_value (guint64 n, guint64 version)
{
  GByteArray *v = g_byte_array_sized_new (YCSB_VALUE_LEN);

  g_byte_array_set_size (v, YCSB_VALUE_LEN);
  put64 (v->data, n);
  put64 (v->data + 8, version);
  pattern (v->data + HEADER, YCSB_VALUE_LEN - HEADER, n, version);
  return v;
}

gboolean
ycsb_value_check (const GByteArray *value, guint64 n, guint64 *version, const gchar **why)
{
  guint8 expect[YCSB_VALUE_LEN - HEADER];

  if (value == NULL || value->len != YCSB_VALUE_LEN)
  {
    *why = "not a 1,000-byte value";
    return FALSE;
  }
  if (get64 (value->data) != n)
  {
    *why = "the value of another record";
    return FALSE;
  }
  *version = get64 (value->data + 8);
  pattern (expect, sizeof expect, n, *version);
  if (*version == 0 || memcmp (expect, value->data + HEADER, sizeof expect) != 0)
  {
    *why = "damaged: its bytes are not the ones its write put there";
    return FALSE;
  }
  return TRUE;
}
