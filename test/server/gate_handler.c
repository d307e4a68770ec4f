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

/* gate_handler.c: see gate_handler.h. */
#include "config.h"

#include "gate_handler.h"

/* ---- the handler: gather(n, timeout) waits until n calls are inside at once ---- */

static GMutex gather_lock;
static GCond gather_cond;
static gint gather_inside;
static gint gather_peak;
static gint pings; /* atomic: ping calls served */

typedef struct
{
  GateHandler parent;
} TestGate;
typedef struct
{
  GateHandlerClass parent;
} TestGateClass;
G_DEFINE_TYPE (TestGate, test_gate, TYPE_GATE_HANDLER)

static gboolean
test_gate_gather (GateIf *iface, gint32 *ret, const gint32 n, const gint32 timeout_ms,
                  GError **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  gint seen;

  g_mutex_lock (&gather_lock);
  gather_inside++;
  gather_peak = MAX (gather_peak, gather_inside);
  seen = gather_inside;
  g_cond_broadcast (&gather_cond);
  while (gather_inside < n && g_get_monotonic_time () < deadline)
  {
    g_cond_wait_until (&gather_cond, &gather_lock, deadline);
    seen = MAX (seen, gather_inside);
  }
  seen = MAX (seen, gather_inside);
  g_mutex_unlock (&gather_lock);

  /* leave only once every caller has seen the crowd, so the counts agree */
  g_usleep (50 * 1000);
  g_mutex_lock (&gather_lock);
  gather_inside--;
  g_mutex_unlock (&gather_lock);
  *ret = seen;
  return TRUE;
}

static gboolean
test_gate_echo (GateIf *iface, GByteArray **ret, const GByteArray *data, GError **error)
{
  if (*ret != NULL)
    g_byte_array_unref (*ret);
  *ret = g_byte_array_ref ((GByteArray *) data);
  return TRUE;
}

static gboolean
test_gate_ping (GateIf *iface, gint32 *ret, const gint32 x, GError **error)
{
  if (x < 0)
    g_usleep ((gulong) -x * 1000);
  *ret = x + 1;
  g_atomic_int_inc (&pings);
  return TRUE;
}

static void
test_gate_class_init (TestGateClass *klass)
{
  GateHandlerClass *h = GATE_HANDLER_CLASS (klass);
  /* The generated *_get_type () are not thread-safe (a plain "if (type == 0) register"):
   * register the argument and result types here, in the thread that makes the handler,
   * before concurrent workers race to do it ("cannot register existing type"). */
  GType types[] = { TYPE_GATE_GATHER_ARGS, TYPE_GATE_GATHER_RESULT, TYPE_GATE_ECHO_ARGS,
                    TYPE_GATE_ECHO_RESULT, TYPE_GATE_PING_ARGS,     TYPE_GATE_PING_RESULT };

  (void) types;
  h->gather = test_gate_gather;
  h->echo = test_gate_echo;
  h->ping = test_gate_ping;
}

static void
test_gate_init (TestGate *self)
{
}

void
test_gate_reset_peak (void)
{
  g_mutex_lock (&gather_lock);
  gather_peak = 0;
  g_mutex_unlock (&gather_lock);
}

gint
test_gate_peak (void)
{
  gint peak;

  g_mutex_lock (&gather_lock);
  peak = gather_peak;
  g_mutex_unlock (&gather_lock);
  return peak;
}

gint
test_gate_pings (void)
{
  return g_atomic_int_get (&pings);
}
