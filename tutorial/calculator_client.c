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
 * calculator-client: calls every function of tutorial/calculator.thrift once over the
 * transport given by a URI, checks each result, and prints what each call did.
 *
 *   calculator-client [--transport URI] [--payload BYTES]
 *   calculator-client --explain [--transport URI]
 *
 * Exit status 0 when every call gave the expected result, 1 otherwise, 2 on bad usage.
 * --explain prints, without connecting, what ThriftRdma will do with each function's
 * messages on each side (thrift_rdma_explain_sets) and exits 0.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <glib-object.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>
#include <thrift/c_glib/transport/thrift_hybrid.h>
#include <thrift/c_glib/transport/thrift_rdma.h>
#include <thrift/c_glib/transport/thrift_rdma_explain.h>

#include "calculator.h"
#include "tutorial_defaults.h"

static gint failures;

/* What the transport did for the last call: for ThriftRdma, the protocol and polling mode
 * the hints chose and the verbs work it took; for ThriftHybrid, the leg the call took (and
 * that); ThriftSocket takes no hints. */
static gchar *
transport_note (ThriftTransport *t)
{
  if (THRIFT_IS_HYBRID (t))
  {
    ThriftHybrid *h = THRIFT_HYBRID (t);
    ThriftHybridLeg leg = thrift_hybrid_get_last_leg (h);
    g_autofree gchar *rdma = leg == THRIFT_HYBRID_LEG_RDMA
                                 ? transport_note (THRIFT_TRANSPORT (thrift_hybrid_get_rdma (h)))
                                 : g_strdup ("framed TCP, by its transport hint");
    return g_strdup_printf ("hybrid leg=%s: %s", thrift_hybrid_leg_name (leg), rdma);
  }
  if (THRIFT_IS_RDMA (t))
  {
    static const gchar *const polling[] = { "busy", "event", "hybrid" };
    ThriftRdma *r = THRIFT_RDMA (t);
    ThriftRdmaStats s;
    ThriftRdmaPolling p = thrift_rdma_get_effective_polling (r);
    gchar *note;

    thrift_rdma_get_stats (r, &s);
    note = g_strdup_printf (
        "rdma protocol=%s polling=%s; %" G_GUINT64_FORMAT " work requests, %" G_GUINT64_FORMAT
        " ibv_post_send, %" G_GUINT64_FORMAT " completions, %" G_GUINT64_FORMAT " bytes copied",
        thrift_rdma_get_protocol_name (r), (guint) p < G_N_ELEMENTS (polling) ? polling[p] : "?",
        s.wr_posted, s.post_send_calls, s.completions, s.bytes_copied);
    thrift_rdma_reset_stats (r);
    return note;
  }
  return g_strdup ("tcp; ThriftSocket ignores hints");
}

/* --explain: one line per function and side of the service, for the URI's polling option
 * (the transport's default when the hints do not decide it). */
static int
explain (const gchar *uri)
{
  static const ThriftRdmaPolling from_uri[] = {
    [THRIFT_TRANSPORT_URI_POLLING_DEFAULT] = THRIFT_RDMA_DEFAULT_POLLING,
    [THRIFT_TRANSPORT_URI_POLLING_BUSY] = THRIFT_RDMA_POLLING_BUSY,
    [THRIFT_TRANSPORT_URI_POLLING_EVENT] = THRIFT_RDMA_POLLING_EVENT,
    [THRIFT_TRANSPORT_URI_POLLING_HYBRID] = THRIFT_RDMA_POLLING_HYBRID,
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (ThriftTransportUri) parsed = thrift_transport_uri_parse (uri, FALSE, &error);
  g_autofree gchar *lines = NULL;

  if (parsed == NULL)
  {
    fprintf (stderr, "calculator-client: %s\n", error->message);
    return 2;
  }
  lines = thrift_rdma_explain_sets (calculator_hint_sets, from_uri[parsed->polling]);
  fputs (lines, stdout);
  return 0;
}

static void
report (ThriftTransport *t, gboolean ok, const gchar *call, const gchar *result, const gchar *hints)
{
  g_autofree gchar *note = transport_note (t);
  printf ("%-4s %-34s -> %s\n", ok ? "ok" : "FAIL", call, result);
  printf ("     hints: %s\n     transport: %s\n", hints, note);
  fflush (stdout);
  if (!ok)
    failures++;
}

int
main (int argc, char **argv)
{
  gchar *uri = NULL;
  gint payload = 65536;
  gboolean explain_only = FALSE;
  GOptionEntry entries[] = {
    { "transport", 't', 0, G_OPTION_ARG_STRING, &uri,
      "the server: tcp://HOST:PORT, rdma://HOST:PORT[?OPTIONS] or hybrid://HOST:PORT[?OPTIONS] "
      "(default " TUTORIAL_CLIENT_URI ")",
      "URI" },
    { "payload", 'p', 0, G_OPTION_ARG_INT, &payload, "bytes sent to reverse() (default 65536)",
      "BYTES" },
    { "explain", 'e', 0, G_OPTION_ARG_NONE, &explain_only,
      "print the protocol and polling ThriftRdma chooses for each function and side, "
      "and why, then exit",
      NULL },
    { NULL }
  };
  GOptionContext *context;
  GError *error = NULL;
  ThriftTransportUri *parsed;
  ThriftTransport *transport;
  ThriftProtocol *protocol;
  CalculatorIf *client;
  gchar *what, *text;
  gint32 sum = 0, diff = 0, quot = 0;
  InvalidOperation *ouch = NULL;
  Work *work;
  GByteArray *data, *back = NULL;
  gboolean ok;
  gint i;

  context = g_option_context_new ("- call the tutorial calculator");
  g_option_context_set_summary (
      context,
      "Calls ping, add, calculate (twice, once failing), zip (oneway) and reverse\n"
      "on a calculator-server, checks each result and prints what each call did.\n"
      "URI options: tcp: framing=framed|buffered|none;\n"
      "rdma and hybrid: polling=busy|event|hybrid, connect-timeout=MS, call-timeout=MS,\n"
      "fallback=tcp, numa=N. hybrid:// sends each call by the leg its transport hint names.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
  {
    fprintf (stderr, "calculator-client: %s (try --help)\n", error->message);
    return 2;
  }
  g_option_context_free (context);
  if (uri == NULL)
    uri = g_strdup (TUTORIAL_CLIENT_URI);
  if (explain_only)
  {
    gint rc = explain (uri);

    g_free (uri);
    return rc;
  }
  if (payload < 0 || payload > 64 * 1024 * 1024)
  {
    fprintf (stderr, "calculator-client: --payload must be 0 to 67108864\n");
    return 2;
  }

  parsed = thrift_transport_uri_parse (uri, FALSE, &error);
  transport = parsed != NULL ? thrift_transport_new_for_uri (uri, &error) : NULL;
  if (transport == NULL)
  {
    fprintf (stderr, "calculator-client: %s\n", error->message);
    return 2;
  }
  what = thrift_transport_uri_describe (parsed);
  thrift_transport_uri_free (parsed);
  if (!thrift_transport_open (transport, &error))
  {
    fprintf (stderr, "calculator-client: cannot connect to %s: %s\n", what, error->message);
    return 1;
  }
  printf ("client: connected over %s\n", what);
  protocol = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL, "transport", transport, NULL);
  client = g_object_new (TYPE_CALCULATOR_CLIENT, "input_protocol", protocol, "output_protocol",
                         protocol, NULL);

  ok = calculator_if_ping (client, &error);
  report (transport, ok, "ping()", ok ? "ok" : error->message,
          "perf_goal=latency concurrency=4 (service); server polling=event");
  g_clear_error (&error);

  ok = calculator_if_add (client, &sum, 1, 1, &error);
  text = ok ? g_strdup_printf ("%d", sum) : g_strdup (error->message);
  report (transport, ok && sum == 2, "add(1, 1)", text,
          "payload_size=64 (function), perf_goal=latency");
  g_free (text);
  g_clear_error (&error);

  work = g_object_new (TYPE_WORK, "num1", 1, "num2", 0, "op", OPERATION_DIVIDE, NULL);
  ok = calculator_if_calculate (client, &quot, 1, work, &ouch, &error);
  if (ouch != NULL)
    text = g_strdup_printf ("InvalidOperation(whatOp=%d, why=\"%s\"), as expected", ouch->whatOp,
                            ouch->why);
  else
    text = g_strdup_printf ("%s (expected InvalidOperation)", ok              ? "a result"
                                                              : error != NULL ? error->message
                                                                              : "no exception");
  report (transport, !ok && ouch != NULL && ouch->whatOp == OPERATION_DIVIDE,
          "calculate(1, 1 DIVIDE 0)", text, "perf_goal=latency (service)");
  g_free (text);
  g_clear_object (&ouch);
  g_clear_error (&error);
  g_object_unref (work);

  work = g_object_new (TYPE_WORK, "num1", 15, "num2", 10, "op", OPERATION_SUBTRACT, NULL);
  ok = calculator_if_calculate (client, &diff, 2, work, &ouch, &error);
  text = ok ? g_strdup_printf ("%d", diff)
            : g_strdup (error != NULL ? error->message : "exception");
  report (transport, ok && diff == 5, "calculate(2, 15 SUBTRACT 10)", text,
          "perf_goal=latency (service)");
  g_free (text);
  g_clear_object (&ouch);
  g_clear_error (&error);
  g_object_unref (work);

  ok = calculator_if_zip (client, &error);
  report (transport, ok, "zip() (oneway)", ok ? "sent, no reply expected" : error->message,
          "perf_goal=res_util (function)");
  g_clear_error (&error);

  data = g_byte_array_sized_new ((guint) payload);
  g_byte_array_set_size (data, (guint) payload);
  for (i = 0; i < payload; i++)
    data->data[i] = (guint8) (i * 31 + 7);
  ok = calculator_if_reverse (client, &back, data, &error);
  if (ok)
  {
    gboolean same = back != NULL && back->len == data->len;
    for (i = 0; same && i < payload; i++)
      same = back->data[i] == data->data[payload - 1 - i];
    text = g_strdup_printf ("%u bytes, %s", back != NULL ? back->len : 0,
                            same ? "every byte reversed" : "WRONG BYTES");
    ok = same;
  }
  else
    text = g_strdup (error->message);
  {
    g_autofree gchar *call = g_strdup_printf ("reverse(%d bytes)", payload);
    report (transport, ok, call, text,
            "perf_goal=throughput payload_size=64K transport=tcp (function)");
  }
  g_free (text);
  g_clear_error (&error);
  if (back != NULL)
    g_byte_array_unref (back);
  g_byte_array_unref (data);

  /* one more call after the oneway proves the connection is still in step */
  ok = calculator_if_add (client, &sum, 20, 22, &error);
  text = ok ? g_strdup_printf ("%d", sum) : g_strdup (error->message);
  report (transport, ok && sum == 42, "add(20, 22)", text,
          "payload_size=64 (function), perf_goal=latency");
  g_free (text);
  g_clear_error (&error);

  thrift_transport_close (transport, NULL);
  g_object_unref (client);
  g_object_unref (protocol);
  g_object_unref (transport);
  printf ("client: %s, %d call(s) failed\n", failures == 0 ? "all calls ok" : "FAILED", failures);
  g_free (what);
  g_free (uri);
  return failures == 0 ? 0 : 1;
}
