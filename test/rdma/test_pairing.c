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
 * Pairing on the RDMA side (hybrid://) in the soft-RoCE guest: a ThriftServerRdma with an
 * admission function that admits each waiting token once, driven as a caller that waits on
 * several listeners drives it (thrift_server_rdma_get_fd, poll, _accept_ready), and clients
 * with and without a "pair-token".  An admitted token reaches the accepted connection; an
 * unknown or reused token, or a missing one the function refuses, fails the client's open
 * with THRIFT_TRANSPORT_ERROR_CONNECT saying why, and the server goes on serving; a plain
 * rdma:// server (no admission function) admits requests without a token and refuses a token.
 * accept_ready and the descriptor are checked step by step, interrupt included, and every
 * refusal leaves no verbs or CM object behind.
 */
#include "config.h"

#include <poll.h>
#include <string.h>

#include <thrift/c_glib/transport/thrift_transport.h>

#include "lib/c_glib/transport/rdma/rdma_resources.h"
#include "rdma_test_util.h"

#define WAIT_MS 10000

/* ---- the pairing server: admission by a table of waiting tokens, accepted queue ---- */

typedef struct
{
  ThriftServerTransport *server;
  GThread *thread;
  GAsyncQueue *accepted; /* ThriftTransport * (owned) the loop accepted */
  GMutex lock;
  GHashTable *waiting;      /* GBytes * tokens whose TCP leg waits: each admits once */
  gint admit_without_token; /* (atomic) what the function says to a request without */
  gint admitted, refused;   /* (atomic) the function's verdicts */
  GError *error;            /* why the loop ended, if not by the interrupt */
} PairServer;

static PairServer ps;
static RdmaResCounts baseline;

static gboolean
admit (const guint8 *token, gpointer user_data, gchar **reason)
{
  PairServer *p = user_data;
  gboolean ok;

  g_assert_true (p == &ps);
  /* the function runs in the accepting thread (ps.thread is set long before a client comes) */
  g_assert_true (g_thread_self () == p->thread);
  if (token == NULL)
  {
    ok = g_atomic_int_get (&p->admit_without_token);
    if (!ok)
      *reason = g_strdup ("no pairing token");
  }
  else
  {
    GBytes *key = g_bytes_new (token, THRIFT_RDMA_PAIR_TOKEN_LEN);

    g_mutex_lock (&p->lock);
    ok = g_hash_table_remove (p->waiting, key); /* used up: a second one is unknown */
    g_mutex_unlock (&p->lock);
    g_bytes_unref (key);
    if (!ok)
      *reason = g_strdup ("no TCP leg waits for this token");
  }
  g_atomic_int_inc (ok ? &p->admitted : &p->refused);
  return ok;
}

/* The loop of a caller with several listeners: one here, waited on by its descriptor. */
static gpointer
serve_loop (gpointer data)
{
  PairServer *p = data;
  ThriftServerRdma *srv = THRIFT_SERVER_RDMA (p->server);

  for (;;)
  {
    gint64 next = -1;
    GError *e = NULL;
    ThriftTransport *t = thrift_server_rdma_accept_ready (srv, &next, &e);
    struct pollfd pfd = { .fd = thrift_server_rdma_get_fd (srv), .events = POLLIN };
    int timeout;

    if (t != NULL)
    {
      g_assert_cmpint (next, ==, 0);
      g_async_queue_push (p->accepted, t);
      continue;
    }
    if (e != NULL)
    {
      if (thrift_server_rdma_get_last_status (srv) == THRIFT_RDMA_STATUS_INTERRUPTED)
        g_error_free (e);
      else
        p->error = e;
      return NULL;
    }
    g_assert_cmpint (next, >=, 0);
    timeout = next == 0 ? -1
                        : (int) CLAMP ((next - g_get_monotonic_time () + 999) / 1000, 0, G_MAXINT);
    g_assert_cmpint (poll (&pfd, 1, timeout), >=, 0);
  }
}

static void
pair_server_start (void)
{
  GError *error = NULL;

  g_mutex_init (&ps.lock);
  ps.waiting = g_hash_table_new_full (g_bytes_hash, g_bytes_equal, (GDestroyNotify) g_bytes_unref,
                                      NULL);
  ps.accepted = g_async_queue_new ();
  ps.server = g_object_new (THRIFT_TYPE_SERVER_RDMA, "hostname", rt_server_addr (), "port", 0,
                            NULL);
  thrift_server_rdma_set_admission (THRIFT_SERVER_RDMA (ps.server), admit, &ps);
  g_assert_true (thrift_server_transport_listen (ps.server, &error));
  g_assert_no_error (error);
  ps.thread = g_thread_new ("pair server", serve_loop, &ps);
}

static void
pair_server_stop (void)
{
  ThriftTransport *t;

  thrift_server_rdma_interrupt (THRIFT_SERVER_RDMA (ps.server));
  g_thread_join (ps.thread);
  g_assert_no_error (ps.error);
  while ((t = g_async_queue_try_pop (ps.accepted)) != NULL)
  {
    thrift_transport_close (t, NULL);
    g_object_unref (t);
  }
  thrift_server_transport_close (ps.server, NULL);
  g_object_unref (ps.server);
  g_async_queue_unref (ps.accepted);
  g_hash_table_unref (ps.waiting);
  g_mutex_clear (&ps.lock);
}

/* A fresh random token; with @waiting, a TCP leg now waits for it. */
static GBytes *
new_token (gboolean waiting)
{
  guint8 t[THRIFT_RDMA_PAIR_TOKEN_LEN];
  GBytes *b;

  for (guint i = 0; i < sizeof t; i += 4)
  {
    guint32 r = g_random_int ();
    memcpy (t + i, &r, 4);
  }
  t[0] |= 1; /* never all zero */
  b = g_bytes_new (t, sizeof t);
  if (waiting)
  {
    g_mutex_lock (&ps.lock);
    g_hash_table_add (ps.waiting, g_bytes_ref (b));
    g_mutex_unlock (&ps.lock);
  }
  return b;
}

static ThriftTransport *
client_new (guint port, GBytes *token)
{
  ThriftTransport *t = rt_client_new (port, THRIFT_RDMA_POLLING_EVENT);

  g_object_set (t, "pair-token", token, NULL);
  return t;
}

static ThriftTransport *
next_accepted (void)
{
  ThriftTransport *s = g_async_queue_timeout_pop (ps.accepted, WAIT_MS * 1000);

  if (s == NULL)
    g_error ("the server accepted no connection within %d ms", WAIT_MS);
  return s;
}

/* (@error by reference: it is read after the call in @ok set it) */
static void
check (gboolean ok, GError **error, const gchar *what)
{
  if (!ok)
    g_error ("%s: %s", what, *error != NULL ? (*error)->message : "failed without an error");
}

/* The accepted side of exchange: answers one message, in its own thread (a protocol may
 * need the peer's answer before a message goes out, as a direct ring's advert). */
static gpointer
answer_main (gpointer data)
{
  ThriftTransport *s = data;
  GError *error = NULL;
  gchar buf[8] = { 0 };

  check (thrift_transport_read_all (s, buf, 4, &error) == 4, &error, "server read");
  check (thrift_transport_read_end (s, &error), &error, "server read_end");
  g_assert_cmpstr (buf, ==, "ping");
  check (thrift_transport_write (s, (gpointer) "pong", 4, &error), &error, "server write");
  check (thrift_transport_flush (s, &error), &error, "server flush");
  return NULL;
}

/* One message each way between a client and its accepted connection. */
static void
exchange (ThriftTransport *c, ThriftTransport *s)
{
  GThread *answer = g_thread_new ("answer", answer_main, s);
  GError *error = NULL;
  gchar buf[8] = { 0 };

  check (thrift_transport_write (c, (gpointer) "ping", 4, &error), &error, "client write");
  check (thrift_transport_flush (c, &error), &error, "client flush");
  check (thrift_transport_read_all (c, buf, 4, &error) == 4, &error, "client read");
  check (thrift_transport_read_end (c, &error), &error, "client read_end");
  g_assert_cmpstr (buf, ==, "pong");
  g_thread_join (answer);
}

static void
close_both (ThriftTransport *c, ThriftTransport *s)
{
  thrift_transport_close (c, NULL);
  g_object_unref (c);
  thrift_transport_close (s, NULL);
  g_object_unref (s);
}

/* A client opened with @token (NULL: none), accepted; the server saw @token. */
static void
connect_admitted (guint port, GBytes *token, ThriftTransport **c, ThriftTransport **s)
{
  GError *error = NULL;
  const guint8 *seen;

  *c = client_new (port, token);
  if (!thrift_transport_open (*c, &error))
    g_error ("open: %s", error->message);
  *s = next_accepted ();
  seen = thrift_rdma_get_peer_pair_token (THRIFT_RDMA (*s));
  if (token == NULL)
  {
    g_assert_null (seen);
  }
  else
  {
    g_assert_nonnull (seen);
    g_assert_cmpmem (seen, THRIFT_RDMA_PAIR_TOKEN_LEN, g_bytes_get_data (token, NULL),
                     THRIFT_RDMA_PAIR_TOKEN_LEN);
  }
  /* the client's own side never has a peer token */
  g_assert_null (thrift_rdma_get_peer_pair_token (THRIFT_RDMA (*c)));
}

/* Every verbs and CM object of the process is back at the baseline (waits for teardown). */
static void
assert_resources_back (void)
{
  gint64 until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  RdmaResCounts now;

  for (;;)
  {
    rdma_res_counts (&now);
    if ((now.qps == baseline.qps && now.cqs == baseline.cqs && now.mrs == baseline.mrs
         && now.pds == baseline.pds && now.comp_channels == baseline.comp_channels
         && now.cm_ids == baseline.cm_ids && now.cm_channels == baseline.cm_channels)
        || g_get_monotonic_time () > until)
      break;
    g_usleep (10000);
  }
  g_assert_cmpint (now.qps, ==, baseline.qps);
  g_assert_cmpint (now.cqs, ==, baseline.cqs);
  g_assert_cmpint (now.mrs, ==, baseline.mrs);
  g_assert_cmpint (now.pds, ==, baseline.pds);
  g_assert_cmpint (now.comp_channels, ==, baseline.comp_channels);
  g_assert_cmpint (now.cm_ids, ==, baseline.cm_ids);
  g_assert_cmpint (now.cm_channels, ==, baseline.cm_channels);
  g_assert_cmpint (now.pinned_bytes, ==, baseline.pinned_bytes);
}

/* Opening @c fails: refused by the server, saying @why. */
static void
assert_refused (ThriftTransport *c, const gchar *why)
{
  GError *error = NULL;

  g_assert_false (thrift_transport_open (c, &error));
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_CONNECT);
  g_test_message ("refused: %s", error->message);
  if (strstr (error->message, "the server refused the connection: ") == NULL
      || strstr (error->message, why) == NULL)
    g_error ("the error '%s' does not say '%s'", error->message, why);
  g_assert_cmpint (thrift_rdma_error_status (error), ==, THRIFT_RDMA_STATUS_REFUSED);
  g_assert_cmpint (thrift_rdma_get_last_status (THRIFT_RDMA (c)), ==, THRIFT_RDMA_STATUS_REFUSED);
  g_assert_false (thrift_transport_is_open (c));
  g_error_free (error);
}

static guint
ps_port (void)
{
  return thrift_server_rdma_get_port (THRIFT_SERVER_RDMA (ps.server));
}

/* ---- the tests ---- */

static void
test_admitted (void)
{
  GBytes *token = new_token (TRUE);
  ThriftTransport *c, *s;
  gint before = g_atomic_int_get (&ps.admitted);

  connect_admitted (ps_port (), token, &c, &s);
  g_assert_cmpint (g_atomic_int_get (&ps.admitted), ==, before + 1);
  exchange (c, s);
  close_both (c, s);
  g_bytes_unref (token);
  assert_resources_back ();
}

static void
test_unknown_token (void)
{
  GBytes *unknown = new_token (FALSE), *good = new_token (TRUE);
  gint refused = g_atomic_int_get (&ps.refused);
  ThriftTransport *c = client_new (ps_port (), unknown), *s;
  GError *error = NULL;

  assert_refused (c, "its pairing token is unknown or was already used");
  g_assert_cmpint (g_atomic_int_get (&ps.refused), ==, refused + 1);
  g_assert_true (g_async_queue_length (ps.accepted) == 0);
  assert_resources_back ();
  /* the server goes on, and so does the same client object with a good token */
  g_object_set (c, "pair-token", good, NULL);
  g_assert_true (thrift_transport_open (c, &error));
  g_assert_no_error (error);
  s = next_accepted ();
  g_assert_cmpmem (thrift_rdma_get_peer_pair_token (THRIFT_RDMA (s)), 16,
                   g_bytes_get_data (good, NULL), 16);
  exchange (c, s);
  close_both (c, s);
  g_bytes_unref (unknown);
  g_bytes_unref (good);
  assert_resources_back ();
}

static void
test_used_token (void)
{
  GBytes *token = new_token (TRUE);
  ThriftTransport *c, *s, *second;

  connect_admitted (ps_port (), token, &c, &s);
  /* another client claims the same pair while the first one is connected ... */
  second = client_new (ps_port (), token);
  assert_refused (second, "its pairing token is unknown or was already used");
  /* ... and after it left */
  exchange (c, s);
  close_both (c, s);
  assert_refused (second, "its pairing token is unknown or was already used");
  g_object_unref (second);
  g_bytes_unref (token);
  assert_resources_back ();
}

static void
test_no_token (void)
{
  ThriftTransport *c, *s;

  /* the function admits it: connected, no token on the server's side */
  g_atomic_int_set (&ps.admit_without_token, TRUE);
  connect_admitted (ps_port (), NULL, &c, &s);
  exchange (c, s);
  close_both (c, s);
  /* the function refuses it */
  g_atomic_int_set (&ps.admit_without_token, FALSE);
  c = client_new (ps_port (), NULL);
  assert_refused (c, "it carries no pairing token");
  g_object_unref (c);
  assert_resources_back ();
}

/* A plain rdma:// server (no admission function) with its blocking accept: requests without
 * a token as always, a token refused. */
static void
test_plain_server (void)
{
  RtEchoServer *plain = rt_echo_server_start (THRIFT_RDMA_POLLING_EVENT, 1 << 20, 0);
  GBytes *token = new_token (FALSE);
  ThriftTransport *c = client_new (rt_echo_server_port (plain), NULL);
  GError *error = NULL;

  g_assert_true (thrift_transport_open (c, &error));
  g_assert_no_error (error);
  g_assert_true (rt_echo (c, 100, 1, &error));
  g_assert_no_error (error);
  thrift_transport_close (c, NULL);
  g_object_set (c, "pair-token", token, NULL);
  assert_refused (c, "this server does not pair connections");
  g_object_unref (c);
  /* and the server goes on */
  c = client_new (rt_echo_server_port (plain), NULL);
  g_assert_true (thrift_transport_open (c, &error));
  g_assert_true (rt_echo (c, 5000, 2, &error));
  g_assert_no_error (error);
  thrift_transport_close (c, NULL);
  g_object_unref (c);
  g_assert_cmpuint (rt_echo_server_failed (plain), ==, 0);
  rt_echo_server_stop (plain);
  g_bytes_unref (token);
  assert_resources_back ();
}

typedef struct
{
  guint port;
  GBytes *token;
  ThriftTransport *c;
  GError *error;
} Opener;

static gpointer
open_main (gpointer data)
{
  Opener *o = data;

  o->c = client_new (o->port, o->token);
  thrift_transport_open (o->c, &o->error);
  return NULL;
}

static gboolean
readable (gint fd, gint timeout_ms)
{
  struct pollfd pfd = { .fd = fd, .events = POLLIN };
  gint r = poll (&pfd, 1, timeout_ms);

  g_assert_cmpint (r, >=, 0);
  return r > 0 && (pfd.revents & POLLIN) != 0;
}

/* accept_ready and the descriptor step by step, from this thread (no admission function). */
static void
test_accept_ready (void)
{
  ThriftServerTransport *srv = g_object_new (THRIFT_TYPE_SERVER_RDMA, "hostname", rt_server_addr (),
                                             "port", 0, NULL);
  ThriftServerRdma *rs = THRIFT_SERVER_RDMA (srv);
  ThriftTransport *s = NULL;
  GError *error = NULL;
  gint64 next = -1, until;
  gboolean saw_pending = FALSE;
  Opener o = { 0 };
  GThread *opener;
  gint fd;

  /* before listen: no descriptor, and accept_ready says it is not listening */
  g_assert_cmpint (thrift_server_rdma_get_fd (rs), ==, -1);
  g_assert_null (thrift_server_rdma_accept_ready (rs, &next, &error));
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET);
  g_assert_cmpint (thrift_server_rdma_get_last_status (rs), ==, THRIFT_RDMA_STATUS_NOT_OPEN);
  g_clear_error (&error);

  g_assert_true (thrift_server_transport_listen (srv, &error));
  fd = thrift_server_rdma_get_fd (rs);
  g_assert_cmpint (fd, >=, 0);
  /* nothing pending: quiet descriptor, NULL without an error, no deadline */
  g_assert_false (readable (fd, 0));
  next = -1;
  g_assert_null (thrift_server_rdma_accept_ready (rs, &next, &error));
  g_assert_no_error (error);
  g_assert_cmpint (next, ==, 0);
  g_assert_false (readable (fd, 200));
  g_assert_null (thrift_server_rdma_accept_ready (rs, NULL, &error));
  g_assert_no_error (error);

  /* a client: the descriptor wakes a poll, and accept_ready completes the handshake */
  o.port = thrift_server_rdma_get_port (rs);
  opener = g_thread_new ("opener", open_main, &o);
  g_assert_true (readable (fd, WAIT_MS));
  until = g_get_monotonic_time () + (gint64) WAIT_MS * 1000;
  while (s == NULL && g_get_monotonic_time () < until)
  {
    gint64 before = g_get_monotonic_time ();

    s = thrift_server_rdma_accept_ready (rs, &next, &error);
    g_assert_no_error (error);
    if (s != NULL)
    {
      g_assert_cmpint (next, ==, 0);
      break;
    }
    if (next != 0)
    {
      /* a handshake in progress: its deadline (5 s) is ahead */
      saw_pending = TRUE;
      g_assert_cmpint (next, >, before);
      g_assert_cmpint (next, <=, g_get_monotonic_time () + 6 * G_USEC_PER_SEC);
    }
    readable (fd, next == 0 ? 100 : (gint) MAX ((next - g_get_monotonic_time ()) / 1000, 0));
  }
  g_assert_nonnull (s);
  g_test_message ("a pending handshake's deadline was %sseen", saw_pending ? "" : "not ");
  g_thread_join (opener);
  g_assert_no_error (o.error);
  exchange (o.c, s);
  close_both (o.c, s);
  /* idle again */
  g_assert_null (thrift_server_rdma_accept_ready (rs, &next, &error));
  g_assert_no_error (error);

  /* the interrupt makes the descriptor readable; accept_ready then fails, and keeps failing */
  g_assert_false (readable (fd, 0));
  thrift_server_rdma_interrupt (rs);
  g_assert_true (readable (fd, 1000));
  for (guint i = 0; i < 2; i++)
  {
    g_assert_null (thrift_server_rdma_accept_ready (rs, &next, &error));
    g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET);
    g_assert_cmpint (thrift_server_rdma_get_last_status (rs), ==, THRIFT_RDMA_STATUS_INTERRUPTED);
    g_assert_cmpint (next, ==, 0);
    g_clear_error (&error);
    g_assert_true (readable (fd, 0));
  }
  /* the blocking accept (the same step, and a wait on the descriptor) fails too */
  g_assert_null (thrift_server_transport_accept (srv, &error));
  g_assert_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_SOCKET);
  g_clear_error (&error);

  thrift_server_transport_close (srv, NULL);
  g_assert_cmpint (thrift_server_rdma_get_fd (rs), ==, -1);
  /* listening again clears the interrupt */
  g_assert_true (thrift_server_transport_listen (srv, &error));
  g_assert_cmpint (thrift_server_rdma_get_fd (rs), >=, 0);
  g_assert_null (thrift_server_rdma_accept_ready (rs, &next, &error));
  g_assert_no_error (error);
  thrift_server_transport_close (srv, NULL);
  g_object_unref (srv);
  assert_resources_back ();
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  pair_server_start ();
  /* what the tests leave must come back to this: the pairing server listening */
  rdma_res_counts (&baseline);
  g_test_add_func ("/pairing/admitted", test_admitted);
  g_test_add_func ("/pairing/refused/unknown_token", test_unknown_token);
  g_test_add_func ("/pairing/refused/used_token", test_used_token);
  g_test_add_func ("/pairing/no_token", test_no_token);
  g_test_add_func ("/pairing/plain_server", test_plain_server);
  g_test_add_func ("/pairing/accept_ready", test_accept_ready);
  rc = g_test_run ();
  pair_server_stop ();
  /* the listener too: nothing is left */
  rdma_res_counts (&baseline);
  if (baseline.qps + baseline.cqs + baseline.mrs + baseline.pds + baseline.cm_ids
          + baseline.cm_channels + baseline.comp_channels
      != 0)
  {
    g_printerr ("verbs or CM objects left at the end: %d QPs, %d CQs, %d MRs, %d PDs, %d CM "
                "ids, %d CM channels\n",
                baseline.qps, baseline.cqs, baseline.mrs, baseline.pds, baseline.cm_ids,
                baseline.cm_channels);
    rc = 1;
  }
  return rc;
}
