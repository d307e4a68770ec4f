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
 * test_protocols.c: every implemented RDMA protocol, forced by a proto hint on both sides,
 * carries messages of every size around its thresholds (a receive slot, the direct ring, the
 * largest ring chunk) byte-exact in both directions and names itself afterwards; each runs at
 * the verbs footprint its definition gives (paper Sec. 3.1), read from the counters; and
 * protocols switch on every call of one connection.  RFP also runs with a client that waits
 * in the kernel, and with messages sent back to back by several protocols (they must arrive
 * in order).  Batched-Write also carries a stream of one-way messages with batched
 * confirmation.  The pair eager_rndv splits messages between eager and read_rndv by their
 * size.  Runs in the soft-RoCE guest.
 */
#include "config.h"

#include <string.h>

#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/thrift_configuration.h>
#include <thrift/c_glib/transport/thrift_hints.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_server_rdma.h>

/* a white-box test: it looks inside connections (the engine-internal header) */
#include "lib/c_glib/transport/rdma/rdma_conn_private.h"
#include "lib/c_glib/transport/rdma/rdma_proto.h"
#include "rdma_test_util.h"

#define MAX_MESSAGE (100u << 20)
#define SLOT_ROOM (4096u - 20u) /* a receive slot less the message header */
#define RING (512u << 10)       /* the default direct ring */
#define CHUNK ((1u << 20) - 1)  /* the largest ring chunk */

/* What one call costs the client, by the protocol's definition: sending the request, and
 * receiving the reply (which the server sends by the same protocol). */
typedef struct
{
  const gchar *name;
  guint sends, writes, write_imms, posts;
  guint reads;     /* READs (receiving the reply) */
  guint controls;  /* control messages the client sends (receiving the reply) */
  gboolean polled; /* READs polled for the reply: at least @reads, their number depends on
                     * timing, and they are not counted in @posts */
  guint batch;     /* 0: per message; else at most @reads READs per batch of this many,
                     * not counted in @posts */
} Footprint;

static const Footprint footprints[] = {
  { "eager", 1, 0, 0, 1, 0, 0, FALSE, 0 },              /* a SEND into a receive slot */
  { "direct_write_send", 1, 1, 0, 2, 0, 0, FALSE, 0 },  /* WRITE, then SEND: two posts */
  { "chained_write_send", 1, 1, 0, 1, 0, 0, FALSE, 0 }, /* WRITE + SEND chained: one post */
  { "direct_write_imm", 0, 0, 1, 1, 0, 0, FALSE, 0 },   /* one WRITE_WITH_IMM, no SEND */
  /* RTS, then (after the server's CTS) WRITE + notice chained; for the reply: a CTS */
  { "write_rndv", 2, 1, 0, 2, 0, 1, FALSE, 0 },
  /* RTS (the server READs and sends DONE); for the reply: a READ, then a DONE */
  { "read_rndv", 1, 0, 0, 2, 1, 1, FALSE, 0 },
  /* the request: a notice SEND (the message stays in the client's region); the reply:
   * fetched by READ, polled (so at least one per call) */
  { "rfp", 1, 0, 0, 1, 1, 0, TRUE, 0 },
  /* a WRITE into a free slot; request/response announces each message with its immediate
   * (a stream: one per batch, test_oneway_stream); one READ of the slot bitmap per batch */
  { "batched_write", 0, 0, 1, 1, 1, 0, FALSE, 32 },
};

typedef struct
{
  const RdmaProtoOps *ops;
  const Footprint *fp;
  ThriftHintSet client, server;
} Forced;

static Forced forced[RDMA_PROTO_COUNT];
static guint n_forced;

static void
hint_set_for (ThriftHintSet *h, ThriftHintProto proto, ThriftHintSide side)
{
  memset (h, 0, sizeof *h);
  h->version = THRIFT_HINT_SET_VERSION;
  h->service = "Test";
  h->function = "echo";
  h->side = side;
  h->set = THRIFT_HINT_HAS_PROTO;
  h->proto = proto;
}

static ThriftTransport *
open_client_port (guint port, const ThriftHintSet *hints)
{
  GError *error = NULL;
  ThriftTransport *t = rt_client_new (port, THRIFT_RDMA_POLLING_BUSY);

  g_object_set (t, "hints", hints, "keepalive", 0, NULL);
  g_assert_true (thrift_transport_open (t, &error));
  g_assert_no_error (error);
  return t;
}

static ThriftTransport *
open_client (RtEchoServer *srv, const ThriftHintSet *hints)
{
  return open_client_port (rt_echo_server_port (srv), hints);
}

static void
close_all (ThriftTransport *t, RtEchoServer *srv, gint baseline)
{
  thrift_transport_close (t, NULL);
  g_object_unref (t);
  g_assert_cmpuint (rt_echo_server_failed (srv), ==, 0);
  rt_echo_server_stop (srv);
  g_assert_true (rt_resources_at_baseline (baseline));
}

static void
test_sizes (gconstpointer data)
{
  const Forced *f = data;
  gint baseline = rt_live_resources ();
  RtEchoServer *srv = rt_echo_server_start_hinted (THRIFT_RDMA_POLLING_BUSY, MAX_MESSAGE,
                                                   &f->server);
  ThriftTransport *t = open_client (srv, &f->client);
  static const gsize sizes[] = {
    0,         1,    64,       SLOT_ROOM - 1, SLOT_ROOM, SLOT_ROOM + 1, 65536,
    RING - 1,  RING, RING + 1, CHUNK,         CHUNK + 1, 3 * RING + 7,
#ifndef RDMA_TEST_SHORT
    16u << 20,
#endif
    5,
  };
  GError *error = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
  {
    g_test_message ("%s: echo of %" G_GSIZE_FORMAT " bytes", f->ops->name, sizes[i]);
    if (!rt_echo (t, sizes[i], i, &error))
      g_error ("%s: echo of %" G_GSIZE_FORMAT " bytes: %s", f->ops->name, sizes[i],
               error ? error->message : "?");
    /* the reply came by the server's forced protocol: the same one */
    g_assert_cmpstr (thrift_rdma_get_protocol_name (THRIFT_RDMA (t)), ==, f->ops->name);
  }
  close_all (t, srv, baseline);
}

static void
test_footprint (gconstpointer data)
{
  const Forced *f = data;
  gint baseline = rt_live_resources ();
  RtEchoServer *srv = rt_echo_server_start_hinted (THRIFT_RDMA_POLLING_BUSY, MAX_MESSAGE,
                                                   &f->server);
  ThriftTransport *t = open_client (srv, &f->client);
  const guint n = 200;
  ThriftRdmaStats s;
  GError *error = NULL;
  guint64 extra;

  /* the first messages set the protocol up (the direct ring is asked for and advertised) */
  for (guint i = 0; i < 5; i++)
    g_assert_true (rt_echo (t, 64, i, &error));
  thrift_rdma_reset_stats (THRIFT_RDMA (t));
  for (guint i = 0; i < n; i++)
    g_assert_true (rt_echo (t, 64, i, &error));
  g_assert_no_error (error);
  thrift_rdma_get_stats (THRIFT_RDMA (t), &s);
  g_test_message ("%s, %u calls of 64 B: sends %" G_GUINT64_FORMAT " writes %" G_GUINT64_FORMAT
                  " write_imms %" G_GUINT64_FORMAT " reads %" G_GUINT64_FORMAT " (%.2f per call)"
                  " posts %" G_GUINT64_FORMAT " credit messages %" G_GUINT64_FORMAT
                  " control %" G_GUINT64_FORMAT " completions %" G_GUINT64_FORMAT
                  " receives reposted %" G_GUINT64_FORMAT " copied %" G_GUINT64_FORMAT
                  " pinned %" G_GUINT64_FORMAT,
                  f->ops->name, n, s.sends, s.writes, s.write_imms, s.reads, (gdouble) s.reads / n,
                  s.post_send_calls, s.credit_messages, s.control_messages, s.completions, s.recvs,
                  s.bytes_copied, s.pinned_bytes);
  /* a window over each reply's buffer (Write-RNDV; the other protocols bound theirs in the
   * first calls) */
  g_assert_cmpuint (s.window_binds, ==, f->ops->id == RDMA_PROTO_WRITE_RNDV ? n : 0);
  /* SENDs that are not the protocol's: credit returns and the control channel */
  extra = s.credit_messages + s.control_messages;
  g_assert_cmpuint (s.sends - extra, ==, (guint64) f->fp->sends * n);
  g_assert_cmpuint (s.writes, ==, (guint64) f->fp->writes * n);
  g_assert_cmpuint (s.write_imms, ==, (guint64) f->fp->write_imms * n);
  g_assert_cmpuint (s.control_messages, ==, (guint64) f->fp->controls * n);
  if (f->fp->polled)
  {
    g_assert_cmpuint (s.reads, >=, (guint64) f->fp->reads * n);
    g_assert_cmpuint (s.post_send_calls - extra - s.reads - s.window_binds, ==,
                      (guint64) f->fp->posts * n);
  }
  else if (f->fp->batch != 0)
  {
    g_assert_cmpuint (s.reads, <=, (guint64) f->fp->reads * (n / f->fp->batch + 1));
    g_assert_cmpuint (s.post_send_calls - extra - s.reads - s.window_binds, ==,
                      (guint64) f->fp->posts * n);
  }
  else
  {
    g_assert_cmpuint (s.reads, ==, (guint64) f->fp->reads * n);
    g_assert_cmpuint (s.post_send_calls - extra - s.window_binds, ==, (guint64) f->fp->posts * n);
  }
  if (f->ops->id == RDMA_PROTO_RFP)
  {
    /* the replies did not come by SEND: the client reposted receive slots only for the
     * server's credit returns (the server receives a notice per call and sends nothing) */
    g_assert_cmpuint (s.messages_received, ==, n);
    g_assert_cmpuint (s.recvs, <=, n / 4);
  }
  /* Thrift writes the message straight into registered memory and reads it out: one copy
   * each way (the binary protocol's 4-byte length and the message header included) */
  g_assert_cmpuint (s.bytes_copied, <=, (guint64) n * 2 * (64 + 64));
  close_all (t, srv, baseline);
}

/* A 0-byte message (ThriftRdma never sends one; the engine can): the protocol carries it
 * (a rendezvous one as its request-to-send alone), the server's reader skips it, and the
 * message after it is answered. */
static void
test_empty (gconstpointer data)
{
  const Forced *f = data;
  gint baseline = rt_live_resources ();
  RtEchoServer *srv = rt_echo_server_start_hinted (THRIFT_RDMA_POLLING_BUSY, MAX_MESSAGE,
                                                   &f->server);
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  /* the envelope byte of a plain message, then a binary field of 100 bytes */
  guint8 req[RT_RAW_HEADER + 100] = { 0, 0, 0, 0, 100 };
  RdmaConnSettings settings;
  GError *error = NULL;
  RdmaMessage *msg;
  RdmaConn *c;

  for (guint i = 0; i < 100; i++)
    req[RT_RAW_HEADER + i] = rt_pattern (7, i);
  rdma_conn_settings_init (&settings, MAX_MESSAGE, THRIFT_RDMA_POLLING_BUSY);
  c = rdma_conn_connect (rt_server_addr (), rt_echo_server_port (srv), NULL, &settings, deadline,
                         &error);
  g_assert_no_error (error);
  c->tx_proto = f->ops;
  g_assert_true (rdma_conn_send (c, req, 0, deadline, &error));
  g_assert_no_error (error);
  g_assert_true (c->last_tx_proto == f->ops);
  g_assert_true (rdma_conn_send (c, req, sizeof req, deadline, &error));
  g_assert_no_error (error);
  msg = rdma_conn_wait_message (c, deadline, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (msg->len, ==, sizeof req);
  g_assert_true (memcmp (msg->data, req, sizeof req) == 0);
  g_assert_cmpstr (msg->proto->name, ==, f->ops->name);
  g_assert_true (rdma_conn_release_message (c, &error));
  g_assert_no_error (error);
  rdma_conn_free (c);
  g_assert_cmpuint (rt_echo_server_failed (srv), ==, 0);
  rt_echo_server_stop (srv);
  g_assert_true (rt_resources_at_baseline (baseline));
}

/* Sends @k messages of @len (i) bytes (with the hint set @hints (i), if given) before it
 * reads the first reply, so several messages are on the way in each direction at once; then
 * reads the replies, checking each. */
static void
stream (ThriftTransport *t, guint k, gsize (*len) (guint i),
        const ThriftHintSet *(*hints) (guint i))
{
  ThriftProtocol *p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
  GError *error = NULL;

  for (guint i = 0; i < k; i++)
  {
    guint8 *out = g_malloc (MAX (len (i), 1));

    for (gsize j = 0; j < len (i); j++)
      out[j] = rt_pattern (i, j);
    if (hints != NULL)
      thrift_hint_receiver_set_hints (THRIFT_HINT_RECEIVER (t), hints (i));
    if (thrift_protocol_write_binary (p, out, (guint32) len (i), &error) < 0
        || !thrift_transport_flush (t, &error))
      g_error ("stream message %u: %s", i, error ? error->message : "?");
    g_free (out);
  }
  for (guint i = 0; i < k; i++)
  {
    gpointer in = NULL;
    guint32 in_len = 0;

    g_assert_cmpint (thrift_protocol_read_binary (p, &in, &in_len, &error), >=, 0);
    g_assert_true (thrift_transport_read_end (t, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (in_len, ==, len (i));
    for (gsize j = 0; j < in_len; j++)
      if (((guint8 *) in)[j] != rt_pattern (i, j))
        g_error ("stream message %u (%u bytes): byte %" G_GSIZE_FORMAT " is wrong", i, in_len, j);
    g_free (in);
  }
  g_object_unref (p);
}

static gsize
small_len (guint i)
{
  return i % 5 == 4 ? 0 : (i * 7919u) % 12000u;
}

/* A stream of @k messages of @len (i) bytes by @f's protocol both ways. */
static void
forced_stream (const Forced *f, guint k, gsize (*len) (guint i))
{
  gint baseline = rt_live_resources ();
  RtEchoServer *srv = rt_echo_server_start_hinted (THRIFT_RDMA_POLLING_BUSY, MAX_MESSAGE,
                                                   &f->server);
  ThriftTransport *t = open_client (srv, &f->client);

  stream (t, k, len, NULL);
  g_assert_cmpstr (thrift_rdma_get_protocol_name (THRIFT_RDMA (t)), ==, f->ops->name);
  close_all (t, srv, baseline);
}

/* A pipelined stream that fits every protocol's buffers (the direct ring's too). */
static void
test_stream (gconstpointer data)
{
  forced_stream (data, 32, small_len);
}

static gsize
mib_len (guint i)
{
  return (1u << 20) + i;
}

/* Rendezvous: a stream of more than the client holds for its reader (its unread limit,
 * 4 MiB): it sets up buffers for the replies it cannot take yet only as the reader frees the
 * earlier ones, and the server waits (for a CTS, or a DONE) meanwhile.  (Both sides' limits
 * together are not exceeded: as over TCP, a stream that overfills both while neither side
 * reads waits until the call timeout.) */
static void
test_held_back (gconstpointer data)
{
  forced_stream (data, 6, mib_len);
}

static const ThriftHintSet *
each_protocol (guint i)
{
  return &forced[i % n_forced].client;
}

static gsize
mixed_len (guint i)
{
  return i % 4 == 2 ? 200000u + i : small_len (i);
}

/* A stream with another protocol for every message: a message READ by the receiver is still
 * read before the one sent after it (which may well arrive first). */
static void
test_mixed_stream (void)
{
  gint baseline = rt_live_resources ();
  RtEchoServer *srv = rt_echo_server_start_hinted (THRIFT_RDMA_POLLING_BUSY, MAX_MESSAGE, NULL);
  ThriftTransport *t = open_client (srv, NULL);

  stream (t, 5 * n_forced, mixed_len, each_protocol);
  close_all (t, srv, baseline);
}

/* Every call with another protocol than the last, on one connection. */
static void
test_switching (void)
{
  gint baseline = rt_live_resources ();
  RtEchoServer *srv = rt_echo_server_start_hinted (THRIFT_RDMA_POLLING_BUSY, MAX_MESSAGE, NULL);
  ThriftTransport *t = open_client (srv, NULL);
#ifdef RDMA_TEST_SHORT
  const guint calls = 400;
#else
  const guint calls = 4000;
#endif
  GError *error = NULL;

  for (guint i = 0; i < calls; i++)
  {
    const Forced *f = &forced[i % n_forced];
    ThriftRdmaStats before, after;
    gsize len = (i * 7919u) % 9000u; /* each side of a slot */

    thrift_rdma_get_stats (THRIFT_RDMA (t), &before);
    thrift_hint_receiver_set_hints (THRIFT_HINT_RECEIVER (t), &f->client);
    if (!rt_echo (t, len, i, &error))
      g_error ("call %u (%s, %" G_GSIZE_FORMAT " bytes): %s", i, f->ops->name, len, error->message);
    thrift_rdma_get_stats (THRIFT_RDMA (t), &after);
    /* the request went by its own protocol's verbs */
    if (f->fp->write_imms > 0)
      g_assert_cmpuint (after.write_imms, >, before.write_imms);
    else
      g_assert_cmpuint (after.write_imms, ==, before.write_imms);
    if (f->fp->writes > 0)
      g_assert_cmpuint (after.writes, >, before.writes);
    else if (f->fp->batch == 0) /* batched: fragments between the first and last are plain */
      g_assert_cmpuint (after.writes, ==, before.writes);
  }
  close_all (t, srv, baseline);
}

static const Forced *
forced_by_id (RdmaProtoId id)
{
  for (guint i = 0; i < n_forced; i++)
    if (forced[i].ops->id == id)
      return &forced[i];
  return NULL;
}

/* RFP both ways with the client waiting in the kernel (event) or spinning first (hybrid) and
 * the server in event mode: the client's poll READ is what wakes it. */
static void
test_rfp_polling (void)
{
  static const ThriftRdmaPolling modes[] = { THRIFT_RDMA_POLLING_EVENT,
                                             THRIFT_RDMA_POLLING_HYBRID };
  static const gsize sizes[] = { 64, SLOT_ROOM + 1, 300000 };
  const Forced *f = forced_by_id (RDMA_PROTO_RFP);

  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
  {
    gint baseline = rt_live_resources ();
    RtEchoServer *srv = rt_echo_server_start_hinted (THRIFT_RDMA_POLLING_EVENT, MAX_MESSAGE,
                                                     &f->server);
    ThriftTransport *t = rt_client_new (rt_echo_server_port (srv), modes[m]);
    GError *error = NULL;
    ThriftRdmaStats s;

    g_object_set (t, "hints", &f->client, "keepalive", 0, NULL);
    g_assert_true (thrift_transport_open (t, &error));
    for (guint i = 0; i < 60; i++)
    {
      if (!rt_echo (t, sizes[i % G_N_ELEMENTS (sizes)], i, &error))
        g_error ("rfp, polling %d, call %u: %s", modes[m], i, error->message);
      g_assert_cmpstr (thrift_rdma_get_protocol_name (THRIFT_RDMA (t)), ==, "rfp");
    }
    thrift_rdma_get_stats (THRIFT_RDMA (t), &s);
    g_test_message ("rfp, client polling %d, 60 calls: reads %" G_GUINT64_FORMAT
                    " cq events %" G_GUINT64_FORMAT,
                    modes[m], s.reads, s.cq_events);
    close_all (t, srv, baseline);
  }
}

/* Sends @len bytes as a Thrift binary (length first) by @ops on a raw connection. */
static void
raw_send (RdmaConn *c, const RdmaProtoOps *ops, gsize len, guint seed)
{
  guint8 *buf = rt_binary_new (len, seed);
  GError *error = NULL;

  c->tx_proto = ops;
  if (!rdma_conn_send (c, buf, RT_RAW_HEADER + len, g_get_monotonic_time () + 20 * G_USEC_PER_SEC,
                       &error))
    g_error ("send by %s: %s", ops->name, error->message);
  g_free (buf);
}

/* Messages sent back to back, RFP among protocols that do not wait: the replies (RFP) come
 * in order and whole, so no message overtook an RFP message the peer had not fetched, and
 * a sender that needs its region again before the peer said it fetched asks. */
static void
test_rfp_pipelined (void)
{
  gint baseline = rt_live_resources ();
  const Forced *f = forced_by_id (RDMA_PROTO_RFP);
  RtEchoServer *srv = rt_echo_server_start_hinted (THRIFT_RDMA_POLLING_BUSY, MAX_MESSAGE,
                                                   &f->server);
  RdmaConnSettings set;
  RdmaConn *c;
  GError *error = NULL;
  guint seed = 0;

  rdma_conn_settings_init (&set, MAX_MESSAGE, THRIFT_RDMA_POLLING_BUSY);
  set.keepalive_ms = 0;
  c = rdma_conn_connect (rt_server_addr (), rt_echo_server_port (srv), NULL, &set,
                         g_get_monotonic_time () + 5 * G_USEC_PER_SEC, &error);
  g_assert_no_error (error);
  for (guint round = 0; round < 30; round++)
  {
    const guint burst = 1 + round % 5;
    for (guint k = 0; k < burst; k++)
    {
      const Forced *p = &forced[(round + k) % n_forced];
      raw_send (c, k % 2 == 0 ? f->ops : p->ops, (seed * 7919u) % 9000u, seed);
      seed++;
    }
    for (guint k = 0; k < burst; k++)
    {
      guint want = seed - burst + k;
      gsize len = (want * 7919u) % 9000u;
      RdmaMessage *msg = rdma_conn_wait_message (c, g_get_monotonic_time () + 20 * G_USEC_PER_SEC,
                                                 &error);
      if (msg == NULL)
        g_error ("round %u, reply %u: %s", round, k, error->message);
      g_assert_cmpstr (msg->proto->name, ==, "rfp");
      g_assert_cmpuint (msg->len, ==, RT_RAW_HEADER + len);
      for (gsize i = 0; i < len; i++)
        if (msg->data[RT_RAW_HEADER + i] != rt_pattern (want, i))
          g_error ("round %u, reply %u of %" G_GSIZE_FORMAT " bytes: byte %" G_GSIZE_FORMAT
                   " differs (a reply out of order?)",
                   round, k, len, i);
      g_assert_true (rdma_conn_release_message (c, &error));
    }
  }
  g_test_message ("rfp pipelined, %u messages: reads %" G_GUINT64_FORMAT
                  " control %" G_GUINT64_FORMAT,
                  seed, c->stats.reads, c->stats.control_messages);
  rdma_conn_free (c);
  g_assert_cmpuint (rt_echo_server_failed (srv), ==, 0);
  rt_echo_server_stop (srv);
  g_assert_true (rt_resources_at_baseline (baseline));
}

/* ---- eager_rndv: a pair, not a protocol ---- */

/* @n echoes of @len bytes; what they cost the client (its counters' difference). */
static void
echoes (ThriftTransport *t, gsize len, guint n, guint seed, ThriftRdmaStats *cost)
{
  ThriftRdmaStats before, after;
  GError *error = NULL;

  thrift_rdma_get_stats (THRIFT_RDMA (t), &before);
  for (guint i = 0; i < n; i++)
    if (!rt_echo (t, len, seed + i, &error))
      g_error ("eager_rndv: echo of %" G_GSIZE_FORMAT " bytes: %s", len, error->message);
  thrift_rdma_get_stats (THRIFT_RDMA (t), &after);
  cost->sends = after.sends - before.sends;
  cost->writes = after.writes - before.writes;
  cost->write_imms = after.write_imms - before.write_imms;
  cost->reads = after.reads - before.reads;
  cost->credit_messages = after.credit_messages - before.credit_messages;
  cost->control_messages = after.control_messages - before.control_messages;
}

/* proto = eager_rndv on both sides (AR-gRPC's pair, the HatRPC paper's Hybrid-EagerRNDV
 * baseline): a 64 B call and its reply go by Eager-SendRecv (one SEND each, no READ), a
 * 64 KiB one by Read-RNDV (a request-to-send; the receiver READs it and answers DONE), as the
 * counters of both sides show, and thrift_rdma_get_protocol_name names each. */
static void
test_eager_rndv (void)
{
  gint baseline = rt_live_resources ();
  ThriftHintSet client, server;
  RtEchoServer *srv;
  ThriftTransport *t;
  ThriftRdmaStats small, large, s;
  const guint n = 40;

  hint_set_for (&client, THRIFT_HINT_PROTO_EAGER_RNDV, THRIFT_HINT_SIDE_CLIENT);
  hint_set_for (&server, THRIFT_HINT_PROTO_EAGER_RNDV, THRIFT_HINT_SIDE_SERVER);
  srv = rt_echo_server_start_hinted (THRIFT_RDMA_POLLING_BUSY, MAX_MESSAGE, &server);
  t = open_client (srv, &client);

  echoes (t, 64, n, 0, &small);
  g_assert_cmpstr (thrift_rdma_get_protocol_name (THRIFT_RDMA (t)), ==, "eager");
  echoes (t, 65536, n, n, &large);
  g_assert_cmpstr (thrift_rdma_get_protocol_name (THRIFT_RDMA (t)), ==, "read_rndv");
  /* and back: the plan splits every message by its own length */
  echoes (t, 64, 1, 2 * n, &s);
  g_assert_cmpstr (thrift_rdma_get_protocol_name (THRIFT_RDMA (t)), ==, "eager");
  g_assert_cmpuint (s.reads, ==, 0);

  g_test_message ("eager_rndv, client, %u calls of 64 B: sends %" G_GUINT64_FORMAT
                  " reads %" G_GUINT64_FORMAT " control %" G_GUINT64_FORMAT
                  "; of 64 KiB: sends %" G_GUINT64_FORMAT " reads %" G_GUINT64_FORMAT
                  " control %" G_GUINT64_FORMAT,
                  n, small.sends, small.reads, small.control_messages, large.sends, large.reads,
                  large.control_messages);
  /* 64 B: one SEND per call, nothing else (a direct protocol would WRITE, a rendezvous READ
   * or ask for a buffer) */
  g_assert_cmpuint (small.sends - small.credit_messages - small.control_messages, ==, n);
  g_assert_cmpuint (small.reads, ==, 0);
  g_assert_cmpuint (small.writes + small.write_imms, ==, 0);
  g_assert_cmpuint (small.control_messages, ==, 0);
  /* 64 KiB: the request is a request-to-send SEND; the reply comes by the client's READ (one
   * piece: READs go in 256 KiB pieces), then its DONE */
  g_assert_cmpuint (large.sends - large.credit_messages - large.control_messages, ==, n);
  g_assert_cmpuint (large.reads, ==, n);
  g_assert_cmpuint (large.control_messages, ==, n);
  g_assert_cmpuint (large.writes + large.write_imms, ==, 0);

  /* the server READ each large request and no small one */
  thrift_transport_close (t, NULL);
  g_object_unref (t);
  rt_echo_server_settle (srv);
  rt_echo_server_last_stats (srv, &s);
  g_test_message ("eager_rndv, server, %u large and %u small calls: reads %" G_GUINT64_FORMAT
                  " control %" G_GUINT64_FORMAT,
                  n, n + 1, s.reads, s.control_messages);
  g_assert_cmpuint (s.reads, ==, n);
  g_assert_cmpuint (s.control_messages, ==, n);
  g_assert_cmpuint (s.writes + s.write_imms, ==, 0);
  g_assert_cmpuint (rt_echo_server_failed (srv), ==, 0);
  rt_echo_server_stop (srv);
  g_assert_true (rt_resources_at_baseline (baseline));
}

/* ---- one-way streams ---- */

#ifdef RDMA_TEST_SHORT
#define STREAM_MESSAGES 10000u
#else
#define STREAM_MESSAGES 100000u
#endif

typedef struct
{
  ThriftRdmaPolling polling; /* of the receiver */
  gboolean mixed;            /* the sender switches protocol every few messages */
  guint messages;
} Stream;

/* A receiver that only reads: every message is its index and (index % 61) patterned bytes,
 * checked in order; one answer (the count) once all came. */
typedef struct
{
  ThriftServerTransport *server;
  guint expected;
  guint received;
  ThriftRdmaStats stats; /* the receiver's, once the last message was read */
  gchar *failure;        /* (owned) (nullable) */
} Sink;

static gsize
stream_len (guint index)
{
  return index % 61;
}

static gboolean
sink_read_one (ThriftProtocol *p, guint want, gchar **failure, GError **error)
{
  gint32 index = -1;
  gpointer buf = NULL;
  guint32 len = 0;
  gboolean ok;

  if (thrift_protocol_read_i32 (p, &index, error) < 0
      || thrift_protocol_read_binary (p, &buf, &len, error) < 0
      || !thrift_transport_read_end (p->transport, error))
    return FALSE;
  ok = index == (gint32) want && len == stream_len (want);
  for (guint32 i = 0; ok && i < len; i++)
    ok = ((guint8 *) buf)[i] == rt_pattern (want, i);
  if (!ok)
    *failure = g_strdup_printf ("message %u: index %d, %u bytes (lost, reordered or garbled)", want,
                                index, len);
  g_free (buf);
  return ok;
}

static gpointer
sink_thread (gpointer data)
{
  Sink *k = data;
  GError *error = NULL;
  ThriftTransport *t = thrift_server_transport_accept (k->server, &error);
  ThriftProtocol *p;

  if (t == NULL)
  {
    k->failure = g_strdup_printf ("accept: %s", error->message);
    g_error_free (error);
    return NULL;
  }
  p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
  while (k->received < k->expected && sink_read_one (p, k->received, &k->failure, &error))
    k->received++;
  thrift_rdma_get_stats (THRIFT_RDMA (t), &k->stats);
  if (k->failure == NULL && error == NULL
      && (thrift_protocol_write_i32 (p, (gint32) k->received, &error) < 0
          || !thrift_transport_flush (t, &error) || !thrift_transport_write_end (t, &error)))
    k->failure = g_strdup_printf ("answer: %s", error->message);
  if (k->failure == NULL && error != NULL)
    k->failure = g_strdup_printf ("after %u messages: %s", k->received, error->message);
  g_clear_error (&error);
  /* until the client closes */
  while (thrift_transport_peek (t, &error))
    ;
  g_clear_error (&error);
  thrift_transport_close (t, NULL);
  g_object_unref (p);
  g_object_unref (t);
  return NULL;
}

/* A client sends one-way messages without waiting for anything, then waits for the count:
 * none is lost, the order is kept, and the receiver took far fewer completions than
 * messages (batched confirmation). */
static void
test_oneway_stream (gconstpointer data)
{
  const Stream *m = data;
  gint baseline = rt_live_resources ();
  ThriftConfiguration *conf = g_object_new (THRIFT_TYPE_CONFIGURATION, "max_message_size",
                                            (gint) MAX_MESSAGE, NULL);
  Sink k = { .expected = m->messages };
  const Forced *bw = NULL;
  ThriftTransport *t;
  ThriftProtocol *p;
  ThriftRdmaStats s;
  GError *error = NULL;
  GThread *thread;
  gint32 count = -1;
  gint64 t0;
  gdouble secs;

  for (guint i = 0; i < n_forced; i++)
    if (forced[i].ops->id == RDMA_PROTO_BATCHED_WRITE)
      bw = &forced[i];
  g_assert_nonnull (bw);
  k.server = g_object_new (THRIFT_TYPE_SERVER_RDMA, "hostname", rt_server_addr (), "port", 0,
                           "polling", m->polling, "configuration", conf, "idle-timeout", 60000,
                           "bulk-threshold", rt_bulk_threshold (), NULL);
  g_object_unref (conf);
  g_assert_true (thrift_server_transport_listen (k.server, &error));
  g_assert_no_error (error);
  thread = g_thread_new ("sink", sink_thread, &k);

  t = open_client_port (thrift_server_rdma_get_port (THRIFT_SERVER_RDMA (k.server)), &bw->client);
  p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < m->messages; i++)
  {
    guint8 buf[64];

    if (m->mixed)
      thrift_hint_receiver_set_hints (THRIFT_HINT_RECEIVER (t), &forced[(i / 7) % n_forced].client);
    for (gsize j = 0; j < stream_len (i); j++)
      buf[j] = rt_pattern (i, j);
    if (thrift_protocol_write_i32 (p, (gint32) i, &error) < 0
        || thrift_protocol_write_binary (p, buf, (guint32) stream_len (i), &error) < 0
        || !thrift_transport_flush (t, &error) || !thrift_transport_write_end (t, &error))
      g_error ("message %u: %s", i, error->message);
  }
  /* the first wait after the stream: what is not yet announced is now */
  g_assert_cmpint (thrift_protocol_read_i32 (p, &count, &error), >, 0);
  g_assert_no_error (error);
  g_assert_true (thrift_transport_read_end (t, &error));
  secs = (g_get_monotonic_time () - t0) / 1e6;
  thrift_rdma_get_stats (THRIFT_RDMA (t), &s);
  thrift_transport_close (t, NULL);
  g_object_unref (p);
  g_object_unref (t);
  g_thread_join (thread);
  thrift_server_transport_close (k.server, NULL);
  g_object_unref (k.server);

  if (k.failure != NULL)
    g_error ("receiver: %s", k.failure);
  g_assert_cmpint (count, ==, (gint32) m->messages);
  g_assert_cmpuint (k.received, ==, m->messages);
  g_test_message (
      "%u one-way messages%s in %.2f s (%.0f/s), receiver polling %s: receiver "
      "completions %" G_GUINT64_FORMAT " (post_recv calls %" G_GUINT64_FORMAT
      ", CQ events %" G_GUINT64_FORMAT ", control %" G_GUINT64_FORMAT
      ", credit messages %" G_GUINT64_FORMAT "); sender writes %" G_GUINT64_FORMAT
      " write_imms %" G_GUINT64_FORMAT " reads %" G_GUINT64_FORMAT " completions %" G_GUINT64_FORMAT
      " control %" G_GUINT64_FORMAT " doorbells %" G_GUINT64_FORMAT,
      m->messages, m->mixed ? " (protocols mixed)" : "", secs, m->messages / secs,
      m->polling == THRIFT_RDMA_POLLING_BUSY ? "busy" : "event", k.stats.completions,
      k.stats.post_recv_calls, k.stats.cq_events, k.stats.control_messages, k.stats.credit_messages,
      s.writes, s.write_imms, s.reads, s.completions, s.control_messages, s.post_send_calls);
  if (!m->mixed)
  {
    /* batched: the receiver takes no completion per message, the sender no READ per
     * message; every message is one WRITE (some with immediate) */
    g_assert_cmpuint (k.stats.completions * 20, <, m->messages);
    /* the sender signals one WRITE in BW_SIGNAL_EVERY (32), and each batch's READ and
     * closing WRITE_WITH_IMM: about 1/21 of the messages, so bound it at 1/10 */
    g_assert_cmpuint (s.completions * 10, <, m->messages);
    g_assert_cmpuint (s.reads * 32, <, m->messages);
    g_assert_cmpuint (s.writes + s.write_imms, >=, m->messages);
    g_assert_cmpuint (s.write_imms * 20, <, m->messages);
  }
  g_assert_true (rt_resources_at_baseline (baseline));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* whole large messages through each protocol, as without bulk transfer */
  rt_bulk_off ();
  for (guint i = 0; i < RDMA_PROTO_COUNT; i++)
  {
    const RdmaProtoOps *ops = rdma_proto_registry[i];
    Forced *f;
    gchar *path;

    if (ops == NULL)
      continue;
    f = &forced[n_forced++];
    f->ops = ops;
    for (guint k = 0; k < G_N_ELEMENTS (footprints); k++)
      if (strcmp (footprints[k].name, ops->name) == 0)
        f->fp = &footprints[k];
    g_assert_nonnull (f->fp); /* a new protocol needs its footprint here */
    hint_set_for (&f->client, ops->hint, THRIFT_HINT_SIDE_CLIENT);
    hint_set_for (&f->server, ops->hint, THRIFT_HINT_SIDE_SERVER);
    path = g_strdup_printf ("/protocols/%s/sizes", ops->name);
    g_test_add_data_func (path, f, test_sizes);
    g_free (path);
    path = g_strdup_printf ("/protocols/%s/footprint", ops->name);
    g_test_add_data_func (path, f, test_footprint);
    g_free (path);
    path = g_strdup_printf ("/protocols/%s/empty", ops->name);
    g_test_add_data_func (path, f, test_empty);
    g_free (path);
    path = g_strdup_printf ("/protocols/%s/stream", ops->name);
    g_test_add_data_func (path, f, test_stream);
    g_free (path);
    if (ops->id == RDMA_PROTO_WRITE_RNDV || ops->id == RDMA_PROTO_READ_RNDV)
    {
      path = g_strdup_printf ("/protocols/%s/held_back", ops->name);
      g_test_add_data_func (path, f, test_held_back);
      g_free (path);
    }
  }
  g_test_add_func ("/protocols/eager_rndv/pair", test_eager_rndv);
  g_test_add_func ("/protocols/switching", test_switching);
  g_test_add_func ("/protocols/mixed_stream", test_mixed_stream);
  if (forced_by_id (RDMA_PROTO_RFP) != NULL)
  {
    g_test_add_func ("/protocols/rfp/polling", test_rfp_polling);
    g_test_add_func ("/protocols/rfp/pipelined", test_rfp_pipelined);
  }
  if (rdma_proto_by_id (RDMA_PROTO_BATCHED_WRITE) != NULL)
  {
    static const Stream event = { THRIFT_RDMA_POLLING_EVENT, FALSE, STREAM_MESSAGES };
    static const Stream busy = { THRIFT_RDMA_POLLING_BUSY, FALSE, STREAM_MESSAGES / 4 };
    static const Stream mixed = { THRIFT_RDMA_POLLING_EVENT, TRUE, STREAM_MESSAGES / 10 };

    g_test_add_data_func ("/protocols/batched_write/oneway_stream", &event, test_oneway_stream);
    g_test_add_data_func ("/protocols/batched_write/oneway_stream/busy", &busy, test_oneway_stream);
    g_test_add_data_func ("/protocols/batched_write/oneway_stream/mixed", &mixed,
                          test_oneway_stream);
  }
  return g_test_run ();
}
