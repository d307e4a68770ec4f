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
 * rdma_block.h: blocking in the completion channel's read (engine-internal).
 *
 * A wait that blocks in poll (2) on {completion channel, CM channel, wake eventfd} with a
 * timeout costs a system call more than one that blocks in ibv_get_cq_event's read (3 against
 * 2 on soft-RoCE, where arming is a system call too).  A process-wide watcher thread takes over
 * what the poll (2) was for: it holds the CM channel and the wake eventfd of every registered
 * owner in an epoll set, and the due times its blocked owners publish (atomic stores, no
 * system call; the watcher is kicked only for a time earlier than the one it sleeps until).
 * When one of them needs its owner, the watcher makes a completion arrive on the owner's CQ:
 *
 *   - a timer (the keepalive's tick): the watcher runs the owner's tick in its place (the
 *     owner is blocked: the watcher holds its place, RDMA_BLOCK_* below, so the engine's
 *     accounting is never touched by two threads); a probe it posts completes and wakes the
 *     owner, a tick that posts nothing wakes nobody;
 *   - a CM event, an interrupt, the deadline, a tick that failed the owner: terminal for the
 *     wait, so the owner is forced awake (RdmaBlockOps.force: its QP to the error state and a
 *     WR that is flushed at once, whatever the peer), and finds the reason here, before it
 *     looks at its CQ, so it reports what a poll (2) wait reported.
 *
 * Only waits whose deadline and interrupt end the connection may block this way (a client's
 * wait for its reply, which thrift_rdma_read fails the connection for); the others poll.
 */
#ifndef _RDMA_BLOCK_H
#define _RDMA_BLOCK_H

#include <glib.h>

G_BEGIN_DECLS

/* Why a blocked owner was woken (or why it must not block). */
typedef enum
{
  RDMA_BLOCK_CM = 1 << 0,        /* its CM channel has events */
  RDMA_BLOCK_INTERRUPT = 1 << 1, /* its wake eventfd was written (thrift_rdma_interrupt) */
  RDMA_BLOCK_DEADLINE = 1 << 2,  /* its wait's deadline passed */
  RDMA_BLOCK_FAILED = 1 << 3     /* its timer, run by the watcher, failed it */
} RdmaBlockWhy;

/* What the watcher runs for a blocked owner, in its place. */
typedef struct
{
  /* the owner's timers (FALSE with @error: the owner failed) and when they are due next */
  gboolean (*tick) (gpointer owner, gint64 now, GError **error);
  gint64 (*timer_due) (gpointer owner);
  /* makes a completion arrive at once on the owner's CQ, whatever its peer does */
  void (*force) (gpointer owner);
} RdmaBlockOps;

typedef struct _RdmaBlock RdmaBlock;

/* Registers an owner's CM channel fd and wake eventfd (-1: none) with the watcher, which
 * starts with the first registration.  NULL with @error if it cannot (no epoll, no thread):
 * the owner then polls. */
RdmaBlock *rdma_block_register (int cm_fd, int wake_fd, const RdmaBlockOps *ops, gpointer owner,
                                GError **error);
/* The owner goes (not blocked): the watcher never touches it again once this returns; the
 * watcher stops with the last registration. */
void rdma_block_unregister (RdmaBlock *b);

/* The owner is about to block until @deadline_us (0: none), its timer due at @timer_us
 * (0: none).  Returns the reasons already known (non-zero: do not block, call
 * rdma_block_leave and handle them). */
guint rdma_block_enter (RdmaBlock *b, gint64 deadline_us, gint64 timer_us);
/* The owner woke (or did not block): waits until the watcher is out of its place, and
 * returns why the watcher woke it (0: a completion of its own), with the tick's @error for
 * RDMA_BLOCK_FAILED. */
guint rdma_block_leave (RdmaBlock *b, GError **error);
/* The owner read its CM events: the watcher watches the channel again. */
void rdma_block_rearm_cm (RdmaBlock *b);

/* For tests: the watcher threads running (0 or 1) and the owners registered. */
guint rdma_block_threads (void);
guint rdma_block_registered (void);

G_END_DECLS

#endif
