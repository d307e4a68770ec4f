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

/* rdma_bulk_wire.c: the envelope and the table of lent fields (see rdma_bulk_wire.h). */
#include "config.h"

#include <string.h>

#include "rdma_bulk_wire.h"
#include "rdma_status.h"

void
rdma_bulk_wire_write_table (guint8 *dst, const RdmaBulkDesc *desc, guint n, guint32 seq)
{
  RdmaBulkWireTrailer t = {
    .seq = GUINT32_TO_LE (seq),
    .n = GUINT16_TO_LE ((guint16) n),
    .magic = GUINT16_TO_LE (RDMA_BULK_TRAILER_MAGIC),
  };

  for (guint i = 0; i < n; i++)
  {
    RdmaBulkWireDesc w = {
      .at = GUINT32_TO_LE (desc[i].at),
      .len = GUINT32_TO_LE (desc[i].len),
      .addr = GUINT64_TO_LE (desc[i].addr),
      .rkey = GUINT32_TO_LE (desc[i].rkey),
    };
    memcpy (dst + i * sizeof w, &w, sizeof w);
  }
  memcpy (dst + n * sizeof (RdmaBulkWireDesc), &t, sizeof t);
}

static gboolean
garbage (GError **error, const gchar *what, gsize len)
{
  rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                         "garbage framing: %s (a %" G_GSIZE_FORMAT "-byte message)", what, len);
  return FALSE;
}

gboolean
rdma_bulk_wire_parse (const guint8 *msg, gsize len, gsize max_total, RdmaBulkTable *out,
                      GError **error)
{
  RdmaBulkWireTrailer t;
  gsize table, fields = 0;
  guint32 last_at = 0;

  out->n = 0;
  out->seq = 0;
  if (len == 0 || msg[0] == RDMA_BULK_PLAIN)
  {
    /* an empty message needs no envelope: there is nothing in it to read */
    out->inline_data = msg + (len > 0);
    out->inline_len = len - (len > 0);
    out->total = out->inline_len;
    return TRUE;
  }
  if (msg[0] != RDMA_BULK_TABLE)
    return garbage (error, "an unknown envelope byte", len);
  if (len < 1 + sizeof t)
    return garbage (error, "a bulk table cut short", len);
  memcpy (&t, msg + len - sizeof t, sizeof t);
  t.n = GUINT16_FROM_LE (t.n);
  if (GUINT16_FROM_LE (t.magic) != RDMA_BULK_TRAILER_MAGIC || t.n == 0
      || t.n > RDMA_BULK_MAX_FIELDS)
    return garbage (error, "a bulk table with a bad trailer", len);
  table = rdma_bulk_wire_table_size (t.n);
  if (len < 1 + table)
    return garbage (error, "a bulk table longer than its message", len);
  out->inline_data = msg + 1;
  out->inline_len = len - 1 - table;
  out->seq = GUINT32_FROM_LE (t.seq);
  for (guint i = 0; i < t.n; i++)
  {
    RdmaBulkWireDesc w;
    RdmaBulkDesc *d = &out->desc[i];

    memcpy (&w, out->inline_data + out->inline_len + i * sizeof w, sizeof w);
    d->at = GUINT32_FROM_LE (w.at);
    d->len = GUINT32_FROM_LE (w.len);
    d->addr = GUINT64_FROM_LE (w.addr);
    d->rkey = GUINT32_FROM_LE (w.rkey);
    if (w.reserved != 0 || d->len == 0 || d->at < last_at || d->at > out->inline_len
        || d->addr > G_MAXUINT64 - d->len)
      return garbage (error, "a bulk descriptor out of order, empty or out of range", len);
    last_at = d->at;
    fields += d->len;
  }
  out->n = t.n;
  out->total = out->inline_len + fields;
  if (out->total > max_total)
  {
    rdma_status_set_error (error, RDMA_ERR_TOO_LARGE, "receive", 0, -1,
                           "the peer lends fields that make a %" G_GSIZE_FORMAT "-byte message, "
                           "the max message size is %" G_GSIZE_FORMAT,
                           out->total, max_total);
    out->n = 0;
    return FALSE;
  }
  return TRUE;
}
