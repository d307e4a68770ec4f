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
 * calculator-server: serves tutorial/calculator.thrift on the transport given by a URI,
 * many clients at once (ThriftThreadedServer), until SIGINT or SIGTERM.
 *
 *   calculator-server [--transport URI] [--max-connections N]
 *
 * The handler is ordinary c_glib handler code; the same program serves tcp://, rdma:// and
 * hybrid://.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <glib-object.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/server/thrift_server_uri.h>
#include <thrift/c_glib/transport/thrift_transport_uri.h>

#include "calculator.h"
#include "tutorial_defaults.h"

/* ---- the handler ---- */

typedef struct
{
  CalculatorHandler parent;
} TutorialCalculator;
typedef struct
{
  CalculatorHandlerClass parent;
} TutorialCalculatorClass;
static GType tutorial_calculator_get_type (void);
G_DEFINE_TYPE (TutorialCalculator, tutorial_calculator, TYPE_CALCULATOR_HANDLER)

static void say (const gchar *format, ...) G_GNUC_PRINTF (1, 2);

static void
say (const gchar *format, ...)
{
  va_list ap;
  va_start (ap, format);
  printf ("server: ");
  vprintf (format, ap);
  printf ("\n");
  fflush (stdout);
  va_end (ap);
}

static gboolean
calc_ping (CalculatorIf *iface, GError **error)
{
  say ("ping()");
  return TRUE;
}

static gboolean
calc_add (CalculatorIf *iface, gint32 *ret, const gint32 num1, const gint32 num2, GError **error)
{
  *ret = (gint32) ((guint32) num1 + (guint32) num2);
  say ("add(%d, %d) = %d", num1, num2, *ret);
  return TRUE;
}

static gboolean
calc_calculate (CalculatorIf *iface, gint32 *ret, const gint32 logid, const Work *w,
                InvalidOperation **ouch, GError **error)
{
  const gchar *why = NULL;

  switch (w->op)
  {
  case OPERATION_ADD:
    *ret = (gint32) ((guint32) w->num1 + (guint32) w->num2);
    break;
  case OPERATION_SUBTRACT:
    *ret = (gint32) ((guint32) w->num1 - (guint32) w->num2);
    break;
  case OPERATION_MULTIPLY:
    *ret = (gint32) ((guint32) w->num1 * (guint32) w->num2);
    break;
  case OPERATION_DIVIDE:
    if (w->num2 == 0)
      why = "Cannot divide by 0";
    else if (w->num1 == G_MININT32 && w->num2 == -1)
      why = "Quotient does not fit in i32";
    else
      *ret = w->num1 / w->num2;
    break;
  default:
    why = "Invalid operation";
    break;
  }
  if (why != NULL)
  {
    say ("calculate(%d, %d %s %d) -> InvalidOperation: %s", logid, w->num1,
         toString_Operation (w->op), w->num2, why);
    *ouch = g_object_new (TYPE_INVALID_OPERATION, "whatOp", (gint32) w->op, "why", why, NULL);
    return FALSE;
  }
  say ("calculate(%d, %d %s %d) = %d", logid, w->num1, toString_Operation (w->op), w->num2, *ret);
  return TRUE;
}

static gboolean
calc_reverse (CalculatorIf *iface, GByteArray **ret, const GByteArray *data, GError **error)
{
  guint i;

  if (*ret != NULL)
    g_byte_array_unref (*ret);
  *ret = g_byte_array_sized_new (data->len);
  g_byte_array_set_size (*ret, data->len);
  for (i = 0; i < data->len; i++)
    (*ret)->data[i] = data->data[data->len - 1 - i];
  say ("reverse(%u bytes)", data->len);
  return TRUE;
}

static gboolean
calc_zip (CalculatorIf *iface, GError **error)
{
  say ("zip() (oneway)");
  return TRUE;
}

static void
tutorial_calculator_class_init (TutorialCalculatorClass *klass)
{
  CalculatorHandlerClass *h = CALCULATOR_HANDLER_CLASS (klass);
  h->ping = calc_ping;
  h->add = calc_add;
  h->calculate = calc_calculate;
  h->reverse = calc_reverse;
  h->zip = calc_zip;
}

static void
tutorial_calculator_init (TutorialCalculator *self)
{
}

/* ---- main ---- */

static gchar *listen_text;

static void
on_listening (ThriftThreadedServer *server, const gchar *uri, gpointer data)
{
  say ("listening on %s", listen_text);
}

int
main (int argc, char **argv)
{
  gchar *uri = NULL;
  gint max_connections = THRIFT_THREADED_SERVER_DEFAULT_MAX_CONNECTIONS;
  GOptionEntry entries[] = {
    { "transport", 't', 0, G_OPTION_ARG_STRING, &uri,
      "where to listen: tcp://[HOST]:PORT, rdma://[HOST]:PORT[?OPTIONS] or "
      "hybrid://[HOST]:PORT[?OPTIONS] (default " TUTORIAL_SERVER_URI ")",
      "URI" },
    { "max-connections", 'm', 0, G_OPTION_ARG_INT, &max_connections,
      "clients served at once; more wait (default 64)", "N" },
    { NULL }
  };
  GOptionContext *context;
  GObject *handler, *processor;
  ThriftTransportUri *parsed;
  ThriftServeOptions options = { .listening = on_listening };
  ThriftServeStatus status;
  GError *error = NULL;
  gchar *what;

  context = g_option_context_new ("- serve the tutorial calculator");
  g_option_context_set_summary (
      context,
      "Serves tutorial/calculator.thrift until SIGINT or SIGTERM, many clients at once\n"
      "(idle connections wait in one poll set; a pool of workers serves requests).\n"
      "URI options: tcp: framing=framed|buffered|none; rdma and hybrid: polling=busy|event|\n"
      "hybrid, idle-timeout=MS, keepalive=MS, call-timeout=MS, fallback=tcp, numa=N;\n"
      "all: backlog=N. hybrid:// serves TCP and RDMA on one port, each call on its client's\n"
      "choice (the transport hint).\n"
      "The host may be left out to listen on every address.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
  {
    fprintf (stderr, "calculator-server: %s (try --help)\n", error->message);
    return 2;
  }
  g_option_context_free (context);
  if (uri == NULL)
    uri = g_strdup (TUTORIAL_SERVER_URI);
  if (max_connections < 1 || max_connections > 65535)
  {
    fprintf (stderr, "calculator-server: --max-connections must be 1 to 65535\n");
    return 2;
  }

  /* parsed here too for the line that says what it serves */
  parsed = thrift_transport_uri_parse (uri, TRUE, &error);
  if (parsed == NULL)
  {
    fprintf (stderr, "calculator-server: %s\n", error->message);
    return 2;
  }
  what = thrift_transport_uri_describe (parsed);
  thrift_transport_uri_free (parsed);
  listen_text = g_strdup_printf ("%s, at most %d clients at once; SIGINT stops", what,
                                 max_connections);

  handler = g_object_new (tutorial_calculator_get_type (), NULL);
  processor = g_object_new (TYPE_CALCULATOR_PROCESSOR, "handler", handler, NULL);
  options.max_connections = (guint) max_connections;
  /* one call: the server for the URI, serving until SIGINT or SIGTERM */
  status = thrift_server_serve_uris ((gchar *[]){ uri, NULL }, (GObject *[]){ processor },
                                     THRIFT_THREADED_SERVER_POOL, &options, &error);
  if (status == THRIFT_SERVE_STOPPED)
    say ("stopped");
  else
    fprintf (stderr, "calculator-server: %s\n", error->message);

  g_clear_error (&error);
  g_object_unref (processor);
  g_object_unref (handler);
  g_free (what);
  g_free (listen_text);
  g_free (uri);
  return status;
}
