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
 * rdma_spin.h: which waits of the process may spin.
 *
 * A hybrid wait spins before it blocks, to catch a reply without a wake-up.  That pays while
 * the spinning threads have cores to themselves; once the threads waiting outnumber the cores,
 * a spinner takes the core from the thread that would produce its reply (a handler, another
 * connection's completion, or, on one host, the peer), and throughput collapses (HatRPC
 * Sec. 3, Fig. 5: busy polling at 4x over-subscription).  So a wait counts itself among the
 * process's waiters for as long as it lasts, and may spin only while the waiters are no more
 * than the cores the process may run on, and fewer than that already spin; otherwise it
 * blocks at once.  It gives its spinning slot back as soon as it stops spinning.
 *
 * The cores are not the process's alone: its peer on the same host, or any other process, may
 * need them too, and a spinner then keeps that thread waiting for the scheduler (at 2 clients
 * on the 2 cores of the soft-RoCE guest, both clients spun while the server waited: 2 clients
 * did fewer calls per second than 1).  So every RDMA_SPIN_SAMPLE_US a waiter reads the
 * machine's runnable threads (/proc/loadavg) and counts those that are not this process's
 * spinners: when they and the process's waiters would be more than the machine's cores, the
 * cores are contended.  Averaged over recent readings (one reading is an instant), a
 * machine contended half the time or more lets no wait spin.
 *
 * Lock-free (atomic counters), taken on every wait; one pread (2) per RDMA_SPIN_SAMPLE_US
 * for the whole process.
 */
#ifndef RDMA_SPIN_H
#define RDMA_SPIN_H

#include <glib.h>

G_BEGIN_DECLS

/* A wait's place in the counts. */
typedef struct
{
  gboolean spinning; /* it holds a spinning slot */
} RdmaSpinTicket;

/* How often the machine's runnable threads are read. */
#define RDMA_SPIN_SAMPLE_US 10000

/* The wait begins: counted among the waiters.  With @wants_spin, it asks for a spinning slot
 * as well; TRUE if it got one (then it may spin until rdma_spin_stop). */
gboolean rdma_spin_begin (RdmaSpinTicket *t, gboolean wants_spin);
/* It stops spinning (to block, or because it is done): the slot goes back. */
void rdma_spin_stop (RdmaSpinTicket *t);
/* The wait ends. */
void rdma_spin_end (RdmaSpinTicket *t);

/* The cores the admission counts with: THRIFT_RDMA_SPIN_CORES if set, else those of the
 * process's affinity mask (read once). */
guint rdma_spin_cores (void);
/* Tests: admit as if the process had @cores cores (0: back to the real count). */
void rdma_spin_set_cores (guint cores);
/* Tests: read the machine's runnable threads and online cores from @read instead of
 * /proc/loadavg (NULL: back to it); the average starts again. */
typedef gboolean (*RdmaSpinLoadReader) (guint *runnable, guint *online);
void rdma_spin_set_load_reader (RdmaSpinLoadReader read);
/* Whether the machine's cores were found contended (the average of the readings). */
gboolean rdma_spin_contended (void);

/* The waits now counted, and those of them spinning. */
guint rdma_spin_waiters (void);
guint rdma_spin_spinners (void);

G_END_DECLS

#endif /* RDMA_SPIN_H */
