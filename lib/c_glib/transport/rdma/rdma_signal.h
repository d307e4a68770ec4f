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
 * rdma_signal.h: what a blocking wait does when a signal interrupts it (EINTR).
 *
 * ThriftSocket and ThriftServerSocket block in recv (2) and accept (2): a signal whose handler
 * was installed without SA_RESTART makes them fail with EINTR, and upstream's c_glib tutorial
 * relies on that to stop ThriftSimpleServer from a SIGINT handler (installed with
 * SA_RESETHAND); with SA_RESTART the kernel restarts them.  Our waits block in poll (2),
 * which fails with EINTR whatever the flag, so we look at the handlers to behave as the
 * socket transports would.  A SA_RESETHAND handler is already gone when the wait sees its
 * EINTR, so the handlers are also noted beforehand (rdma_signal_snapshot, at listen, accept
 * and open): one that was there and is now back to the default has just fired.
 *
 * poll (2) does not say which signal interrupted it, so the policy is per process: once any
 * caught signal lacks SA_RESTART, every EINTR ends the wait (a SIGCHLD with SA_RESTART that
 * lands in a waiting thread then ends it too, where recv (2) would have restarted).  Install
 * handlers with SA_RESTART, or let GLib's (which use it) handle signals, to keep waits going.
 */
#ifndef _RDMA_SIGNAL_H
#define _RDMA_SIGNAL_H

#include <glib.h>

G_BEGIN_DECLS

/* Notes which signals have a handler without SA_RESTART now (one sigaction (2) per signal
 * number: call it when a wait is set up, not per wait). */
void rdma_signal_snapshot (void);

/* After an EINTR: TRUE if it should end the wait, because a caught signal's handler lacks
 * SA_RESTART (now, or it was noted and has reset itself), so recv (2) or accept (2) would
 * have failed too. */
gboolean rdma_signal_interrupts_waits (void);

G_END_DECLS

#endif
