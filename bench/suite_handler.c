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

/* suite_handler.c: the handler of bench/suite.thrift (suite_handler.h). */
#include "config.h"

#include <sys/resource.h>

#include "bench_serve.h"
#include "bench_suite.h"
#include "bench_util.h"
#include "suite_client.h"
#include "suite_handler.h"

typedef struct
{
  BenchSuiteHandler parent;
} SuiteHandler;
typedef struct
{
  BenchSuiteHandlerClass parent;
} SuiteHandlerClass;
static GType suite_handler_get_type (void);
G_DEFINE_TYPE (SuiteHandler, suite_handler, TYPE_BENCH_SUITE_HANDLER)

/* benchmark calls served, for usage */
static gssize served;

/* Kept where the compiler cannot drop the loop that computes it. */
static volatile guint32 checksum_sink;

static gboolean
echo (BenchSuiteIf *iface, GByteArray **ret, const GByteArray *data, GError **error)
{
  /* the generated processor hands a NULL *ret and frees what we return */
  if (*ret != NULL)
    g_byte_array_unref (*ret);
  *ret = g_byte_array_ref ((GByteArray *) data);
  g_atomic_pointer_add (&served, 1);
  return TRUE;
}

static gboolean
checksum_echo (BenchSuiteIf *iface, GByteArray **ret, const GByteArray *data, GError **error)
{
  /* Adler-32: one pass over every byte, so the server's work grows with the payload */
  guint32 a = 1, b = 0;

  for (guint i = 0; i < data->len; i++)
  {
    a = (a + data->data[i]) % 65521;
    b = (b + a) % 65521;
  }
  checksum_sink = (b << 16) | a;
  return echo (iface, ret, data, error);
}

static gboolean
usage (BenchSuiteIf *iface, ServerUsage **ret, GError **error)
{
  double user, system;

  struct rusage ru = { 0 };

  bench_cpu_seconds (&user, &system);
  getrusage (RUSAGE_SELF, &ru);
  g_object_set (*ret, "user_us", (gint64) (user * 1e6), "system_us", (gint64) (system * 1e6),
                "calls", (gint64) g_atomic_pointer_get (&served), "wakeups",
                (gint64) bench_serve_wakeups (), "switches", (gint64) ru.ru_nvcsw, NULL);
  return TRUE;
}

static void
suite_handler_class_init (SuiteHandlerClass *klass)
{
  BenchSuiteHandlerClass *h = BENCH_SUITE_HANDLER_CLASS (klass);

  h->echo_plan = echo;
  h->echo_plain = echo;
#define ECHO(p) h->echo_##p = echo;
#define MIX(p)                    \
  h->mix_lat_##p = checksum_echo; \
  h->mix_tput_##p = checksum_echo;
  SUITE_PROTOCOLS (ECHO)
  MIX (small_under)
  MIX (small_over)
  MIX (large_under)
  MIX (large_over)
  SUITE_PROTOCOLS (MIX)
#undef ECHO
#undef MIX
  h->tput_small_under = echo;
  h->tput_small_over = echo;
  h->tput_large_under = echo;
  h->tput_large_over = echo;
  h->tput_small_under_eager_rndv = echo;
  h->tput_small_over_eager_rndv = echo;
  h->tput_large_under_eager_rndv = echo;
  h->tput_large_over_eager_rndv = echo;
  h->hy_small = echo;
  h->hy_bulk = echo;
  h->bulk_echo = echo;
  h->usage = usage;
}

static void
suite_handler_init (SuiteHandler *self)
{
}

GObject *
suite_processor_new (void)
{
  GObject *handler = g_object_new (suite_handler_get_type (), NULL);
  GObject *processor = g_object_new (TYPE_BENCH_SUITE_PROCESSOR, "handler", handler, NULL);

  g_object_unref (handler); /* the processor holds it */
  return processor;
}
