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
 * rdma_credit.h: credit-based flow control of SENDs into pre-posted receive slots.
 *
 * Each side posts `local` data receive slots and advertises that number in its hello; the
 * peer may have that many data SENDs outstanding (its send credits).  A receiver counts the
 * slots it reposts (`pending`) and returns them in the `credits` field of the next header it
 * sends or in the immediate of its next WRITE_WITH_IMM (piggybacked), or, when `pending` reaches half its slots and nothing else is going
 * out (a one-way stream, a large message being reassembled), in an explicit credit message.
 * Credit messages land in a few extra control slots that are reposted as soon as they are
 * polled and never count against data credits, as do the control channel's messages
 * (rdma_conn_send_control, a few per large message or per direct ring); a side sends at most
 * one credit message per half window, so RDMA_CREDIT_CONTROL_SLOTS covers what can be waiting
 * at the peer in practice, and the QP's RNR retry covers the rest.  A WRITE_WITH_IMM takes a
 * credit as a SEND does: it consumes a receive slot.  Pure bookkeeping: no verbs, so host tests exercise it.
 */
#ifndef _RDMA_CREDIT_H
#define _RDMA_CREDIT_H

#include <glib.h>

G_BEGIN_DECLS

#define RDMA_CREDIT_CONTROL_SLOTS 8

typedef struct
{
  guint32 send;      /* data SENDs we may still post */
  guint32 send_max;  /* what the peer advertised */
  guint32 in_flight; /* send_max - send: SENDs the peer has not yet reported consumed */
  guint32 pending;   /* our reposted slots not yet reported to the peer */
  guint32 local;     /* our data receive slots */
} RdmaCredits;

void rdma_credit_init (RdmaCredits *c, guint32 local_slots, guint32 peer_slots);
/* Takes one send credit; FALSE if there is none (wait for the peer to return some). */
gboolean rdma_credit_take (RdmaCredits *c);
/* The peer returned @n credits; FALSE (protocol error) if it returns more than were used. */
gboolean rdma_credit_grant (RdmaCredits *c, guint32 n);
/* One of our data receive slots was reposted. */
void rdma_credit_slot_freed (RdmaCredits *c);
/* The credits to put in an outgoing header; resets pending. */
guint32 rdma_credit_piggyback (RdmaCredits *c);
/* At most @max of them (an immediate has a few bits for it); the rest stays pending. */
guint32 rdma_credit_piggyback_max (RdmaCredits *c, guint32 max);
/* TRUE when pending is large enough that an explicit credit message should go out now. */
gboolean rdma_credit_need_explicit (const RdmaCredits *c);

G_END_DECLS

#endif
