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
 * fuzz_bulk_wire.c: a received message's envelope byte and table of lent fields
 * (rdma_bulk_wire.h).  What the parser accepts must be what the reader can walk: inline bytes
 * inside the message, fields in order and in range, the total within the max message size.
 */
#include "config.h"

#include <string.h>

#include "lib/c_glib/transport/rdma/rdma_bulk_wire.h"
#include "test/fuzz/fuzz_common.h"

/* what the inline bytes add up to: reading each lets ASan see where they are */
static volatile guint8 touched;

static void
check_parse (const uint8_t *data, size_t size, gsize max_total)
{
  RdmaBulkTable tab;
  GError *error = NULL;
  gboolean ok = rdma_bulk_wire_parse (data, size, max_total, &tab, &error);
  gsize at = 0, total = 0;

  fuzz_check_outcome ("rdma_bulk_wire_parse", ok, &error);
  if (!ok)
    return;
  /* the inline bytes lie inside the message, after the envelope byte */
  FUZZ_ASSERT (size == 0 || tab.inline_data == data + 1);
  FUZZ_ASSERT (tab.inline_len + (size > 0) + (tab.n ? rdma_bulk_wire_table_size (tab.n) : 0)
               == size);
  for (gsize i = 0; i < tab.inline_len; i++)
    touched += tab.inline_data[i];
  FUZZ_ASSERT (tab.n <= RDMA_BULK_MAX_FIELDS);
  if (tab.n == 0)
    FUZZ_ASSERT (size == 0 || data[0] == RDMA_BULK_PLAIN);
  /* the reader's walk: inline bytes up to each field's place, then the field */
  for (guint i = 0; i < tab.n; i++)
  {
    const RdmaBulkDesc *d = &tab.desc[i];

    FUZZ_ASSERT (d->at >= at && d->at <= tab.inline_len);
    FUZZ_ASSERT (d->len > 0 && d->addr <= G_MAXUINT64 - d->len);
    total += d->at - at + d->len;
    at = d->at;
  }
  total += tab.inline_len - at;
  FUZZ_ASSERT (total == tab.total);
  FUZZ_ASSERT (tab.total <= max_total);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_init ();
  /* the max message size: a small one, a usual one, no limit */
  check_parse (data, size, 4096);
  check_parse (data, size, 1u << 20);
  check_parse (data, size, G_MAXSIZE);
  return 0;
}
