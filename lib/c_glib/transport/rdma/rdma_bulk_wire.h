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
 * rdma_bulk_wire.h: how a message that lends large fields looks on the wire (bulk transfer,
 * rdma_bulk.h).  Every message ThriftRdma sends starts with one envelope byte:
 *
 *   RDMA_BULK_PLAIN   the rest is the message, as Thrift wrote it
 *   RDMA_BULK_TABLE   the rest is the message's inline bytes (what Thrift wrote, less the
 *                     fields lent), then one RdmaBulkWireDesc per field lent, then an
 *                     RdmaBulkWireTrailer
 *
 * The table goes at the end so that the inline bytes are written into the transmit buffer as
 * Thrift writes them (no move when a field turns out to be lent).  A descriptor says where its
 * field goes in the inline bytes (`at`, fields in order) and where the reader pulls it from
 * (address, key: a memory window over exactly those bytes).  The reader sees the fields in
 * place: the message it reads is inline[0, at_0) field_0 inline[at_0, at_1) field_1 ...
 *
 * Everything from the peer is checked before use: lengths that disagree, descriptors out of
 * order or past the inline bytes, empty fields, a message longer than the max message size
 * once the fields are in: a protocol error, never a crash.
 */
#ifndef _RDMA_BULK_WIRE_H
#define _RDMA_BULK_WIRE_H

#include <glib.h>

G_BEGIN_DECLS

enum
{
  RDMA_BULK_PLAIN = 0x00,
  RDMA_BULK_TABLE = 0x01
};

/* Fields one message may lend; the rest of a message with more are copied. */
#define RDMA_BULK_MAX_FIELDS 16
#define RDMA_BULK_TRAILER_MAGIC 0xb1c5

/* Little-endian on the wire. */
typedef struct __attribute__ ((packed))
{
  guint32 at;       /* offset in the inline bytes where the field goes */
  guint32 len;      /* the field's bytes (> 0) */
  guint64 addr;     /* where the reader reads them */
  guint32 rkey;     /* the memory window's key */
  guint32 reserved; /* 0 */
} RdmaBulkWireDesc;
G_STATIC_ASSERT (sizeof (RdmaBulkWireDesc) == 24);

typedef struct __attribute__ ((packed))
{
  guint32 seq;   /* the sender's number of the message (the reader's DONE names it) */
  guint16 n;     /* descriptors before the trailer (1..RDMA_BULK_MAX_FIELDS) */
  guint16 magic; /* RDMA_BULK_TRAILER_MAGIC */
} RdmaBulkWireTrailer;
G_STATIC_ASSERT (sizeof (RdmaBulkWireTrailer) == 8);

/* A descriptor in host order. */
typedef struct
{
  guint32 at;
  guint32 len;
  guint64 addr;
  guint32 rkey;
} RdmaBulkDesc;

/* A received message, taken apart: its inline bytes and the fields it lends. */
typedef struct
{
  const guint8 *inline_data; /* (unowned): in the received message */
  gsize inline_len;
  guint32 seq;
  guint n; /* 0: a plain message */
  RdmaBulkDesc desc[RDMA_BULK_MAX_FIELDS];
  gsize total; /* the message as the reader sees it: inline bytes
                                            and fields */
} RdmaBulkTable;

/* Bytes a table of @n descriptors adds after the inline bytes. */
static inline gsize
rdma_bulk_wire_table_size (guint n)
{
  return n * sizeof (RdmaBulkWireDesc) + sizeof (RdmaBulkWireTrailer);
}

/* Writes the table of @n (1..RDMA_BULK_MAX_FIELDS) descriptors, rdma_bulk_wire_table_size (n)
 * bytes, at @dst. */
void rdma_bulk_wire_write_table (guint8 *dst, const RdmaBulkDesc *desc, guint n, guint32 seq);

/* Takes apart the @len bytes of a received message (envelope byte first); the fields and
 * inline bytes together may not pass @max_total.  FALSE with @error (RDMA_ENGINE_ERROR,
 * RDMA_ERR_PROTOCOL or RDMA_ERR_TOO_LARGE) for anything malformed. */
gboolean rdma_bulk_wire_parse (const guint8 *msg, gsize len, gsize max_total, RdmaBulkTable *out,
                               GError **error);

G_END_DECLS

#endif
