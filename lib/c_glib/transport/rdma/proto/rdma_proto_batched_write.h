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
 * rdma_proto_batched_write.h: the wire format of Batched-Write (rdma_proto_batched_write.c):
 * the receiver's slots and bitmap, the fragment header, the immediate and the control
 * messages.  All little-endian.
 */
#ifndef _RDMA_PROTO_BATCHED_WRITE_H
#define _RDMA_PROTO_BATCHED_WRITE_H

#include "../rdma_conn_private.h"

G_BEGIN_DECLS

/* The receiver's slots, and its bitmap of one bit per slot (flipped on every free). */
#define BW_SLOTS 256u
#define BW_SLOT_SIZE 2048u
#define BW_REGION (BW_SLOTS * BW_SLOT_SIZE)
#define BW_MAP_BYTES (BW_SLOTS / 8)

/*
 * A fragment starts at a slot and fills the slots after it:
 *
 *   BwHeader | payload (frag_len bytes) | trailer
 *
 * The trailer (le32 seq ^ BW_TRAILER_XOR) is written last: with the expected sequence number
 * in the header it says the fragment is complete.
 */
#define BW_MAGIC 0xb7
#define BW_TRAILER_SIZE 4u
#define BW_TRAILER_XOR 0x5bd1e995u

enum
{
  BW_FIRST = 0x1, /* the first fragment of a message */
  BW_LAST = 0x2,  /* the last one */
  BW_HOLD = 0x4   /* deliver only once this fragment's immediate came (the order of
                       messages across protocols) */
};

typedef struct __attribute__ ((packed))
{
  guint32 seq;      /* fragment sequence number: 1, 2, ... (0: an empty slot) */
  guint32 frag_len; /* payload bytes after the header */
  guint32 msg_len;  /* the whole message */
  guint16 next;     /* slot of the next fragment's header (the first goes to slot 0) */
  guint8 flags;     /* BW_FIRST | BW_LAST | BW_HOLD */
  guint8 magic;     /* BW_MAGIC */
} BwHeader;
G_STATIC_ASSERT (sizeof (BwHeader) == 16);
#define BW_HEADER_SIZE ((guint32) sizeof (BwHeader))

/*
 * The immediate of a WRITE_WITH_IMM (a fragment's, or a zero-byte doorbell's):
 *
 *   bits 31..29  RDMA_PROTO_BATCHED_WRITE     bits 24..20  0
 *   bits 28..25  credits returned (0..15)     bits 19..0   sequence number of the last
 *                                                          fragment written before it
 */
#define BW_SEQ_BITS 0xfffffu
#define BW_IMM_CREDITS(rest) (((rest) >> 25) & 0xfu)
#define BW_IMM_SEQ(rest) ((rest) &BW_SEQ_BITS)
#define BW_IMM_REST(credits, seq) (((guint32) (credits) << 25) | ((seq) &BW_SEQ_BITS))

/* Control kinds (RdmaWireHeader.flags of RDMA_WIRE_CONTROL for this protocol). */
enum
{
  BW_CTL_REQUEST = 1, /* sender -> receiver: register your slots for me; no payload */
  BW_CTL_ADVERT = 2,  /* receiver -> sender: le64 slots, le32 rkey, le64 bitmap, le32 rkey,
                           le16 slot count (0: no slots for you), le32 slot size */
  BW_CTL_STARVED = 3, /* sender -> receiver: no free slot; the bitmap it READ */
  BW_CTL_FREED = 4    /* receiver -> sender: slots were freed since; the bitmap now */
};
#define BW_ADVERT_SIZE 30u

/* For tests that play a bad peer: where the next fragment goes in the peer's slots and its
 * sequence number.  FALSE while the peer's slots are not known. */
gboolean rdma_bw_next_fragment (RdmaConn *conn, guint64 *remote_addr, guint32 *rkey, guint32 *seq);

G_END_DECLS

#endif
