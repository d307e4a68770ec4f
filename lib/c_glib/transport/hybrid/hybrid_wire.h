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
 * hybrid_wire.h: the three small messages that open a hybrid connection's TCP leg, before
 * any Thrift frame (all integers big-endian, as Thrift's):
 *
 *   client -> server  HELLO    magic, version, flags (HYBRID_WANT_RDMA), 2 reserved    8 bytes
 *   server -> client  WELCOME  magic, version, status, server flags (HYBRID_HAS_RDMA),
 *                              1 reserved, the pair token                              24 bytes
 *   client -> server  COMMIT   magic, version, what follows (HybridCommit), 2 reserved 8 bytes
 *
 * The token is the server's, fresh and random for each TCP leg; the client presents it in the
 * connection request of its RDMA leg, and the server pairs the two by it, once.  The magic
 * read as a frame length is negative, which no framed Thrift peer sends, so a stock Thrift
 * client on the hybrid port is told apart at its first byte (hybrid_wire_first_byte) and
 * served over TCP, with no handshake.
 */
#ifndef _HYBRID_WIRE_H
#define _HYBRID_WIRE_H

#include <glib.h>

G_BEGIN_DECLS

#define HYBRID_WIRE_MAGIC 0xff544859u /* "\xffTHY" */
#define HYBRID_WIRE_VERSION 1
#define HYBRID_TOKEN_LEN 16
#define HYBRID_HELLO_LEN 8
#define HYBRID_WELCOME_LEN 24
#define HYBRID_COMMIT_LEN 8

typedef enum
{
  HYBRID_WANT_RDMA = 1 << 0 /* HELLO: the client will try an RDMA leg */
} HybridHelloFlags;

typedef enum
{
  HYBRID_HAS_RDMA = 1 << 0 /* WELCOME: the server listens for RDMA legs */
} HybridServerFlags;

typedef enum
{
  HYBRID_STATUS_OK = 0,
  HYBRID_STATUS_VERSION = 1, /* the server does not speak the client's version */
  HYBRID_STATUS_BUSY = 2     /* too many connections are being set up */
} HybridStatus;

typedef enum
{
  HYBRID_COMMIT_RDMA = 1,    /* the RDMA leg with the token is connected */
  HYBRID_COMMIT_TCP_ONLY = 2 /* no RDMA leg follows (fallback): every call goes by TCP */
} HybridCommit;

typedef struct
{
  guint8 version;
  guint8 flags;                   /* HELLO: HybridHelloFlags; WELCOME: HybridServerFlags */
  guint8 status;                  /* WELCOME */
  guint8 commit;                  /* COMMIT */
  guint8 token[HYBRID_TOKEN_LEN]; /* WELCOME */
} HybridMessage;

void hybrid_wire_hello (guint8 out[HYBRID_HELLO_LEN], guint8 flags);
void hybrid_wire_welcome (guint8 out[HYBRID_WELCOME_LEN], HybridStatus status, guint8 flags,
                          const guint8 token[HYBRID_TOKEN_LEN]);
void hybrid_wire_commit (guint8 out[HYBRID_COMMIT_LEN], HybridCommit commit);

/* Each checks the magic, the version and the fields it knows; FALSE with a message in
 * @error that says what the bytes were instead. */
gboolean hybrid_wire_parse_hello (const guint8 *data, gsize len, HybridMessage *out,
                                  GError **error);
gboolean hybrid_wire_parse_welcome (const guint8 *data, gsize len, HybridMessage *out,
                                    GError **error);
gboolean hybrid_wire_parse_commit (const guint8 *data, gsize len, HybridMessage *out,
                                   GError **error);

/* Who a TCP connection's first byte says the client is. */
typedef enum
{
  HYBRID_PEER_HYBRID,   /* the HELLO's magic: a hybrid:// client */
  HYBRID_PEER_BUFFERED, /* a strict binary (0x80) or compact (0x82) message's first
                                   byte, unframed: a stock client with a buffered transport */
  HYBRID_PEER_FRAMED    /* anything else is taken for the high byte of a frame's
                                   length (0x00 below 16 MiB): a stock framed client */
} HybridPeer;

HybridPeer hybrid_wire_first_byte (guint8 first);

/* A fresh token from the kernel's random source; FALSE with @error if there is none. */
gboolean hybrid_wire_new_token (guint8 token[HYBRID_TOKEN_LEN], GError **error);

/* What a status or commit value means, for messages. */
const gchar *hybrid_wire_status_text (guint8 status);

G_END_DECLS

#endif /* _HYBRID_WIRE_H */
