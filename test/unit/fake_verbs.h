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
 * fake_verbs.h: an RDMA provider in memory, for host tests of the engine with no device and
 * no kernel module.  fake_verbs_install puts its table (rdma_verbs.h) in place of libibverbs
 * and librdmacm; fake_verbs_link makes the two CM ids of one link, which rdma_conn_pair
 * turns into a connected client and server in this process.
 *
 * It behaves as a reliable connected QP pair does, strictly where a real one is strict:
 *   - a WR executes in order with the others of its QP: SEND takes the peer's oldest posted
 *     receive (none: the SEND fails with IBV_WC_RNR_RETRY_EXC_ERR, as after the retries run
 *     out; too small: IBV_WC_LOC_LEN_ERR there, IBV_WC_REM_INV_REQ_ERR here); WRITE lands in
 *     the peer's memory, WRITE_WITH_IMM too and takes a receive (IBV_WC_RECV_RDMA_WITH_IMM
 *     with the immediate); READ copies from the peer's memory.  Remote accesses need a key
 *     the peer registered in the PD of its QP, with the access flag, over the whole range
 *     (else IBV_WC_REM_ACCESS_ERR here, and the peer's QP fails too); local SGEs need a key
 *     of this PD over the range, and LOCAL_WRITE where data lands (else IBV_WC_LOC_PROT_ERR).
 *     lkey and rkey of a region differ and no key is ever reused, so one mistaken for the
 *     other or a stale one fails.  A WRITE lands in address order and its last 8-byte word
 *     last, as the protocols that poll memory (Batched-Write's trailer, RFP's ack word)
 *     expect.
 *   - memory windows, type 2 only (alloc_mw of type 1 fails with EOPNOTSUPP): an
 *     IBV_WR_BIND_MW executes in its turn in the send queue (a SEND posted after it goes after
 *     it) and completes as IBV_WC_BIND_MW.  It is refused, with IBV_WC_MW_BIND_ERR and the QP
 *     failing, as a device refuses it: the window not free (a type 2 window is invalidated
 *     before it is bound again), window, region and QP not of one PD, a region without
 *     IBV_ACCESS_MW_BIND (or without LOCAL_WRITE for a writable window), a range empty or
 *     not inside the region, a new key that differs from the window's in more than its low 8
 *     bits (ibv_inc_rkey of it is right), or a window the device does not find by the key
 *     mw->rkey held at the post.  The device never writes mw->rkey (neither do rxe's and
 *     mlx5's providers for type 2): after a bind the app sets mw->rkey to the key it bound
 *     with, or the window's next bind fails.  The window then lends its range to the peer of
 *     that QP only: a remote access through its key needs the key of its last bind, the
 *     access flag and the range inside the window, and the responder QP the window was bound
 *     on (else IBV_WC_REM_ACCESS_ERR, as for a region).  IBV_WR_LOCAL_INV of the key, in its
 *     turn, frees the window (IBV_WC_LOCAL_INV); a key that is not a bound window of the QP's
 *     PD fails it with IBV_WC_LOC_QP_OP_ERR (rxe's status).  A region with a window bound is
 *     not deregistered (EINVAL, as rxe: misuse); ibv_dealloc_mw unbinds a bound window
 *     first.  A window bound on a QP that is destroyed stays bound to its region.
 *   - shared receive queues (ibv_create_srq; a QP created with attr.srq takes its receives
 *     from there, and ibv_post_recv on it is refused): a SEND takes the SRQ's oldest receive,
 *     and finding none it waits, as an RNR NAK retried without end (rnr_retry 7) does, with
 *     the WRs after it, until a receive is posted.  ibv_modify_srq with IBV_SRQ_LIMIT arms the
 *     limit: the receive taken that leaves fewer raises one IBV_EVENT_SRQ_LIMIT_REACHED on
 *     the context's async events (ibv_get_async_event, EAGAIN when none) and disarms it.  An
 *     SRQ with QPs is not destroyed (EBUSY).  Completions carry their QP's number, so CQs
 *     may be shared by QPs of several links.
 *   - IBV_WR_LOCAL_INV starts once every WR before it on its QP has completed (IBA's local
 *     invalidate fence, which rxe always applies), a WR with IBV_SEND_FENCE once the READs
 *     and atomics before it have (IBA 10.8.3.3; rxe's rxe_wqe_is_fenced, Linux 6.1): a
 *     fenced bind may run while a SEND or a WRITE before it waits for its ACK.
 *   - retransmissions, on demand (fake_verbs_retransmit, fake_verbs_set_retransmissions), as
 *     soft-RoCE makes them: while a WR waits for its ACK, rxe (seen on Linux 6.1) goes back to
 *     the oldest WR not retired and runs the executed local operations from there again, so a
 *     bind that executed and was not yet retired is run twice and the second fails
 *     (IBV_WC_MW_BIND_ERR, the QP failing), as in rxe.
 *   - unsignalled WRs complete nothing unless they fail; a failed WR puts its QP in the
 *     error state, where every receive posted and every WR not yet executed or posted later
 *     completes with IBV_WC_WR_FLUSH_ERR (after those that executed); a WR to a peer whose
 *     QP is gone or failed ends with IBV_WC_RETRY_EXC_ERR (the peer does not answer).
 *   - send queue entries come back when the completion of a signalled WR (retiring the
 *     unsignalled ones before it) is polled, receive queue entries when theirs is: posting
 *     beyond the queue's depth fails with ENOMEM.  A CQ holds as many completions as it was
 *     created for.
 *   - an armed CQ raises one event on the next completion that arrives (not for those it
 *     already holds), through a completion channel fd that really becomes readable; so do
 *     the CM event channels (DISCONNECTED when the peer disconnects or destroys its id).
 * What a real provider refuses or hangs on (a full CQ, a WR over the queue's depth, a busy
 * PD, CQ or channel destroyed, a CQ destroyed with events not acknowledged, a bad lkey, a
 * region deregistered under a WR of its own side in flight or with a window bound) is
 * counted as misuse, which the tests expect to stay at zero.
 *
 * When WRs run (fake_verbs_set_timing):
 *   - FAKE_IMMEDIATE (the default): a WR runs whole when it is posted: its bytes are in the
 *     peer's memory and its completions in both CQs before ibv_post_send returns.
 *   - FAKE_DEFERRED: as on a real RC QP, the sender goes on between the post and the
 *     arrival.  Posted WRs are queued per QP and run later, each through three moments: it
 *     starts (the checks above: keys, ranges, a receive to take; checked again before each
 *     later piece, so a region deregistered, a window invalidated or a peer gone meanwhile
 *     fails it, with the bytes of the pieces before it placed), its bytes move (a WRITE's
 *     or a READ's in one piece or several, cut on 8-byte boundaries of the remote memory,
 *     the source read as each piece is placed: bytes changed after the post may go, and a
 *     receiver polling memory sees a WRITE half landed, its last word still last), and it
 *     executes (a SEND's or WRITE_WITH_IMM's receive completes at the peer,
 *     after its data); its own completion comes later still (the ACK), so the peer may have
 *     answered before it.  WRs of one QP start, move and complete in post order; the two
 *     QPs of a link go independently.  Nothing of a WR is touched after its completion.
 *     Steps are taken by the sides' own calls: a poll of a CQ takes a seeded random number
 *     of steps of its link (often none, at most four; a post mostly none), each one of what
 *     may happen next, chosen at random (a WR moves a piece or all of its bytes on, or an
 *     executed one completes).  No wait deadlocks: a poll that finds an armed CQ empty (its
 *     owner is about to block for the event: rdma_poll.c arms, polls again, then blocks)
 *     takes steps until a completion for that CQ arrives or nothing is left on the way; and
 *     a watchdog thread runs to its end whatever is on the way on a link whose two sides
 *     made no call for 2 to 4 ms while one waits for a CQ event (the other posted and then
 *     went away or slept, as a NIC goes on alone).  Disconnecting, destroying a QP and setting the timing also run the
 *     link to its end first (what was posted before arrives, as in FAKE_IMMEDIATE).  The
 *     seed and the link's number (counted from the last fake_verbs_set_timing) fix each
 *     side's choices: the same calls take the same steps, so with both sides in one thread
 *     (and no CQ armed) a run repeats exactly; with a thread per side, the threads'
 *     interleaving (and the watchdog) varies the calls.
 *   - FAKE_MANUAL: queued the same way, and run only by fake_verbs_execute, fake_verbs_piece,
 *     fake_verbs_complete, fake_verbs_step and fake_verbs_settle (and, to their end, by
 *     disconnecting, destroying a QP or setting the timing): for the provider's own tests.
 * Faults (fake_verbs_inject) hit a WR when it starts.
 *
 * Thread-safe: one lock serialises every call and every step, so each side of a pair may
 * run in its own thread.
 */
#ifndef _FAKE_VERBS_H
#define _FAKE_VERBS_H

#include <glib.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

G_BEGIN_DECLS

/* Puts the fake in the engine's place (no connection may exist yet), or takes it out. */
void fake_verbs_install (void);
void fake_verbs_uninstall (void);

/* With FALSE, the device has no memory windows from now on (ibv_alloc_mw fails with
 * EOPNOTSUPP, as on a device without type 2 windows); TRUE (the default) gives them back. */
void fake_verbs_set_windows (gboolean type2);
/* Each RDMA READ then takes @us to start, as on a fabric where a READ costs more than a copy
 * (0: none, the default). */
void fake_verbs_set_read_delay (guint us);
/* Each SEND or WRITE (with or without immediate) of at least @from bytes then takes @us to
 * start, as on a fabric where moving a large message costs more than a READ of its field
 * (0: none, the default). */
void fake_verbs_set_write_delay (guint us, guint from);

/* The two CM ids of one link: what one side's QP posts reaches the other's. */
void fake_verbs_link (struct rdma_cm_id **a, struct rdma_cm_id **b);

/* What the verbs of one side did, as the provider saw it. */
typedef struct
{
  guint64 post_send_calls; /* doorbells */
  guint64 sends, writes, write_imms, reads;
  guint64 binds, local_invs; /* IBV_WR_BIND_MW, IBV_WR_LOCAL_INV */
  guint64 post_recv_calls;
  guint64 recvs;           /* receives posted */
  guint64 completions;     /* work completions polled from its CQ */
  guint64 cq_events;       /* completion events taken */
  guint64 rnr;             /* SENDs and WRITE_WITH_IMMs that found no receive posted */
  guint64 errors;          /* WRs that failed (not flushed), peer_gone's aside */
  guint64 peer_gone;       /* WRs that failed because the peer had left (its QP gone:
                                 what a side sends as its peer closes, a report or credits) */
  guint64 retransmissions; /* fake_verbs_retransmit and FAKE_DEFERRED's retransmit steps
                                 that found a WR waiting for its ACK */
  guint64 replays;         /* local operations they ran again */
} FakeStats;

/* The counts of @id's side so far (its QP's WRs and its CQ's completions). */
void fake_verbs_stats (struct rdma_cm_id *id, FakeStats *out);

/* Faults, for tests of the error paths.  The first four apply to a WR that @id's side posts
 * (fake_verbs_inject); the vanishing ones also at once (fake_verbs_vanish). */
typedef enum
{
  FAKE_FAULT_BAD_RKEY = 1,  /* the WR's rkey is one that no region has */
  FAKE_FAULT_OUT_OF_RANGE,  /* the WR's remote range ends one byte past its region */
  FAKE_FAULT_PEER_VANISHES, /* before the WR, the peer's host goes down: its QP fails, it
                                 answers nothing more, and no CM event comes */
  FAKE_FAULT_SELF_VANISHES  /* before the WR, this side's host goes down (the WR is
                                 flushed with the rest) */
} FakeFault;

/* The (@skip + 1)-th WR of @opcode that @id's side posts from now on gets @fault.  Faults
 * on a remote range skip WRs that move no bytes. */
void fake_verbs_inject (struct rdma_cm_id *id, enum ibv_wr_opcode opcode, guint skip,
                        FakeFault fault);
/* @id's host goes down now (its QP fails; the peer learns nothing), or with @tell_peer its
 * process dies (the peer's kernel sends it DISCONNECTED as well). */
void fake_verbs_vanish (struct rdma_cm_id *id, gboolean tell_peer);
/* @id's own QP goes to the error state and says nothing: no completion, flushed or not, for
 * what it holds or for what is posted later (as soft-RoCE has been seen to leave a QP it
 * failed on a replayed bind); ibv_query_qp tells. */
void fake_verbs_fail_silently (struct rdma_cm_id *id);

/* Threads blocked now in a completion channel's read (a channel whose fd was made blocking:
 * ibv_get_cq_event then waits for an event, as the kernel's does; EINTR on a signal). */
guint fake_verbs_blocked_reads (void);

/* Completions waiting in @id's CQ (not yet polled). */
guint fake_verbs_pending (struct rdma_cm_id *id);

typedef enum
{
  FAKE_IMMEDIATE, /* a WR runs when it is posted (the default) */
  FAKE_DEFERRED,  /* WRs are queued per QP and run in seeded steps of the sides' calls */
  FAKE_MANUAL     /* queued, and run only by the calls below */
} FakeTiming;

/* From now on WRs run by @timing, its steps chosen from @seed.  What is queued runs to its
 * end first; links made from now on are numbered from 0 for their generators. */
void fake_verbs_set_timing (FakeTiming timing, guint32 seed);
FakeTiming fake_verbs_get_timing (guint32 *seed);
/* Runs every queued WR to its end now: data placed, completions in the CQs. */
void fake_verbs_settle (void);
/* Up to @n steps of @id's link, chosen by its side's generator (as a poll takes them in
 * FAKE_DEFERRED); returns how many were taken (fewer: nothing left on the way). */
guint fake_verbs_step (struct rdma_cm_id *id, guint n);
/* The oldest WR of @id's side not yet executed runs whole (data placed, the peer's receive
 * completion); FALSE if there is none. */
gboolean fake_verbs_execute (struct rdma_cm_id *id);
/* The oldest WR of @id's side not yet executed moves on by a piece of at most @bytes bytes (a
 * WRITE's or a READ's, cut down to an 8-byte boundary of the remote memory; one that reaches
 * none moves the rest, and other WRs run whole), checked first as every piece is; FALSE if
 * there is none. */
gboolean fake_verbs_piece (struct rdma_cm_id *id, guint64 bytes);
/* A retransmission of @id's side as soft-RoCE (rxe, Linux 6.1) makes one when its ACK timer
 * fires while a WR waits for its ACK: the requester goes back to the oldest WR not retired and
 * runs the executed WRs again, local operations (bind, invalidate) too, which fails a second
 * bind of a window and so the QP (see above).  FALSE if no WR was waiting for an ACK. */
gboolean fake_verbs_retransmit (struct rdma_cm_id *id);
/* A READ as the responder saw it. */
typedef struct
{
  guint64 addr, len;
  guint32 rkey;
} FakeRead;
/* The last READ of @id's side that completed; FALSE if none has. */
gboolean fake_verbs_last_read (struct rdma_cm_id *id, FakeRead *out);
/* @r again, now, as a duplicate of it that a retransmission sent and the network delayed
 * reaches the responder after the READ completed: soft-RoCE checks its key again
 * (rxe_recheck_mr, Linux 6.1) and fails its QP if the key no longer reaches the bytes.  TRUE
 * if it does; nothing moves and nothing fails either way. */
gboolean fake_verbs_read_again (struct rdma_cm_id *id, const FakeRead *r);
/* The same, and where the key no longer reaches the bytes, the responder does what soft-RoCE
 * does: its QP goes to the error state and its device says so by an async event,
 * IBV_EVENT_QP_ACCESS_ERR (no completion names it).  TRUE if the key reached. */
gboolean fake_verbs_read_again_failing (struct rdma_cm_id *id, const FakeRead *r);
/* The responder's RNR NAK timer of @id's QP (IB encoding; 0, as the CM leaves it: 655 ms). */
guint8 fake_verbs_min_rnr_timer (struct rdma_cm_id *id);
/* The registration that covers @addr: its rkey and access flags; FALSE if none does. */
gboolean fake_verbs_mr_at (gconstpointer addr, guint32 *rkey, int *access);
/* Live registrations that give remote access by themselves (not through a window). */
guint fake_verbs_remote_mrs (void);
/* FAKE_DEFERRED: with TRUE a step may also be such a retransmission of a QP that has a WR
 * waiting for its ACK (as often as any other step); FALSE (the default) stops them. */
void fake_verbs_set_retransmissions (gboolean on);
/* The oldest executed WR of @id's side completes (its completion, if signalled, in its CQ);
 * FALSE if there is none. */
gboolean fake_verbs_complete (struct rdma_cm_id *id);
/* WRs @id's side posted that executed and have not completed yet. */
guint fake_verbs_executed (struct rdma_cm_id *id);
/* WRs @id's side posted that are queued or executed and not yet completed. */
guint fake_verbs_queued (struct rdma_cm_id *id);

/* Live objects (PDs, MRs, MWs, CQs, channels, QPs, ids, events): 0 once everything made was
 * destroyed.  @what (nullable) gets a description of those alive. */
guint fake_verbs_live (gchar **what);
/* Misuse since the last call (see above), the first one described in @what (nullable). */
guint fake_verbs_take_misuse (gchar **what);
/* Fails the test (g_error, saying what) if a provider object is alive or the verbs were
 * misused since the last look. */
void fake_verbs_assert_clean (void);
/* rdma_get_cm_event calls so far in the process, those that found nothing too (each is a
 * system call on a real provider) */
guint fake_verbs_cm_looks (void);

G_END_DECLS

#endif
