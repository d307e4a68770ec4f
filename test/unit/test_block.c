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
 * test_block.c: a client's reply wait blocked in the completion channel's read alone
 * (rdma_block.h), over the in-memory provider (fake_verbs.h, whose channel blocks once its fd
 * is made blocking).  Each reason poll (2) watched wakes it: a reply, the peer's disconnect,
 * an interrupt from another thread, the deadline, the keepalive's ticks and its verdict on a
 * vanished peer; every wait blocked in the read and none in poll (2), and nothing is left
 * behind (the watcher thread, its registrations, fds, verbs objects).
 */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <glib.h>

#include "lib/c_glib/transport/rdma/rdma_block.h"
#include "lib/c_glib/transport/rdma/rdma_conn_private.h"
#include "lib/c_glib/transport/rdma/rdma_proto.h"
#include "lib/c_glib/transport/rdma/rdma_resources.h"
#include "lib/c_glib/transport/rdma/rdma_signal.h"
#include "lib/c_glib/transport/rdma/rdma_status.h"
#include "lib/c_glib/transport/rdma/rdma_verbs.h"
#include "fake_verbs.h"
#include "test/server/serve_thread.h"

#define MAX_MESSAGE (1u << 20)
#define WAIT_S 30

typedef struct
{
  RdmaConn *c, *s;
  struct rdma_cm_id *cid, *sid;
  guint fds; /* open before */
} Pair;

static void
pair_open (Pair *p, guint client_keepalive_ms)
{
  RdmaConnSettings cs, ss;
  GError *error = NULL;

  memset (p, 0, sizeof *p);
  p->fds = test_count_entries ("/proc/self/fd");
  rdma_conn_settings_init (&cs, MAX_MESSAGE, THRIFT_RDMA_POLLING_EVENT);
  rdma_conn_settings_init (&ss, MAX_MESSAGE, THRIFT_RDMA_POLLING_EVENT);
  cs.keepalive_ms = client_keepalive_ms;
  ss.keepalive_ms = 0;
  fake_verbs_link (&p->cid, &p->sid);
  if (!rdma_conn_pair (p->cid, p->sid, &cs, &ss, &p->c, &p->s, &error))
    g_error ("pair: %s", error->message);
}

/* Both gone: no verbs object, watcher, registration, blocked read or fd is left. */
static void
pair_close (Pair *p)
{
  RdmaResCounts r;

  rdma_conn_free (p->c);
  rdma_conn_free (p->s);
  rdma_res_counts (&r);
  g_assert_cmpint (r.qps + r.cqs + r.comp_channels + r.cm_ids + r.cm_channels, ==, 0);
  fake_verbs_assert_clean ();
  g_assert_cmpuint (rdma_block_registered (), ==, 0);
  g_assert_cmpuint (rdma_block_threads (), ==, 0);
  g_assert_cmpuint (fake_verbs_blocked_reads (), ==, 0);
  g_assert_cmpuint (test_count_entries ("/proc/self/fd"), ==, p->fds);
}

/* Every wait of the client blocked in the read (at least @min), none in poll (2). */
static void
assert_blocked_in_read (Pair *p, guint64 min)
{
  const ThriftRdmaStats *st = rdma_conn_stats (p->c);

  g_test_message ("client: %" G_GUINT64_FORMAT " waits in the read, %" G_GUINT64_FORMAT
                  " in poll, %" G_GUINT64_FORMAT " CQ events, %" G_GUINT64_FORMAT " probes",
                  st->read_waits, st->poll_waits, st->cq_events, st->keepalive_probes);
  g_assert_cmpuint (st->poll_waits, ==, 0);
  g_assert_cmpuint (st->read_waits, >=, min);
}

/* What another thread does to the pair while the client waits. */
typedef enum
{
  DO_REPLY,      /* the server reads the request and answers */
  DO_DISCONNECT, /* the server closes its connection */
  DO_INTERRUPT,  /* thrift_rdma_interrupt, as it does it: the eventfd, then the flag */
  DO_VANISH,     /* the server's host goes down: no CM event, no answer */
  DO_SIGNAL,     /* a signal whose handler lacks SA_RESTART, to the waiting thread */
  DO_NOTHING
} Action;

typedef struct
{
  Pair *p;
  Action action;
  gulong delay_us;
  int wake_fd;
  gint interrupted;
  pthread_t waiter;
} Actor;

static gpointer
actor_main (gpointer data)
{
  Actor *a = data;
  GError *e = NULL;
  RdmaMessage *msg;
  guint64 one = 1;

  /* the client blocks meanwhile */
  while (fake_verbs_blocked_reads () == 0)
    g_usleep (1000);
  g_usleep (a->delay_us);
  switch (a->action)
  {
  case DO_REPLY:
    msg = rdma_conn_wait_message (a->p->s, g_get_monotonic_time () + WAIT_S * G_USEC_PER_SEC, &e);
    g_assert_no_error (e);
    g_assert_true (rdma_conn_send (a->p->s, rdma_message_data (msg), rdma_message_len (msg),
                                   g_get_monotonic_time () + WAIT_S * G_USEC_PER_SEC, &e));
    g_assert_true (rdma_conn_release_message (a->p->s, &e));
    break;
  case DO_DISCONNECT:
    rdma_conn_free (a->p->s);
    a->p->s = NULL;
    break;
  case DO_INTERRUPT:
    g_assert_cmpint (write (a->wake_fd, &one, sizeof one), ==, sizeof one);
    g_atomic_int_set (&a->interrupted, 1);
    break;
  case DO_VANISH:
    fake_verbs_vanish (a->p->sid, FALSE);
    break;
  case DO_SIGNAL:
    g_assert_cmpint (pthread_kill (a->waiter, SIGUSR1), ==, 0);
    break;
  case DO_NOTHING:
    break;
  }
  return NULL;
}

/* The client sends a request and waits for its reply (@timeout_ms, 0: WAIT_S) while @a acts;
 * returns the wait's error (NULL: the reply came) and its time in @took_ms. */
static GError *
call (Pair *p, Actor *a, guint timeout_ms, gdouble *took_ms)
{
  static const guint8 req[64] = { 1, 2, 3 };
  GError *e = NULL;
  GThread *t;
  gint64 t0;
  RdmaMessage *msg;

  g_assert_true (rdma_conn_send (p->c, req, sizeof req,
                                 g_get_monotonic_time () + WAIT_S * G_USEC_PER_SEC, &e));
  a->p = p;
  a->waiter = pthread_self ();
  t = g_thread_new ("actor", actor_main, a);
  t0 = g_get_monotonic_time ();
  msg = rdma_conn_wait_reply (
      p->c, t0 + (timeout_ms != 0 ? timeout_ms * 1000 : WAIT_S * G_USEC_PER_SEC), &e);
  *took_ms = (g_get_monotonic_time () - t0) / 1000.0;
  g_thread_join (t);
  if (msg != NULL)
  {
    g_assert_cmpuint (rdma_message_len (msg), ==, sizeof req);
    g_assert_true (rdma_conn_release_message (p->c, NULL));
  }
  g_test_message ("after %.1f ms: %s", *took_ms, e != NULL ? e->message : "the reply");
  return e;
}

static void
test_reply (void)
{
  Actor a = { .action = DO_REPLY, .delay_us = 20000 };
  gdouble ms;
  Pair p;

  pair_open (&p, 0);
  for (guint i = 0; i < 5; i++)
    g_assert_no_error (call (&p, &a, 0, &ms));
  assert_blocked_in_read (&p, 5);
  g_assert_cmpuint (rdma_block_threads (), ==, 1);
  g_assert_cmpuint (rdma_block_registered (), ==, 1);
  pair_close (&p);
}

static void
test_disconnect (void)
{
  Actor a = { .action = DO_DISCONNECT, .delay_us = 20000 };
  gdouble ms;
  GError *e;
  Pair p;

  pair_open (&p, 0);
  e = call (&p, &a, 0, &ms);
  g_assert_error (e, RDMA_ENGINE_ERROR, RDMA_ERR_PEER_GONE);
  g_assert_cmpstr (strstr (e->message, "the peer closed the connection"), !=, NULL);
  g_assert_cmpfloat (ms, <, 1000);
  g_error_free (e);
  assert_blocked_in_read (&p, 1);
  pair_close (&p);
}

static void
test_interrupt (void)
{
  Actor a = { .action = DO_INTERRUPT, .delay_us = 20000 };
  gdouble ms;
  GError *e;
  Pair p;

  a.wake_fd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
  pair_open (&p, 0);
  rdma_conn_set_wake (p.c, a.wake_fd, &a.interrupted);
  e = call (&p, &a, 0, &ms);
  g_assert_error (e, RDMA_ENGINE_ERROR, RDMA_ERR_INTERRUPTED);
  g_assert_cmpstr (strstr (e->message, "thrift_rdma_interrupt was called"), !=, NULL);
  g_assert_cmpfloat (ms, <, 1000);
  g_error_free (e);
  assert_blocked_in_read (&p, 1);
  pair_close (&p);
  close (a.wake_fd);
}

static void
test_deadline (void)
{
  Actor a = { .action = DO_NOTHING };
  gdouble ms;
  GError *e;
  Pair p;

  pair_open (&p, 0);
  e = call (&p, &a, 150, &ms);
  g_assert_error (e, RDMA_ENGINE_ERROR, RDMA_ERR_TIMED_OUT);
  g_assert_cmpstr (strstr (e->message, "no message within the call timeout"), !=, NULL);
  g_assert_cmpfloat (ms, >=, 150);
  g_assert_cmpfloat (ms, <, 1000);
  g_error_free (e);
  assert_blocked_in_read (&p, 1);
  pair_close (&p);
}

/* A quiet server that is there: the watcher's ticks probe it (keepalive 400 ms: every 100
 * ms), each answered probe wakes the client, which blocks again; the call ends at its
 * deadline, not for the keepalive. */
static void
test_keepalive_tick (void)
{
  Actor a = { .action = DO_NOTHING };
  const ThriftRdmaStats *st;
  gdouble ms;
  GError *e;
  Pair p;

  pair_open (&p, 400);
  e = call (&p, &a, 700, &ms);
  g_assert_error (e, RDMA_ENGINE_ERROR, RDMA_ERR_TIMED_OUT);
  g_assert_cmpfloat (ms, >=, 700);
  g_error_free (e);
  st = rdma_conn_stats (p.c);
  g_assert_cmpuint (st->keepalive_probes, >=, 3);
  /* woken by each probe's completion, blocked again */
  assert_blocked_in_read (&p, st->keepalive_probes);
  pair_close (&p);
}

/* A server whose host went down (no CM event) while the client waits: the watcher's tick
 * probes it (the provider fails a WR to a vanished peer at once, as after the retries), and
 * the client hears of it within the keepalive. */
static void
test_keepalive_vanished (void)
{
  Actor a = { .action = DO_VANISH, .delay_us = 20000 };
  gdouble ms;
  GError *e;
  Pair p;

  pair_open (&p, 400);
  e = call (&p, &a, 5000, &ms);
  g_assert_error (e, RDMA_ENGINE_ERROR, RDMA_ERR_PEER_GONE);
  g_assert_cmpfloat (ms, <, 1000);
  g_error_free (e);
  assert_blocked_in_read (&p, 1);
  pair_close (&p);
}

/* A server that answers nothing, not even its adapter's ACKs (the provider runs no WR: a
 * black hole): the watcher's tick probes it, then finds the probe unanswered and fails the
 * connection with the keepalive's own error, which the client reports, in about three
 * quarters of keepalive. */
static void
test_keepalive_expiry (void)
{
  Actor a = { .action = DO_NOTHING };
  gdouble ms;
  GError *e;
  Pair p;

  pair_open (&p, 400);
  fake_verbs_set_timing (FAKE_MANUAL, 1);
  e = call (&p, &a, 5000, &ms);
  g_assert_error (e, RDMA_ENGINE_ERROR, RDMA_ERR_PEER_GONE);
  g_assert_cmpstr (strstr (e->message, "no sign of life from the peer"), !=, NULL);
  g_assert_cmpfloat (ms, >=, 150);
  g_assert_cmpfloat (ms, <, 1000);
  g_error_free (e);
  assert_blocked_in_read (&p, 1);
  fake_verbs_set_timing (FAKE_IMMEDIATE, 0);
  pair_close (&p);
}

static void
on_signal (int sig)
{
}

/* A signal whose handler was installed without SA_RESTART ends the blocked read with EINTR,
 * and the wait, as it ends recv (2) (rdma_signal.h); the connection stays (it is the
 * caller's to fail). */
static void
test_signal (void)
{
  Actor a = { .action = DO_SIGNAL, .delay_us = 20000 };
  struct sigaction sa = { .sa_handler = on_signal }, old;
  gdouble ms;
  GError *e;
  Pair p;

  g_assert_cmpint (sigaction (SIGUSR1, &sa, &old), ==, 0);
  rdma_signal_snapshot ();
  pair_open (&p, 0);
  e = call (&p, &a, 0, &ms);
  g_assert_error (e, RDMA_ENGINE_ERROR, RDMA_ERR_INTERRUPTED);
  g_assert_cmpstr (strstr (e->message, "a signal interrupted the wait"), !=, NULL);
  g_assert_cmpfloat (ms, <, 1000);
  g_error_free (e);
  assert_blocked_in_read (&p, 1);
  pair_close (&p);
  g_assert_cmpint (sigaction (SIGUSR1, &old, NULL), ==, 0);
  rdma_signal_snapshot ();
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  fake_verbs_install ();
  g_test_add_func ("/block/reply", test_reply);
  g_test_add_func ("/block/disconnect", test_disconnect);
  g_test_add_func ("/block/interrupt", test_interrupt);
  g_test_add_func ("/block/deadline", test_deadline);
  g_test_add_func ("/block/signal", test_signal);
  g_test_add_func ("/block/keepalive/tick", test_keepalive_tick);
  g_test_add_func ("/block/keepalive/vanished", test_keepalive_vanished);
  g_test_add_func ("/block/keepalive/expiry", test_keepalive_expiry);
  rc = g_test_run ();
  fake_verbs_uninstall ();
  return rc;
}
