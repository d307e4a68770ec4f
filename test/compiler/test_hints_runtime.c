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
 * test_hints_runtime.c: the code thrift-hatrpc generates from test/compiler/hinted.thrift hands
 * each function's resolved hint set to the transport: the client before it writes a call, the
 * processor before the handler runs and the reply is written.  Checked with a recording
 * transport (a ThriftMemoryBuffer that implements ThriftHintReceiver), directly and through
 * buffered and framed wrappers and the multiplexed protocol, and with a transport that takes
 * no hints.  Client and processor run in one thread: send, process, receive.
 *
 * Compiled with -Wall -Wextra -Werror together with the generated code.
 *
 * Also: each service's generated table of hint sets (<service>_hint_sets) lists every set of
 * its functions, in order, NULL-terminated.
 *
 * Also: in a program with hints, the generated _get_type functions register their types
 * thread-safely (g_once_init_enter): threads making the first call of one at the same time
 * all get the same type, and nothing is logged ("cannot register existing type").
 */

#include <string.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/processor/thrift_multiplexed_processor.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/protocol/thrift_multiplexed_protocol.h>
#include <thrift/c_glib/transport/thrift_buffered_transport.h>
#include <thrift/c_glib/transport/thrift_framed_transport.h>
#include <thrift/c_glib/transport/thrift_memory_buffer.h>
#include <thrift/c_glib/transport/thrift_hints.h>

#include "kv.h"
#include "kv_child.h"

/* The resolved sets, derived by hand from hinted.thrift and the rules (function over
 * service, c_hint/s_hint over hint, child over parent). */
#define GET_C "Kv.get client: concurrency=64 payload_size=64 perf_goal=latency"
#define GET_S "Kv.get server: concurrency=64 payload_size=1024 perf_goal=latency polling=event"
#define HEARTBEAT_C "Kv.heartbeat client: concurrency=64 perf_goal=res_util"
#define HEARTBEAT_S "Kv.heartbeat server: concurrency=64 perf_goal=res_util polling=event"
#define PUT_C \
  "Kv.put client: concurrency=64 payload_size=131072 perf_goal=throughput proto=direct_write_imm"
#define PUT_S "Kv.put server: concurrency=64 perf_goal=throughput polling=event proto=eager"
#define PLAIN_C "Kv.plain client: concurrency=64 perf_goal=throughput"
#define PLAIN_S "Kv.plain server: concurrency=64 perf_goal=throughput polling=event"
#define PING_C \
  "KvChild.ping client: concurrency=64 perf_goal=throughput proto=eager_rndv transport=tcp"
#define PING_S "KvChild.ping server: concurrency=64 numa=0 perf_goal=throughput polling=busy"

/* ---- RecordingTransport: a memory buffer that records the hint sets it is given ---- */

typedef struct
{
  ThriftMemoryBuffer parent;
  GPtrArray *records; /* "<set> @<writes before it>" */
  guint writes;       /* write calls so far */
} RecordingTransport;

typedef struct
{
  ThriftMemoryBufferClass parent;
} RecordingTransportClass;

static GType recording_transport_get_type (void);
static void recording_transport_receiver_init (ThriftHintReceiverInterface *iface);

G_DEFINE_TYPE_WITH_CODE (RecordingTransport, recording_transport, THRIFT_TYPE_MEMORY_BUFFER,
                         G_IMPLEMENT_INTERFACE (THRIFT_TYPE_HINT_RECEIVER,
                                                recording_transport_receiver_init))

static void
recording_transport_set_hints (ThriftHintReceiver *receiver, const ThriftHintSet *hints)
{
  RecordingTransport *self = (RecordingTransport *) receiver;
  gchar *text = thrift_hint_set_to_string (hints);

  g_assert_cmpuint (hints->version, ==, THRIFT_HINT_SET_VERSION);
  g_ptr_array_add (self->records, g_strdup_printf ("%s @%u", text, self->writes));
  g_free (text);
}

static void
recording_transport_receiver_init (ThriftHintReceiverInterface *iface)
{
  iface->set_hints = recording_transport_set_hints;
}

static gboolean
recording_transport_write (ThriftTransport *transport, const gpointer buf, const guint32 len,
                           GError **error)
{
  ((RecordingTransport *) transport)->writes++;
  return THRIFT_TRANSPORT_CLASS (recording_transport_parent_class)
      ->write (transport, buf, len, error);
}

static void
recording_transport_finalize (GObject *object)
{
  g_ptr_array_unref (((RecordingTransport *) object)->records);
  G_OBJECT_CLASS (recording_transport_parent_class)->finalize (object);
}

static void
recording_transport_class_init (RecordingTransportClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = recording_transport_finalize;
  THRIFT_TRANSPORT_CLASS (klass)->write = recording_transport_write;
}

static void
recording_transport_init (RecordingTransport *self)
{
  self->records = g_ptr_array_new_with_free_func (g_free);
}

/* ---- the handler ---- */

typedef struct
{
  KvChildHandler parent;
  guint calls;
} TestHandler;

typedef struct
{
  KvChildHandlerClass parent;
} TestHandlerClass;

static GType test_handler_get_type (void);
G_DEFINE_TYPE (TestHandler, test_handler, TYPE_KV_CHILD_HANDLER)

static gboolean
test_handler_get (KvIf *iface, GByteArray **_return, const GByteArray *key, GError **error)
{
  (void) error;
  ((TestHandler *) iface)->calls++;
  *_return = g_byte_array_new ();
  g_byte_array_append (*_return, key->data, key->len);
  g_byte_array_append (*_return, (const guint8 *) "!", 1);
  return TRUE;
}

static gboolean
test_handler_heartbeat (KvIf *iface, GError **error)
{
  (void) error;
  ((TestHandler *) iface)->calls++;
  return TRUE;
}

static gboolean
test_handler_put (KvIf *iface, gint32 *_return, const GByteArray *key, const GByteArray *value,
                  Oops **oops, GError **error)
{
  (void) _return;
  (void) key;
  (void) value;
  (void) error;
  ((TestHandler *) iface)->calls++;
  *oops = g_object_new (TYPE_OOPS, "why", "full", NULL);
  return FALSE;
}

static gboolean
test_handler_plain (KvIf *iface, hint **_return, const hint *h, GError **error)
{
  (void) error;
  ((TestHandler *) iface)->calls++;
  g_object_set (*_return, "hint", h->hint + 1, NULL);
  return TRUE;
}

static gboolean
test_handler_ping (KvChildIf *iface, GError **error)
{
  (void) error;
  ((TestHandler *) iface)->calls++;
  return TRUE;
}

static void
test_handler_class_init (TestHandlerClass *klass)
{
  KvHandlerClass *kv = KV_HANDLER_CLASS (klass);

  kv->get = test_handler_get;
  kv->heartbeat = test_handler_heartbeat;
  kv->put = test_handler_put;
  kv->plain = test_handler_plain;
  KV_CHILD_HANDLER_CLASS (klass)->ping = test_handler_ping;
}

static void
test_handler_init (TestHandler *self)
{
  (void) self;
}

/* ---- the set-up: client and processor joined by two transports ---- */

typedef enum
{
  DIRECT,
  BUFFERED,
  FRAMED,
  MULTIPLEXED,
  NO_RECEIVER
} Setup;

typedef struct
{
  ThriftTransport *c2s, *s2c;                   /* the innermost transports */
  ThriftTransport *c_out, *c_in, *s_in, *s_out; /* what the protocols write to / read from */
  ThriftProtocol *c_out_proto, *c_in_proto, *s_in_proto, *s_out_proto;
  ThriftProtocol *c_mux;
  KvChildClient *client;
  TestHandler *handler;
  ThriftProcessor *processor, *child_processor;
} Fixture;

static ThriftTransport *
wrap (Setup setup, ThriftTransport *inner)
{
  if (setup == BUFFERED || setup == MULTIPLEXED)
    return g_object_new (THRIFT_TYPE_BUFFERED_TRANSPORT, "transport", inner, "r_buf_size", 512,
                         "w_buf_size", 512, NULL);
  if (setup == FRAMED)
    return g_object_new (THRIFT_TYPE_FRAMED_TRANSPORT, "transport", inner, "r_buf_size", 512,
                         "w_buf_size", 512, NULL);
  return g_object_ref (inner);
}

static ThriftProtocol *
binary (ThriftTransport *transport)
{
  return g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", transport, NULL);
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  Setup setup = GPOINTER_TO_INT (data);
  GType inner = setup == NO_RECEIVER ? THRIFT_TYPE_MEMORY_BUFFER : recording_transport_get_type ();
  GError *error = NULL;

  f->c2s = g_object_new (inner, "buf_size", 1 << 20, NULL);
  f->s2c = g_object_new (inner, "buf_size", 1 << 20, NULL);
  f->c_out = wrap (setup, f->c2s);
  f->s_in = wrap (setup, f->c2s);
  f->s_out = wrap (setup, f->s2c);
  f->c_in = wrap (setup, f->s2c);
  f->c_out_proto = binary (f->c_out);
  f->c_in_proto = binary (f->c_in);
  f->s_in_proto = binary (f->s_in);
  f->s_out_proto = binary (f->s_out);

  f->handler = g_object_new (test_handler_get_type (), NULL);
  f->child_processor = g_object_new (TYPE_KV_CHILD_PROCESSOR, "handler", f->handler, NULL);

  if (setup == MULTIPLEXED)
  {
    f->c_mux = g_object_new (THRIFT_TYPE_MULTIPLEXED_PROTOCOL, "transport", f->c_out, "protocol",
                             f->c_out_proto, "service-name", "KvChild", NULL);
    f->client = g_object_new (TYPE_KV_CHILD_CLIENT, "input_protocol", f->c_in_proto,
                              "output_protocol", f->c_mux, NULL);
    f->processor = g_object_new (THRIFT_TYPE_MULTIPLEXED_PROCESSOR, NULL);
    g_assert_true (thrift_multiplexed_processor_register_processor (f->processor, "KvChild",
                                                                    f->child_processor, &error));
    g_assert_no_error (error);
  }
  else
  {
    f->client = g_object_new (TYPE_KV_CHILD_CLIENT, "input_protocol", f->c_in_proto,
                              "output_protocol", f->c_out_proto, NULL);
    f->processor = g_object_ref (f->child_processor);
  }
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  (void) data;
  g_object_unref (f->client);
  g_clear_object (&f->c_mux);
  g_object_unref (f->processor);
  g_object_unref (f->child_processor);
  g_object_unref (f->handler);
  g_object_unref (f->c_out_proto);
  g_object_unref (f->c_in_proto);
  g_object_unref (f->s_in_proto);
  g_object_unref (f->s_out_proto);
  g_object_unref (f->c_out);
  g_object_unref (f->c_in);
  g_object_unref (f->s_in);
  g_object_unref (f->s_out);
  g_object_unref (f->c2s);
  g_object_unref (f->s2c);
}

/* Takes the records of a transport: a string with one line per set handed over. */
static gchar *
take_records (ThriftTransport *transport)
{
  GString *s = g_string_new (NULL);
  RecordingTransport *r;

  if (!G_TYPE_CHECK_INSTANCE_TYPE (transport, recording_transport_get_type ()))
    return g_string_free (s, FALSE);
  r = (RecordingTransport *) transport;
  for (guint i = 0; i < r->records->len; i++)
    g_string_append_printf (s, "%s\n", (const gchar *) g_ptr_array_index (r->records, i));
  g_ptr_array_set_size (r->records, 0);
  return g_string_free (s, FALSE);
}

static guint
writes (ThriftTransport *transport)
{
  if (!G_TYPE_CHECK_INSTANCE_TYPE (transport, recording_transport_get_type ()))
    return 0;
  return ((RecordingTransport *) transport)->writes;
}

/* Runs the processor once on what the client sent. */
static void
serve_one (Fixture *f)
{
  GError *error = NULL;
  gboolean ok = thrift_processor_process (f->processor, f->s_in_proto, f->s_out_proto, &error);

  g_assert_no_error (error);
  g_assert_true (ok);
}

/* Checks that the transports got exactly `client` and `server` (NULL: nothing), each before
 * the first write of its message. */
static void
check_handed (Fixture *f, gconstpointer data, const gchar *client, const gchar *server,
              guint c2s_writes_before, guint s2c_writes_before)
{
  gchar *c = take_records (f->c2s);
  gchar *s = take_records (f->s2c);
  gchar *want_c, *want_s;

  if (GPOINTER_TO_INT (data) == NO_RECEIVER)
  {
    want_c = g_strdup ("");
    want_s = g_strdup ("");
  }
  else
  {
    want_c = g_strdup_printf ("%s @%u\n", client, c2s_writes_before);
    want_s = g_strdup_printf ("%s @%u\n", server, s2c_writes_before);
  }
  g_assert_cmpstr (c, ==, want_c);
  g_assert_cmpstr (s, ==, want_s);
  g_free (c);
  g_free (s);
  g_free (want_c);
  g_free (want_s);
}

static void
test_get (Fixture *f, gconstpointer data)
{
  GError *error = NULL;
  GByteArray *key = g_byte_array_new ();
  GByteArray *value = NULL;
  guint c0 = writes (f->c2s), s0 = writes (f->s2c);

  g_byte_array_append (key, (const guint8 *) "k", 1);
  g_assert_true (kv_client_send_get (KV_IF (f->client), key, &error));
  g_assert_no_error (error);
  serve_one (f);
  g_assert_true (kv_client_recv_get (KV_IF (f->client), &value, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (value->data, value->len, "k!", 2);
  if (GPOINTER_TO_INT (data) != NO_RECEIVER)
    g_assert_cmpuint (writes (f->c2s), >, c0);
  check_handed (f, data, GET_C, GET_S, c0, s0);
  g_byte_array_unref (value);
  g_byte_array_unref (key);
}

static void
test_heartbeat (Fixture *f, gconstpointer data)
{
  GError *error = NULL;
  guint c0 = writes (f->c2s), s0 = writes (f->s2c);

  g_assert_true (kv_client_heartbeat (KV_IF (f->client), &error));
  g_assert_no_error (error);
  serve_one (f);
  g_assert_cmpuint (f->handler->calls, ==, 1);
  /* oneway: the server gets its set too (before the handler), though it writes nothing */
  check_handed (f, data, HEARTBEAT_C, HEARTBEAT_S, c0, s0);
  g_assert_cmpuint (writes (f->s2c), ==, s0);
}

static void
test_put_exception (Fixture *f, gconstpointer data)
{
  GError *error = NULL;
  GByteArray *key = g_byte_array_new ();
  gint32 ret = 0;
  Oops *oops = NULL;
  guint c0 = writes (f->c2s), s0 = writes (f->s2c);

  g_assert_true (kv_client_send_put (KV_IF (f->client), key, key, &error));
  g_assert_no_error (error);
  serve_one (f);
  g_assert_false (kv_client_recv_put (KV_IF (f->client), &ret, &oops, &error));
  g_assert_nonnull (oops);
  g_assert_cmpstr (oops->why, ==, "full");
  g_clear_error (&error);
  check_handed (f, data, PUT_C, PUT_S, c0, s0);
  g_object_unref (oops);
  g_byte_array_unref (key);
}

static void
test_plain_and_ping (Fixture *f, gconstpointer data)
{
  GError *error = NULL;
  hint *h = g_object_new (TYPE_HINT, "hint", 41, NULL);
  hint *back = g_object_new (TYPE_HINT, NULL);
  guint c0 = writes (f->c2s), s0 = writes (f->s2c);

  /* a function of the parent service, called through the child's client */
  g_assert_true (kv_client_send_plain (KV_IF (f->client), h, &error));
  serve_one (f);
  g_assert_true (kv_client_recv_plain (KV_IF (f->client), &back, &error));
  g_assert_no_error (error);
  g_assert_cmpint (back->hint, ==, 42);
  check_handed (f, data, PLAIN_C, PLAIN_S, c0, s0);

  /* the child's own function */
  c0 = writes (f->c2s);
  s0 = writes (f->s2c);
  g_assert_true (kv_child_client_send_ping (KV_CHILD_IF (f->client), &error));
  serve_one (f);
  g_assert_true (kv_child_client_recv_ping (KV_CHILD_IF (f->client), &error));
  g_assert_no_error (error);
  check_handed (f, data, PING_C, PING_S, c0, s0);

  /* and one more of the parent's: the set follows the function, call by call */
  c0 = writes (f->c2s);
  s0 = writes (f->s2c);
  g_assert_true (kv_client_heartbeat (KV_IF (f->client), &error));
  serve_one (f);
  check_handed (f, data, HEARTBEAT_C, HEARTBEAT_S, c0, s0);

  g_object_unref (h);
  g_object_unref (back);
}

/* ---- thread-safe type registration ---- */

#define RACERS 8

typedef struct
{
  GType (*get_type) (void);
  GMutex lock;
  GCond cond;
  guint ready; /* threads waiting at the start gate */
  gint go;     /* the gate is open */
  GType got[RACERS];
} Race;

static gpointer
race_thread (gpointer data)
{
  Race *race = data;
  guint me;

  g_mutex_lock (&race->lock);
  me = race->ready++;
  g_cond_broadcast (&race->cond);
  while (!g_atomic_int_get (&race->go))
    g_cond_wait (&race->cond, &race->lock);
  g_mutex_unlock (&race->lock);
  race->got[me] = race->get_type ();
  return NULL;
}

static guint race_messages;

/* A message logged during the race (GObject's "cannot register existing type" is a
 * critical, fatal under g_test_init): counted, and reported by the test instead of aborting. */
static gboolean
race_log (const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data)
{
  (void) level;
  (void) data;
  g_test_message ("logged during the race: %s: %s", domain ? domain : "", message);
  race_messages++;
  return FALSE;
}

/* Each generated _get_type of hinted.thrift is called for the first time by RACERS threads
 * let through a start gate together.  Runs before any other test touches these types. */
static void
test_get_type_race (void)
{
  static const struct
  {
    const gchar *name;
    GType (*get_type) (void);
  } types[] = {
    { "Oops", oops_get_type },
    { "hint", hint_get_type },
    { "KvGetArgs", kv_get_args_get_type },
    { "KvGetResult", kv_get_result_get_type },
    { "KvHeartbeatArgs", kv_heartbeat_args_get_type },
    { "KvPutArgs", kv_put_args_get_type },
    { "KvPutResult", kv_put_result_get_type },
    { "KvPlainArgs", kv_plain_args_get_type },
    { "KvPlainResult", kv_plain_result_get_type },
    { "KvChildPingArgs", kv_child_ping_args_get_type },
    { "KvChildPingResult", kv_child_ping_result_get_type },
    { "KvIf", kv_if_get_type },
    { "KvChildIf", kv_child_if_get_type },
    { "KvChildClient", kv_child_client_get_type },
    { "KvChildProcessor", kv_child_processor_get_type },
  };

  g_test_log_set_fatal_handler (race_log, NULL);
  for (gsize t = 0; t < G_N_ELEMENTS (types); t++)
  {
    Race race = { .get_type = types[t].get_type };
    GThread *threads[RACERS];

    g_assert_null (g_type_from_name (types[t].name));
    g_mutex_init (&race.lock);
    g_cond_init (&race.cond);
    for (guint i = 0; i < RACERS; i++)
      threads[i] = g_thread_new ("race", race_thread, &race);
    g_mutex_lock (&race.lock);
    while (race.ready < RACERS)
      g_cond_wait (&race.cond, &race.lock);
    g_atomic_int_set (&race.go, 1);
    g_cond_broadcast (&race.cond);
    g_mutex_unlock (&race.lock);
    for (guint i = 0; i < RACERS; i++)
      g_thread_join (threads[i]);

    g_test_message ("%s: %s", types[t].name, g_type_name (race.got[0]));
    for (guint i = 0; i < RACERS; i++)
    {
      g_assert_cmpuint (race.got[i], !=, 0);
      g_assert_cmpuint (race.got[i], ==, race.got[0]);
    }
    g_assert_cmpuint (race.got[0], ==, types[t].get_type ());
    g_assert_cmpuint (race_messages, ==, 0);
    g_mutex_clear (&race.lock);
    g_cond_clear (&race.cond);
  }
  g_test_log_set_fatal_handler (NULL, NULL);
}

/* ---- the runtime helpers themselves ---- */

static void
test_find_receiver (void)
{
  ThriftTransport *rec = g_object_new (recording_transport_get_type (), NULL);
  ThriftTransport *plain = g_object_new (THRIFT_TYPE_MEMORY_BUFFER, NULL);
  ThriftTransport *framed = g_object_new (THRIFT_TYPE_FRAMED_TRANSPORT, "transport", rec, NULL);
  ThriftTransport *nested = g_object_new (THRIFT_TYPE_BUFFERED_TRANSPORT, "transport", framed,
                                          NULL);
  ThriftProtocol *p_nested = binary (nested);
  ThriftProtocol *p_plain = binary (plain);
  ThriftProtocol *mux = g_object_new (THRIFT_TYPE_MULTIPLEXED_PROTOCOL, "transport", nested,
                                      "protocol", p_nested, "service-name", "S", NULL);
  static const ThriftHintSet empty = { .version = THRIFT_HINT_SET_VERSION,
                                       .service = "S",
                                       .function = "f",
                                       .side = THRIFT_HINT_SIDE_SERVER };

  g_assert_true (thrift_hints_find_receiver (p_nested) == THRIFT_HINT_RECEIVER (rec));
  g_assert_true (thrift_hints_find_receiver (mux) == THRIFT_HINT_RECEIVER (rec));
  g_assert_null (thrift_hints_find_receiver (p_plain));
  g_assert_null (thrift_hints_find_receiver (NULL));
  g_assert_false (thrift_hints_apply (p_plain, &empty));
  g_assert_true (thrift_hints_apply (mux, &empty));
  g_assert_cmpstr (g_ptr_array_index (((RecordingTransport *) rec)->records, 0), ==,
                   "S.f server: (none) @0");

  g_object_unref (mux);
  g_object_unref (p_plain);
  g_object_unref (p_nested);
  g_object_unref (nested);
  g_object_unref (framed);
  g_object_unref (plain);
  g_object_unref (rec);
}

static void
test_to_string (void)
{
  static const ThriftHintSet all = { .version = THRIFT_HINT_SET_VERSION,
                                     .service = "S",
                                     .function = "f",
                                     .side = THRIFT_HINT_SIDE_CLIENT,
                                     .set = THRIFT_HINT_HAS_PERF_GOAL | THRIFT_HINT_HAS_CONCURRENCY
                                            | THRIFT_HINT_HAS_PAYLOAD_SIZE | THRIFT_HINT_HAS_POLLING
                                            | THRIFT_HINT_HAS_PROTO | THRIFT_HINT_HAS_TRANSPORT
                                            | THRIFT_HINT_HAS_NUMA,
                                     .perf_goal = THRIFT_HINT_PERF_GOAL_RES_UTIL,
                                     .polling = THRIFT_HINT_POLLING_HYBRID,
                                     .proto = THRIFT_HINT_PROTO_BATCHED_WRITE,
                                     .transport = THRIFT_HINT_TRANSPORT_RDMA,
                                     .concurrency = 7,
                                     .payload_size = G_GUINT64_CONSTANT (1099511627776),
                                     .numa = 3 };
  gchar *s = thrift_hint_set_to_string (&all);

  g_assert_cmpstr (s, ==,
                   "S.f client: concurrency=7 numa=3 payload_size=1099511627776 "
                   "perf_goal=res_util polling=hybrid proto=batched_write transport=rdma");
  g_free (s);
  s = thrift_hint_set_to_string (NULL);
  g_assert_cmpstr (s, ==, "(null)");
  g_free (s);
  g_assert_cmpstr (thrift_hint_proto_to_string (THRIFT_HINT_PROTO_CHAINED_WRITE_SEND), ==,
                   "chained_write_send");
  g_assert_cmpstr (thrift_hint_proto_to_string (THRIFT_HINT_PROTO_EAGER_RNDV), ==, "eager_rndv");
  g_assert_null (thrift_hint_proto_to_string (THRIFT_HINT_PROTO_UNSET));
  g_assert_null (thrift_hint_perf_goal_to_string ((ThriftHintPerfGoal) 99));
  /* compiled programs hold these numbers: a value added later goes after the last one */
  g_assert_cmpint (THRIFT_HINT_PROTO_EAGER, ==, 1);
  g_assert_cmpint (THRIFT_HINT_PROTO_WRITE_RNDV, ==, 2);
  g_assert_cmpint (THRIFT_HINT_PROTO_READ_RNDV, ==, 3);
  g_assert_cmpint (THRIFT_HINT_PROTO_DIRECT_WRITE_SEND, ==, 4);
  g_assert_cmpint (THRIFT_HINT_PROTO_CHAINED_WRITE_SEND, ==, 5);
  g_assert_cmpint (THRIFT_HINT_PROTO_DIRECT_WRITE_IMM, ==, 6);
  g_assert_cmpint (THRIFT_HINT_PROTO_RFP, ==, 7);
  g_assert_cmpint (THRIFT_HINT_PROTO_BATCHED_WRITE, ==, 8);
  g_assert_cmpint (THRIFT_HINT_PROTO_EAGER_RNDV, ==, 9);
  g_assert_cmpstr (thrift_hint_transport_to_string (THRIFT_HINT_TRANSPORT_TCP), ==, "tcp");
  g_assert_cmpstr (thrift_hint_polling_to_string (THRIFT_HINT_POLLING_BUSY), ==, "busy");
}

/* Each service's table lists every function's client set, then its server set, in IDL order,
 * then NULL; an inherited function is in its parent's table only. */
static void
test_table (void)
{
  static const gchar *const kv[] = { GET_C, GET_S,   HEARTBEAT_C, HEARTBEAT_S, PUT_C,
                                     PUT_S, PLAIN_C, PLAIN_S,     NULL };
  static const gchar *const kv_child[] = { PING_C, PING_S, NULL };
  const struct
  {
    const ThriftHintSet *const *table;
    const gchar *const *want;
  } tables[] = { { kv_hint_sets, kv }, { kv_child_hint_sets, kv_child } };

  for (gsize t = 0; t < G_N_ELEMENTS (tables); t++)
  {
    gsize i;

    for (i = 0; tables[t].want[i] != NULL; i++)
    {
      gchar *text = thrift_hint_set_to_string (tables[t].table[i]);

      g_assert_nonnull (tables[t].table[i]);
      g_assert_cmpstr (text, ==, tables[t].want[i]);
      g_free (text);
    }
    g_assert_null (tables[t].table[i]);
  }
}

static void
add_calls (const gchar *name, Setup setup)
{
  static const struct
  {
    const gchar *path;
    void (*fn) (Fixture *, gconstpointer);
  } calls[] = {
    { "get", test_get },
    { "heartbeat", test_heartbeat },
    { "put-exception", test_put_exception },
    { "inherited-and-child", test_plain_and_ping },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (calls); i++)
  {
    gchar *path = g_strdup_printf ("/thrift_hints/%s/%s", name, calls[i].path);
    g_test_add (path, Fixture, GINT_TO_POINTER (setup), fixture_setup, calls[i].fn,
                fixture_teardown);
    g_free (path);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  /* first: the generated types are not registered yet */
  g_test_add_func ("/thrift_hints/get-type-race", test_get_type_race);
  g_test_add_func ("/thrift_hints/find-receiver", test_find_receiver);
  g_test_add_func ("/thrift_hints/to-string", test_to_string);
  g_test_add_func ("/thrift_hints/table", test_table);
  add_calls ("direct", DIRECT);
  add_calls ("buffered", BUFFERED);
  add_calls ("framed", FRAMED);
  add_calls ("multiplexed", MULTIPLEXED);
  add_calls ("no-receiver", NO_RECEIVER);

  return g_test_run ();
}
