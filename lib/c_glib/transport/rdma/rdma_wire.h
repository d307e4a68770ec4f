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
 * rdma_wire.h: what crosses the wire.  Both structures are little-endian and packed; both carry
 * THRIFT_RDMA_WIRE_VERSION, and a peer with another version is refused.
 */
#ifndef _RDMA_WIRE_H
#define _RDMA_WIRE_H

#include <glib.h>

G_BEGIN_DECLS

/*
 * RdmaWireHello: the connection's private data, sent by the client in rdma_connect and by the
 * server in rdma_accept (and in rdma_reject, so the client can say which version the server
 * speaks).  It must fit the 56 bytes RDMA CM allows in a connect request.
 */
#define RDMA_WIRE_HELLO_MAGIC 0x4d445254u /* "TRDM" */
typedef struct __attribute__ ((packed))
{
  guint32 magic;       /* RDMA_WIRE_HELLO_MAGIC */
  guint16 version;     /* THRIFT_RDMA_WIRE_VERSION */
  guint16 protocols;   /* bit (1 << RdmaProtoId) for each protocol the sender receives */
  guint32 credits;     /* data receive slots the sender posted for its peer */
  guint32 slot_size;   /* bytes per receive slot, message header included */
  guint32 max_message; /* largest message the sender accepts (its max message size) */
  guint32 rkey;        /* key of the sender's reserved remote buffer (0: none) */
  guint64 addr;        /* its address (for WRITE based protocols; 0: none) */
  guint32 flags;       /* RDMA_WIRE_HELLO_* (was the buffer's length, always 0 and never
                           read: a peer from before sends none) */
} RdmaWireHello;
G_STATIC_ASSERT (sizeof (RdmaWireHello) == 36);

/* Every work request of the sender that completes a receive of its peer (SEND, SEND with
 * immediate, WRITE with immediate) asks for a solicited event: the peer may wait for its
 * messages with its CQ armed for solicited completions only, so that its own sends'
 * completions wake nobody. */
#define RDMA_WIRE_HELLO_SOLICITED 0x1u
/* The sender takes RFP's RFP_NOTIFY control message (proto/rdma_proto_rfp.c): a client that
 * will wait in the kernel asks for its RFP replies to be announced, not polled for. */
#define RDMA_WIRE_HELLO_RFP_NOTIFY 0x2u
/* The sender takes an unprompted RDMA_RING_RELEASED for its direct ring (rdma_ring.h): a
 * writer gives a ring too small for its messages up and asks for a larger one. */
#define RDMA_WIRE_HELLO_RING_GROW 0x4u

void rdma_wire_hello_init (RdmaWireHello *hello, guint16 version);
/* Checks length, magic and version of a peer's hello; @out gets it in host order. */
gboolean rdma_wire_hello_parse (const void *data, gsize len, RdmaWireHello *out, GError **error);

/*
 * The pairing token (hybrid://, thrift_rdma.h "pair-token"): a client may follow its hello
 * with RDMA_WIRE_PAIR_TOKEN_LEN bytes that a pairing server matches to the client's TCP leg.
 * RDMA CM pads a request's private data with zeros, so an all-zero token is no token, and a
 * hello alone (an older client) carries none.
 */
#define RDMA_WIRE_PAIR_TOKEN_LEN 16
typedef struct __attribute__ ((packed))
{
  RdmaWireHello hello;
  guint8 pair_token[RDMA_WIRE_PAIR_TOKEN_LEN];
} RdmaWireRequest;
/* what RDMA CM carries in a connect on RoCE and InfiniBand */
G_STATIC_ASSERT (sizeof (RdmaWireRequest) <= 56);

/* TRUE if the connection request's private data @data (@len bytes, a hello first) carries a
 * pairing token; @token (RDMA_WIRE_PAIR_TOKEN_LEN bytes) then gets it. */
gboolean rdma_wire_pair_token_parse (const void *data, gsize len, guint8 *token);

/*
 * RdmaWireRefusal: the private data of rdma_reject when the server refuses a request for a
 * reason it can name: a hello (of the server's version, no credits, as any reject carries)
 * then a magic and a code.  A reject without it (an older server, a bad hello, no room) says
 * only the server's version.
 */
#define RDMA_WIRE_REFUSAL_MAGIC 0x4a525254u /* "TRRJ" */
typedef enum
{
  RDMA_WIRE_REFUSE_NONE = 0,          /* not a refusal (admitted) */
  RDMA_WIRE_REFUSE_UNKNOWN_TOKEN = 1, /* the pairing token is unknown or was already used */
  RDMA_WIRE_REFUSE_NOT_PAIRING = 2,   /* a pairing token sent to a server that does not pair */
  RDMA_WIRE_REFUSE_TOKEN_REQUIRED = 3 /* no pairing token, and this server admits only pairs */
} RdmaWireRefusalCode;

typedef struct __attribute__ ((packed))
{
  RdmaWireHello hello;
  guint32 magic; /* RDMA_WIRE_REFUSAL_MAGIC */
  guint16 code;  /* RdmaWireRefusalCode */
  guint16 reserved;
} RdmaWireRefusal;
/* what RDMA CM carries in a reject on RoCE and InfiniBand */
G_STATIC_ASSERT (sizeof (RdmaWireRefusal) <= 148);

void rdma_wire_refusal_init (RdmaWireRefusal *refusal, guint16 version, guint16 code);
/* The code of the refusal in a reject's private data (RDMA_WIRE_REFUSE_NONE: it carries
 * none). */
guint16 rdma_wire_refusal_parse (const void *data, gsize len);
/* What a refusal code means, for the client's error ("its pairing token is unknown..."). */
const gchar *rdma_wire_refusal_describe (guint16 code);

/*
 * RdmaWireHeader: the first 20 bytes of every SEND (one fragment of a message, or a control
 * message).  A message longer than a slot goes as fragments, each in its own slot: the first
 * has RDMA_WIRE_FIRST, the last RDMA_WIRE_LAST (a one-slot message has both); every fragment
 * repeats the message's total length.
 */
#define RDMA_WIRE_MAGIC 0xa7
typedef enum
{
  RDMA_WIRE_DATA = 1,    /* a fragment of a Thrift message, in the SEND */
  RDMA_WIRE_CREDIT = 2,  /* only returns credits (and freed ring chunks); no payload; lands
                            in a control slot and takes no credit */
  RDMA_WIRE_CONTROL = 3, /* the control channel: `flags` is the kind, the payload (at most
                            RDMA_WIRE_CONTROL_MAX bytes) is for the protocol `proto` */
  RDMA_WIRE_RING = 4     /* a fragment of frag_len bytes that the sender WROTE into the
                            receiver's direct ring (rdma_ring.h); the SEND is the header only */
} RdmaWireType;

#define RDMA_WIRE_CONTROL_MAX 64
/* RdmaWireHeader.proto of the engine's own control messages (the direct ring's) */
#define RDMA_WIRE_PROTO_ENGINE 0xff

#define RDMA_WIRE_FIRST 0x1
#define RDMA_WIRE_LAST 0x2

typedef struct __attribute__ ((packed))
{
  guint8 magic;   /* RDMA_WIRE_MAGIC */
  guint8 version; /* THRIFT_RDMA_WIRE_VERSION */
  guint8 proto;   /* RdmaProtoId of the protocol that handles it */
  guint8 type;    /* RdmaWireType */
  guint8 flags;   /* RDMA_WIRE_FIRST | RDMA_WIRE_LAST for DATA and RING; the kind for
                        CONTROL */
  guint8 freed;   /* chunks of the sender's direct ring the sender consumed since its
                        last report (rdma_ring.h) */
  guint8 reserved[2];
  guint32 credits;  /* receive slots the sender freed since its last report */
  guint32 frag_len; /* payload bytes following the header in this SEND */
  guint32 msg_len;  /* the whole message's length */
} RdmaWireHeader;
G_STATIC_ASSERT (sizeof (RdmaWireHeader) == 20);

#define RDMA_WIRE_HEADER_SIZE ((guint32) sizeof (RdmaWireHeader))

void rdma_wire_header_write (void *slot, guint8 proto, guint8 type, guint8 flags, guint32 credits,
                             guint32 frag_len, guint32 msg_len);
/* Sets the freed field of a header written by rdma_wire_header_write. */
void rdma_wire_header_set_freed (void *slot, guint8 freed);

/*
 * Validates a received SEND of @byte_len bytes and decodes its header into @out: garbage,
 * truncation, lengths that disagree and messages over @max_message are errors (in
 * RDMA_ENGINE_ERROR, saying which) and never crash.
 */
gboolean rdma_wire_header_parse (const void *slot, guint32 byte_len, guint32 max_message,
                                 RdmaWireHeader *out, GError **error);

G_END_DECLS

#endif
