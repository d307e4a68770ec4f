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
 * rdma_lend_cost.h: a large field lent or copied, by what the calls of each cost on the
 * device.
 *
 * Lending a field (rdma_bulk.h) saves its copy into the message and costs a window bound and
 * waited for, the reader's RDMA READ and its completion, and an invalidation; on a NIC the
 * READ is the NIC's work, and from some size on the copy costs more.  On soft-RoCE the READ is
 * a copy in the kernel on the same cores, and a 128 KB echo lent ran at 0.65-0.87 of the same
 * echo copied (guest, 1 to 64 clients: 305-362 against 339-458 RPC/s, 4.9-5.5 against 4.0-4.3
 * ms of CPU per call on the two sides).  Which is cheaper is the fabric's to say, and per size:
 * so a client whose threshold is the default measures both, per power of two of the field's
 * size, on each device, and keeps the cheaper (rdma_choice.h; lending is the prior).
 *
 * What is measured is the time per call of each way: the time between the choices (at a
 * message's first large field) of a window of calls that all took it, less the time in it
 * with no call open (a caller's pauses are not the way's), over their number.  By time, not
 * by the caller's CPU: lending moves the transfer's cost to the reader, which a client's own
 * clock does not see.  Between choices, not from a call's start to its end: with many calls
 * in flight (16 to 64 clients on two cores) a call's own time says more about when its
 * threads ran than about its way (82 lent calls among 64 clients measured 15 ms a call
 * against 108 ms for copied ones, where copying gave the higher rate), while the rate at
 * which callers come back for their next call is the throughput itself; with one caller it
 * is its call time.  The other way is timed in the second half of its run (rdma_choice.h),
 * whose first half replaced the calls in flight, and a run is twice as long as the calls in
 * flight (the choices other calls make while one is open); the way in use from half a run
 * after the run, over up to RDMA_LEND_COST_SPAN runs' length.  A size's first run of the
 * other way comes at the regular interval (RDMA_CHOICE_TRY_EVERY), not at its first calls:
 * a process's first calls come in a burst as its threads start, or slowly while their
 * connections are still being made, so such a run could not be learnt, and a short run of
 * calls (a latency benchmark's 50 per size) paid for it and learnt nothing.  Per device, not per connection: at 64 clients a
 * connection makes a few 128 KB calls a second, and the device's cost is the same for all;
 * and for the process, not the device's domain, where the device has a name.  Thread-safe.
 */
#ifndef _RDMA_LEND_COST_H
#define _RDMA_LEND_COST_H

#include <glib.h>

#include "rdma_choice.h"

G_BEGIN_DECLS

/* Sizes by power of two from 4 KiB (the least lent) to 1 MiB, and one class from 1 MiB on,
 * RDMA_LEND_COST_LINEAR: there a call's cost is its bytes' (a copy, a transfer), so its calls
 * are timed per MiB and the sizes learn together (a 16 MiB call need not try copying 8 times,
 * 3 s on soft-RoCE, when 1 MiB calls measured the ways). */
#define RDMA_LEND_COST_CLASSES 9
#define RDMA_LEND_COST_LINEAR (1u << 20)
/* A connection's calls learnt from once it has sent this many messages. */
#define RDMA_LEND_COST_WARM 4
/* A window's time per call already averages many calls: each counts for half, so that the
 * first, taken while a process's connections are still being made, is soon forgotten. */
#define RDMA_LEND_COST_REACH 2
/* The way in use is timed over up to this many runs' length of its calls. */
#define RDMA_LEND_COST_SPAN 8
/* The longest call learnt. */
#define RDMA_LEND_COST_MAX_US (10 * G_USEC_PER_SEC)

typedef struct _RdmaLendCost RdmaLendCost;

/* A measured call in progress (zeroed: none). */
typedef struct
{
  gboolean open;
  gboolean copy; /* the way it took */
  guint cls;
  guint calls_then; /* the class's choices when it chose */
} RdmaLendTicket;

RdmaLendCost *rdma_lend_cost_new (void);
void rdma_lend_cost_free (RdmaLendCost *c);
/* @c is a book of staging a copy (rdma_bulk_stage.h): described as "staged", not "lent". */
void rdma_lend_cost_set_staged (RdmaLendCost *c);
/* The book of the device named @name for the rest of the process (not to be freed): a process
 * whose connections all close and that connects again (a client that reconnects, each round
 * of a benchmark) keeps what it learnt, where a book of the domain's life started again.  One
 * for lending the caller's bytes, another (@staged) for staging a copy (rdma_bulk_stage.h):
 * a process that is client and server learns each way apart. */
RdmaLendCost *rdma_lend_cost_for_device (const gchar *name, gboolean staged);
/* Whether a message whose first large field has @len bytes lends its large fields (TRUE) or
 * copies them, chosen at @now (monotonic, us); the call is open on @t until its end. */
gboolean rdma_lend_cost_choose (RdmaLendCost *c, gsize len, gint64 now, RdmaLendTicket *t);
/* The call on @t is over at @now (or failed, or its connection goes): it counts the calls in
 * flight beside it and whether any is left (unless @c is NULL: the connection went to a
 * device that cannot lend), and @t is closed.  Nothing if @t is not open. */
void rdma_lend_cost_end (RdmaLendCost *c, RdmaLendTicket *t, gint64 now);
/* What @c measured, for explain: "lent or copied by time per call: 64-128 KiB lent 3100 us,
 * copied 2700 us (over 212 calls): copies, 1 change; ..." (no newline); NULL if no call was
 * measured.
 * Free with g_free (). */
gchar *rdma_lend_cost_describe (RdmaLendCost *c);
/* Whether fields of @len bytes are copied now (for tests). */
gboolean rdma_lend_cost_copies (RdmaLendCost *c, gsize len);

G_END_DECLS

#endif /* _RDMA_LEND_COST_H */
