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

/* rdma_wire.c: encoding and validation of the handshake and the message header. */
#include "config.h"

#include <string.h>

#include <thrift/c_glib/transport/thrift_rdma_version.h>

#include "rdma_status.h"
#include "rdma_wire.h"

void
rdma_wire_hello_init (RdmaWireHello *hello, guint16 version)
{
  memset (hello, 0, sizeof *hello);
  hello->magic = GUINT32_TO_LE (RDMA_WIRE_HELLO_MAGIC);
  hello->version = GUINT16_TO_LE (version);
}

gboolean
rdma_wire_hello_parse (const void *data, gsize len, RdmaWireHello *out, GError **error)
{
  RdmaWireHello h;

  /* RDMA CM pads private data with zeros: the buffer may be longer than ours. */
  if (data == NULL || len < sizeof h)
  {
    rdma_status_set_error (error, RDMA_ERR_VERSION, "handshake", 0, -1,
                           "the peer sent %" G_GSIZE_FORMAT " bytes of private data, not a "
                           "ThriftRdma hello (%" G_GSIZE_FORMAT " bytes): is it a ThriftRdma "
                           "peer?",
                           data ? len : 0, sizeof h);
    return FALSE;
  }
  memcpy (&h, data, sizeof h);
  if (GUINT32_FROM_LE (h.magic) != RDMA_WIRE_HELLO_MAGIC)
  {
    rdma_status_set_error (error, RDMA_ERR_VERSION, "handshake", 0, -1,
                           "the peer's private data is not a ThriftRdma hello (magic 0x%08x)",
                           GUINT32_FROM_LE (h.magic));
    return FALSE;
  }
  out->magic = RDMA_WIRE_HELLO_MAGIC;
  out->version = GUINT16_FROM_LE (h.version);
  out->protocols = GUINT16_FROM_LE (h.protocols);
  out->credits = GUINT32_FROM_LE (h.credits);
  out->slot_size = GUINT32_FROM_LE (h.slot_size);
  out->max_message = GUINT32_FROM_LE (h.max_message);
  out->rkey = GUINT32_FROM_LE (h.rkey);
  out->addr = GUINT64_FROM_LE (h.addr);
  out->flags = GUINT32_FROM_LE (h.flags);
  if (out->version != THRIFT_RDMA_WIRE_VERSION)
  {
    rdma_status_set_error (error, RDMA_ERR_VERSION, "handshake", 0, -1,
                           "the peer speaks ThriftRdma wire version %u, this library version "
                           "%u: upgrade one side",
                           out->version, THRIFT_RDMA_WIRE_VERSION);
    return FALSE;
  }
  if (out->credits == 0 || out->slot_size <= RDMA_WIRE_HEADER_SIZE)
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "handshake", 0, -1,
                           "the peer offers %u credits of %u-byte slots", out->credits,
                           out->slot_size);
    return FALSE;
  }
  return TRUE;
}

gboolean
rdma_wire_pair_token_parse (const void *data, gsize len, guint8 *token)
{
  const guint8 *t = (const guint8 *) data + sizeof (RdmaWireHello);

  /* a hello alone, or one followed by less than a token (never sent): no token */
  if (data == NULL || len < sizeof (RdmaWireRequest))
    return FALSE;
  for (guint i = 0; i < RDMA_WIRE_PAIR_TOKEN_LEN; i++)
    if (t[i] != 0)
    {
      memcpy (token, t, RDMA_WIRE_PAIR_TOKEN_LEN);
      return TRUE;
    }
  return FALSE;
}

void
rdma_wire_refusal_init (RdmaWireRefusal *refusal, guint16 version, guint16 code)
{
  memset (refusal, 0, sizeof *refusal);
  rdma_wire_hello_init (&refusal->hello, version);
  refusal->magic = GUINT32_TO_LE (RDMA_WIRE_REFUSAL_MAGIC);
  refusal->code = GUINT16_TO_LE (code);
}

guint16
rdma_wire_refusal_parse (const void *data, gsize len)
{
  RdmaWireRefusal r;

  if (data == NULL || len < sizeof r)
    return RDMA_WIRE_REFUSE_NONE;
  memcpy (&r, data, sizeof r);
  if (GUINT32_FROM_LE (r.hello.magic) != RDMA_WIRE_HELLO_MAGIC
      || GUINT32_FROM_LE (r.magic) != RDMA_WIRE_REFUSAL_MAGIC)
    return RDMA_WIRE_REFUSE_NONE;
  return GUINT16_FROM_LE (r.code);
}

const gchar *
rdma_wire_refusal_describe (guint16 code)
{
  switch (code)
  {
  case RDMA_WIRE_REFUSE_NONE:
    return "it was not refused";
  case RDMA_WIRE_REFUSE_UNKNOWN_TOKEN:
    return "its pairing token is unknown or was already used";
  case RDMA_WIRE_REFUSE_NOT_PAIRING:
    return "it carries a pairing token, and this server does not pair connections (is it an "
           "rdma:// server rather than a hybrid:// one?)";
  case RDMA_WIRE_REFUSE_TOKEN_REQUIRED:
    return "it carries no pairing token, and this server admits only paired connections (a "
           "hybrid:// server: connect with hybrid://)";
  default:
    /* a newer server's reason */
    return "for a reason this library version does not know";
  }
}

void
rdma_wire_header_write (void *slot, guint8 proto, guint8 type, guint8 flags, guint32 credits,
                        guint32 frag_len, guint32 msg_len)
{
  RdmaWireHeader h = {
    .magic = RDMA_WIRE_MAGIC,
    .version = THRIFT_RDMA_WIRE_VERSION,
    .proto = proto,
    .type = type,
    .flags = flags,
    .credits = GUINT32_TO_LE (credits),
    .frag_len = GUINT32_TO_LE (frag_len),
    .msg_len = GUINT32_TO_LE (msg_len),
  };
  memcpy (slot, &h, sizeof h);
}

void
rdma_wire_header_set_freed (void *slot, guint8 freed)
{
  ((RdmaWireHeader *) slot)->freed = freed;
}

gboolean
rdma_wire_header_parse (const void *slot, guint32 byte_len, guint32 max_message,
                        RdmaWireHeader *out, GError **error)
{
  RdmaWireHeader h;

  if (byte_len < RDMA_WIRE_HEADER_SIZE)
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "truncated message: %u bytes, shorter than the %u-byte header", byte_len,
                           RDMA_WIRE_HEADER_SIZE);
    return FALSE;
  }
  memcpy (&h, slot, sizeof h);
  if (h.magic != RDMA_WIRE_MAGIC || h.version != THRIFT_RDMA_WIRE_VERSION)
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: header magic 0x%02x version %u (expected 0x%02x "
                           "version %u)",
                           h.magic, h.version, RDMA_WIRE_MAGIC, THRIFT_RDMA_WIRE_VERSION);
    return FALSE;
  }
  out->magic = h.magic;
  out->version = h.version;
  out->proto = h.proto;
  out->type = h.type;
  out->flags = h.flags;
  out->freed = h.freed;
  out->credits = GUINT32_FROM_LE (h.credits);
  out->frag_len = GUINT32_FROM_LE (h.frag_len);
  out->msg_len = GUINT32_FROM_LE (h.msg_len);

  if (out->frag_len != byte_len - RDMA_WIRE_HEADER_SIZE && out->type != RDMA_WIRE_RING)
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "truncated message: the header announces %u payload bytes, %u "
                           "arrived",
                           out->frag_len, byte_len - RDMA_WIRE_HEADER_SIZE);
    return FALSE;
  }
  switch (out->type)
  {
  case RDMA_WIRE_CREDIT:
    if (out->frag_len != 0 || out->msg_len != 0)
    {
      rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                             "garbage framing: a credit message with %u payload bytes",
                             out->frag_len);
      return FALSE;
    }
    return TRUE;
  case RDMA_WIRE_CONTROL:
    if (out->frag_len > RDMA_WIRE_CONTROL_MAX)
    {
      rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                             "garbage framing: a control message with %u payload bytes",
                             out->frag_len);
      return FALSE;
    }
    return TRUE;
  case RDMA_WIRE_RING:
    if (byte_len != RDMA_WIRE_HEADER_SIZE)
    {
      rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                             "garbage framing: a ring notice of %u bytes", byte_len);
      return FALSE;
    }
    break;
  case RDMA_WIRE_DATA:
    break;
  default:
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: unknown message type %u", out->type);
    return FALSE;
  }
  if (out->msg_len > max_message)
  {
    rdma_status_set_error (error, RDMA_ERR_TOO_LARGE, "receive", 0, -1,
                           "the peer sends a %u-byte message, the max message size is %u",
                           out->msg_len, max_message);
    return FALSE;
  }
  if (out->frag_len > out->msg_len || (out->flags & ~(RDMA_WIRE_FIRST | RDMA_WIRE_LAST)) != 0
      || ((out->flags & RDMA_WIRE_FIRST) && (out->flags & RDMA_WIRE_LAST)
          && out->frag_len != out->msg_len))
  {
    rdma_status_set_error (error, RDMA_ERR_PROTOCOL, "receive", 0, -1,
                           "garbage framing: fragment of %u bytes, flags 0x%x, message of %u",
                           out->frag_len, out->flags, out->msg_len);
    return FALSE;
  }
  return TRUE;
}
