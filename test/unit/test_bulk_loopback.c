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
 * test_bulk_loopback.c: bulk transfer (rdma_bulk.h, rdma_bulk_msg.h) between two connections
 * of one process over the in-memory provider (fake_verbs.c, which models type-2 memory
 * windows as rxe does).  A lender's fields arrive byte-exact through every protocol as the
 * carrier of the inline bytes, with no copy of the fields, and the windows are invalidated
 * before the lender's call returns (a READ with the old key afterwards is refused); a wrong
 * key, a range past the window and a lender whose host vanishes in the middle of a pipelined
 * pull end the reader's call with an error and never hang; nothing is left registered.
 * Soft-RoCE's retransmissions, which run a bind or an invalidation again when they go back
 * past it (fake_verbs.h), fail no lender: each one runs once.  ASan/UBSan.
 */
#include "config.h"

#include <string.h>

#include "lib/c_glib/transport/rdma/rdma_budget.h"
#include "lib/c_glib/transport/rdma/rdma_bulk_msg.h"
#include "lib/c_glib/transport/rdma/rdma_conn_private.h"
#include "lib/c_glib/transport/rdma/rdma_helper.h"
#include "lib/c_glib/transport/rdma/rdma_rcache.h"
#include "lib/c_glib/transport/rdma/rdma_resources.h"
#include "lib/c_glib/transport/rdma/rdma_status.h"
#include "fake_verbs.h"

#define MAX_MESSAGE (32u << 20)
#define THRESHOLD (16u << 10)
#define HEAD 8u /* inline bytes before the field */

static gint64
deadline_s (guint s)
{
  return g_get_monotonic_time () + (gint64) s * G_USEC_PER_SEC;
}

static guint8
pattern (guint seed, gsize i)
{
  return (guint8) (i * 131u + seed * 17u + (i >> 9));
}

/* Sends HEAD inline bytes and @len bytes of @field (lent or staged by @way if large enough)
 * by @ops; a lent field's message returns once the reader has the field (the windows are dead
 * then), a staged one's at once. */
static gboolean
send_message (RdmaConn *c, const RdmaProtoOps *ops, const guint8 *field, gsize len, RdmaBulkWay way,
              gint64 deadline, GError **error)
{
  RdmaBulkWriter w = { 0 };
  guint8 head[HEAD] = { 'b', 'u', 'l', 'k' };
  gboolean sent;

  memcpy (head + 4, &len, 4);
  rdma_conn_set_tx_proto (c, ops);
  if (rdma_conn_tx_begin (c, deadline, error) == NULL || !rdma_bulk_writer_begin (&w, c, error)
      || !rdma_bulk_writer_write (&w, c, head, HEAD, THRESHOLD, way, deadline, error)
      || !rdma_bulk_writer_write (&w, c, field, len, THRESHOLD, way, deadline, error)
      || !rdma_bulk_writer_seal (&w, c, deadline, error))
    return FALSE;
  sent = rdma_conn_tx_send (c, deadline, error);
  return rdma_bulk_writer_finish (&w, c, sent, deadline, sent ? error : NULL) && sent;
}

static gboolean
lend_message (RdmaConn *c, const RdmaProtoOps *ops, const guint8 *field, gsize len, gint64 deadline,
              GError **error)
{
  return send_message (c, ops, field, len, RDMA_BULK_LEND, deadline, error);
}

/* Receives a message as lend_message sent it: the field into @into if not NULL, else into a
 * new buffer (*@out). */
static gboolean
take_into (RdmaConn *c, guint8 *into, guint8 **out, gsize *out_len, gint64 deadline, GError **error)
{
  RdmaMessage *msg = rdma_conn_wait_message (c, deadline, error);
  RdmaBulkReader r;
  guint8 head[HEAD];
  guint32 len;
  gsize have = 0;

  *out = NULL;
  if (msg == NULL)
    return FALSE;
  if (!rdma_bulk_reader_start (&r, rdma_message_data (msg), rdma_message_len (msg), MAX_MESSAGE,
                               error))
    return FALSE;
  g_assert_cmpuint (rdma_bulk_reader_copy (&r, head, HEAD), ==, HEAD);
  memcpy (&len, head + 4, 4);
  g_assert_cmpuint (r.left, ==, len);
  *out = into != NULL ? into : g_malloc (MAX (len, 1));
  *out_len = len;
  while (have < len)
  {
    gsize n = rdma_bulk_reader_inline (&r) > 0
                  ? rdma_bulk_reader_copy (&r, *out + have, len - have)
                  : rdma_bulk_reader_pull (&r, c, *out + have, len - have, deadline, error);
    if (n == 0)
      return FALSE;
    have += n;
  }
  return rdma_bulk_reader_finish (&r, c, error) && rdma_conn_release_message (c, error);
}

static gboolean
take_message (RdmaConn *c, guint8 **out, gsize *out_len, gint64 deadline, GError **error)
{
  return take_into (c, NULL, out, out_len, deadline, error);
}

typedef struct
{
  RdmaConn *c, *s;
  struct rdma_cm_id *cid, *sid;
  GThread *thread;
  guint answered;
  RdmaBulkWay way; /* the server's replies' (RDMA_BULK_LEND: 0) */
  GError *error;
} Pair;

/* The server: takes each message's field and lends it back by the carrier of the request. */
static gpointer
echo_main (gpointer data)
{
  Pair *p = data;

  for (;;)
  {
    guint8 *field;
    gsize len;
    const RdmaProtoOps *ops;

    if (!take_message (p->s, &field, &len, deadline_s (30), &p->error))
    {
      g_free (field);
      break;
    }
    ops = p->s->tx_proto; /* set by the test to the request's */
    if (!send_message (p->s, ops, field, len, p->way, deadline_s (30), &p->error))
    {
      g_free (field);
      break;
    }
    g_free (field);
    p->answered++;
  }
  return NULL;
}

static void
pair_open (Pair *p)
{
  RdmaConnSettings cs, ss;
  GError *error = NULL;

  memset (p, 0, sizeof *p);
  rdma_conn_settings_init (&cs, MAX_MESSAGE, THRIFT_RDMA_POLLING_BUSY);
  cs.keepalive_ms = 0;
  cs.bulk_chunk = 64u << 10;
  ss = cs;
  fake_verbs_link (&p->cid, &p->sid);
  if (!rdma_conn_pair (p->cid, p->sid, &cs, &ss, &p->c, &p->s, &error))
    g_error ("pair: %s", error->message);
  /* the fake pair negotiates no READ depth: allow the pipeline */
  p->c->max_rd_atomic = p->s->max_rd_atomic = 4;
}

static void
pair_close (Pair *p)
{
  RdmaResCounts r;

  rdma_conn_free (p->c);
  if (p->thread != NULL)
    g_thread_join (p->thread);
  rdma_conn_free (p->s);
  g_clear_error (&p->error);
  rdma_res_counts (&r);
  g_assert_cmpint (r.qps + r.cqs + r.mrs + r.pds, ==, 0);
  fake_verbs_assert_clean ();
}

/* The client lends a field of @len bytes (pattern @seed) by @ops; the echo server sends it
 * back; it must come back byte-exact. */
static void
echo_one (Pair *p, const RdmaProtoOps *ops, gsize len, guint seed)
{
  guint8 *field = g_malloc (len), *back = NULL;
  gsize back_len = 0;
  GError *error = NULL;
  gboolean ok;

  for (gsize k = 0; k < len; k++)
    field[k] = pattern (seed, k);
  ok = lend_message (p->c, ops, field, len, deadline_s (30), &error)
       && take_message (p->c, &back, &back_len, deadline_s (30), &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  g_assert_cmpuint (back_len, ==, len);
  g_assert_true (memcmp (back, field, len) == 0);
  g_free (back);
  g_free (field);
}

static void
test_echo (gconstpointer data)
{
  const RdmaProtoOps *ops = data;
  static const gsize sizes[] = { THRESHOLD, 100000, (1u << 20) + 3 };
  Pair p;

  pair_open (&p);
  p.s->tx_proto = ops;
  p.thread = g_thread_new ("echo", echo_main, &p);
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
  {
    guint64 copied = p.c->stats.bytes_copied;

    echo_one (&p, ops, sizes[i], i);
    /* only the inline bytes went through the CPU (and a protocol that stages messages in its
     * own memory, RFP, copies the framing too), never the field */
    g_assert_cmpuint (p.c->stats.bytes_copied - copied, <=, HEAD + RDMA_BULK_FRAMING_MAX);
  }
  /* one bind per field lent, and those of the client's memory the protocol lets the server
   * reach (a direct ring, an RFP region, batched-write slots and bitmap, Read-RNDV's
   * transmit buffers: one or two windows; Write-RNDV's: one per reply), never invalidated,
   * only freed */
  g_assert_cmpuint (p.c->stats.window_invalidations, ==, G_N_ELEMENTS (sizes));
  g_assert_cmpuint (p.c->stats.window_binds, >=, G_N_ELEMENTS (sizes));
  g_assert_cmpuint (p.c->stats.window_binds - G_N_ELEMENTS (sizes), <=,
                    ops->id == RDMA_PROTO_WRITE_RNDV ? G_N_ELEMENTS (sizes) : 2);
  g_assert_cmpuint (p.c->stats.bulk_sent, ==, THRESHOLD + 100000 + (1u << 20) + 3);
  g_assert_cmpuint (p.c->stats.bulk_received, ==, p.c->stats.bulk_sent);
  /* the lender's windows were all invalidated (one bind, one invalidation per field) */
  {
    FakeStats f;
    fake_verbs_stats (p.cid, &f);
    g_assert_cmpuint (f.binds, ==, p.c->stats.window_binds);
    g_assert_cmpuint (f.local_invs, ==, G_N_ELEMENTS (sizes));
    /* counted as the provider saw them, so every WR posted is of one kind */
    g_assert_cmpuint (p.c->stats.window_invalidations, ==, f.local_invs);
    g_assert_cmpuint (p.c->stats.wr_posted, ==,
                      p.c->stats.sends + p.c->stats.writes + p.c->stats.write_imms
                          + p.c->stats.reads + p.c->stats.recvs + p.c->stats.window_binds
                          + p.c->stats.window_invalidations);
  }
  pair_close (&p);
}

/* Registrations of the reader: the server pulls a field twice into one buffer of its own,
 * then lends that buffer back (an echo). */
typedef struct
{
  Pair *p;
  guint8 *dst;
  guint64 misses[3], hits[3], reads[2]; /* the server's, after each step */
} Repeat;

static void
server_counts (RdmaConn *s, guint64 *misses, guint64 *hits)
{
  rdma_bulk_update_stats (s);
  *misses = s->stats.rcache_misses;
  *hits = s->stats.rcache_hits;
}

static gpointer
repeat_main (gpointer data)
{
  Repeat *r = data;
  RdmaConn *s = r->p->s;

  for (guint i = 0; i < 2; i++)
  {
    guint8 *got;
    gsize len;

    if (!take_into (s, r->dst, &got, &len, deadline_s (30), &r->p->error))
      return NULL;
    server_counts (s, &r->misses[i], &r->hits[i]);
    r->reads[i] = s->stats.reads;
  }
  if (lend_message (s, &rdma_proto_eager_ops, r->dst, (1u << 21) + 123, deadline_s (30),
                    &r->p->error))
  {
    guint8 *got;
    gsize len;

    server_counts (s, &r->misses[2], &r->hits[2]);
    /* a smaller field into the start of the same buffer, whose registration covers more */
    take_into (s, r->dst, &got, &len, deadline_s (30), &r->p->error);
  }
  return NULL;
}

static void
test_registrations (gconstpointer data)
{
  guint depth = GPOINTER_TO_UINT (data);
  const gsize len = (1u << 21) + 123, small = 100000;
  guint8 *field = g_malloc (len), *back = NULL;
  gsize back_len = 0;
  GError *error = NULL;
  RdmaRcache *probe;
  gboolean watching;
  Repeat r = { 0 };
  Pair p;

  /* whether this host lets the cache keep anything (userfaultfd) */
  pair_open (&p);
  probe = rdma_rcache_new (p.c->pd, 1, 1);
  watching = rdma_rcache_watching (probe);
  rdma_rcache_free (probe);
  p.s->settings.bulk_depth = depth;
  r.p = &p;
  r.dst = g_malloc (len);
  for (gsize k = 0; k < len; k++)
    field[k] = pattern (7, k);
  p.thread = g_thread_new ("repeat", repeat_main, &r);
  for (guint i = 0; i < 2; i++)
  {
    g_assert_true (lend_message (p.c, &rdma_proto_eager_ops, field, len, deadline_s (30), &error));
    g_assert_no_error (error);
  }
  g_assert_true (take_message (p.c, &back, &back_len, deadline_s (30), &error));
  g_assert_no_error (error);
  for (gsize k = 0; k < small; k++)
    field[k] = pattern (9, k);
  g_assert_true (lend_message (p.c, &rdma_proto_eager_ops, field, small, deadline_s (30), &error));
  g_assert_no_error (error);
  g_thread_join (p.thread);
  p.thread = NULL;
  g_assert_no_error (p.error);
  /* the small field was lent from a registration of the whole buffer: counted as itself */
  g_assert_cmpuint (p.c->stats.bulk_sent, ==, 2 * len + small);
  g_assert_cmpuint (back_len, ==, len);
  /* the small field landed, and nothing past it was read into the buffer */
  g_assert_true (memcmp (r.dst, field, len) == 0);
  for (gsize k = 0; k < small; k++)
    field[k] = pattern (7, k);
  g_assert_true (memcmp (back, field, len) == 0);

  g_test_message ("depth %u: %" G_GUINT64_FORMAT " READs, %" G_GUINT64_FORMAT
                  " registrations for the first pull",
                  depth, r.reads[0], r.misses[0]);
  if (depth == 1)
  {
    /* unpipelined: the field registered whole, once */
    g_assert_cmpuint (r.misses[0], ==, 1);
  }
  else
  {
    /* pipelined: registered in windows that grow, far fewer than its READs, more than one */
    g_assert_cmpuint (r.misses[0], >, 1);
    g_assert_cmpuint (r.misses[0] * 4, <, r.reads[0]);
  }
  if (watching)
  {
    /* the same buffer again: every window served by the cache */
    g_assert_cmpuint (r.misses[1], ==, r.misses[0]);
    g_assert_cmpuint (r.hits[1], >, r.hits[0]);
    /* lending what was read into: unpipelined, its whole registration serves the window */
    if (depth == 1)
      g_assert_cmpuint (r.misses[2], ==, r.misses[1]);
  }
  g_free (back);
  g_free (field);
  g_free (r.dst);
  pair_close (&p);
}

/* A device without type-2 memory windows: at the default threshold, fields that would be lent
 * are copied instead and the calls go through as without bulk transfer, each such field
 * counted (bulk_not_lent) and nothing bound or pulled. */
static void
test_no_windows (void)
{
  static const gsize sizes[] = { RDMA_BULK_DEFAULT_THRESHOLD, 300000 };
  guint64 total = 0;
  Pair p;

  g_assert_cmpuint (RDMA_BULK_DEFAULT_THRESHOLD, >, 0);
  fake_verbs_set_windows (FALSE);
  pair_open (&p);
  p.s->tx_proto = &rdma_proto_eager_ops;
  p.thread = g_thread_new ("echo", echo_main, &p);
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
  {
    guint8 *field = g_malloc (sizes[i]), *back = NULL;
    gsize back_len = 0;
    GError *error = NULL;
    RdmaBulkWriter w = { 0 };
    guint8 head[HEAD] = { 0 };

    for (gsize k = 0; k < sizes[i]; k++)
      field[k] = pattern (i + 7, k);
    /* as ThriftRdma writes a message, at the property's default */
    rdma_conn_set_tx_proto (p.c, &rdma_proto_eager_ops);
    memcpy (head + 4, &sizes[i], 4);
    g_assert_nonnull (rdma_conn_tx_begin (p.c, deadline_s (30), &error));
    g_assert_true (rdma_bulk_writer_begin (&w, p.c, &error));
    g_assert_true (rdma_bulk_writer_write (&w, p.c, head, HEAD, RDMA_BULK_DEFAULT_THRESHOLD,
                                           RDMA_BULK_LEND, deadline_s (30), &error));
    g_assert_true (rdma_bulk_writer_write (&w, p.c, field, sizes[i], RDMA_BULK_DEFAULT_THRESHOLD,
                                           RDMA_BULK_LEND, deadline_s (30), &error));
    g_assert_cmpuint (w.n, ==, 0);
    g_assert_true (rdma_bulk_writer_seal (&w, p.c, deadline_s (30), &error));
    g_assert_true (rdma_bulk_writer_finish (
        &w, p.c, rdma_conn_tx_send (p.c, deadline_s (30), &error), deadline_s (30), &error));
    g_assert_no_error (error);
    g_assert_true (take_message (p.c, &back, &back_len, deadline_s (30), &error));
    g_assert_no_error (error);
    g_assert_cmpuint (back_len, ==, sizes[i]);
    g_assert_true (memcmp (back, field, sizes[i]) == 0);
    total += sizes[i];
    g_free (back);
    g_free (field);
  }
  /* both sides copied what they would have lent (the echo server's writer too) */
  g_assert_cmpuint (p.c->stats.bulk_not_lent, ==, G_N_ELEMENTS (sizes));
  g_assert_cmpuint (p.s->stats.bulk_not_lent, ==, G_N_ELEMENTS (sizes));
  g_assert_cmpuint (p.c->stats.window_binds + p.s->stats.window_binds, ==, 0);
  g_assert_cmpuint (p.c->stats.bulk_sent + p.c->stats.bulk_received, ==, 0);
  g_assert_cmpuint (p.c->stats.bytes_copied, >=, 2 * total);
  pair_close (&p);
  fake_verbs_set_windows (TRUE);
}

/* Cache bounds changed once a connection's cache is made are not applied, and it says so;
 * the same bounds again say nothing. */
static void
test_late_bounds (void)
{
  RdmaConnSettings s;
  Pair p;

  pair_open (&p);
  g_assert_true (rdma_bulk_can_lend (p.c)); /* makes the connection's cache */
  s = p.c->settings;
  rdma_conn_set_bulk (p.c, &s);
  s.rcache_entries++;
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_WARNING, "*rcache-entries*set them before*");
  rdma_conn_set_bulk (p.c, &s);
  g_test_assert_expected_messages ();
  g_assert_cmpuint (p.c->settings.rcache_entries, ==, s.rcache_entries - 1);
  pair_close (&p);
}

/* The reader's READs fail (@fault on READ number @skip): its call ends with an error, the
 * lender's too (its deadline, or the connection going down), and nobody hangs. */
typedef struct
{
  FakeFault fault;
  guint skip;
} Fault;

static gpointer
reader_main (gpointer data)
{
  Pair *p = data;
  guint8 *field = NULL;
  gsize len;

  take_message (p->s, &field, &len, deadline_s (10), &p->error);
  g_free (field);
  return NULL;
}

static void
test_fault (gconstpointer data)
{
  const Fault *f = data;
  const gsize len = 1u << 20;
  guint8 *field = g_malloc0 (len);
  GError *error = NULL;
  gint64 t0 = g_get_monotonic_time ();
  Pair p;

  pair_open (&p);
  fake_verbs_inject (p.sid, IBV_WR_RDMA_READ, f->skip, f->fault);
  p.thread = g_thread_new ("reader", reader_main, &p);
  g_assert_false (lend_message (p.c, &rdma_proto_eager_ops, field, len, deadline_s (3), &error));
  g_assert_nonnull (error);
  g_test_message ("lender: %s", error->message);
  g_clear_error (&error);
  g_thread_join (p.thread);
  p.thread = NULL;
  g_assert_nonnull (p.error);
  g_test_message ("reader: %s", p.error->message);
  g_assert_true (g_error_matches (p.error, RDMA_ENGINE_ERROR, RDMA_ERR_COMPLETION)
                 || g_error_matches (p.error, RDMA_ENGINE_ERROR, RDMA_ERR_PEER_GONE)
                 || g_error_matches (p.error, RDMA_ENGINE_ERROR, RDMA_ERR_TIMED_OUT));
  g_assert_cmpint (g_get_monotonic_time () - t0, <, 15 * G_USEC_PER_SEC);
  g_free (field);
  pair_close (&p);
}

typedef struct
{
  RdmaConn *c;
  const guint8 *field;
  gsize len;
  RdmaBulkDesc desc;
  gboolean ok;
  GError *error;
  gint done;
} Lend;

static gpointer
lend_main (gpointer data)
{
  Lend *l = data;

  l->ok = rdma_bulk_lend (l->c, l->field, l->len, &l->desc, deadline_s (5), &l->error);
  g_atomic_int_set (&l->done, 1);
  return NULL;
}

/* Runs what @id's side may start until everything it posted has executed (completing the
 * oldest when nothing may start), without completing the rest: their ACKs are still out. */
static void
execute_all (struct rdma_cm_id *id)
{
  while (fake_verbs_execute (id)
         || (fake_verbs_queued (id) > fake_verbs_executed (id) && fake_verbs_complete (id)))
    ;
}

/* Soft-RoCE runs a bind again when a retransmission takes the send queue back to it, executed
 * and not yet retired, while a WR waits for its ACK, and its fence does not hold a bind back
 * for a SEND (fake_verbs.h).  The lender lends a field while a SEND waits for its ACK (the
 * device going on step by step meanwhile, its ACK timer firing after each step), then sends a
 * message after it, and the timer fires once more with everything executed and nothing
 * acknowledged.  The lender's connection must come through, its window bound once. */
static void
test_retransmit_bind (void)
{
  guint8 *small = g_malloc0 (64);
  Lend l = { .len = THRESHOLD };
  GThread *t;
  GError *error = NULL;
  FakeStats f;
  gboolean ok;
  Pair p;

  fake_verbs_set_timing (FAKE_MANUAL, 1);
  pair_open (&p);
  l.c = p.c;
  l.field = g_malloc (l.len);
  /* a message first (small enough to go inline): its SEND is posted and waits */
  g_assert_true (lend_message (p.c, &rdma_proto_eager_ops, small, 64, deadline_s (5), &error));
  g_assert_no_error (error);
  t = g_thread_new ("lend", lend_main, &l);
  /* a lend that posts its bind behind the SEND does so at once; one that waits for the
   * SEND's completion first does not post it in this time */
  for (gint64 until = g_get_monotonic_time () + G_USEC_PER_SEC / 2;
       fake_verbs_queued (p.cid) < 2 && g_get_monotonic_time () < until;)
    g_usleep (100);
  /* the ACK timer may fire after any step */
  while (!g_atomic_int_get (&l.done))
  {
    if (!fake_verbs_execute (p.cid) && !fake_verbs_complete (p.cid))
      g_usleep (100);
    fake_verbs_retransmit (p.cid);
  }
  g_thread_join (t);
  g_assert_no_error (l.error);
  g_assert_true (l.ok);
  /* the message that carries the window goes next */
  g_assert_true (lend_message (p.c, &rdma_proto_eager_ops, small, 64, deadline_s (5), &error));
  g_assert_no_error (error);
  execute_all (p.cid);
  g_assert_cmpuint (fake_verbs_executed (p.cid), ==, fake_verbs_queued (p.cid));
  g_assert_true (fake_verbs_retransmit (p.cid));
  fake_verbs_settle ();
  ok = rdma_poller_drain_all (&p.c->poller, &error) && rdma_conn_check_usable (p.c, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  fake_verbs_stats (p.cid, &f);
  g_assert_cmpuint (f.binds, ==, 1);
  g_assert_cmpuint (f.retransmissions, >=, 2);
  g_assert_cmpuint (f.replays, ==, 0);
  g_assert_cmpuint (f.errors, ==, 0);
  rdma_bulk_abandon (p.c);
  g_free (small);
  g_free ((gpointer) l.field);
  pair_close (&p);
  fake_verbs_set_timing (FAKE_IMMEDIATE, 0);
}

/* A lend whose bind is slow misses its deadline; the bind completes just then, and the lend
 * is abandoned before its completion is taken.  The next lend must still wait for its own bind before it returns (its message may
 * not go before its window is bound): the late completion must not count against it. */
static void
test_abandon_late_bind (void)
{
  Lend a = { .len = THRESHOLD }, b = { .len = THRESHOLD };
  GThread *t;
  GError *error = NULL;
  gboolean ok;
  Pair p;

  fake_verbs_set_timing (FAKE_MANUAL, 1);
  pair_open (&p);
  a.c = b.c = p.c;
  a.field = g_malloc0 (a.len);
  b.field = g_malloc0 (b.len);

  /* nothing moves: the bind waits, the lend gives up at its deadline (5 s) */
  t = g_thread_new ("lend", lend_main, &a);
  g_thread_join (t);
  g_assert_false (a.ok);
  g_assert_error (a.error, RDMA_ENGINE_ERROR, RDMA_ERR_TIMED_OUT);
  /* the bind runs and completes just then; its completion is taken after the abandon */
  execute_all (p.cid);
  while (fake_verbs_complete (p.cid))
    ;
  rdma_bulk_abandon (p.c);
  ok = rdma_poller_drain_all (&p.c->poller, &error);
  g_assert_no_error (error);
  g_assert_true (ok);

  t = g_thread_new ("lend", lend_main, &b);
  while (fake_verbs_queued (p.cid) < 1)
    g_usleep (100);
  g_usleep (200 * 1000);
  /* its bind has not run: it must still be waiting */
  g_assert_cmpint (g_atomic_int_get (&b.done), ==, 0);
  while (!g_atomic_int_get (&b.done))
    if (!fake_verbs_execute (p.cid) && !fake_verbs_complete (p.cid))
      g_usleep (100);
  g_thread_join (t);
  g_assert_no_error (b.error);
  g_assert_true (b.ok);
  rdma_bulk_abandon (p.c);
  g_free ((gpointer) a.field);
  g_free ((gpointer) b.field);
  g_clear_error (&a.error);
  pair_close (&p);
  fake_verbs_set_timing (FAKE_IMMEDIATE, 0);
}

typedef struct
{
  Pair *p;
  guint8 *got;
  gsize got_len;
} Take;

static gpointer
take_main (gpointer data)
{
  Take *t = data;

  take_message (t->p->s, &t->got, &t->got_len, deadline_s (10), &t->p->error);
  return NULL;
}

/* The reader's registration cache holds two entries: a pipelined pull of 1 MiB needs more
 * windows than that at once.  The pull waits for its READs and goes on with the room they
 * leave; the field arrives whole and the connection carries the next message. */
static void
test_full_cache_mid_pull (void)
{
  const gsize len = 1u << 20;
  guint8 *field = g_malloc (len);
  GError *error = NULL;
  Take t = { 0 };
  GThread *thread;
  Pair p;

  for (gsize i = 0; i < len; i++)
    field[i] = pattern (3, i);
  pair_open (&p);
  /* (the device's cache is the process's: its bound is the largest any connection asked) */
  p.c->settings.rcache_entries = 2;
  p.s->settings.rcache_entries = 2;
  p.s->settings.bulk_depth = 4;
  t.p = &p;
  for (guint round = 0; round < 2; round++)
  {
    thread = g_thread_new ("reader", take_main, &t);
    g_assert_true (lend_message (p.c, &rdma_proto_eager_ops, field, len, deadline_s (10), &error));
    g_assert_no_error (error);
    g_thread_join (thread);
    g_assert_no_error (p.error);
    g_assert_cmpmem (t.got, t.got_len, field, len);
    g_clear_pointer (&t.got, g_free);
  }
  g_free (field);
  pair_close (&p);
}

static gpointer
take_client_main (gpointer data)
{
  Take *t = data;

  take_message (t->p->c, &t->got, &t->got_len, deadline_s (10), &t->p->error);
  return NULL;
}

/* The connections of a process on one device share its registration cache (rdma_domain.h):
 * memory one of them registered serves another without a registration of its own. */
static void
test_shared_cache (void)
{
  const gsize len = 64u << 10;
  guint8 *field = g_malloc (len);
  GError *error = NULL;
  guint64 misses, hits;
  Take t = { 0 };
  GThread *thread;
  Pair p;

  for (gsize i = 0; i < len; i++)
    field[i] = pattern (5, i);
  pair_open (&p);
  t.p = &p;
  /* the client lends the field: its registration is a miss */
  thread = g_thread_new ("reader", take_main, &t);
  g_assert_true (lend_message (p.c, &rdma_proto_eager_ops, field, len, deadline_s (10), &error));
  g_assert_no_error (error);
  g_thread_join (thread);
  g_assert_no_error (p.error);
  g_assert_cmpmem (t.got, t.got_len, field, len);
  g_clear_pointer (&t.got, g_free);
  rdma_bulk_update_stats (p.c);
  g_assert_cmpuint (p.c->stats.rcache_misses, ==, 1);

  /* the server lends the same memory: the client's registration serves it */
  rdma_bulk_update_stats (p.s);
  misses = p.s->stats.rcache_misses;
  hits = p.s->stats.rcache_hits;
  thread = g_thread_new ("reader", take_client_main, &t);
  g_assert_true (lend_message (p.s, &rdma_proto_eager_ops, field, len, deadline_s (10), &error));
  g_assert_no_error (error);
  g_thread_join (thread);
  g_assert_no_error (p.error);
  g_assert_cmpmem (t.got, t.got_len, field, len);
  g_clear_pointer (&t.got, g_free);
  rdma_bulk_update_stats (p.s);
  g_assert_cmpuint (p.s->stats.rcache_misses, ==, misses);
  g_assert_cmpuint (p.s->stats.rcache_hits, ==, hits + 1);
  rdma_bulk_update_stats (p.c);
  g_assert_cmpuint (p.c->stats.rcache_entries, ==, p.s->stats.rcache_entries);
  g_free (field);
  pair_close (&p);
}

typedef struct
{
  Pair *p;
  const guint8 *data;
  gsize len;
  gboolean ok;
  GError *error;
  gint done;
} Send;

static gpointer
send_main (gpointer data)
{
  Send *m = data;

  m->ok = lend_message (m->p->s, &rdma_proto_write_rndv_ops, m->data, m->len, deadline_s (10),
                        &m->error);
  g_atomic_int_set (&m->done, 1);
  return NULL;
}

/* While a lend waits for its bind, a Write-RNDV request-to-send arrives and its completion
 * handler answers with a bind of its own and then a CTS: neither goes before the lend's bind
 * completed, or it would be a WR newer than a bind that soft-RoCE could still run again
 * (rdma_conn_window.h). */
static void
test_control_waits_for_bind (void)
{
  guint8 *small = g_malloc0 (8192);
  Lend l = { .len = THRESHOLD };
  Send m = { .len = 8192 };
  GThread *lender, *sender;
  GError *error = NULL;
  guint8 *got = NULL;
  gsize got_len = 0;
  Pair p;

  fake_verbs_set_timing (FAKE_MANUAL, 1);
  pair_open (&p);
  l.c = p.c;
  l.field = g_malloc0 (l.len);
  m.p = &p;
  m.data = small;
  lender = g_thread_new ("lend", lend_main, &l);
  while (fake_verbs_queued (p.cid) < 1) /* the bind */
    g_usleep (100);
  sender = g_thread_new ("send", send_main, &m);
  while (fake_verbs_queued (p.sid) < 1) /* the RTS */
    g_usleep (100);
  g_assert_true (fake_verbs_execute (p.sid));
  /* the lender's wait takes the RTS and answers it */
  g_usleep (300 * 1000);
  g_assert_cmpuint (fake_verbs_queued (p.cid), ==, 1);
  while (!g_atomic_int_get (&l.done) || !g_atomic_int_get (&m.done))
  {
    gboolean moved = FALSE;
    /* once the lender's thread is done, the client waits for nothing: the test looks at
     * its completions for it (its second bind's, after which its CTS goes) */
    if (g_atomic_int_get (&l.done))
      rdma_conn_progress (p.c, -1, NULL);
    moved |= fake_verbs_execute (p.cid) || fake_verbs_complete (p.cid);
    moved |= fake_verbs_execute (p.sid) || fake_verbs_complete (p.sid);
    if (!moved)
      g_usleep (100);
  }
  g_thread_join (lender);
  g_thread_join (sender);
  g_assert_no_error (l.error);
  g_assert_true (l.ok);
  g_assert_no_error (m.error);
  g_assert_true (m.ok);
  fake_verbs_set_timing (FAKE_IMMEDIATE, 0);
  /* the message came whole */
  g_assert_true (take_message (p.c, &got, &got_len, deadline_s (5), &error));
  g_assert_no_error (error);
  g_assert_cmpmem (got, got_len, small, m.len);
  g_free (got);
  rdma_bulk_abandon (p.c);
  g_free (small);
  g_free ((gpointer) l.field);
  pair_close (&p);
}

typedef struct
{
  RdmaConn *c;
  guint8 *got;
  gsize got_len;
  gboolean ok;
  GError *error;
} Reader;

static gpointer
done_reader_main (gpointer data)
{
  Reader *t = data;

  t->ok = take_message (t->c, &t->got, &t->got_len, deadline_s (10), &t->error);
  return NULL;
}

/* The reader has the field and says DONE, and the lender's connection fails before its
 * windows' invalidation completes (the reader closed right after its DONE, as it may): the
 * lender's call succeeded all the same, its windows are deallocated instead, and the
 * connection reports its failure at its next operation.  (The guest's soak saw an echo
 * server count such a call failed: test_bulk_faults /bulk-fault/cache-bounds.) */
static void
test_lost_after_done (void)
{
  gsize len = 100000;
  guint8 *field = g_malloc (len);
  Reader t = { 0 };
  GError *error = NULL;
  GThread *reader;
  Pair p;

  for (gsize i = 0; i < len; i++)
    field[i] = pattern (7, i);
  pair_open (&p);
  fake_verbs_inject (p.cid, IBV_WR_LOCAL_INV, 0, FAKE_FAULT_SELF_VANISHES);
  t.c = p.s;
  reader = g_thread_new ("take", done_reader_main, &t);
  g_assert_true (lend_message (p.c, &rdma_proto_eager_ops, field, len, deadline_s (10), &error));
  g_assert_no_error (error);
  g_thread_join (reader);
  g_assert_no_error (t.error);
  g_assert_true (t.ok);
  g_assert_cmpmem (t.got, t.got_len, field, len);
  g_assert_cmpint (rdma_conn_get_state (p.c), ==, RDMA_CONN_FAILED);
  g_assert_cmpuint (p.c->stats.window_binds, ==, 1);
  g_free (t.got);
  g_free (field);
  pair_close (&p);
}

/* A duplicate READ that reaches the lender after the DONE finds its window invalidated:
 * soft-RoCE fails the lender's QP by an async event and no completion says why, so the
 * lender's next call used to read as the peer's doing ("the peer closed it").  The failure
 * names this side's device and the refused access. */
static void
test_late_read_named (void)
{
  FakeRead r;
  guint8 *field = g_malloc0 (100000), *back = NULL;
  gsize back_len = 0;
  GError *error = NULL;
  gint64 until;
  Pair p;

  pair_open (&p);
  p.s->tx_proto = &rdma_proto_eager_ops;
  p.thread = g_thread_new ("echo", echo_main, &p);
  echo_one (&p, &rdma_proto_eager_ops, 100000, 1);
  /* the server read the client's field; a copy of that READ comes late */
  g_assert_true (fake_verbs_last_read (p.sid, &r));
  g_assert_false (fake_verbs_read_again_failing (p.sid, &r));
  until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (g_atomic_int_get (&p.c->device_event) == 0 && g_get_monotonic_time () < until)
    g_usleep (1000);
  g_assert_cmpint (g_atomic_int_get (&p.c->device_event), ==, IBV_EVENT_QP_ACCESS_ERR + 1);
  g_assert_false (lend_message (p.c, &rdma_proto_eager_ops, field, 100000, deadline_s (10), &error)
                  && take_message (p.c, &back, &back_len, deadline_s (10), &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "refused a remote access by the peer"));
  g_assert_null (strstr (error->message, "the peer closed it"));
  g_clear_error (&error);
  g_free (back);
  g_free (field);
  pair_close (&p);
}

/* Echoes of lent fields over seeded FAKE_DEFERRED runs where any step may be such a
 * retransmission: every bind and every invalidation is run once, and nothing fails. */
static void
test_retransmit_echo (gconstpointer data)
{
  const RdmaProtoOps *ops = data;
  static const gsize sizes[] = { THRESHOLD, 100000, 300000 };
  guint64 retransmissions = 0;

  for (guint32 seed = 1; seed <= 6; seed++)
  {
    Pair p;
    FakeStats fc, fs;

    fake_verbs_set_timing (FAKE_DEFERRED, seed);
    fake_verbs_set_retransmissions (TRUE);
    pair_open (&p);
    p.s->tx_proto = ops;
    p.thread = g_thread_new ("echo", echo_main, &p);
    for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
      echo_one (&p, ops, sizes[i], seed + i);
    fake_verbs_stats (p.cid, &fc);
    fake_verbs_stats (p.sid, &fs);
    /* both sides lent every field (the server echoes by lending) */
    g_assert_cmpuint (fc.binds, ==, G_N_ELEMENTS (sizes));
    g_assert_cmpuint (fs.binds, ==, G_N_ELEMENTS (sizes));
    g_assert_cmpuint (fc.replays + fs.replays, ==, 0);
    g_assert_cmpuint (fc.errors + fs.errors, ==, 0);
    retransmissions += fc.retransmissions + fs.retransmissions;
    fake_verbs_set_retransmissions (FALSE);
    pair_close (&p);
  }
  fake_verbs_set_timing (FAKE_IMMEDIATE, 0);
  /* the runs did retransmit (else they proved nothing) */
  g_test_message ("%" G_GUINT64_FORMAT " retransmissions", retransmissions);
  g_assert_cmpuint (retransmissions, >, 0);
}

/* A server's replies at its default threshold: staged (rdma_bulk_stage.h).  The field is
 * copied once, into the stage, and the reader pulls it from there (no copy on its side); the
 * stage's window is bound once per size it grows to, never invalidated; a field under the
 * threshold is copied as before. */
static void
test_stage_echo (void)
{
  static const gsize sizes[] = { THRESHOLD, 100000, (1u << 20) + 3, (4u << 20) + 1 };
  guint64 staged = 0;
  Pair p;

  pair_open (&p);
  p.way = RDMA_BULK_STAGE_MEASURED;
  p.s->tx_proto = &rdma_proto_eager_ops;
  p.thread = g_thread_new ("echo", echo_main, &p);
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
  {
    guint64 copied = p.c->stats.bytes_copied;

    echo_one (&p, &rdma_proto_eager_ops, sizes[i], i);
    /* the client lent its request and pulled the reply: neither field went through its CPU */
    g_assert_cmpuint (p.c->stats.bytes_copied - copied, <=, 2 * (HEAD + RDMA_BULK_FRAMING_MAX));
    staged += sizes[i];
  }
  /* a small one after: copied, and the stage is left as it is */
  echo_one (&p, &rdma_proto_eager_ops, 3000, 9);
  g_assert_cmpuint (p.c->stats.bulk_received, ==, staged);
  g_assert_cmpuint (p.c->stats.bulk_sent, ==, staged);
  rdma_conn_free (p.c);
  p.c = NULL;
  g_thread_join (p.thread);
  p.thread = NULL;
  g_assert_cmpuint (p.answered, ==, G_N_ELEMENTS (sizes) + 1);
  /* the server: each field copied once (into the stage, the last reply's into the message) */
  g_assert_cmpuint (p.s->stats.bytes_copied, >=, staged + 3000);
  g_assert_cmpuint (p.s->stats.bytes_copied, <=,
                    staged + 3000
                        + 2 * (G_N_ELEMENTS (sizes) + 1) * (HEAD + RDMA_BULK_FRAMING_MAX));
  g_assert_cmpuint (p.s->stats.bulk_copied, ==, 0);
  /* its own lends none: the stage grew to 64 KiB, 128 KiB, 2 MiB and 8 MiB, a bind each */
  g_assert_cmpuint (p.s->stats.window_invalidations, ==, 0);
  g_assert_cmpuint (p.s->stats.window_binds, ==, 4);
  /* every staged reply came back (the DONEs); the 8 MiB stage stays for the next reply until
   * it was unused for ring_idle_ms, then goes */
  g_assert_cmpuint (p.s->stats.bulk_sent, ==, staged);
  g_assert_nonnull (rdma_bulk_stage_of (p.s)->base);
  g_assert_cmpuint (rdma_bulk_stage_of (p.s)->size, ==, 8u << 20);
  {
    gint64 due = rdma_helpers_due (p.s), now = g_get_monotonic_time ();
    GError *error = NULL;

    g_assert_cmpint (due, >, now);
    g_assert_cmpint (due, <=, now + (gint64) p.s->settings.ring_idle_ms * 1000);
    g_assert_true (rdma_helpers_tick (p.s, due - 1, &error));
    g_assert_nonnull (rdma_bulk_stage_of (p.s)->base);
    g_assert_true (rdma_helpers_tick (p.s, due, &error));
    g_assert_no_error (error);
    g_assert_null (rdma_bulk_stage_of (p.s)->base);
    g_assert_cmpint (p.s->stats.pinned_bytes, <, 8 << 20);
  }
  rdma_conn_free (p.s);
  p.s = NULL;
  pair_close (&p);
}

typedef struct
{
  RdmaConn *conn;
  guint8 *got;
  gsize len;
  GError *error;
} LateReader;

static gpointer
late_reader_main (gpointer data)
{
  LateReader *r = data;

  g_usleep (200 * 1000);
  take_message (r->conn, &r->got, &r->len, deadline_s (30), &r->error);
  return NULL;
}

/* The stage is not written again before the reader's DONE: a second staged message waits
 * until the first was pulled, which comes back as it was sent. */
static void
test_stage_waits_for_done (void)
{
  const gsize len = 200000;
  guint8 *a = g_malloc (len), *b = g_malloc (len), *got = NULL;
  LateReader r = { 0 };
  GError *error = NULL;
  GThread *reader;
  gint64 t0;
  gsize got_len = 0;
  Pair p;

  for (gsize k = 0; k < len; k++)
  {
    a[k] = pattern (1, k);
    b[k] = pattern (2, k);
  }
  pair_open (&p);
  g_assert_true (send_message (p.c, &rdma_proto_eager_ops, a, len, RDMA_BULK_STAGE_MEASURED,
                               deadline_s (30), &error));
  g_assert_no_error (error);
  r.conn = p.s;
  reader = g_thread_new ("late reader", late_reader_main, &r);
  t0 = g_get_monotonic_time ();
  g_assert_true (send_message (p.c, &rdma_proto_eager_ops, b, len, RDMA_BULK_STAGE_MEASURED,
                               deadline_s (30), &error));
  g_assert_no_error (error);
  /* it waited for the reader (200 ms before it started) */
  g_assert_cmpint (g_get_monotonic_time () - t0, >=, 150 * 1000);
  g_thread_join (reader);
  g_assert_no_error (r.error);
  g_assert_cmpuint (r.len, ==, len);
  g_assert_true (memcmp (r.got, a, len) == 0);
  g_assert_true (take_message (p.s, &got, &got_len, deadline_s (30), &error));
  g_assert_no_error (error);
  g_assert_cmpuint (got_len, ==, len);
  g_assert_true (memcmp (got, b, len) == 0);
  g_assert_cmpuint (p.c->stats.window_binds, ==, 1);
  g_free (r.got);
  g_free (got);
  g_free (a);
  g_free (b);
  pair_close (&p);
}

/* A peer that does not give a staged message back: the next staged message waits for its
 * DONE until its deadline and fails, naming the wait; a DONE sent twice is a protocol error
 * that names the message.  Neither crashes, and every resource goes at close. */
static void
test_stage_peer_faults (void)
{
  const gsize len = 200000;
  guint8 *a = g_malloc (len), *got = NULL;
  GError *error = NULL;
  gsize got_len = 0;
  gint64 t0;
  Pair p;

  for (gsize k = 0; k < len; k++)
    a[k] = pattern (4, k);
  pair_open (&p);
  g_assert_true (send_message (p.c, &rdma_proto_eager_ops, a, len, RDMA_BULK_STAGE_MEASURED,
                               deadline_s (30), &error));
  g_assert_no_error (error);
  /* never read: no DONE */
  t0 = g_get_monotonic_time ();
  g_assert_false (send_message (p.c, &rdma_proto_eager_ops, a, len, RDMA_BULK_STAGE_MEASURED,
                                g_get_monotonic_time () + 300 * 1000, &error));
  g_assert_error (error, RDMA_ENGINE_ERROR, RDMA_ERR_TIMED_OUT);
  g_assert_cmpint (g_get_monotonic_time () - t0, >=, 250 * 1000);
  g_clear_error (&error);
  pair_close (&p);

  pair_open (&p);
  g_assert_true (send_message (p.c, &rdma_proto_eager_ops, a, len, RDMA_BULK_STAGE_MEASURED,
                               deadline_s (30), &error));
  g_assert_true (take_message (p.s, &got, &got_len, deadline_s (30), &error));
  g_assert_no_error (error);
  g_assert_cmpmem (got, got_len, a, len);
  /* the same DONE again (the first staged message is number 0) */
  g_assert_true (rdma_bulk_done (p.s, 0, &error));
  g_assert_no_error (error);
  g_assert_false (send_message (p.c, &rdma_proto_eager_ops, a, len, RDMA_BULK_STAGE_MEASURED,
                                deadline_s (30), &error));
  g_assert_error (error, RDMA_ENGINE_ERROR, RDMA_ERR_PROTOCOL);
  g_assert_nonnull (strstr (error->message, "which it was not lent"));
  g_clear_error (&error);
  g_free (got);
  g_free (a);
  pair_close (&p);
}

/* A stage the budget refuses: the field is copied into the message, counted and said once. */
static void
test_stage_budget (void)
{
  const gsize len = 300000;
  guint8 *a = g_malloc (len);
  LateReader r = { 0 };
  GError *error = NULL;
  RdmaResCounts counts;
  GThread *reader;
  Pair p;

  for (gsize k = 0; k < len; k++)
    a[k] = pattern (3, k);
  pair_open (&p);
  rdma_res_counts (&counts);
  rdma_budget_request ((guint64) counts.pinned_bytes + 4096, "the test");
  g_test_expect_message (NULL, G_LOG_LEVEL_WARNING, "*a stage for large reply fields*");
  r.conn = p.s; /* (a message copied whole goes by fragments: the reader takes them) */
  reader = g_thread_new ("reader", late_reader_main, &r);
  send_message (p.c, &rdma_proto_eager_ops, a, len, RDMA_BULK_STAGE_MEASURED, deadline_s (30),
                &error);
  g_assert_no_error (error);
  g_test_assert_expected_messages ();
  g_assert_no_error (error);
  g_thread_join (reader);
  g_assert_no_error (r.error);
  g_assert_cmpuint (r.len, ==, len);
  g_assert_true (memcmp (r.got, a, len) == 0);
  g_assert_cmpuint (p.c->stats.budget_refusals, ==, 1);
  g_assert_cmpuint (p.c->stats.window_binds, ==, 0);
  g_assert_cmpuint (p.c->stats.bytes_copied, >=, len);
  g_assert_cmpuint (p.s->stats.bulk_received, ==, 0);
  g_assert_null (rdma_bulk_stage_of (p.c)->base);
  rdma_budget_reset ();
  g_free (r.got);
  g_free (a);
  pair_close (&p);
}

int
main (int argc, char **argv)
{
  static const Fault faults[] = {
    { FAKE_FAULT_BAD_RKEY, 0 },
    { FAKE_FAULT_OUT_OF_RANGE, 0 },
    { FAKE_FAULT_BAD_RKEY, 5 },
    { FAKE_FAULT_PEER_VANISHES, 6 },
  };
  static const gchar *const fault_names[] = { "wrong-key", "past-window", "wrong-key-mid",
                                              "lender-vanishes-mid" };
  gint rc;

  g_test_init (&argc, &argv, NULL);
  fake_verbs_install ();
  for (guint i = 0; i < RDMA_PROTO_COUNT; i++)
  {
    const RdmaProtoOps *ops = rdma_proto_registry[i];
    gchar *name;
    if (ops == NULL)
      continue;
    name = g_strdup_printf ("/bulk-loopback/echo/%s", ops->name);
    g_test_add_data_func (name, ops, test_echo);
    g_free (name);
  }
  g_test_add_data_func ("/bulk-loopback/registrations/pipelined", GUINT_TO_POINTER (4),
                        test_registrations);
  g_test_add_data_func ("/bulk-loopback/registrations/unpipelined", GUINT_TO_POINTER (1),
                        test_registrations);
  g_test_add_func ("/bulk-loopback/no-windows", test_no_windows);
  g_test_add_func ("/bulk-loopback/stage/echo", test_stage_echo);
  g_test_add_func ("/bulk-loopback/stage/waits-for-done", test_stage_waits_for_done);
  g_test_add_func ("/bulk-loopback/stage/budget", test_stage_budget);
  g_test_add_func ("/bulk-loopback/stage/peer-faults", test_stage_peer_faults);
  g_test_add_func ("/bulk-loopback/late-bounds", test_late_bounds);
  g_test_add_func ("/bulk-loopback/cache/shared", test_shared_cache);
  for (guint i = 0; i < G_N_ELEMENTS (faults); i++)
  {
    gchar *name = g_strdup_printf ("/bulk-loopback/fault/%s", fault_names[i]);
    g_test_add_data_func (name, &faults[i], test_fault);
    g_free (name);
  }
  g_test_add_func ("/bulk-loopback/retransmission/bind", test_retransmit_bind);
  g_test_add_func ("/bulk-loopback/abandon/late-bind", test_abandon_late_bind);
  g_test_add_func ("/bulk-loopback/full-cache-mid-pull", test_full_cache_mid_pull);
  g_test_add_func ("/bulk-loopback/control-waits-for-bind", test_control_waits_for_bind);
  g_test_add_func ("/bulk-loopback/settle/lost-after-done", test_lost_after_done);
  g_test_add_func ("/bulk-loopback/late-read/named", test_late_read_named);
  g_test_add_data_func ("/bulk-loopback/retransmission/echo", &rdma_proto_eager_ops,
                        test_retransmit_echo);
  rc = g_test_run ();
  fake_verbs_uninstall ();
  return rc;
}
