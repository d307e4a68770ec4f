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
 * fuzz_rdma_wire.c: a peer's connection private data (the hello, the pairing token after it,
 * a reject's refusal) and the header of each SEND it makes (rdma_wire.h).  Whatever the bytes,
 * each decoder refuses them with a GError or returns what the wire format promises.
 */
#include "config.h"

#include <string.h>

#include <thrift/c_glib/transport/thrift_rdma_version.h>

#include "lib/c_glib/transport/rdma/rdma_wire.h"
#include "test/fuzz/fuzz_common.h"

static void
check_hello (const uint8_t *data, size_t size)
{
  RdmaWireHello hello;
  GError *error = NULL;
  gboolean ok = rdma_wire_hello_parse (data, size, &hello, &error);

  fuzz_check_outcome ("rdma_wire_hello_parse", ok, &error);
  if (!ok)
    return;
  FUZZ_ASSERT (size >= sizeof hello);
  FUZZ_ASSERT (hello.magic == RDMA_WIRE_HELLO_MAGIC);
  FUZZ_ASSERT (hello.version == THRIFT_RDMA_WIRE_VERSION);
  FUZZ_ASSERT (hello.credits > 0 && hello.slot_size > RDMA_WIRE_HEADER_SIZE);
}

static void
check_token (const uint8_t *data, size_t size)
{
  guint8 token[RDMA_WIRE_PAIR_TOKEN_LEN];
  static const guint8 zero[RDMA_WIRE_PAIR_TOKEN_LEN];

  if (!rdma_wire_pair_token_parse (data, size, token))
    return;
  FUZZ_ASSERT (size >= sizeof (RdmaWireRequest));
  FUZZ_ASSERT (memcmp (token, data + sizeof (RdmaWireHello), sizeof token) == 0);
  FUZZ_ASSERT (memcmp (token, zero, sizeof token) != 0);
}

static void
check_refusal (const uint8_t *data, size_t size)
{
  guint16 code = rdma_wire_refusal_parse (data, size);
  const gchar *text = rdma_wire_refusal_describe (code);

  FUZZ_ASSERT (text != NULL && text[0] != '\0');
  if (code != RDMA_WIRE_REFUSE_NONE)
    FUZZ_ASSERT (size >= sizeof (RdmaWireRefusal));
}

static void
check_header (const uint8_t *data, size_t size, guint32 max_message)
{
  RdmaWireHeader h;
  GError *error = NULL;
  /* a SEND is at most a slot: never near 4 GiB */
  guint32 byte_len = (guint32) MIN (size, G_MAXUINT32);
  gboolean ok = rdma_wire_header_parse (data, byte_len, max_message, &h, &error);

  fuzz_check_outcome ("rdma_wire_header_parse", ok, &error);
  if (!ok)
    return;
  FUZZ_ASSERT (byte_len >= RDMA_WIRE_HEADER_SIZE);
  FUZZ_ASSERT (h.magic == RDMA_WIRE_MAGIC && h.version == THRIFT_RDMA_WIRE_VERSION);
  switch (h.type)
  {
  case RDMA_WIRE_CREDIT:
    FUZZ_ASSERT (byte_len == RDMA_WIRE_HEADER_SIZE && h.frag_len == 0 && h.msg_len == 0);
    break;
  case RDMA_WIRE_CONTROL:
    FUZZ_ASSERT (h.frag_len == byte_len - RDMA_WIRE_HEADER_SIZE);
    FUZZ_ASSERT (h.frag_len <= RDMA_WIRE_CONTROL_MAX);
    break;
  case RDMA_WIRE_RING:
  case RDMA_WIRE_DATA:
    /* the payload is in the SEND (DATA) or was written into the ring (RING) */
    FUZZ_ASSERT (h.type == RDMA_WIRE_RING ? byte_len == RDMA_WIRE_HEADER_SIZE
                                          : h.frag_len == byte_len - RDMA_WIRE_HEADER_SIZE);
    FUZZ_ASSERT (h.msg_len <= max_message && h.frag_len <= h.msg_len);
    FUZZ_ASSERT ((h.flags & ~(RDMA_WIRE_FIRST | RDMA_WIRE_LAST)) == 0);
    if ((h.flags & RDMA_WIRE_FIRST) && (h.flags & RDMA_WIRE_LAST))
      FUZZ_ASSERT (h.frag_len == h.msg_len);
    break;
  default:
    FUZZ_FAIL ("rdma_wire_header_parse took message type %u", h.type);
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_init ();
  check_hello (data, size);
  check_token (data, size);
  check_refusal (data, size);
  /* the max message size: a small one, and the largest */
  check_header (data, size, 4096);
  check_header (data, size, G_MAXUINT32);
  return 0;
}
