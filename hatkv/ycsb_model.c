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

/* ycsb_model.c: the sampled model of the store (see ycsb_model.h). */
#include "config.h"

#include <stdlib.h>

#include "ycsb_model.h"

typedef enum
{
  ABSENT,
  KNOWN,
  UNKNOWN
} State;

typedef struct
{
  GMutex lock;
  State state;
  guint64 version;
} Entry;

struct _YcsbModel
{
  guint64 records;
  guint sample;
  Entry *entries; /* records / sample of them */
  guint64 n_entries;
  gint64 checks, mismatches;
};

YcsbModel *
ycsb_model_new (guint64 records, guint sample)
{
  YcsbModel *m = g_new0 (YcsbModel, 1);

  m->records = records;
  m->sample = sample;
  m->n_entries = sample > 0 ? (records + sample - 1) / sample : 0;
  m->entries = g_new0 (Entry, m->n_entries);
  for (guint64 i = 0; i < m->n_entries; i++)
    g_mutex_init (&m->entries[i].lock);
  return m;
}

void
ycsb_model_free (YcsbModel *m)
{
  if (m == NULL)
    return;
  for (guint64 i = 0; i < m->n_entries; i++)
    g_mutex_clear (&m->entries[i].lock);
  g_free (m->entries);
  g_free (m);
}

static Entry *
entry (YcsbModel *m, guint64 n)
{
  if (m->sample == 0 || n % m->sample != 0 || n / m->sample >= m->n_entries)
    return NULL;
  return &m->entries[n / m->sample];
}

static int
cmp_u64 (const void *a, const void *b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;
  return x < y ? -1 : x > y;
}

/* The sampled records of @ns, sorted, each once: the order every caller locks in. */
static guint
sampled (YcsbModel *m, const guint64 *ns, guint count, guint64 *out)
{
  guint k = 0;

  for (guint i = 0; i < count; i++)
    if (entry (m, ns[i]) != NULL)
      out[k++] = ns[i];
  qsort (out, k, sizeof *out, cmp_u64);
  if (k == 0)
    return 0;
  guint j = 0;
  for (guint i = 1; i < k; i++)
    if (out[i] != out[j])
      out[++j] = out[i];
  return j + 1;
}

void
ycsb_model_lock (YcsbModel *m, const guint64 *ns, guint count)
{
  guint64 *s = g_newa (guint64, count + 1);
  guint k = sampled (m, ns, count, s);

  for (guint i = 0; i < k; i++)
    g_mutex_lock (&entry (m, s[i])->lock);
}

void
ycsb_model_unlock (YcsbModel *m, const guint64 *ns, guint count)
{
  guint64 *s = g_newa (guint64, count + 1);
  guint k = sampled (m, ns, count, s);

  for (guint i = k; i > 0; i--)
    g_mutex_unlock (&entry (m, s[i - 1])->lock);
}

void
ycsb_model_written (YcsbModel *m, guint64 n, guint64 version, gboolean ok)
{
  Entry *e = entry (m, n);

  if (e == NULL)
    return;
  e->state = ok ? KNOWN : UNKNOWN;
  e->version = version;
}

gboolean
ycsb_model_check (YcsbModel *m, guint64 n, gboolean present, guint64 version, gchar **why)
{
  Entry *e = entry (m, n);
  gboolean ok;

  if (e == NULL)
    return TRUE;
  g_atomic_pointer_add (&m->checks, 1);
  switch (e->state)
  {
  case ABSENT:
    ok = !present;
    break;
  case KNOWN:
    ok = present && version == e->version;
    break;
  default:
    ok = TRUE;
    break;
  }
  if (!ok)
  {
    g_atomic_pointer_add (&m->mismatches, 1);
    if (why != NULL)
    {
      gchar *read = present ? g_strdup_printf ("the value of write %" G_GUINT64_FORMAT, version)
                            : g_strdup ("nothing");
      gchar *model = e->state == KNOWN ? g_strdup_printf ("write %" G_GUINT64_FORMAT, e->version)
                                       : g_strdup ("nothing");
      *why = g_strdup_printf ("record %" G_GUINT64_FORMAT ": read %s, the model has %s", n, read,
                              model);
      g_free (read);
      g_free (model);
    }
  }
  return ok;
}

void
ycsb_model_counts (YcsbModel *m, guint64 *checks, guint64 *mismatches)
{
  *checks = (guint64) g_atomic_pointer_get (&m->checks);
  *mismatches = (guint64) g_atomic_pointer_get (&m->mismatches);
}
