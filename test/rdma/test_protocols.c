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
 * protocols switch on every call of one connection.  Batched-Write also carries a stream of
 * one-way messages with batched confirmation.  Runs in the soft-RoCE guest.
 */
#include "config.h"

#include <string.h>

#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/thrift_configuration.h>
#include <thrift/c_glib/transport/thrift_hints.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_server_rdma.h>

#include "lib/c_glib/transport/rdma/rdma_proto.h"
#include "rdma_test_util.h"

#define MAX_MESSAGE (100u << 20)
#define SLOT_ROOM (4096u - 20u)      /* a receive slot less the message header */
#define RING (512u << 10)            /* the default direct ring */
#define CHUNK ((1u << 20) - 1)       /* the largest ring chunk */

/* What one message costs the sender, by the protocol's definition. */
typedef struct
{
  const gchar *name;
  guint sends, writes, write_imms, posts;
  guint reads;      /* RDMA READs per message, or per `batch` messages at most */
  guint batch;      /* 0: per message; else READs come once per batch of this many */
} Footprint;

static const Footprint footprints[] = {
  { "eager", 1, 0, 0, 1, 0, 0 },                 /* a SEND into a receive slot */
  { "direct_write_send", 1, 1, 0, 2, 0, 0 },     /* WRITE, then SEND: two posts */
  { "chained_write_send", 1, 1, 0, 1, 0, 0 },    /* WRITE + SEND chained: one post */
  { "direct_write_imm", 0, 0, 1, 1, 0, 0 },      /* one WRITE_WITH_IMM, no SEND */
  /* a WRITE into a free slot; request/response announces each message with its immediate
   * (a stream: one per batch, test_oneway_stream); one READ of the slot bitmap per batch */
  { "batched_write", 0, 0, 1, 1, 1, 32 },
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
    0, 1, 64, SLOT_ROOM - 1, SLOT_ROOM, SLOT_ROOM + 1, 65536, RING - 1, RING, RING + 1,
    CHUNK, CHUNK + 1, 3 * RING + 7,
#ifndef RDMA_TEST_SHORT
    16u << 20,
#endif
    5,
  };
  GError *error = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++) {
    g_test_message ("%s: echo of %" G_GSIZE_FORMAT " bytes", f->ops->name, sizes[i]);
    g_assert_true (rt_echo (t, sizes[i], i, &error));
    g_assert_no_error (error);
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
                  " write_imms %" G_GUINT64_FORMAT " reads %" G_GUINT64_FORMAT
                  " posts %" G_GUINT64_FORMAT " credit messages %" G_GUINT64_FORMAT
                  " control %" G_GUINT64_FORMAT " completions %" G_GUINT64_FORMAT
                  " copied %" G_GUINT64_FORMAT, f->ops->name, n, s.sends, s.writes,
                  s.write_imms, s.reads, s.post_send_calls, s.credit_messages,
                  s.control_messages, s.completions, s.bytes_copied);
  /* SENDs that are not the protocol's: credit returns and the control channel */
  extra = s.credit_messages + s.control_messages;
  g_assert_cmpuint (s.sends - extra, ==, (guint64) f->fp->sends * n);
  g_assert_cmpuint (s.writes, ==, (guint64) f->fp->writes * n);
  g_assert_cmpuint (s.write_imms, ==, (guint64) f->fp->write_imms * n);
  if (f->fp->batch == 0) {
    g_assert_cmpuint (s.reads, ==, (guint64) f->fp->reads * n);
    g_assert_cmpuint (s.post_send_calls - extra, ==, (guint64) f->fp->posts * n);
  } else {
    g_assert_cmpuint (s.reads, <=, (guint64) f->fp->reads * (n / f->fp->batch + 1));
    g_assert_cmpuint (s.post_send_calls - extra - s.reads, ==, (guint64) f->fp->posts * n);
  }
  /* Thrift writes the message straight into registered memory and reads it out: one copy
   * each way (the binary protocol's 4-byte length and the message header included) */
  g_assert_cmpuint (s.bytes_copied, <=, (guint64) n * 2 * (64 + 64));
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

  for (guint i = 0; i < calls; i++) {
    const Forced *f = &forced[i % n_forced];
    ThriftRdmaStats before, after;
    gsize len = (i * 7919u) % 9000u;   /* each side of a slot */

    thrift_rdma_get_stats (THRIFT_RDMA (t), &before);
    thrift_hint_receiver_set_hints (THRIFT_HINT_RECEIVER (t), &f->client);
    if (!rt_echo (t, len, i, &error))
      g_error ("call %u (%s, %" G_GSIZE_FORMAT " bytes): %s", i, f->ops->name, len,
               error->message);
    thrift_rdma_get_stats (THRIFT_RDMA (t), &after);
    /* the request went by its own protocol's verbs */
    if (f->fp->write_imms > 0)
      g_assert_cmpuint (after.write_imms, >, before.write_imms);
    else
      g_assert_cmpuint (after.write_imms, ==, before.write_imms);
    if (f->fp->writes > 0)
      g_assert_cmpuint (after.writes, >, before.writes);
    else if (f->fp->batch == 0)   /* batched: fragments between the first and last are plain */
      g_assert_cmpuint (after.writes, ==, before.writes);
  }
  close_all (t, srv, baseline);
}

/* ---- one-way streams ---- */

#ifdef RDMA_TEST_SHORT
#define STREAM_MESSAGES 10000u
#else
#define STREAM_MESSAGES 100000u
#endif

typedef struct
{
  ThriftRdmaPolling polling;    /* of the receiver */
  gboolean mixed;               /* the sender switches protocol every few messages */
  guint messages;
} Stream;

/* A receiver that only reads: every message is its index and (index % 61) patterned bytes,
 * checked in order; one answer (the count) once all came. */
typedef struct
{
  ThriftServerTransport *server;
  guint expected;
  guint received;
  ThriftRdmaStats stats;        /* the receiver's, once the last message was read */
  gchar *failure;               /* (owned) (nullable) */
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
    *failure = g_strdup_printf ("message %u: index %d, %u bytes (lost, reordered or garbled)",
                                want, index, len);
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

  if (t == NULL) {
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
                           NULL);
  g_object_unref (conf);
  g_assert_true (thrift_server_transport_listen (k.server, &error));
  g_assert_no_error (error);
  thread = g_thread_new ("sink", sink_thread, &k);

  t = open_client_port (thrift_server_rdma_get_port (THRIFT_SERVER_RDMA (k.server)), &bw->client);
  p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", t, NULL);
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < m->messages; i++) {
    guint8 buf[64];

    if (m->mixed)
      thrift_hint_receiver_set_hints (THRIFT_HINT_RECEIVER (t),
                                      &forced[(i / 7) % n_forced].client);
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
  g_test_message ("%u one-way messages%s in %.2f s (%.0f/s), receiver polling %s: receiver "
                  "completions %" G_GUINT64_FORMAT " (post_recv calls %" G_GUINT64_FORMAT
                  ", CQ events %" G_GUINT64_FORMAT ", control %" G_GUINT64_FORMAT
                  ", credit messages %" G_GUINT64_FORMAT "); sender writes %" G_GUINT64_FORMAT
                  " write_imms %" G_GUINT64_FORMAT " reads %" G_GUINT64_FORMAT
                  " completions %" G_GUINT64_FORMAT " control %" G_GUINT64_FORMAT
                  " doorbells %" G_GUINT64_FORMAT, m->messages,
                  m->mixed ? " (protocols mixed)" : "", secs, m->messages / secs,
                  m->polling == THRIFT_RDMA_POLLING_BUSY ? "busy" : "event",
                  k.stats.completions, k.stats.post_recv_calls, k.stats.cq_events,
                  k.stats.control_messages, k.stats.credit_messages, s.writes, s.write_imms,
                  s.reads, s.completions, s.control_messages, s.post_send_calls);
  if (!m->mixed) {
    /* batched: the receiver takes no completion per message, the sender no READ per
     * message; every message is one WRITE (some with immediate) */
    g_assert_cmpuint (k.stats.completions * 20, <, m->messages);
    g_assert_cmpuint (s.completions * 20, <, m->messages);
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
  for (guint i = 0; i < RDMA_PROTO_COUNT; i++) {
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
    g_assert_nonnull (f->fp);   /* a new protocol needs its footprint here */
    hint_set_for (&f->client, ops->hint, THRIFT_HINT_SIDE_CLIENT);
    hint_set_for (&f->server, ops->hint, THRIFT_HINT_SIDE_SERVER);
    path = g_strdup_printf ("/protocols/%s/sizes", ops->name);
    g_test_add_data_func (path, f, test_sizes);
    g_free (path);
    path = g_strdup_printf ("/protocols/%s/footprint", ops->name);
    g_test_add_data_func (path, f, test_footprint);
    g_free (path);
  }
  g_test_add_func ("/protocols/switching", test_switching);
  if (rdma_proto_by_id (RDMA_PROTO_BATCHED_WRITE) != NULL) {
    static const Stream event = { THRIFT_RDMA_POLLING_EVENT, FALSE, STREAM_MESSAGES };
    static const Stream busy = { THRIFT_RDMA_POLLING_BUSY, FALSE, STREAM_MESSAGES / 4 };
    static const Stream mixed = { THRIFT_RDMA_POLLING_EVENT, TRUE, STREAM_MESSAGES / 10 };

    g_test_add_data_func ("/protocols/batched_write/oneway_stream", &event, test_oneway_stream);
    g_test_add_data_func ("/protocols/batched_write/oneway_stream/busy", &busy,
                          test_oneway_stream);
    g_test_add_data_func ("/protocols/batched_write/oneway_stream/mixed", &mixed,
                          test_oneway_stream);
  }
  return g_test_run ();
}
