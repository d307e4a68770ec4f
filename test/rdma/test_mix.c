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
 * test_mix.c: ten functions with their own protocols (test/rdma/mix.thrift: two oneway
 * functions, one that always raises its declared exception, sizes from 0 B to 70 KB)
 * interleaved on one connection, so that every call's request goes by another protocol than
 * the call before, and every reply by another than the reply before.  The server is
 * ThriftThreadedServer on rdma:// (thrift_server_new_for_uri).  Every call is
 * checked byte-exact, with the carrier of its request (after send_) and of its reply (after
 * recv_), by thrift_rdma_get_protocol_name; the oneway calls are counted and checked by the
 * server and asked for by the next tally.
 *
 *   /mix/one_connection   MIX_CALLS calls (default 10,000) on one connection
 *   /mix/clients          MIX_CLIENTS clients (default 4) at once, MIX_CLIENT_CALLS calls
 *                         each (default 1,000)
 *
 * A protocol named by mix.thrift that this build does not have yet (rfp, batched_write) goes
 * by eager; the test expects that then and says so.  Progress every 1,000 calls.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <thrift/c_glib/thrift_application_exception.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/server/thrift_server_uri.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "lib/c_glib/transport/rdma/rdma_proto.h"
#include "mix.h"
#include "rdma_test_util.h"
#include "serve_thread.h"

#define MAX_CLIENTS 16
#define N_FUNCTIONS 10

/* Every protocol mix.thrift names is implemented: any warning fails the test that saw it
 * (counted rather than fatal, so that the test says which). */
static gint unexpected_warnings;

static void
on_warning (const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
  g_atomic_int_inc (&unexpected_warnings);
  g_printerr ("warning: %s\n", message);
}

/* ---- what mix.thrift's hints ask for, in calling order ---- */

typedef struct
{
  const gchar *name;
  ThriftHintProto request, reply; /* reply UNSET: oneway */
} MixFunction;

static const MixFunction mix[N_FUNCTIONS] = {
  { "tally", THRIFT_HINT_PROTO_EAGER, THRIFT_HINT_PROTO_EAGER },
  { "put", THRIFT_HINT_PROTO_DIRECT_WRITE_IMM, THRIFT_HINT_PROTO_DIRECT_WRITE_SEND },
  { "note", THRIFT_HINT_PROTO_CHAINED_WRITE_SEND, THRIFT_HINT_PROTO_UNSET },
  { "bulk", THRIFT_HINT_PROTO_WRITE_RNDV, THRIFT_HINT_PROTO_READ_RNDV },
  { "fail", THRIFT_HINT_PROTO_DIRECT_WRITE_SEND, THRIFT_HINT_PROTO_DIRECT_WRITE_IMM },
  { "fetch", THRIFT_HINT_PROTO_READ_RNDV, THRIFT_HINT_PROTO_RFP },
  { "log", THRIFT_HINT_PROTO_BATCHED_WRITE, THRIFT_HINT_PROTO_UNSET },
  { "twice", THRIFT_HINT_PROTO_CHAINED_WRITE_SEND, THRIFT_HINT_PROTO_CHAINED_WRITE_SEND },
  /* perf_goal = latency, concurrency = 1: HatRPC Fig. 6 gives Direct-WriteIMM */
  { "quick", THRIFT_HINT_PROTO_DIRECT_WRITE_IMM, THRIFT_HINT_PROTO_DIRECT_WRITE_IMM },
  { "big", THRIFT_HINT_PROTO_DIRECT_WRITE_SEND, THRIFT_HINT_PROTO_WRITE_RNDV },
};

/* The carrier of a message asked to go by @proto: eager for a protocol this build does not
 * have (the peer cannot receive it). */
static const gchar *
carrier (ThriftHintProto proto)
{
  return rdma_proto_for_hint (proto) != NULL ? thrift_hint_proto_to_string (proto) : "eager";
}

/* ---- sizes and payloads ---- */

/* The data of call @i of function @f (a spread of lengths per function, each side of the
 * 4 KB threshold where the function's protocols allow it). */
static guint
data_len (guint f, guint i)
{
  guint k = (i / N_FUNCTIONS) * 7919u;

  switch (f)
  {
  case 1:
    return k % 4000u; /* put */
  case 2:
    return k % 2000u; /* note */
  case 3:
    return 5000u + k % 35000u; /* bulk */
  case 4:
    return k % 3000u; /* fail */
  case 5:
    return 10000u + k % 60000u; /* fetch: the reply's length */
  case 6:
    return k % 500u; /* log */
  case 7:
    return k % 3000u; /* twice: the reply has twice as much */
  case 8:
    return 64u; /* quick */
  case 9:
    return 4097u + k % 16000u; /* big */
  default:
    return 0;
  }
}

static GByteArray *
payload (guint seed, guint len)
{
  GByteArray *a = g_byte_array_sized_new (MAX (len, 1));

  g_byte_array_set_size (a, len);
  for (guint j = 0; j < len; j++)
    a->data[j] = rt_pattern (seed, j);
  return a;
}

static gboolean
is_pattern (const guint8 *data, guint seed, guint len)
{
  for (guint j = 0; j < len; j++)
    if (data[j] != rt_pattern (seed, j))
      return FALSE;
  return TRUE;
}

static gboolean
is_payload (const GByteArray *a, guint seed, guint len)
{
  return a != NULL && a->len == len && is_pattern (a->data, seed, len);
}

/* A oneway call's payload seed: its client and sequence number. */
static guint
oneway_seed (gint client, gint seq)
{
  return (guint) client * 1000003u + (guint) seq;
}

/* ---- the handler ---- */

/* What the server received by oneway calls, per client. */
static GMutex tally_lock;
static gint oneways[MAX_CLIENTS], bad[MAX_CLIENTS], next_seq[MAX_CLIENTS];

static void
tally_reset (void)
{
  g_mutex_lock (&tally_lock);
  memset (oneways, 0, sizeof oneways);
  memset (bad, 0, sizeof bad);
  memset (next_seq, 0, sizeof next_seq);
  g_mutex_unlock (&tally_lock);
}

typedef struct
{
  MixHandler parent;
} TestMixHandler;
typedef struct
{
  MixHandlerClass parent;
} TestMixHandlerClass;
static GType test_mix_handler_get_type (void);
G_DEFINE_TYPE (TestMixHandler, test_mix_handler, TYPE_MIX_HANDLER)

/* Sets the processor's array (or a new one) to @len bytes of @data, @times times. */
static void
give_back (GByteArray **_return, const guint8 *data, guint len, guint times)
{
  /* reuse the processor's array if it made one: it owns and frees it */
  if (*_return == NULL)
    *_return = g_byte_array_new ();
  g_byte_array_set_size (*_return, 0);
  for (guint i = 0; i < times; i++)
    g_byte_array_append (*_return, data, len);
}

static gboolean
h_tally (MixIf *iface, Tally **_return, const gint32 client, GError **error)
{
  if (client < 0 || client >= MAX_CLIENTS)
  {
    g_set_error (error, THRIFT_APPLICATION_EXCEPTION_ERROR,
                 THRIFT_APPLICATION_EXCEPTION_ERROR_UNKNOWN, "no client %d", client);
    return FALSE;
  }
  if (*_return == NULL)
    *_return = g_object_new (TYPE_TALLY, NULL);
  g_mutex_lock (&tally_lock);
  g_object_set (*_return, "client", client, "oneways", oneways[client], "bad", bad[client], NULL);
  g_mutex_unlock (&tally_lock);
  return TRUE;
}

/* note and log: in order and byte-exact, or counted as bad. */
static gboolean
h_oneway (MixIf *iface, const gint32 client, const gint32 seq, const GByteArray *data,
          GError **error)
{
  if (client < 0 || client >= MAX_CLIENTS)
    return TRUE;
  g_mutex_lock (&tally_lock);
  if (seq == next_seq[client] && data != NULL
      && is_payload (data, oneway_seed (client, seq), data->len))
    oneways[client]++;
  else
    bad[client]++;
  next_seq[client] = seq + 1;
  g_mutex_unlock (&tally_lock);
  return TRUE;
}

static gboolean
h_echo (MixIf *iface, GByteArray **_return, const GByteArray *data, GError **error)
{
  give_back (_return, data->data, data->len, 1);
  return TRUE;
}

static gboolean
h_fail (MixIf *iface, GByteArray **_return, const GByteArray *data, MixError **oops, GError **error)
{
  *oops = g_object_new (TYPE_MIX_ERROR, "why", "fail always fails", "data", data, NULL);
  return FALSE;
}

static gboolean
h_fetch (MixIf *iface, GByteArray **_return, const gint32 seed, const gint32 len, GError **error)
{
  GByteArray *a;

  if (len < 0 || len > (1 << 20))
  {
    g_set_error (error, THRIFT_APPLICATION_EXCEPTION_ERROR,
                 THRIFT_APPLICATION_EXCEPTION_ERROR_UNKNOWN, "bad length %d", len);
    return FALSE;
  }
  a = payload ((guint) seed, (guint) len);
  give_back (_return, a->data, a->len, 1);
  g_byte_array_unref (a);
  return TRUE;
}

static gboolean
h_twice (MixIf *iface, GByteArray **_return, const GByteArray *data, GError **error)
{
  give_back (_return, data->data, data->len, 2);
  return TRUE;
}

static void
test_mix_handler_class_init (TestMixHandlerClass *cls)
{
  MixHandlerClass *h = MIX_HANDLER_CLASS (cls);

  h->tally = h_tally;
  h->put = h_echo;
  h->note = h_oneway;
  h->bulk = h_echo;
  h->fail = h_fail;
  h->fetch = h_fetch;
  h->log = h_oneway;
  h->twice = h_twice;
  h->quick = h_echo;
  h->big = h_echo;
}

static void
test_mix_handler_init (TestMixHandler *self)
{
}

/* ---- the server ---- */

typedef struct
{
  ThriftServer *server;
  ServeThread serve;
  guint port;
} Server;

/* A port to listen on: an rdma:// URI names one (1 to 65535), so borrow the one the RDMA CM
 * hands out to a listener on port 0. */
static guint
free_port (void)
{
  ThriftServerTransport *st = g_object_new (THRIFT_TYPE_SERVER_RDMA, "hostname", rt_server_addr (),
                                            "port", 0, NULL);
  GError *error = NULL;
  guint port;

  g_assert_true (thrift_server_transport_listen (st, &error));
  g_assert_no_error (error);
  port = thrift_server_rdma_get_port (THRIFT_SERVER_RDMA (st));
  thrift_server_transport_close (st, NULL);
  g_object_unref (st);
  return port;
}

/* ThriftThreadedServer on rdma://SERVER_ADDR:PORT, serving; waits (5 s at most) until it
 * listens. */
static void
server_start (Server *s)
{
  g_autofree gchar *uri = g_strdup_printf ("rdma://%s:%u", rt_server_addr (), free_port ());
  GObject *handler, *processor;
  gint64 until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  gboolean listening = FALSE;
  GError *error = NULL;

  memset (s, 0, sizeof *s);
  tally_reset ();
  serve_thread_init (&s->serve);
  handler = g_object_new (test_mix_handler_get_type (), NULL);
  processor = g_object_new (TYPE_MIX_PROCESSOR, "handler", handler, NULL);
  s->server = THRIFT_SERVER (
      thrift_server_new_for_uri (uri, processor, THRIFT_THREADED_SERVER_POOL, &error));
  g_assert_no_error (error);
  g_object_set (s->server, "max-connections", MAX_CLIENTS, NULL);
  g_object_unref (handler);
  g_object_unref (processor);
  serve_thread_start (&s->serve, s->server);
  while (!listening && g_get_monotonic_time () < until)
  {
    g_object_get (s->server, "listening", &listening, NULL);
    if (!listening)
      g_usleep (5000);
  }
  g_assert_true (listening);
  s->port = thrift_server_rdma_get_port (THRIFT_SERVER_RDMA (s->server->server_transport));
  g_assert_cmpuint (s->port, >, 0);
}

static void
server_stop (Server *s)
{
  thrift_server_stop (s->server);
  g_assert_true (serve_thread_join (&s->serve, 10 * G_USEC_PER_SEC));
  g_assert_no_error (s->serve.error);
  g_clear_object (&s->server);
  serve_thread_clear (&s->serve);
}

/* ---- a client ---- */

typedef struct
{
  guint port;
  gint id;
  guint calls;
  gboolean progress; /* print progress every 1,000 calls */
  /* out */
  gchar *failure; /* the first thing that went wrong, NULL if none */
  gdouble seconds;
  gint64 us[N_FUNCTIONS]; /* time in each function's calls */
} Job;

typedef struct
{
  ThriftTransport *t;
  MixIf *client;
  const gchar *last_request, *last_reply;
  gint seq;     /* the next oneway call's sequence number */
  gint oneways; /* oneway calls made */
} Conn;

#define FAIL(...)                             \
  do                                          \
  {                                           \
    *failure = g_strdup_printf (__VA_ARGS__); \
    return FALSE;                             \
  } while (0)

/* The carrier of the message just sent or read is @want, and not the one before it. */
static gboolean
check_carrier (Conn *c, guint i, const gchar *what, const gchar *want, const gchar **last,
               gchar **failure)
{
  const gchar *got = thrift_rdma_get_protocol_name (THRIFT_RDMA (c->t));

  if (g_strcmp0 (got, want) != 0)
    FAIL ("call %u (%s): %s by %s, not %s", i, mix[i % N_FUNCTIONS].name, what, got, want);
  if (*last != NULL && strcmp (*last, got) == 0)
    FAIL ("call %u (%s): %s by %s, as the one before: no switch", i, mix[i % N_FUNCTIONS].name,
          what, got);
  *last = got;
  return TRUE;
}

/* Sends call @i (function i % 10). */
static gboolean
send_call (Conn *c, gint id, guint i, GError **error)
{
  guint f = i % N_FUNCTIONS, len = data_len (f, i);
  g_autoptr (GByteArray) data = payload (i, len);

  switch (f)
  {
  case 0:
    return mix_client_send_tally (c->client, id, error);
  case 1:
    return mix_client_send_put (c->client, data, error);
  case 3:
    return mix_client_send_bulk (c->client, data, error);
  case 4:
    return mix_client_send_fail (c->client, data, error);
  case 5:
    return mix_client_send_fetch (c->client, (gint32) i, (gint32) len, error);
  case 7:
    return mix_client_send_twice (c->client, data, error);
  case 8:
    return mix_client_send_quick (c->client, data, error);
  case 9:
    return mix_client_send_big (c->client, data, error);
  case 2:
  case 6: {
    g_autoptr (GByteArray) oneway = payload (oneway_seed (id, c->seq), len);
    gboolean ok = f == 2 ? mix_client_send_note (c->client, id, c->seq, oneway, error)
                         : mix_client_send_log (c->client, id, c->seq, oneway, error);
    c->seq++;
    c->oneways++;
    return ok;
  }
  }
  return FALSE;
}

/* Receives and checks the reply of call @i. */
static gboolean
recv_call (Conn *c, gint id, guint i, GError **error, gchar **failure)
{
  guint f = i % N_FUNCTIONS, len = data_len (f, i);
  GByteArray *in = NULL; /* generated code frees an old value with g_free: start empty */
  gboolean ok = TRUE;

  switch (f)
  {
  case 0: {
    Tally *tally = g_object_new (TYPE_TALLY, NULL);

    if (!mix_client_recv_tally (c->client, &tally, error))
    {
      g_object_unref (tally);
      return FALSE;
    }
    /* every oneway call of this connection so far arrived, in order, byte-exact */
    if (tally->client != id || tally->oneways != c->oneways || tally->bad != 0)
      ok = FALSE,
      *failure = g_strdup_printf ("call %u: tally of client %d says %d oneway "
                                  "calls received, %d bad; %d were made",
                                  i, tally->client, tally->oneways, tally->bad, c->oneways);
    g_object_unref (tally);
    return ok;
  }
  case 4: {
    MixError *oops = NULL;

    if (mix_client_recv_fail (c->client, &in, &oops, error) || oops == NULL)
    {
      *failure = g_strdup_printf ("call %u: fail did not raise its exception%s%s", i,
                                  error && *error ? ": " : "",
                                  error && *error ? (*error)->message : "");
      g_clear_error (error);
      g_clear_object (&oops);
      return FALSE;
    }
    g_clear_error (error); /* the exception's error, if the client set one */
    if (!is_payload (oops->data, i, len) || g_strcmp0 (oops->why, "fail always fails") != 0)
      ok = FALSE, *failure = g_strdup_printf ("call %u: fail's exception has the wrong data", i);
    g_object_unref (oops);
    if (in != NULL)
      g_byte_array_unref (in);
    return ok;
  }
  case 1:
    ok = mix_client_recv_put (c->client, &in, error);
    break;
  case 3:
    ok = mix_client_recv_bulk (c->client, &in, error);
    break;
  case 5:
    ok = mix_client_recv_fetch (c->client, &in, error);
    break;
  case 7:
    ok = mix_client_recv_twice (c->client, &in, error);
    break;
  case 8:
    ok = mix_client_recv_quick (c->client, &in, error);
    break;
  case 9:
    ok = mix_client_recv_big (c->client, &in, error);
    break;
  default:
    g_assert_not_reached ();
  }
  if (ok)
  {
    /* twice: the data, then the data again */
    gboolean same = f == 7 ? in != NULL && in->len == 2 * len && is_pattern (in->data, i, len)
                                 && is_pattern (in->data + len, i, len)
                           : is_payload (in, i, len);

    if (!same)
      ok = FALSE,
      *failure = g_strdup_printf ("call %u (%s): the reply is not byte-exact", i, mix[f].name);
  }
  if (in != NULL)
    g_byte_array_unref (in);
  return ok;
}

/* @job->calls calls on one connection, cycling through the ten functions. */
static gpointer
run_client (gpointer data)
{
  Job *job = data;
  g_autofree gchar *uri = g_strdup_printf ("rdma://%s:%u", rt_server_addr (), job->port);
  GError *error = NULL;
  Conn c = { 0 };
  ThriftProtocol *p;
  gint64 start;
  gchar **failure = &job->failure;

  c.t = thrift_transport_new_for_uri (uri, &error);
  if (c.t == NULL)
  {
    job->failure = g_strdup_printf ("%s: %s", uri, error->message);
    g_error_free (error);
    return NULL;
  }
  p = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", c.t, NULL);
  c.client = g_object_new (TYPE_MIX_CLIENT, "input_protocol", p, "output_protocol", p, NULL);
  start = g_get_monotonic_time ();
  if (!thrift_transport_open (c.t, &error))
    goto failed;
  for (guint i = 0; i < job->calls; i++)
  {
    const MixFunction *f = &mix[i % N_FUNCTIONS];
    gint64 call_start = g_get_monotonic_time ();

    if (!send_call (&c, job->id, i, &error))
      goto failed;
    if (!check_carrier (&c, i, "request", carrier (f->request), &c.last_request, failure))
      break;
    if (f->reply != THRIFT_HINT_PROTO_UNSET)
    {
      if (!recv_call (&c, job->id, i, &error, failure))
      {
        if (*failure == NULL)
          goto failed;
        break;
      }
      if (!check_carrier (&c, i, "reply", carrier (f->reply), &c.last_reply, failure))
        break;
    }
    job->us[i % N_FUNCTIONS] += g_get_monotonic_time () - call_start;
    if (job->progress && (i + 1) % 1000 == 0)
      g_test_message ("client %d: %u calls, %.1f s", job->id, i + 1,
                      (g_get_monotonic_time () - start) / 1e6);
  }
  goto done;

failed:
  job->failure = g_strdup_printf ("client %d: %s", job->id, error ? error->message : "?");
  g_clear_error (&error);
done:
  job->seconds = (g_get_monotonic_time () - start) / 1e6;
  thrift_transport_close (c.t, NULL);
  g_object_unref (c.client);
  g_object_unref (p);
  g_object_unref (c.t);
  return NULL;
}

static guint
env_uint (const gchar *name, guint fallback)
{
  const gchar *v = g_getenv (name);
  guint64 n;

  if (v == NULL || *v == '\0')
    return fallback;
  if (!g_ascii_string_to_unsigned (v, 10, 1, G_MAXUINT, &n, NULL))
    g_error ("%s=%s is not a positive number", name, v);
  return (guint) n;
}

/* Where @job's time went, per function. */
static void
say_times (const Job *job)
{
  GString *s = g_string_new (NULL);
  guint per = job->calls / N_FUNCTIONS;

  for (guint f = 0; f < N_FUNCTIONS; f++)
    g_string_append_printf (s, " %s %.0f", mix[f].name, per > 0 ? (gdouble) job->us[f] / per : 0.0);
  g_test_message ("client %d, us per call:%s", job->id, s->str);
  g_string_free (s, TRUE);
}

static void
say_fallbacks (void)
{
  for (guint f = 0; f < N_FUNCTIONS; f++)
  {
    if (rdma_proto_for_hint (mix[f].request) == NULL)
      g_test_message ("%s not registered: %s's calls go by eager",
                      thrift_hint_proto_to_string (mix[f].request), mix[f].name);
    if (mix[f].reply != THRIFT_HINT_PROTO_UNSET && rdma_proto_for_hint (mix[f].reply) == NULL)
      g_test_message ("%s not registered: %s's replies go by eager",
                      thrift_hint_proto_to_string (mix[f].reply), mix[f].name);
  }
}

/* ---- tests ---- */

static void
test_one_connection (void)
{
  gint baseline = rt_live_resources ();
  Server s;
  Job job = { .id = 0, .calls = env_uint ("MIX_CALLS", 10000), .progress = TRUE };

  say_fallbacks ();
  server_start (&s);
  job.port = s.port;
  run_client (&job);
  if (job.failure != NULL)
    g_error ("%s", job.failure);
  g_test_message ("%u calls on one connection: %.1f s, %.0f us per call", job.calls, job.seconds,
                  job.seconds * 1e6 / job.calls);
  say_times (&job);
  server_stop (&s);
  g_assert_true (rt_resources_at_baseline (baseline));
  g_assert_cmpint (g_atomic_int_get (&unexpected_warnings), ==, 0);
}

static void
test_clients (void)
{
  guint n = env_uint ("MIX_CLIENTS", 4), calls = env_uint ("MIX_CLIENT_CALLS", 1000);
  gint baseline = rt_live_resources ();
  GThread *threads[MAX_CLIENTS];
  Job jobs[MAX_CLIENTS];
  gint64 start;
  Server s;

  g_assert_cmpuint (n, <=, MAX_CLIENTS);
  server_start (&s);
  start = g_get_monotonic_time ();
  for (guint i = 0; i < n; i++)
  {
    jobs[i] = (Job){ .port = s.port, .id = (gint) i, .calls = calls, .progress = TRUE };
    threads[i] = g_thread_new ("mix-client", run_client, &jobs[i]);
  }
  for (guint i = 0; i < n; i++)
    g_thread_join (threads[i]);
  for (guint i = 0; i < n; i++)
  {
    if (jobs[i].failure != NULL)
      g_error ("%s", jobs[i].failure);
    g_test_message ("client %u: %u calls in %.1f s", i, calls, jobs[i].seconds);
    say_times (&jobs[i]);
  }
  g_test_message ("%u clients x %u calls at once: %.1f s", n, calls,
                  (g_get_monotonic_time () - start) / 1e6);
  server_stop (&s);
  g_assert_true (rt_resources_at_baseline (baseline));
  g_assert_cmpint (g_atomic_int_get (&unexpected_warnings), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_log_set_always_fatal (G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
  g_log_set_handler (NULL, G_LOG_LEVEL_WARNING, on_warning, NULL);
  g_test_add_func ("/mix/one_connection", test_one_connection);
  g_test_add_func ("/mix/clients", test_clients);
  return g_test_run ();
}
