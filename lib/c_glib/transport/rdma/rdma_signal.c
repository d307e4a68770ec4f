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

/* rdma_signal.c: the EINTR policy of blocking waits (see rdma_signal.h). */
#include "config.h"

#include <signal.h>

#include "rdma_signal.h"

/* Bit N: signal N had a handler without SA_RESTART at the last snapshot (atomic). */
static guint64 noted;

static guint64
non_restarting (guint64 *reset_of_noted)
{
  guint64 mask = 0, before = __atomic_load_n (&noted, __ATOMIC_ACQUIRE);

  if (reset_of_noted != NULL)
    *reset_of_noted = 0;
  for (int sig = 1; sig < NSIG && sig < 64; sig++)
  {
    struct sigaction sa;
    gboolean caught;

    if (sig == SIGKILL || sig == SIGSTOP || sigaction (sig, NULL, &sa) != 0)
      continue;
    caught = (sa.sa_flags & SA_SIGINFO) || (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
    if (caught && !(sa.sa_flags & SA_RESTART))
      mask |= G_GUINT64_CONSTANT (1) << sig;
    else if (!caught && sa.sa_handler == SIG_DFL && (before & (G_GUINT64_CONSTANT (1) << sig))
             && reset_of_noted != NULL)
      *reset_of_noted |= G_GUINT64_CONSTANT (1) << sig;
  }
  return mask;
}

void
rdma_signal_snapshot (void)
{
  guint64 reset;
  guint64 mask = non_restarting (&reset);

  /* a noted handler that is back to the default may have just fired in another thread,
   * whose wait has yet to see its EINTR: keep it noted until reported */
  __atomic_store_n (&noted, mask | reset, __ATOMIC_RELEASE);
}

gboolean
rdma_signal_interrupts_waits (void)
{
  guint64 reset;
  guint64 now = non_restarting (&reset);

  if (reset != 0)
  {
    /* that handler ran once and is gone: report it once */
    __atomic_store_n (&noted, now, __ATOMIC_RELEASE);
    return TRUE;
  }
  return now != 0;
}
