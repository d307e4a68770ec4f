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
 * rdma_call_policy.h: what a ThriftRdma decides for each message from the hint set in use (the
 * set_hints of the message, else the "hints" property): the polling mode and measure of the
 * waits and the NUMA node of the thread that uses the connection (the set's cached plan,
 * rdma_plan_cache.h, so nothing is made again per message), the binding of that thread, the
 * size from which a field is lent, the once-per-set warning of hints that cannot be acted on,
 * the protocol of each message and the explain line of the connection.  The shell keeps its
 * properties' plumbing, its vfuncs and the error boundary.  One per transport, used by its
 * owner, as the connection is (not thread-safe).
 */
#ifndef _RDMA_CALL_POLICY_H
#define _RDMA_CALL_POLICY_H

#include <glib.h>

#include <thrift/c_glib/transport/thrift_hints.h>
#include <thrift/c_glib/transport/thrift_rdma.h>

#include "rdma_bulk_msg.h"
#include "rdma_conn.h"
#include "rdma_gobject.h"
#include "rdma_numa.h"
#include "rdma_plan.h"
#include "rdma_plan_cache.h"

G_BEGIN_DECLS

typedef struct
{
  /* the properties it decides by (the shell's get and set them) */
  const ThriftHintSet *hints; /* (unowned) (nullable): default hints (property), the
                                         caller's (generated code's static data) */
  ThriftRdmaPolling polling;  /* rdma_call_policy_set_polling */
  gint numa_node;             /* the numa-node property (-1: none);
                                         rdma_call_policy_set_numa_node */
  RdmaBulkProps bulk;         /* the bulk-* properties */

  const ThriftHintSet *msg_hints;     /* (unowned) (nullable): set_hints of the message being
                                         written */
  const ThriftHintSet *checked_hints; /* (unowned) (nullable): the last set looked at for
                                         unimplemented hints; only compared */
  ThriftRdmaPolling effective;
  RdmaMeasure measure;  /* effective EVENT: spin or block by this measure */
  gint poll_node;       /* NUMA node of the thread that uses the connection, by
                                         the set in use (rdma_call_policy_use); -1: leave it
                                         alone */
  RdmaPlanCache *plans; /* (owned) what each hint set selects on the
                                         connection */
} RdmaCallPolicy;

/* A client's defaults (a server's accepted transport gets its server's properties set). */
void rdma_call_policy_init (RdmaCallPolicy *p);
void rdma_call_policy_clear (RdmaCallPolicy *p);

/* The "polling" and "numa-node" properties: the plans made with the old value are forgotten. */
void rdma_call_policy_set_polling (RdmaCallPolicy *p, ThriftRdmaPolling polling);
void rdma_call_policy_set_numa_node (RdmaCallPolicy *p, gint numa_node);

/* The node a connection's buffers are placed on when it is made (rdma_numa.h): the numa of
 * @h, the service's set (a "hints" property), if the machine has that node, else @numa_node
 * (a "numa-node" property, checked), else none.  A function's set comes too late for them. */
gint rdma_call_policy_buffer_node (const ThriftHintSet *h, gint numa_node);

/* @conn was connected with its buffers on @node: its plans from now on, and the default
 * set's explained (THRIFT_RDMA_EXPLAIN). */
void rdma_call_policy_connected (RdmaCallPolicy *p, RdmaConn *conn, gint node);
/* @conn was accepted by a server, which placed it by its hints' numa or its numa-node: that
 * node is this transport's numa-node, and @conn waits by the properties' polling. */
void rdma_call_policy_accepted (RdmaCallPolicy *p, RdmaConn *conn);
/* The connection is gone: so are its plans. */
void rdma_call_policy_closed (RdmaCallPolicy *p);

/* Takes @h (NULL: the default set) for the waits that follow: the polling mode, its measure
 * and the node of @h's plan on @conn, set on @conn; by the hints and the polling property
 * alone while there is no connection (@conn NULL). */
void rdma_call_policy_use (RdmaCallPolicy *p, RdmaConn *conn, const ThriftHintSet *h);

/* The message written (@len bytes, not empty) is about to be sent on @conn, by its set (the
 * message's set_hints, else the default): the set's hints that cannot be acted on are
 * reported (once per change of set), its polling and node taken for the reply's wait, the
 * thread bound to that node and the message's protocol set on @conn. */
void rdma_call_policy_send (RdmaCallPolicy *p, RdmaConn *conn, gsize len);

/* The message read to its end: the waits that follow go by the default set again. */
void rdma_call_policy_message_read (RdmaCallPolicy *p, RdmaConn *conn);

/* What thrift_rdma_explain_connection says of @h (NULL: the default set, as a message
 * written without a set is sent) on @conn: its plan (rdma_plan_describe), what the
 * connection's calls measured where they choose between spinning and blocking, what the
 * device's measured where they choose between lending and copying, and the buffers the
 * max-pinned-bytes budget refused.  Free with g_free (). */
gchar *rdma_call_policy_explain (RdmaCallPolicy *p, RdmaConn *conn, const ThriftHintSet *h);

/* The set of the message being written: its set_hints, else the default. */
static inline const ThriftHintSet *
rdma_call_policy_message_set (const RdmaCallPolicy *p)
{
  return p->msg_hints != NULL ? p->msg_hints : p->hints;
}

/* The message was sent (or failed): the next one has no set until set_hints (its reply is
 * waited for by the polling rdma_call_policy_send took from the set). */
static inline void
rdma_call_policy_sent (RdmaCallPolicy *p)
{
  p->msg_hints = NULL;
}

/* Binds the calling thread to the node of the set in use, the first time this thread uses
 * the connection for it (then it costs a pointer compare).  At first use, not at open: a
 * server's connection is accepted on its accept thread and served on a worker, a client
 * may open on one thread and call on another, and a function's hint may name another
 * node; binding where the connection is used follows all of them.  A thread is never
 * unbound: one that served a bound connection stays on its node. */
static inline void
rdma_call_policy_follow_numa (RdmaCallPolicy *p)
{
  GError *e = NULL;

  if (p->poll_node != RDMA_NUMA_NONE && !rdma_numa_bind_thread (p->poll_node, &e))
  {
    g_warning ("ThriftRdma: %s; the thread runs where it did", e->message);
    g_error_free (e);
  }
}

/* Before a wait on @conn: its polling by the set in use, the thread on the set's node.
 * Returns the mode the wait polls by. */
static inline ThriftRdmaPolling
rdma_call_policy_wait (RdmaCallPolicy *p, RdmaConn *conn)
{
  rdma_conn_set_polling (conn, p->effective, p->measure);
  rdma_call_policy_follow_numa (p);
  return p->effective;
}

/* Whether the fields of the messages written are staged (a server left at its default) or
 * lent, and whether by measurement (rdma_bulk_msg.h). */
static inline RdmaBulkWay
rdma_call_policy_bulk_way (const RdmaCallPolicy *p)
{
  if (p->bulk.threshold_set)
    return RDMA_BULK_LEND;
  return p->bulk.server ? RDMA_BULK_STAGE_MEASURED : RDMA_BULK_LEND_MEASURED;
}

/* The size from which a field of the message being written is lent (or staged): the
 * function's payload_size hint, else the "bulk-threshold" property (a server's default,
 * 0, stages from the client's default); 0: never. */
static inline gsize
rdma_call_policy_bulk_threshold (const RdmaCallPolicy *p)
{
  const ThriftHintSet *h = rdma_call_policy_message_set (p);

  if (rdma_call_policy_bulk_way (p) == RDMA_BULK_STAGE_MEASURED)
  {
    if (h != NULL && (h->set & THRIFT_HINT_HAS_PAYLOAD_SIZE))
      return (gsize) MIN (h->payload_size, (guint64) G_MAXSIZE);
    return RDMA_BULK_DEFAULT_THRESHOLD;
  }
  if (p->bulk.threshold == 0)
    return 0;
  if (h != NULL && (h->set & THRIFT_HINT_HAS_PAYLOAD_SIZE))
    return (gsize) MIN (h->payload_size, (guint64) G_MAXSIZE);
  return p->bulk.threshold;
}


G_END_DECLS

#endif
