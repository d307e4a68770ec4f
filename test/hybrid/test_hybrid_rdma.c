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
 * test_hybrid_rdma (soft-RoCE guest): hybrid:// with both legs.  Calls go by the leg their
 * hint names, proven by the kernel's own counters (TCP segments sent, the RDMA devices'
 * packets), with several clients at once on ThriftThreadedServer; the pairing refuses an
 * RDMA connection with an unknown or used token; resources go back to zero.
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>

#include <thrift/c_glib/transport/thrift_hybrid.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "lib/c_glib/transport/hybrid/hybrid_wire.h"
#include "legs_util.h"
#include "rdma_test_util.h"

static guint next_port = 19600;

/* ---- the kernel's counters ---- */

static guint64
tcp_out_segments (void)
{
  g_autofree gchar *text = NULL;
  g_auto (GStrv) lines = NULL;
  guint64 v = 0;
  gboolean header = TRUE;

  g_assert_true (g_file_get_contents ("/proc/net/snmp", &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  for (gchar **l = lines; *l != NULL; l++)
  {
    if (!g_str_has_prefix (*l, "Tcp:"))
      continue;
    if (header)
    {
      header = FALSE;
      continue;
    }
    {
      g_auto (GStrv) f = g_strsplit (*l, " ", -1);
      v = g_ascii_strtoull (f[11], NULL, 10); /* OutSegs */
    }
  }
  return v;
}

static gchar *
uri (guint port, gboolean server)
{
  return g_strdup_printf ("hybrid://%s:%u", server ? rt_server_addr () : rt_server_addr (), port);
}

/* ---- calls by the leg their hint names ---- */

typedef enum
{
  CALL_BULK,
  CALL_QUICK,
  CALL_PLAIN
} Call;

static void
call (LegsTestClient *c, Call which, guint len, guint seed)
{
  g_autoptr (GByteArray) in = legs_payload (len, seed);
  GByteArray *out = NULL;
  GError *error = NULL;
  gboolean ok;

  ok = which == CALL_BULK    ? legs_if_bulk (c->client, &out, in, &error)
       : which == CALL_QUICK ? legs_if_quick (c->client, &out, in, &error)
                             : legs_if_plain (c->client, &out, in, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
  g_assert_cmpmem (out->data, out->len, in->data, in->len);
  g_byte_array_unref (out);
  g_assert_cmpint (thrift_hybrid_get_last_leg (THRIFT_HYBRID (c->transport)), ==,
                   which == CALL_BULK ? THRIFT_HYBRID_LEG_TCP : THRIFT_HYBRID_LEG_RDMA);
}

/* @n calls of one function: how many TCP segments and RDMA packets they made. */
static void
count_calls (LegsTestClient *c, Call which, guint n, guint64 *segs, guint64 *pkts)
{
  guint64 s0 = tcp_out_segments (), p0 = rt_rdma_sent_packets ();

  for (guint i = 0; i < n; i++)
    call (c, which, 64 + i % 512, i);
  *segs = tcp_out_segments () - s0;
  *pkts = rt_rdma_sent_packets () - p0;
}

static void
test_legs_by_counters (void)
{
  guint port = next_port++;
  g_autofree gchar *u = uri (port, TRUE);
  gint baseline = rt_live_resources ();
  LegsTestServer s;
  LegsTestClient c;
  GError *error = NULL;
  guint64 segs, pkts;

  g_assert_true (legs_server_start (&s, u, &error));
  g_assert_no_error (error);
  legs_assert_open (&c, u);
  g_assert_nonnull (thrift_hybrid_get_rdma (THRIFT_HYBRID (c.transport)));
  g_assert_null (thrift_hybrid_get_fallback_reason (THRIFT_HYBRID (c.transport)));

  /* TCP calls: a segment or more each way per call, (almost) no RDMA packet */
  count_calls (&c, CALL_BULK, 500, &segs, &pkts);
  g_test_message ("500 calls hinted tcp: %" G_GUINT64_FORMAT " TCP segments, %" G_GUINT64_FORMAT
                  " RDMA packets",
                  segs, pkts);
  g_assert_cmpuint (segs, >=, 2 * 500);
  g_assert_cmpuint (pkts, <, 50);

  /* RDMA calls: packets on the RDMA devices, (almost) no TCP segment */
  count_calls (&c, CALL_QUICK, 500, &segs, &pkts);
  g_test_message ("500 calls hinted rdma: %" G_GUINT64_FORMAT " TCP segments, %" G_GUINT64_FORMAT
                  " RDMA packets",
                  segs, pkts);
  g_assert_cmpuint (pkts, >=, 2 * 500);
  g_assert_cmpuint (segs, <, 50);

  /* no hint: the default leg is RDMA */
  count_calls (&c, CALL_PLAIN, 200, &segs, &pkts);
  g_assert_cmpuint (pkts, >=, 2 * 200);
  g_assert_cmpuint (segs, <, 50);

  /* an exception comes back on either leg, and the next call goes on */
  for (guint i = 0; i < 2; i++)
  {
    Oops *oops = NULL;
    gint32 r = -1, code = 0;

    g_assert_false (i == 0 ? legs_if_fail_tcp (c.client, &r, 5, &oops, &error)
                           : legs_if_fail_rdma (c.client, &r, 6, &oops, &error));
    g_assert_nonnull (oops);
    g_object_get (oops, "code", &code, NULL);
    g_assert_cmpint (code, ==, 5 + (gint) i);
    g_assert_cmpint (thrift_hybrid_get_last_leg (THRIFT_HYBRID (c.transport)), ==,
                     i == 0 ? THRIFT_HYBRID_LEG_TCP : THRIFT_HYBRID_LEG_RDMA);
    g_clear_object (&oops);
    g_clear_error (&error);
    call (&c, i == 0 ? CALL_BULK : CALL_QUICK, 100, i);
  }

  legs_client_clear (&c);
  legs_server_stop (&s);
  g_assert_true (rt_resources_at_baseline (baseline));
}

typedef struct
{
  const gchar *uri;
  guint calls;
  guint index;
  gint64 noted; /* the sum of this client's oneway notes */
} Job;

static gpointer
client_job (gpointer data)
{
  Job *job = data;
  LegsTestClient c;
  GError *error = NULL;

  legs_assert_open (&c, job->uri);
  for (guint i = 0; i < job->calls; i++)
  {
    guint k = (i * 7 + job->index) % 5;
    /* every call switches leg or function: 0 B to 9000 B */
    if (k < 3)
    {
      call (&c, (Call) k, (i * 997 + job->index * 13) % 9001, i ^ job->index);
    }
    else
    {
      gint32 x = (gint32) (i % 1000);
      g_assert_true (k == 3 ? legs_if_note_tcp (c.client, x, &error)
                            : legs_if_note_rdma (c.client, x, &error));
      g_assert_no_error (error);
      job->noted += x;
    }
  }
  legs_client_clear (&c);
  return NULL;
}

static void
test_many_clients_mixed (void)
{
  enum
  {
    CLIENTS = 4,
    CALLS = 2500
  }; /* 10,000 calls in all */
  guint port = next_port++;
  g_autofree gchar *u = uri (port, TRUE);
  gint baseline = rt_live_resources ();
  Job jobs[CLIENTS];
  GThread *threads[CLIENTS];
  LegsTestServer s;
  LegsTestClient c;
  GError *error = NULL;
  gint64 sum = 0, got = -1;

  g_assert_true (legs_server_start (&s, u, &error));
  /* the notes' sum before: the handler's total is shared by the tests of this process */
  legs_assert_open (&c, u);
  g_assert_true (legs_if_noted (c.client, &got, 0, &error));
  sum = got;
  for (guint i = 0; i < CLIENTS; i++)
  {
    jobs[i] = (Job){ .uri = u, .calls = CALLS, .index = i };
    threads[i] = g_thread_new ("hybrid-client", client_job, &jobs[i]);
  }
  for (guint i = 0; i < CLIENTS; i++)
  {
    g_thread_join (threads[i]);
    sum += jobs[i].noted;
  }
  /* every oneway call arrived, on either leg: the last ones of a client may still be in its
   * server thread's hands when this asks, nothing acknowledges them */
  for (gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;;)
  {
    g_assert_true (legs_if_noted (c.client, &got, 0, &error));
    g_assert_no_error (error);
    if (got == sum || g_get_monotonic_time () > deadline)
      break;
    g_usleep (20 * 1000);
  }
  g_assert_cmpint (got, ==, sum);
  legs_client_clear (&c);
  legs_server_stop (&s);
  g_assert_true (rt_resources_at_baseline (baseline));
}

/* ---- pairing ---- */

static int
connect_tcp (guint port)
{
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons (port) };
  int fd = socket (AF_INET, SOCK_STREAM, 0);

  g_assert_cmpint (inet_pton (AF_INET, rt_server_addr (), &a.sin_addr), ==, 1);
  g_assert_cmpint (connect (fd, (struct sockaddr *) &a, sizeof a), ==, 0);
  return fd;
}

/* An RDMA connection presenting @token: TRUE if the server let it in. */
static gboolean
rdma_with_token (guint port, const guint8 *token, GError **error)
{
  g_autoptr (GBytes) pair = g_bytes_new (token, HYBRID_TOKEN_LEN);
  ThriftTransport *t = g_object_new (THRIFT_TYPE_RDMA, "hostname", rt_server_addr (), "port", port,
                                     "source-address", rt_client_addr (), "pair-token", pair, NULL);
  gboolean ok = thrift_transport_open (t, error);

  if (ok)
    thrift_transport_close (t, NULL);
  g_object_unref (t);
  return ok;
}

static void
test_pairing_refusals (void)
{
  guint port = next_port++;
  g_autofree gchar *u = uri (port, TRUE);
  gint baseline = rt_live_resources ();
  guint8 msg[HYBRID_WELCOME_LEN], forged[HYBRID_TOKEN_LEN];
  HybridMessage welcome;
  LegsTestServer s;
  LegsTestClient c;
  GError *error = NULL;
  gint64 got = -1;
  int fd;

  g_assert_true (legs_server_start (&s, u, &error));

  /* a token nobody was given */
  memset (forged, 0x5a, sizeof forged);
  g_assert_false (rdma_with_token (port, forged, &error));
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_CONNECT);
  g_assert_nonnull (strstr (error->message, "unknown or was already used"));
  g_clear_error (&error);

  /* a real token, by hand: welcomed over TCP, used once by an RDMA leg, refused the second
   * time (another client claiming to be this one's leg) */
  fd = connect_tcp (port);
  hybrid_wire_hello (msg, HYBRID_WANT_RDMA);
  g_assert_cmpint (send (fd, msg, HYBRID_HELLO_LEN, 0), ==, HYBRID_HELLO_LEN);
  g_assert_cmpint (recv (fd, msg, HYBRID_WELCOME_LEN, MSG_WAITALL), ==, HYBRID_WELCOME_LEN);
  g_assert_true (hybrid_wire_parse_welcome (msg, HYBRID_WELCOME_LEN, &welcome, &error));
  g_assert_true (welcome.flags & HYBRID_HAS_RDMA);
  g_assert_true (rdma_with_token (port, welcome.token, &error));
  g_assert_no_error (error);
  g_assert_false (rdma_with_token (port, welcome.token, &error));
  g_assert_nonnull (strstr (error->message, "unknown or was already used"));
  g_clear_error (&error);
  close (fd);

  /* the server serves real clients all along */
  legs_assert_open (&c, u);
  g_assert_true (legs_if_noted (c.client, &got, 0, &error));
  g_assert_no_error (error);
  legs_client_clear (&c);
  legs_server_stop (&s);
  g_assert_true (rt_resources_at_baseline (baseline));
}

/* ---- a TCP service and an RDMA service in one process, called at once ---- */

typedef struct
{
  const gchar *uri;
  guint calls;
} Plain;

static gpointer
plain_job (gpointer data)
{
  Plain *job = data;
  LegsTestClient c;
  GError *error = NULL;

  legs_assert_open (&c, job->uri);
  for (guint i = 0; i < job->calls; i++)
  {
    g_autoptr (GByteArray) in = legs_payload ((i * 389) % 20000, i);
    GByteArray *out = NULL;

    g_assert_true (legs_if_plain (c.client, &out, in, &error));
    g_assert_no_error (error);
    g_assert_cmpmem (out->data, out->len, in->data, in->len);
    g_byte_array_unref (out);
  }
  legs_client_clear (&c);
  return NULL;
}

static void
test_tcp_and_rdma_services (void)
{
  guint tcp_port = next_port++, rdma_port = next_port++;
  g_autofree gchar *tcp_uri = g_strdup_printf ("tcp://%s:%u", rt_server_addr (), tcp_port);
  g_autofree gchar *rdma_uri = g_strdup_printf ("rdma://%s:%u", rt_server_addr (), rdma_port);
  g_autofree gchar *tcp_listen = g_strdup_printf ("tcp://:%u", tcp_port);
  Plain jobs[2] = { { tcp_uri, 1000 }, { rdma_uri, 1000 } };
  GThread *threads[2];
  LegsTestServer tcp, rdma;
  GError *error = NULL;
  guint64 segs = tcp_out_segments (), pkts = rt_rdma_sent_packets ();

  g_assert_true (legs_server_start (&tcp, tcp_listen, &error));
  g_assert_no_error (error);
  g_assert_true (legs_server_start (&rdma, rdma_uri, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < 2; i++)
    threads[i] = g_thread_new ("plain-client", plain_job, &jobs[i]);
  for (guint i = 0; i < 2; i++)
    g_thread_join (threads[i]);
  /* both kinds of traffic happened, each at least a packet per message */
  g_assert_cmpuint (tcp_out_segments () - segs, >=, 2000);
  g_assert_cmpuint (rt_rdma_sent_packets () - pkts, >=, 2000);
  legs_server_stop (&tcp);
  legs_server_stop (&rdma);
}

/* ---- the bulk transfer properties reach the RDMA legs ---- */

static void
set_bulk (gpointer object, guint threshold, guint depth, guint entries, guint64 bytes)
{
  g_object_set (object, "bulk-threshold", threshold, "bulk-chunk", 65536u, "bulk-depth", depth,
                "rcache-entries", entries, "rcache-bytes", bytes, NULL);
}

static void
assert_bulk (gpointer object, guint threshold, guint depth, guint entries, guint64 bytes)
{
  guint t = 0, c = 0, d = 0, e = 0;
  guint64 b = 0;

  g_object_get (object, "bulk-threshold", &t, "bulk-chunk", &c, "bulk-depth", &d, "rcache-entries",
                &e, "rcache-bytes", &b, NULL);
  g_assert_cmpuint (t, ==, threshold);
  g_assert_cmpuint (c, ==, 65536u);
  g_assert_cmpuint (d, ==, depth);
  g_assert_cmpuint (e, ==, entries);
  g_assert_cmpuint (b, ==, bytes);
}

static gpointer
open_hybrid (gpointer data)
{
  ThriftTransport *t = data;
  GError *error = NULL;

  if (!thrift_transport_open (t, &error))
    return error;
  return NULL;
}

/* What a ThriftHybrid and a ThriftServerHybrid are set to is what their RDMA legs carry (the
 * client's, and the accepted connection's through the server's RDMA listener). */
static void
test_bulk_props_reach_legs (void)
{
  guint port = next_port++;
  g_autofree gchar *u = uri (port, TRUE);
  gint baseline = rt_live_resources ();
  ThriftServerTransport *st;
  ThriftTransport *client, *accepted;
  GThread *opener;
  GError *error = NULL, *open_error;

  st = thrift_server_transport_new_for_uri (u, NULL, NULL, &error);
  g_assert_no_error (error);
  set_bulk (st, 20000, 3, 9, 8u << 20);
  g_assert_true (thrift_server_transport_listen (st, &error));
  g_assert_no_error (error);
  client = g_object_new (THRIFT_TYPE_HYBRID, "hostname", rt_server_addr (), "port", port, NULL);
  set_bulk (client, 16384, 2, 7, 6u << 20);
  opener = g_thread_new ("open", open_hybrid, client);
  accepted = thrift_server_transport_accept (st, &error);
  open_error = g_thread_join (opener);
  g_assert_no_error (open_error);
  g_assert_no_error (error);
  g_assert_nonnull (thrift_hybrid_get_rdma (THRIFT_HYBRID (client)));
  g_assert_nonnull (thrift_hybrid_get_rdma (THRIFT_HYBRID (accepted)));
  assert_bulk (thrift_hybrid_get_rdma (THRIFT_HYBRID (client)), 16384, 2, 7, 6u << 20);
  assert_bulk (thrift_hybrid_get_rdma (THRIFT_HYBRID (accepted)), 20000, 3, 9, 8u << 20);
  thrift_transport_close (client, NULL);
  thrift_transport_close (accepted, NULL);
  g_object_unref (client);
  g_object_unref (accepted);
  thrift_server_transport_close (st, NULL);
  g_object_unref (st);
  g_assert_true (rt_resources_at_baseline (baseline));
}

/* ---- faults: one leg dies while calls run on the other ---- */

typedef struct
{
  LegsTestClient *c;
  Call which;
  gint ok_calls;
  GError *error; /* the call that failed */
  gint64 failed_at;
} Caller;

static gpointer
call_until_error (gpointer data)
{
  Caller *k = data;
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  while (g_get_monotonic_time () < deadline)
  {
    g_autoptr (GByteArray) in = legs_payload (256, (guint) k->ok_calls);
    GByteArray *out = NULL;
    gboolean ok = k->which == CALL_BULK ? legs_if_bulk (k->c->client, &out, in, &k->error)
                                        : legs_if_quick (k->c->client, &out, in, &k->error);
    if (!ok)
    {
      k->failed_at = g_get_monotonic_time ();
      break;
    }
    g_byte_array_unref (out);
    k->ok_calls++;
  }
  return NULL;
}

static void
leg_dies (gboolean tcp_dies)
{
  guint port = next_port++;
  g_autofree gchar *u = g_strdup_printf ("hybrid://%s:%u?keepalive=2000", rt_server_addr (), port);
  g_autofree gchar *listen_uri = uri (port, TRUE);
  gint baseline = rt_live_resources ();
  LegsTestServer s;
  LegsTestClient c;
  Caller k = { .c = &c, .which = tcp_dies ? CALL_QUICK : CALL_BULK };
  GThread *thread = NULL;
  GError *error = NULL;
  gint64 killed;

  g_assert_true (legs_server_start (&s, listen_uri, &error));
  legs_assert_open (&c, u);
  if (tcp_dies)
  {
    /* the TCP leg ends under RDMA calls made by another thread */
    thread = g_thread_new ("caller", call_until_error, &k);
    g_usleep (300 * 1000);
    killed = g_get_monotonic_time ();
    shutdown (thrift_hybrid_get_socket (THRIFT_HYBRID (c.transport))->sd, SHUT_RDWR);
    g_thread_join (thread);
  }
  else
  {
    /* the RDMA leg disconnects between TCP calls (a transport is used by one thread) */
    for (guint i = 0; i < 50; i++)
      call (&c, CALL_BULK, 256, i);
    killed = g_get_monotonic_time ();
    g_assert_true (thrift_transport_close (
        THRIFT_TRANSPORT (thrift_hybrid_get_rdma (THRIFT_HYBRID (c.transport))), NULL));
    call_until_error (&k);
    k.ok_calls += 50;
  }
  g_test_message ("%s leg killed: %d calls went through on the other, the next failed %.1f ms "
                  "after: %s",
                  tcp_dies ? "tcp" : "rdma", k.ok_calls, (k.failed_at - killed) / 1e3,
                  k.error != NULL ? k.error->message : "-");
  g_assert_nonnull (k.error);
  g_assert_cmpint (k.ok_calls, >, 0);
  (void) thread;
  g_assert_cmpint (k.failed_at - killed, <, 10 * G_USEC_PER_SEC);
  g_clear_error (&k.error);
  legs_client_clear (&c);
  /* the server freed both legs by itself, while it goes on serving */
  for (gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
       rt_live_resources () != baseline && g_get_monotonic_time () < deadline;)
    g_usleep (20 * 1000);
  g_assert_true (rt_resources_at_baseline (baseline));
  legs_server_stop (&s);
}

static void
test_tcp_leg_dies (void)
{
  leg_dies (TRUE);
}

static void
test_rdma_leg_dies (void)
{
  leg_dies (FALSE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/hybrid-rdma/legs-by-kernel-counters", test_legs_by_counters);
  g_test_add_func ("/hybrid-rdma/many-clients-mixed", test_many_clients_mixed);
  g_test_add_func ("/hybrid-rdma/pairing-refusals", test_pairing_refusals);
  g_test_add_func ("/hybrid-rdma/tcp-and-rdma-services", test_tcp_and_rdma_services);
  g_test_add_func ("/hybrid-rdma/bulk-props-reach-legs", test_bulk_props_reach_legs);
  g_test_add_func ("/hybrid-rdma/fault/tcp-leg-dies", test_tcp_leg_dies);
  g_test_add_func ("/hybrid-rdma/fault/rdma-leg-dies", test_rdma_leg_dies);
  return g_test_run ();
}
