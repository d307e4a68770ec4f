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

/* rdma_bulk_msg.c: writing and reading messages with lent fields (see rdma_bulk_msg.h). */
#include "config.h"

#include "rdma_bulk_msg.h"

gboolean
rdma_bulk_writer_begin (RdmaBulkWriter *w, RdmaConn *conn, GError **error)
{
  static const guint8 plain = RDMA_BULK_PLAIN;

  /* a message that staged fields and was never sent (its write failed) leaves the stage */
  if (w->n > 0 && w->staged)
    rdma_bulk_stage_sent (conn, FALSE);
  w->n = 0;
  w->inline_len = 0;
  w->decided = FALSE;
  rdma_bulk_writer_call_over (w, conn);
  return rdma_conn_tx_frame (conn, &plain, 1, error);
}

void
rdma_bulk_writer_call_over (RdmaBulkWriter *w, RdmaConn *conn)
{
  if (w->ticket.open)
    rdma_lend_cost_end (rdma_bulk_lend_cost (conn, w->ticket_staged), &w->ticket,
                        g_get_monotonic_time ());
}

void
rdma_bulk_writer_forget (RdmaBulkWriter *w, RdmaConn *conn)
{
  if (conn != NULL)
    rdma_bulk_writer_call_over (w, conn); /* (its time is no sample of its own) */
  w->ticket.open = FALSE;
  w->decided = FALSE;
}

/* Whether the message's large fields are lent: decided at its first (@len bytes). */
static gboolean
lends (RdmaBulkWriter *w, RdmaConn *conn, gsize len, RdmaBulkWay way)
{
  if (!w->decided)
  {
    gboolean staged = way == RDMA_BULK_STAGE_MEASURED;
    RdmaLendCost *cost = rdma_bulk_lend_cost (conn, staged);

    w->decided = TRUE;
    w->lends = TRUE;
    w->staged = staged;
    w->measured = way != RDMA_BULK_LEND && cost != NULL;
    if (w->measured && !w->ticket.open)
      w->ticket_staged = staged; /* (an open ticket is ended, with its book, before) */
    /* a connection's first calls make its ring and registrations, not its typical ones: they
     * take the way in use and are not learnt (at 16 clients the device's first run of copies
     * fell on them, and copying measured dear for the next runs) */
    if (w->measured && rdma_conn_stats (conn)->messages_sent < RDMA_LEND_COST_WARM)
      w->lends = !rdma_lend_cost_copies (cost, len);
    else if (w->measured)
      w->lends = rdma_lend_cost_choose (cost, len, g_get_monotonic_time (), &w->ticket);
  }
  return w->lends;
}

/* Stages the field; FALSE with @error unset: the stage cannot hold it, copy it. */
static gboolean
stage (RdmaBulkWriter *w, RdmaConn *conn, gconstpointer buf, gsize len, gint64 deadline_us,
       GError **error)
{
  RdmaBulkDesc d = { .at = (guint32) w->inline_len };

  if (!rdma_bulk_stage_copy (conn, rdma_bulk_stage_of (conn), buf, len, &d, deadline_us, error))
    return FALSE;
  w->ptr[w->n] = NULL; /* (the stage has the bytes) */
  w->desc[w->n] = d;
  w->n++;
  return TRUE;
}

gboolean
rdma_bulk_writer_write (RdmaBulkWriter *w, RdmaConn *conn, gconstpointer buf, gsize len,
                        gsize threshold, RdmaBulkWay way, gint64 deadline_us, GError **error)
{
  GError *e = NULL;

  if (threshold > 0 && len >= MAX (threshold, RDMA_BULK_MIN_THRESHOLD) && len <= G_MAXUINT32
      && w->n < RDMA_BULK_MAX_FIELDS && w->inline_len <= G_MAXUINT32)
  {
    if (!rdma_bulk_can_lend (conn))
    {
      /* a device without type-2 memory windows: copied as without bulk transfer, which the
       * call does not notice; the counter tells */
      rdma_conn_stats (conn)->bulk_not_lent++;
    }
    else if (!lends (w, conn, len, way))
    {
      rdma_conn_stats (conn)->bulk_copied++;
    }
    else if (w->staged)
    {
      if (stage (w, conn, buf, len, deadline_us, &e))
        return TRUE;
      if (e != NULL)
      {
        g_propagate_error (error, e);
        return FALSE;
      }
      /* refused by the budget (counted): copied */
    }
    else
    {
      w->ptr[w->n] = buf;
      w->desc[w->n] = (RdmaBulkDesc){ .at = (guint32) w->inline_len, .len = (guint32) len };
      w->n++;
      return TRUE;
    }
  }
  if (!rdma_conn_tx_append (conn, buf, len, error))
    return FALSE;
  w->inline_len += len;
  return TRUE;
}

gboolean
rdma_bulk_writer_seal (RdmaBulkWriter *w, RdmaConn *conn, gint64 deadline_us, GError **error)
{
  guint8 table[RDMA_BULK_FRAMING_MAX];
  gsize may_copy = 0;

  for (guint i = 0; i < w->n && w->decided && w->measured; i++)
    may_copy += w->desc[i].len;
  rdma_conn_tx_may_copy (conn, may_copy);
  if (w->n == 0)
    return TRUE;
  if (w->staged
      && !rdma_bulk_stage_seal (conn, rdma_bulk_stage_of (conn), w->desc, w->n, deadline_us, error))
    return FALSE;
  for (guint i = 0; i < w->n && !w->staged; i++)
  {
    guint32 at = w->desc[i].at;
    if (!rdma_bulk_lend (conn, w->ptr[i], w->desc[i].len, &w->desc[i], deadline_us, error))
      return FALSE;
    w->desc[i].at = at;
  }
  rdma_bulk_wire_write_table (table, w->desc, w->n, rdma_bulk_seq (conn));
  if (!rdma_conn_tx_frame (conn, table, rdma_bulk_wire_table_size (w->n), error))
    return FALSE;
  rdma_conn_tx_data (conn)[0] = RDMA_BULK_TABLE;
  return TRUE;
}

gboolean
rdma_bulk_writer_finish (RdmaBulkWriter *w, RdmaConn *conn, gboolean sent, gint64 deadline_us,
                         GError **error)
{
  gboolean ok = TRUE;

  if (w->n > 0 && w->staged)
  {
    /* the stage is this connection's own: the flush need not wait for the DONE */
    rdma_bulk_stage_sent (conn, sent);
  }
  else if (w->n > 0)
  {
    if (sent)
      ok = rdma_bulk_settle (conn, deadline_us, error);
    else
      rdma_bulk_abandon (conn);
  }
  w->n = 0;
  w->inline_len = 0;
  return ok;
}

static void
next_field (RdmaBulkReader *r)
{
  r->foff = 0;
  r->ilimit = r->field < r->tab.n ? r->tab.desc[r->field].at : r->tab.inline_len;
}

gboolean
rdma_bulk_reader_start (RdmaBulkReader *r, const guint8 *msg, gsize len, gsize max_total,
                        GError **error)
{
  if (!rdma_bulk_wire_parse (msg, len, max_total, &r->tab, error))
  {
    /* nothing to read, nothing to give back */
    memset (r, 0, sizeof *r);
    r->returned = TRUE;
    return FALSE;
  }
  r->ipos = 0;
  r->field = 0;
  r->left = r->tab.total;
  r->returned = r->tab.n == 0;
  next_field (r);
  return TRUE;
}

gsize
rdma_bulk_reader_pull (RdmaBulkReader *r, RdmaConn *conn, guint8 *buf, gsize len,
                       gint64 deadline_us, GError **error)
{
  const RdmaBulkDesc *d = &r->tab.desc[r->field];
  gsize n;

  g_return_val_if_fail (r->field < r->tab.n && r->ipos == r->ilimit, 0);
  n = MIN (len, d->len - r->foff);
  if (!rdma_bulk_pull (conn, d, r->foff, buf, n, deadline_us, error))
    return 0;
  r->foff += n;
  r->left -= n;
  if (r->foff == d->len)
  {
    r->field++;
    next_field (r);
    /* the last field is here: the lender need not wait for the rest to be read */
    if (r->field == r->tab.n && !rdma_bulk_reader_finish (r, conn, error))
      return 0;
  }
  return n;
}

gboolean
rdma_bulk_reader_finish (RdmaBulkReader *r, RdmaConn *conn, GError **error)
{
  if (r->returned)
    return TRUE;
  r->returned = TRUE;
  return rdma_bulk_done (conn, r->tab.seq, error);
}
