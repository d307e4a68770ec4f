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
 * rdma_bulk_msg.h: a Thrift message with lent fields, as ThriftRdma writes and reads it
 * (rdma_bulk.h moves the fields, rdma_bulk_wire.h is the format).
 *
 * Writing: c_glib's protocols hand the transport a pointer to the caller's bytes for each
 * binary or string field (thrift_transport_write), valid until the flush that ends the
 * message.  A write of at least the threshold is not copied: the writer keeps the pointer
 * and where the field goes, and at the flush lends it (rdma_bulk_lend) and appends the table.
 *
 * Reading: the reader serves the message as Thrift wrote it.  Inline bytes are copied out of
 * the received message; a read that reaches a lent field pulls it (RDMA READ) straight into
 * the caller's buffer, whatever the read's size (the binary protocol asks for the whole field
 * in one read_all).  Once every field is pulled, or when the message is released unread, the
 * lender gets its fields back (rdma_bulk_done).
 */
#ifndef _RDMA_BULK_MSG_H
#define _RDMA_BULK_MSG_H

#include <string.h>

#include "rdma_bulk.h"

G_BEGIN_DECLS

/* No field under this many bytes is lent, whatever the threshold says: below it, a READ round
 * trip costs more than the copy. */
#define RDMA_BULK_MIN_THRESHOLD 4096u
/* The "bulk-threshold" default of clients: fields of 16 KiB and more are lent (issue 10); the
 * tests of how each protocol carries whole large messages set it to 0. */
#define RDMA_BULK_DEFAULT_THRESHOLD (16u << 10)
/* Servers' (ThriftServerRdma, ThriftServerHybrid: their accepted connections'): 0, never
 * lend.  A lent field must stay valid until the flush that ends its message, and the
 * processors c_glib's generator writes (stock Thrift's and thrift-hatrpc's alike) unref the
 * result, and so a reply's binary and string fields, before they call write_end and flush:
 * lent, the reader would pull freed memory.  Left at this default, a server stages its
 * replies' fields from RDMA_BULK_DEFAULT_THRESHOLD instead (rdma_bulk_stage.h): one copy,
 * where copying into the message makes two.  A server whose handlers' reply buffers outlive
 * the flush may set it. */
#define RDMA_BULK_SERVER_DEFAULT_THRESHOLD 0u

/* How the fields of a message from the threshold leave. */
typedef enum
{
  RDMA_BULK_LEND,           /* lent (the user set the threshold) */
  RDMA_BULK_LEND_MEASURED,  /* lent or copied, by which measures cheaper (rdma_lend_cost.h):
                               a client's default */
  RDMA_BULK_STAGE_MEASURED, /* staged or copied, likewise: a server's default */
} RdmaBulkWay;
/* Framing a message may add to what Thrift wrote: the envelope byte and a full table. */
#define RDMA_BULK_FRAMING_MAX \
  (1 + RDMA_BULK_MAX_FIELDS * sizeof (RdmaBulkWireDesc) + sizeof (RdmaBulkWireTrailer))

typedef struct
{
  gconstpointer ptr[RDMA_BULK_MAX_FIELDS]; /* (unowned): the caller's bytes, valid until
                                                the flush that ends the message */
  RdmaBulkDesc desc[RDMA_BULK_MAX_FIELDS];
  guint n;
  gsize inline_len; /* inline bytes written (envelope byte not counted) */
  gboolean decided; /* this message's large fields are lent (lends) or copied */
  gboolean lends;
  gboolean staged;        /* ... lent from the stage (rdma_bulk_stage.h), not where they are */
  gboolean measured;      /* ... by measurement (another message may copy what this lends) */
  gboolean ticket_staged; /* the ticket is of the staging book */
  RdmaLendTicket ticket;  /* the last message that chose by measurement, until the next */
} RdmaBulkWriter;         /* zeroed before its first message */

/* Starts a message: the envelope byte into the (begun) transmit buffer; the call of the one
 * before, if it chose by measurement and no reply ended it (a oneway call), is learnt as
 * over. */
gboolean rdma_bulk_writer_begin (RdmaBulkWriter *w, RdmaConn *conn, GError **error);
/* The reply to the last message has been read: its call, if it chose by measurement, is
 * learnt as over (rdma_lend_cost.h).  Nothing if none is open. */
void rdma_bulk_writer_call_over (RdmaBulkWriter *w, RdmaConn *conn);
/* Its call failed, or the connection @conn (nullable: gone) goes: over, and the next message
 * decides again. */
void rdma_bulk_writer_forget (RdmaBulkWriter *w, RdmaConn *conn);
/* Writes @len bytes at @buf: lent (or staged) by @way if @len is at least @threshold (0:
 * never) and the message can lend one more field, else copied into the transmit buffer.  A
 * measured way lends only if lending measures cheaper than copying for the size of the
 * message's first such field (rdma_lend_cost.h).  Staging may wait for the peer's DONE of
 * the message staged before, until @deadline_us. */
gboolean rdma_bulk_writer_write (RdmaBulkWriter *w, RdmaConn *conn, gconstpointer buf, gsize len,
                                 gsize threshold, RdmaBulkWay way, gint64 deadline_us,
                                 GError **error);
/* Before the message is sent: lends its fields and appends their table (nothing if none). */
gboolean rdma_bulk_writer_seal (RdmaBulkWriter *w, RdmaConn *conn, gint64 deadline_us,
                                GError **error);
/* Once the message is sent (or failed): rdma_bulk_settle or rdma_bulk_abandon, and the writer
 * is empty again. */
gboolean rdma_bulk_writer_finish (RdmaBulkWriter *w, RdmaConn *conn, gboolean sent,
                                  gint64 deadline_us, GError **error);

typedef struct
{
  RdmaBulkTable tab;
  gsize ipos;        /* read position in the inline bytes */
  gsize ilimit;      /* where the next lent field goes (tab.inline_len: none left) */
  guint field;       /* the next lent field (tab.n: none left) */
  gsize foff;        /* bytes of it pulled */
  gsize left;        /* bytes of the message not read yet */
  gboolean returned; /* the lender was told (or nothing was lent) */
} RdmaBulkReader;

/* Takes apart the received message (@len bytes at @msg) for reading; a message longer than
 * @max_total as the reader sees it, or malformed, is an error. */
gboolean rdma_bulk_reader_start (RdmaBulkReader *r, const guint8 *msg, gsize len, gsize max_total,
                                 GError **error);

/* Inline bytes that can be copied before the next lent field (or the end). */
static inline gsize
rdma_bulk_reader_inline (const RdmaBulkReader *r)
{
  return r->ilimit - r->ipos;
}

/* Copies up to @len of them. */
static inline gsize
rdma_bulk_reader_copy (RdmaBulkReader *r, void *buf, gsize len)
{
  gsize n = MIN (len, r->ilimit - r->ipos);

  memcpy (buf, r->tab.inline_data + r->ipos, n);
  r->ipos += n;
  r->left -= n;
  return n;
}

/* At a lent field (rdma_bulk_reader_inline () == 0, left > 0): pulls up to @len bytes of it
 * into @buf.  Returns how many, 0 with @error. */
gsize rdma_bulk_reader_pull (RdmaBulkReader *r, RdmaConn *conn, guint8 *buf, gsize len,
                             gint64 deadline_us, GError **error);
/* The message is done with, read or not: the lender gets its fields back. */
gboolean rdma_bulk_reader_finish (RdmaBulkReader *r, RdmaConn *conn, GError **error);

G_END_DECLS

#endif
