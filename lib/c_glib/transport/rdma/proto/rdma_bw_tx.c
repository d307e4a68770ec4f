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

/* rdma_bw_tx.c: Batched-Write's sender (rdma_proto_batched_write.c has the design). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "../rdma_budget.h"
#include "../rdma_conn_private.h"
#include "../rdma_conn_window.h"
#include "../rdma_numa.h"
#include "../rdma_resources.h"
#include "../rdma_status.h"
#include "rdma_bw_private.h"

/* ---- sender ---- */

/* A snapshot of the peer's bitmap: every slot whose bit agrees with ours is free (a stale
 * snapshot only shows fewer: the peer frees a slot once per write). */
static void
tx_apply (BwState *st, const guint8 *map)
{
  st->n_avail = 0;
  for (guint32 i = 0; i < BW_SLOTS; i++)
  {
    st->avail[i] = map_bit (map, i) == map_bit (st->sent, i) && i != st->tx_slot;
    st->n_avail += st->avail[i];
  }
}

static gboolean
tx_create (RdmaConn *conn, BwState *st, GError **error)
{
  st->mirror = bw_map_region (conn, MIRROR_SIZE, "the batched-write mirror", error);
  if (st->mirror == NULL)
    return FALSE;
  st->mirror_mr = rdma_res_mr_reg (conn->pd, st->mirror, MIRROR_SIZE, IBV_ACCESS_LOCAL_WRITE,
                                   error);
  if (st->mirror_mr == NULL)
    return FALSE;
  conn->stats.pinned_bytes += MIRROR_SIZE;
  return TRUE;
}

void
bw_tx_clear (RdmaConn *conn, BwState *st)
{
  if (st->mirror_mr != NULL)
  {
    rdma_res_mr_dereg (&st->mirror_mr);
    conn->stats.pinned_bytes -= MIRROR_SIZE;
  }
  if (st->mirror != NULL)
    munmap (st->mirror, MIRROR_SIZE);
  st->mirror = NULL;
}

static gboolean
tx_settled (RdmaConn *conn, gpointer data)
{
  TxState s = ((BwState *) data)->tx_state;
  return s == TX_READY || s == TX_REFUSED;
}

/* Makes sure the peer's slots are known: asks for them and waits the first time. */
/* The open slot: the peer's slots are known (asked for the first time), or it has none. */
RdmaOpenStatus
bw_open (RdmaConn *conn, gint64 deadline_us, GError **error)
{
  BwState *st = state_of (conn);

  if (st->tx_state == TX_UNKNOWN)
  {
    GError *e = NULL;
    /* over the budget: this message by eager, the next asks again (rdma_budget.h) */
    if (!rdma_budget_admit (MIRROR_SIZE, "a batched-write mirror"))
    {
      conn->stats.budget_refusals++;
      return RDMA_OPEN_REFUSED;
    }
    if (!tx_create (conn, st, &e))
    {
      g_warning ("ThriftRdma: cannot register a batched-write mirror (%s); batched messages "
                 "go by Eager-SendRecv",
                 e->message);
      g_clear_error (&e);
      bw_tx_clear (conn, st);
      st->tx_state = TX_REFUSED;
      return RDMA_OPEN_REFUSED;
    }
    if (!rdma_conn_send_control (conn, RDMA_PROTO_BATCHED_WRITE, BW_CTL_REQUEST, NULL, 0, error))
      return RDMA_OPEN_ERROR;
    st->tx_state = TX_REQUESTED;
  }
  if (!rdma_conn_wait_for (conn, tx_settled, st, deadline_us, error))
    return RDMA_OPEN_ERROR;
  return st->tx_state == TX_READY ? RDMA_OPEN_READY : RDMA_OPEN_REFUSED;
}

gboolean
bw_tx_advert (RdmaConn *conn, BwState *st, const guint8 *p, GError **error)
{
  guint64 slots, map;
  guint32 slots_rkey, map_rkey, size;
  guint16 count;

  memcpy (&slots, p, 8);
  memcpy (&slots_rkey, p + 8, 4);
  memcpy (&map, p + 12, 8);
  memcpy (&map_rkey, p + 20, 4);
  memcpy (&count, p + 24, 2);
  memcpy (&size, p + 26, 4);
  count = GUINT16_FROM_LE (count);
  size = GUINT32_FROM_LE (size);
  if (count == 0)
  {
    bw_tx_clear (conn, st);
    st->tx_state = TX_REFUSED;
    return TRUE;
  }
  if (count != BW_SLOTS || size != BW_SLOT_SIZE)
    return bw_garbage (error, "the peer advertises %u slots of %u bytes, this side uses %u of %u",
                       count, size, BW_SLOTS, BW_SLOT_SIZE);
  st->r_slots = GUINT64_FROM_LE (slots);
  st->r_slots_rkey = GUINT32_FROM_LE (slots_rkey);
  st->r_map = GUINT64_FROM_LE (map);
  st->r_map_rkey = GUINT32_FROM_LE (map_rkey);
  memset (st->sent, 0, sizeof st->sent);
  st->tx_slot = 0;
  st->tx_seq = 1;
  tx_apply (st, st->sent); /* all free */
  st->tx_state = TX_READY;
  return TRUE;
}

static gboolean
fence_done (RdmaConn *conn, RdmaOp *op, const struct ibv_wc *wc, GError **error)
{
  BwState *st = state_of (conn);

  if (st != NULL && op->arg > st->fenced)
    st->fenced = op->arg;
  return TRUE;
}

static gboolean
read_done (RdmaConn *conn, RdmaOp *op, const struct ibv_wc *wc, GError **error)
{
  BwState *st = state_of (conn);
  const guint8 *snapshot = st->mirror + BW_REGION;

  fence_done (conn, op, wc, error);
  tx_apply (st, snapshot);
  if (st->n_avail > 0)
  {
    st->refresh = REFRESH_NONE;
    return TRUE;
  }
  /* the receiver is behind: it answers once it has freed slots */
  st->refresh = REFRESH_STARVED;
  return rdma_conn_send_control (conn, RDMA_PROTO_BATCHED_WRITE, BW_CTL_STARVED, snapshot,
                                 BW_MAP_BYTES, error);
}

gboolean
bw_tx_freed (RdmaConn *conn, BwState *st, const guint8 *map, GError **error)
{
  tx_apply (st, map);
  if (st->n_avail == 0)
    return bw_garbage (error, "the peer says it freed slots, and none is free");
  st->refresh = REFRESH_NONE;
  return TRUE;
}

/* Our WRs go unsignalled (the quiet op) unless they hold @tx, @signal is asked, or the send
 * queue holds enough unsignalled ones (well before the engine would force a signal): then a
 * pooled op whose completion says our posts so far are done. */
static void
tx_mark (RdmaConn *conn, BwState *st, struct ibv_send_wr *wr, RdmaTx *tx, gboolean signal)
{
  guint every = MAX (1u, MIN (BW_SIGNAL_EVERY, conn->sq_depth / 4));

  if (signal || tx != NULL || conn->sq_unsignalled + 1 >= every)
  {
    RdmaOp *op = rdma_conn_op_get (conn, RDMA_OP_WRITE, RDMA_PROTO_BATCHED_WRITE);
    op->tx = tx;
    op->done = fence_done;
    op->arg = st->posted + 1;
    wr->wr_id = rdma_op_wr_id (op);
    wr->send_flags = IBV_SEND_SIGNALED;
  }
  else
  {
    wr->wr_id = rdma_op_wr_id (&conn->quiet_op);
    wr->send_flags = 0;
  }
}

static guint32
tx_imm (RdmaConn *conn, BwState *st, guint32 seq)
{
  rdma_credit_take (&conn->credits);
  return htonl (RDMA_IMM_MAKE (RDMA_PROTO_BATCHED_WRITE,
                               BW_IMM_REST (rdma_credit_piggyback_max (&conn->credits, 15), seq)));
}

static gboolean
tx_post_read (RdmaConn *conn, BwState *st, GError **error)
{
  RdmaOp *op = rdma_conn_op_get (conn, RDMA_OP_READ, RDMA_PROTO_BATCHED_WRITE);
  struct ibv_sge sge = {
    .addr = (uintptr_t) (st->mirror + BW_REGION),
    .length = BW_MAP_BYTES,
    .lkey = st->mirror_mr->lkey,
  };
  struct ibv_send_wr wr = {
    .wr_id = rdma_op_wr_id (op),
    .sg_list = &sge,
    .num_sge = 1,
    .opcode = IBV_WR_RDMA_READ,
    .send_flags = IBV_SEND_SIGNALED,
    .wr.rdma = { .remote_addr = st->r_map, .rkey = st->r_map_rkey },
  };

  op->done = read_done;
  op->arg = ++st->posted;
  st->refresh = REFRESH_READ;
  return rdma_conn_post_wr (conn, &wr, "READ (batched-write bitmap)", error);
}

/* A zero-byte WRITE_WITH_IMM that announces what was written (or, without @imm, a zero-byte
 * WRITE whose completion says everything before it is done). */
gboolean
bw_tx_doorbell (RdmaConn *conn, BwState *st, gboolean imm, gboolean signal, GError **error)
{
  struct ibv_send_wr wr = {
    .num_sge = 0,
    .opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
    .wr.rdma = { .remote_addr = st->r_slots, .rkey = st->r_slots_rkey },
  };

  if (imm)
    wr.imm_data = tx_imm (conn, st, st->last_seq);
  tx_mark (conn, st, &wr, NULL, signal);
  st->posted++;
  if (!rdma_conn_post_wr (conn, &wr, imm ? "WRITE_WITH_IMM (doorbell)" : "WRITE (fence)", error))
    return FALSE;
  if (imm)
  {
    st->unannounced = 0;
    bw_update_mask (conn, st);
  }
  return TRUE;
}

/* Plans the next fragment of at most @left bytes: a run of @span known-free slots from
 * tx_slot and the slot of the fragment after it.  FALSE: no slot is known free for that one
 * (the batch is over). */
static gboolean
tx_plan (BwState *st, gsize left, guint32 *span, guint32 *next)
{
  guint32 s = st->tx_slot, want, k = 1;

  want = (guint32) MIN ((gsize) BW_MAX_RUN,
                        (BW_HEADER_SIZE + left + BW_TRAILER_SIZE + BW_SLOT_SIZE - 1)
                            / BW_SLOT_SIZE);
  while (k < want && s + k < BW_SLOTS && st->avail[s + k])
    k++;
  /* the next fragment goes where the run ends, or to the first free slot after it */
  for (guint32 i = 0; i < BW_SLOTS; i++)
  {
    guint32 c = (s + k + i) % BW_SLOTS;
    if (st->avail[c] && (c < s || c >= s + k))
    {
      *span = k;
      *next = c;
      return TRUE;
    }
  }
  /* every free slot is in the run: leave the last one for the next fragment */
  if (k > 1)
  {
    *span = k - 1;
    *next = s + k - 1;
    return TRUE;
  }
  return FALSE;
}

/* Writes one fragment (@frag bytes of @tx at @off) into @span slots from tx_slot. */
static gboolean
tx_fragment (RdmaConn *conn, BwState *st, RdmaTx *tx, gsize off, guint32 frag, guint8 flags,
             guint32 span, guint32 next, gboolean imm, GError **error)
{
  guint32 s = st->tx_slot, seq = st->tx_seq;
  guint8 *m = st->mirror + (gsize) s * BW_SLOT_SIZE;
  guint32 trailer = GUINT32_TO_LE (seq ^ BW_TRAILER_XOR);
  BwHeader h = {
    .seq = GUINT32_TO_LE (seq),
    .frag_len = GUINT32_TO_LE (frag),
    .msg_len = GUINT32_TO_LE ((guint32) tx->len),
    .next = GUINT16_TO_LE ((guint16) next),
    .flags = flags,
    .magic = BW_MAGIC,
  };
  struct ibv_sge sge[3];
  struct ibv_send_wr wr = {
    .sg_list = sge,
    .opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
    .wr.rdma = { .remote_addr = st->r_slots + (gsize) s * BW_SLOT_SIZE, .rkey = st->r_slots_rkey },
  };

  memcpy (m, &h, sizeof h);
  memcpy (m + BW_HEADER_SIZE + frag, &trailer, sizeof trailer);
  if (frag <= BW_SLOT_ROOM)
  {
    /* small: copied beside header and trailer, so the WRITE holds no transmit buffer and
     * needs no completion */
    memcpy (m + BW_HEADER_SIZE, tx->base + off, frag);
    conn->stats.bytes_copied += frag;
    sge[0] = (struct ibv_sge){
      .addr = (uintptr_t) m,
      .length = BW_HEADER_SIZE + frag + BW_TRAILER_SIZE,
      .lkey = st->mirror_mr->lkey,
    };
    wr.num_sge = 1;
    tx_mark (conn, st, &wr, NULL, FALSE);
  }
  else
  {
    /* large: the payload straight from the transmit buffer, held until the WRITE is done */
    sge[0] = (struct ibv_sge){
      .addr = (uintptr_t) m,
      .length = BW_HEADER_SIZE,
      .lkey = st->mirror_mr->lkey,
    };
    sge[1] = (struct ibv_sge){
      .addr = (uintptr_t) (tx->base + off),
      .length = frag,
      .lkey = tx->mr->lkey,
    };
    sge[2] = (struct ibv_sge){
      .addr = (uintptr_t) (m + BW_HEADER_SIZE + frag),
      .length = BW_TRAILER_SIZE,
      .lkey = st->mirror_mr->lkey,
    };
    wr.num_sge = 3;
    tx_mark (conn, st, &wr, tx, FALSE);
  }
  if (imm)
    wr.imm_data = tx_imm (conn, st, seq);
  /* take the run and the next slot */
  for (guint32 i = s; i < s + span; i++)
  {
    st->sent[i / 8] ^= (guint8) (1u << (i % 8));
    if (st->avail[i])
    {
      st->avail[i] = 0;
      st->n_avail--;
    }
  }
  st->avail[next] = 0;
  st->n_avail--;
  st->tx_slot = next;
  st->tx_seq = seq_next (seq);
  st->last_seq = seq;
  st->posted++;
  if (!rdma_conn_post_wr (conn, &wr, imm ? "WRITE_WITH_IMM" : "WRITE", error))
    return FALSE;
  st->unannounced = imm ? 0 : st->unannounced + 1;
  bw_update_mask (conn, st);
  return TRUE;
}

gboolean
bw_send_message (RdmaConn *conn, RdmaTx *tx, gint64 deadline_us, GError **error)
{
  BwState *st = state_of (conn);
  gsize len = tx->len, off = 0;
  /* after another protocol's message: hold this one until its immediate (order) */
  gboolean after_other = conn->last_tx_proto != &rdma_proto_batched_write_ops;
  /* after a received message: a wait follows, announce the message at once */
  gboolean answer = !conn->last_was_send;

  /* the engine called bw_open first: the peer's slots are known */
  if (st->tx_state != TX_READY)
  {
    rdma_status_set_error (error, RDMA_ERR_NOT_OPEN, "batched_write", 0, -1,
                           "sent before the peer's slots were known");
    return FALSE;
  }
  do
  {
    guint32 span = 0, next = 0, frag = 0;
    guint8 flags = 0;
    gboolean imm = FALSE, ok;

    for (;;)
    {
      if (!rdma_conn_check_usable (conn, error))
        return FALSE;
      if (tx_plan (st, len - off, &span, &next))
      {
        frag = (guint32) MIN (len - off,
                              (gsize) span * BW_SLOT_SIZE - BW_HEADER_SIZE - BW_TRAILER_SIZE);
        flags = (off == 0 ? BW_FIRST : 0) | (off + frag == len ? BW_LAST : 0);
        if (off == 0 && after_other)
          flags |= BW_HOLD;
        /* the batch ends with it (the next fragment needs a READ), or it must be announced */
        imm = (flags & BW_HOLD) || (answer && (flags & BW_LAST))
              || st->n_avail == span; /* the run's free slots and the next one are the last */
        if (conn->sq_used + 1 <= conn->sq_depth && (!imm || conn->credits.send > 0))
          break;
      }
      else if (st->refresh == REFRESH_NONE && conn->sq_used + 1 <= conn->sq_depth)
      {
        /* out of known-free slots: the one READ of the batch */
        if (!tx_post_read (conn, st, error))
          return FALSE;
        continue;
      }
      st->in_send = TRUE;
      ok = rdma_conn_progress (conn, deadline_us, error);
      st->in_send = FALSE;
      if (!ok)
        return FALSE;
    }
    if (!tx_fragment (conn, st, tx, off, frag, flags, span, next, imm, error))
      return FALSE;
    off += frag;
  } while (off < len);
  return TRUE;
}

gboolean
rdma_bw_next_fragment (RdmaConn *conn, guint64 *remote_addr, guint32 *rkey, guint32 *seq)
{
  BwState *st = state_of (conn);

  if (st == NULL || st->tx_state != TX_READY)
    return FALSE;
  *remote_addr = st->r_slots + (gsize) st->tx_slot * BW_SLOT_SIZE;
  *rkey = st->r_slots_rkey;
  *seq = st->tx_seq;
  return TRUE;
}
