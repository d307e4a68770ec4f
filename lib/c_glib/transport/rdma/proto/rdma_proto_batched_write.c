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
 * rdma_proto_batched_write.c: batched confirmation (HiPower, NPC '19).  The sender RDMA WRITEs
 * each message into free slots of the receiver and learns which slots the receiver has freed
 * by READing the receiver's state bitmap once per batch, instead of one RECV or ACK per
 * message.  Made for streams of small one-way messages.
 *
 * Memory.  The receiver owns BW_SLOTS slots of BW_SLOT_SIZE bytes (registered REMOTE_WRITE)
 * and a bitmap of one bit per slot (registered REMOTE_READ).  Both are made when the peer
 * first asks for them (BW_CTL_REQUEST) and advertised on the control channel (BW_CTL_ADVERT),
 * so a connection that never uses the protocol registers nothing; they are deregistered when
 * the connection closes.  The sender has a mirror of the slots (LOCAL_WRITE): a fragment that
 * fits one slot is copied there beside its header and trailer and written from there, so its
 * WRITE holds no transmit buffer and needs no completion; a larger one is written straight
 * from the transmit buffer (header, payload, trailer gathered: three SGEs) by a signalled
 * WRITE that holds the buffer.  Otherwise the sender signals one WRITE in BW_SIGNAL_EVERY
 * (at most a quarter of the send queue), so a stream takes few completions on its side too.
 *
 * A fragment in the slots (rdma_proto_batched_write.h):
 *
 *   slot s:  BwHeader (16 B) | payload (frag_len B) | trailer (4 B: seq ^ BW_TRAILER_XOR)
 *
 * It fills consecutive slots s .. s+span-1 (no wrap at the end of the region); a message
 * larger than BW_MAX_RUN slots, or than the free run found, is split into several fragments.
 * Every header names the slot of the next fragment (`next`), chosen from the known-free slots
 * when the fragment is written, so the receiver looks at exactly one header: the first
 * fragment goes to slot 0.  The trailer is written last (the NIC places a WRITE in order): a
 * header with the expected sequence number and its trailer means the fragment is complete.
 *
 * Slot states (HiPower's bitmaps).  Bit i of the receiver's bitmap flips each time the
 * receiver frees slot i; bit i of the sender's `sent` flips each time the sender writes it; a
 * slot is free when both agree.  The receiver frees a slot when the message in it was read (a
 * one-fragment message is read in place) or copied out (fragments of a longer message), after
 * clearing the header room of every slot of the fragment (a later header may start in any)
 * and the trailer.  The sender spends its known-free slots; when it has none left for the next
 * fragment (a batch ends) it READs the bitmap.  If that shows nothing freed, it says so
 * (BW_CTL_STARVED, with the bitmap it saw) and waits: the receiver answers BW_CTL_FREED with
 * its bitmap once it has freed a quarter of the slots, or all it held.  No slot is written
 * before the receiver freed it, so there is no other flow control; the engine's credits
 * cover only the immediates below.
 *
 * How the receiver learns that messages arrived, without a RECV per message: whenever it
 * waits (the progress slot, in every polling mode) it looks at the one header where the next
 * fragment lands.  A receiver blocked in event polling (or idle in a server's poll set) sees
 * nothing of plain WRITEs, so the sender makes a fragment a WRITE_WITH_IMM (which consumes a
 * receive slot and a credit, and wakes the receiver) when:
 *   - it uses the last known-free slot: once per batch at the latest;
 *   - it is the last of a message sent after a message was received (request/response: a
 *     reply or the next request is awaited right after it); in ping-pong every message goes
 *     so, as in Direct-WriteIMM;
 *   - it is the first of a message that follows one of another protocol: then it carries
 *     BW_HOLD and is delivered only at its immediate's completion, which comes after that
 *     other message's (the order of the QP), so the order of messages is kept across
 *     protocols;
 * and a zero-byte WRITE_WITH_IMM (a doorbell) follows plain WRITEs not yet announced as soon
 * as the sender waits (for a reply; not in send_message's own short waits for a send queue
 * entry, a credit or the bitmap, which end without the receiver's help), before another
 * protocol sends on the connection, and when the connection closes (then the sender also
 * waits, at most a second, until the NIC is done, lest the disconnect flush them).  When the
 * sender runs out of slots it says so with a SEND (BW_CTL_STARVED), which wakes the receiver
 * too.  So nothing waits forever: an event-polling receiver sees a stream of one-way
 * messages in bursts, at the end of each batch and whenever the sender waits, switches or
 * closes; a polling receiver sees each message as soon as it lands.  Messages are delivered
 * in sequence order.  The immediate returns credits and names the last fragment written
 * before it (rdma_proto_batched_write.h).
 *
 * A peer's garbage (a bad sequence number, a fragment beyond the slot region or a message
 * over the max message size, a slot that holds an unread message, an immediate announcing
 * fragments never written) is an RDMA_ERR_PROTOCOL error that fails the connection.  When the
 * peer has no slots for us (it does not accept the protocol, or cannot register them), the
 * messages go by Eager-SendRecv.
 */
#include "config.h"

#include <errno.h>
#include <sys/mman.h>

#include "../rdma_numa.h"
#include "../rdma_status.h"
#include "rdma_bw_private.h"

gboolean
bw_garbage (GError **error, const gchar *fmt, ...)
{
  va_list ap;
  gchar *msg;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "batched write", 0, -1, "bw_garbage framing: %s",
                         msg);
  g_free (msg);
  return FALSE;
}

/* Progress runs while we own slots (to find fragments) or owe the peer a doorbell. */
void
bw_update_mask (RdmaConn *conn, BwState *st)
{
  if (st->slots != NULL || st->unannounced > 0)
    rdma_conn_want_progress (conn, RDMA_PROTO_BATCHED_WRITE, TRUE);
  else
    rdma_conn_want_progress (conn, RDMA_PROTO_BATCHED_WRITE, FALSE);
}

gpointer
bw_map_region (RdmaConn *conn, gsize len, const gchar *what, GError **error)
{
  void *mem = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  if (mem == MAP_FAILED)
  {
    int err = errno;
    rdma_status_set_error (error, RDMA_ERR_NO_MEMORY, "mmap", err, -1, "%s", what);
    return NULL;
  }
  rdma_numa_place (mem, len, conn->settings.numa_node);
  return mem;
}

/* ---- both ---- */

static gint
bw_progress (RdmaConn *conn, GError **error)
{
  BwState *st = state_of (conn);
  GError *e = NULL;
  gint n;

  if (st == NULL)
    return 0;
  n = bw_rx_scan (conn, st, &e);
  /* the sender waits (for a reply, say) and the receiver may be blocked: announce what it
   * has not been told.  Not for send_message's own waits: those end without the receiver */
  if (n >= 0 && st->unannounced > 0 && !st->in_send && conn->state == RDMA_CONN_CONNECTED
      && conn->credits.send > 0 && conn->sq_used + 1 <= conn->sq_depth
      && !bw_tx_doorbell (conn, st, TRUE, FALSE, &e))
    n = -1;
  if (n < 0)
  {
    rdma_conn_fail (conn, e);
    g_propagate_error (error, e);
  }
  return n;
}

typedef struct
{
  BwState *st;
  gboolean closing;
} FlushWait;

static gboolean
can_ring (RdmaConn *conn, gpointer data)
{
  FlushWait *w = data;

  if (w->st->unannounced == 0 && !w->closing)
    return TRUE;
  return conn->sq_used + 1 <= conn->sq_depth && (w->st->unannounced == 0 || conn->credits.send > 0);
}

static gboolean
fenced (RdmaConn *conn, gpointer data)
{
  BwState *st = data;
  return st->fenced >= st->posted;
}

static gboolean
bw_flush (RdmaConn *conn, gboolean closing, gint64 deadline_us, GError **error)
{
  BwState *st = state_of (conn);
  FlushWait w = { st, closing };

  if (st == NULL || st->tx_state != TX_READY || conn->state != RDMA_CONN_CONNECTED)
    return TRUE;
  if (st->unannounced == 0 && (!closing || st->fenced >= st->posted))
    return TRUE;
  if (!rdma_conn_wait_for (conn, can_ring, &w, deadline_us, error))
    return FALSE;
  if (st->unannounced == 0 && !closing)
    return TRUE; /* the wait rang it */
  /* closing: signalled, and wait until it (and so all before it) is done, lest the
   * disconnect flush our WRITEs */
  if (!bw_tx_doorbell (conn, st, st->unannounced > 0, closing, error))
    return FALSE;
  return !closing || rdma_conn_wait_for (conn, fenced, st, deadline_us, error);
}

static gboolean
bw_on_control (RdmaConn *conn, guint8 kind, const guint8 *payload, guint32 len, GError **error)
{
  BwState *st = state_of (conn);

  if (st != NULL)
  {
    switch (kind)
    {
    case BW_CTL_REQUEST:
      if (len == 0)
        return bw_rx_advertise (conn, st, error);
      break;
    case BW_CTL_ADVERT:
      if (len == BW_ADVERT_SIZE && st->tx_state == TX_REQUESTED)
        return bw_tx_advert (conn, st, payload, error);
      break;
    case BW_CTL_STARVED:
      if (len == BW_MAP_BYTES && st->slots != NULL)
        return bw_rx_starved (conn, st, payload, error);
      break;
    case BW_CTL_FREED:
      if (len == BW_MAP_BYTES && st->tx_state == TX_READY && st->refresh == REFRESH_STARVED)
        return bw_tx_freed (conn, st, payload, error);
      break;
    default:
      break;
    }
  }
  return bw_garbage (error,
                     "a batched-write control message of kind %u with %u bytes, "
                     "unexpected now",
                     kind, len);
}

static gboolean
bw_setup (RdmaConn *conn, GError **error)
{
  conn->proto_state[RDMA_PROTO_BATCHED_WRITE] = g_new0 (BwState, 1);
  return TRUE;
}

static void
bw_teardown (RdmaConn *conn)
{
  BwState *st = state_of (conn);

  if (st == NULL)
    return;
  bw_rx_clear (conn, st);
  bw_tx_clear (conn, st);
  g_free (st);
  conn->proto_state[RDMA_PROTO_BATCHED_WRITE] = NULL;
  rdma_conn_want_progress (conn, RDMA_PROTO_BATCHED_WRITE, FALSE);
}

const RdmaProtoOps rdma_proto_batched_write_ops = {
  .name = "batched_write",
  .id = RDMA_PROTO_BATCHED_WRITE,
  .hint = THRIFT_HINT_PROTO_BATCHED_WRITE,
  .setup = bw_setup,
  .teardown = bw_teardown,
  .open = bw_open,
  .send_message = bw_send_message,
  .on_imm = bw_on_imm,
  .on_control = bw_on_control,
  .progress = bw_progress,
  .release = bw_release,
  .flush = bw_flush,
};
