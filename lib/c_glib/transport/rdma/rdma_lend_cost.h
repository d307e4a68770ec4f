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
 * What is measured is a call: from the choice, at the message's first large field, to the
 * end of the reply's read (of a oneway call: to the next message the connection begins); a
 * call that fails is not learnt.  By time, not by the caller's CPU: lending moves the transfer's cost to
 * the reader, which a client's own clock does not see, while a call's time has both sides'
 * work in it.  Per device, not per connection: at 64 clients a connection makes a few 128 KB
 * calls a second, and the device's cost is the same for all.  Thread-safe.
 */
#ifndef _RDMA_LEND_COST_H
#define _RDMA_LEND_COST_H

#include <glib.h>

#include "rdma_choice.h"

G_BEGIN_DECLS

/* Sizes by power of two from 4 KiB (the least lent) to 128 MiB and over. */
#define RDMA_LEND_COST_CLASSES 16
/* A connection's calls learnt from once it has sent this many messages. */
#define RDMA_LEND_COST_WARM 4
/* The longest call learnt. */
#define RDMA_LEND_COST_MAX_US (10 * G_USEC_PER_SEC)

typedef struct _RdmaLendCost RdmaLendCost;

/* A measured call in progress (zeroed: none). */
typedef struct
{
  gboolean open;
  gboolean copy;         /* the way it took */
  gboolean learn;        /* not the settling half of a run of the other way */
  guint cls;
  gint64 since;          /* when it chose (monotonic, us) */
} RdmaLendTicket;

RdmaLendCost *rdma_lend_cost_new (void);
void rdma_lend_cost_free (RdmaLendCost *c);
/* Whether a message whose first large field has @len bytes lends its large fields (TRUE) or
 * copies them; the call is timed on @t from now. */
gboolean rdma_lend_cost_choose (RdmaLendCost *c, gsize len, RdmaLendTicket *t);
/* The call on @t is over at @now: learnt (unless settling, or @c is NULL: the connection
 * went to a device that cannot lend), and @t closed.  Nothing if @t is not open. */
void rdma_lend_cost_end (RdmaLendCost *c, RdmaLendTicket *t, gint64 now);
/* What @c measured, for explain: "lent or copied by call time: 64-128 KiB lent 3100 us, copied
 * 2700 us (over 212 calls): copies, 1 change; ..." (no newline); NULL if no call was measured.
 * Free with g_free (). */
gchar *rdma_lend_cost_describe (RdmaLendCost *c);
/* Whether fields of @len bytes are copied now (for tests). */
gboolean rdma_lend_cost_copies (RdmaLendCost *c, gsize len);

G_END_DECLS

#endif /* _RDMA_LEND_COST_H */
