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

/* rdma_spin.c: spinning admission (see rdma_spin.h). */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdma_machine.h"
#include "rdma_spin.h"

static gint waiters;
static gint spinners;
static guint cores_override;

/* the machine's contention: the share of recent readings that found it contended, in
 * 1/CONTENDED_ONE (a moving average over about 8 readings, 80 ms), and when it was last read */
#define CONTENDED_ONE 1024
static gint contended_share;
static gint64 sampled_at;
static RdmaSpinLoadReader load_reader;

/* THRIFT_RDMA_SPIN_CORES: a container's CPU quota is not in its affinity mask, and a
 * process that shares its cores with another (its peer on one host) has fewer than it sees. */
static guint
configured_cores (void)
{
  static gsize cores = 0;

  if (g_once_init_enter (&cores))
  {
    const gchar *env = g_getenv ("THRIFT_RDMA_SPIN_CORES");
    gsize v = rdma_machine_get ()->cores;

    if (env != NULL && *env != '\0')
    {
      /* digits by hand: g_ascii_strtoull's errno is not to be trusted in a process's first
       * concurrent calls (thrift_transport_uri.c, parse_number) */
      guint64 n = 0;
      const gchar *c = env;

      while (g_ascii_isdigit (*c) && n <= G_MAXINT)
        n = n * 10 + (guint64) (*c++ - '0');
      if (*c == '\0' && n >= 1 && n <= G_MAXINT)
        v = (gsize) n;
      else
        g_warning ("THRIFT_RDMA_SPIN_CORES='%s' is not a number of cores (1 or more): "
                   "ignored, spinning is admitted for the %" G_GSIZE_FORMAT " cores of the "
                   "process's affinity mask",
                   env, v);
    }
    g_once_init_leave (&cores, v);
  }
  return (guint) cores;
}

guint
rdma_spin_cores (void)
{
  guint forced = g_atomic_int_get ((gint *) &cores_override);

  return forced > 0 ? forced : configured_cores ();
}

void
rdma_spin_set_cores (guint cores)
{
  g_atomic_int_set ((gint *) &cores_override, (gint) cores);
}

/* /proc/loadavg's fourth field is "runnable/threads": the threads running or waiting for a
 * core at this instant, machine-wide */
static gboolean
read_loadavg (guint *runnable, guint *online)
{
  static gint fd = -2;
  gchar buf[128], *slash, *p;
  ssize_t n;
  gint f = g_atomic_int_get (&fd);

  if (f == -2)
  {
    f = open ("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    /* (two first readers: the loser closes its own) */
    if (!g_atomic_int_compare_and_exchange (&fd, -2, f))
    {
      if (f >= 0)
        close (f);
      f = g_atomic_int_get (&fd);
    }
  }
  if (f < 0)
    return FALSE;
  n = pread (f, buf, sizeof buf - 1, 0);
  if (n <= 0)
    return FALSE;
  buf[n] = '\0';
  slash = strchr (buf, '/');
  if (slash == NULL)
    return FALSE;
  for (p = slash; p > buf && p[-1] != ' '; p--)
    ;
  *runnable = (guint) strtoul (p, NULL, 10);
  *online = rdma_machine_get ()->online;
  return TRUE;
}

void
rdma_spin_set_load_reader (RdmaSpinLoadReader read)
{
  load_reader = read;
  g_atomic_int_set (&contended_share, 0);
  __atomic_store_n (&sampled_at, 0, __ATOMIC_RELAXED);
}

/* One reading, by one waiter at a time, every RDMA_SPIN_SAMPLE_US.  The reader itself is
 * runnable and a waiter; the process's spinners are runnable and would stay so. */
static void
sample (gint64 now)
{
  gint64 last = __atomic_load_n (&sampled_at, __ATOMIC_RELAXED);
  guint runnable, online;
  gint others, share, old;

  if (now - last < RDMA_SPIN_SAMPLE_US
      || !__atomic_compare_exchange_n (&sampled_at, &last, now, FALSE, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED))
    return;
  if (!(load_reader != NULL ? load_reader : read_loadavg) (&runnable, &online))
    return;
  others = (gint) runnable - g_atomic_int_get (&spinners) - 1;
  old = g_atomic_int_get (&contended_share);
  share = old
          + ((MAX (others, 0) + g_atomic_int_get (&waiters) > (gint) online ? CONTENDED_ONE : 0)
             - old)
                / 8;
  g_atomic_int_set (&contended_share, share);
}

gboolean
rdma_spin_contended (void)
{
  return g_atomic_int_get (&contended_share) >= CONTENDED_ONE / 2;
}

gboolean
rdma_spin_begin (RdmaSpinTicket *t, gboolean wants_spin)
{
  gint cores = (gint) rdma_spin_cores ();
  gint w = g_atomic_int_add (&waiters, 1) + 1;

  t->spinning = FALSE;
  if (!wants_spin || w > cores)
    return FALSE;
  sample (g_get_monotonic_time ());
  if (rdma_spin_contended ())
    return FALSE;
  for (;;)
  {
    gint s = g_atomic_int_get (&spinners);

    if (s >= cores)
      return FALSE;
    if (g_atomic_int_compare_and_exchange (&spinners, s, s + 1))
      break;
  }
  t->spinning = TRUE;
  return TRUE;
}

void
rdma_spin_stop (RdmaSpinTicket *t)
{
  if (t->spinning)
  {
    g_atomic_int_add (&spinners, -1);
    t->spinning = FALSE;
  }
}

void
rdma_spin_end (RdmaSpinTicket *t)
{
  rdma_spin_stop (t);
  g_atomic_int_add (&waiters, -1);
}

guint
rdma_spin_waiters (void)
{
  return (guint) g_atomic_int_get (&waiters);
}

guint
rdma_spin_spinners (void)
{
  return (guint) g_atomic_int_get (&spinners);
}
