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
 * rdma_bw_private.h: what the parts of Batched-Write (rdma_proto_batched_write.c: the design
 * and what both sides share; rdma_bw_rx.c: the receiver; rdma_bw_tx.c: the sender) share.
 * Internal to proto/.
 */
#ifndef _RDMA_BW_PRIVATE_H
#define _RDMA_BW_PRIVATE_H

#include "../rdma_conn_private.h"
#include "../rdma_conn_window.h"
#include "rdma_proto_batched_write.h"

G_BEGIN_DECLS

/* the largest fragment, in slots: a large message goes in pieces the receiver copies out
 * while the next ones are written */
#define BW_MAX_RUN 64u
#define BW_SIGNAL_EVERY 32u
/* payload of a fragment that fits one slot */
#define BW_SLOT_ROOM (BW_SLOT_SIZE - BW_HEADER_SIZE - BW_TRAILER_SIZE)

typedef enum
{
  TX_UNKNOWN, /* not asked for yet */
  TX_REQUESTED,
  TX_READY,
  TX_REFUSED /* the peer has no slots for us: Eager-SendRecv */
} TxState;

typedef enum
{
  REFRESH_NONE,
  REFRESH_READ,   /* the READ of the bitmap is posted */
  REFRESH_STARVED /* it showed nothing free: BW_CTL_STARVED sent, waiting for FREED */
} RefreshState;

typedef struct
{
  /* receiver: the slots the peer writes into (made on its request) */
  guint8 *slots;            /* BW_REGION bytes (owned) (nullable) */
  struct ibv_mr *slots_mr;  /* LOCAL_WRITE (owned) (nullable) */
  guint8 *map;              /* the bitmap, one page (owned) (nullable) */
  struct ibv_mr *map_mr;    /* (owned) (nullable) */
  RdmaWindow *slots_win;    /* the peer's way in: REMOTE_WRITE (rdma_conn_window.h) */
  RdmaWindow *map_win;      /* REMOTE_READ */
  guint32 rx_slot;          /* where the next fragment's header lands */
  guint32 rx_seq;           /* its sequence number */
  guint32 rx_last;          /* sequence number of the last fragment taken (0: none) */
  guint32 rx_imm;           /* low bits of the sequence number of the last immediate */
  guint8 rx_held[BW_SLOTS]; /* taken and not yet freed */
  guint32 n_held;
  gboolean peer_starved;            /* the peer waits for BW_CTL_FREED */
  guint8 starved_map[BW_MAP_BYTES]; /* the bitmap it saw */
  guint8 *partial;                  /* a message of several fragments, being copied (owned) */
  gsize partial_len, partial_cap;
  guint32 partial_msg_len;

  /* sender: the peer's slots */
  TxState tx_state;
  guint64 r_slots, r_map;
  guint32 r_slots_rkey, r_map_rkey;
  guint8 *mirror;            /* BW_REGION + a page for the READ (owned) (nullable) */
  struct ibv_mr *mirror_mr;  /* LOCAL_WRITE (owned) (nullable) */
  guint8 sent[BW_MAP_BYTES]; /* parity of our writes into each slot */
  guint8 avail[BW_SLOTS];    /* known free and not taken */
  guint32 n_avail;
  guint32 tx_slot; /* where the next fragment goes (named by the last one) */
  guint32 tx_seq;  /* its sequence number */
  RefreshState refresh;
  guint unannounced;      /* fragments written by plain WRITE since the last
                                     immediate */
  gboolean in_send;       /* waiting inside send_message (for a send queue entry,
                                     a credit, the bitmap): no doorbell needed for that */
  guint32 last_seq;       /* sequence number of the last fragment written */
  guint64 posted, fenced; /* our posts, and the last one known to be complete */
} BwState;

#define BW_BIT (1u << RDMA_PROTO_BATCHED_WRITE)
#define MIRROR_SIZE (BW_REGION + 4096u)

static inline BwState *
state_of (RdmaConn *conn)
{
  return conn->proto_state[RDMA_PROTO_BATCHED_WRITE];
}

static inline guint32
seq_next (guint32 seq)
{
  return seq + 1 != 0 ? seq + 1 : 1;
}

/* @a is later than @b (low bits of sequence numbers, at most half the space apart). */
static inline gboolean
seq_ahead (guint32 a, guint32 b)
{
  guint32 d = (a - b) & BW_SEQ_BITS;
  return d != 0 && d <= BW_SEQ_BITS / 2;
}

static inline guint32
span_of (guint32 frag_len)
{
  return (BW_HEADER_SIZE + frag_len + BW_TRAILER_SIZE + BW_SLOT_SIZE - 1) / BW_SLOT_SIZE;
}

static inline gboolean
map_bit (const guint8 *map, guint32 i)
{
  return (map[i / 8] >> (i % 8)) & 1;
}

/* Fails with RDMA_ERR_PROTOCOL, "garbage framing: " and the message. */
gboolean bw_garbage (GError **error, const gchar *fmt, ...) G_GNUC_PRINTF (2, 3);
/* Progress runs while we own slots (to find fragments) or owe the peer a doorbell. */
void bw_update_mask (RdmaConn *conn, BwState *st);
/* @len bytes of anonymous memory on the connection's node; NULL with @error. */
gpointer bw_map_region (RdmaConn *conn, gsize len, const gchar *what, GError **error);

/* the receiver (rdma_bw_rx.c) */
gboolean bw_on_imm (RdmaConn *conn, guint32 imm, guint32 byte_len, GError **error);
gboolean bw_release (RdmaConn *conn, guint8 *data, gsize len, guint64 token, GError **error);
gint bw_rx_scan (RdmaConn *conn, BwState *st, GError **error);
gboolean bw_rx_advertise (RdmaConn *conn, BwState *st, GError **error);
gboolean bw_rx_starved (RdmaConn *conn, BwState *st, const guint8 *seen, GError **error);
void bw_rx_clear (RdmaConn *conn, BwState *st);

/* the sender (rdma_bw_tx.c) */
RdmaOpenStatus bw_open (RdmaConn *conn, gint64 deadline_us, GError **error);
gboolean bw_send_message (RdmaConn *conn, RdmaTx *tx, gint64 deadline_us, GError **error);
gboolean bw_tx_advert (RdmaConn *conn, BwState *st, const guint8 *p, GError **error);
gboolean bw_tx_freed (RdmaConn *conn, BwState *st, const guint8 *map, GError **error);
gboolean bw_tx_doorbell (RdmaConn *conn, BwState *st, gboolean imm, gboolean signal,
                         GError **error);
void bw_tx_clear (RdmaConn *conn, BwState *st);

G_END_DECLS

#endif
