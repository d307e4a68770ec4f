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
 * fuzz_hybrid_wire.c: the three messages of the hybrid handshake (hybrid_wire.h) as a peer
 * may send them, and the first-byte classification of the hybrid port.  Each parser refuses
 * with a GError or returns fields that the encoder writes back to the same bytes; a hello
 * that parses is never taken for a stock client by its first byte.
 */
#include "config.h"

#include <string.h>

#include "lib/c_glib/transport/hybrid/hybrid_wire.h"
#include "test/fuzz/fuzz_common.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  HybridMessage m;
  GError *error = NULL;
  guint8 again[HYBRID_WELCOME_LEN];
  gboolean ok;

  fuzz_init ();

  ok = hybrid_wire_parse_hello (data, size, &m, &error);
  fuzz_check_outcome ("hybrid_wire_parse_hello", ok, &error);
  if (ok)
  {
    FUZZ_ASSERT ((m.flags & ~HYBRID_WANT_RDMA) == 0);
    FUZZ_ASSERT (hybrid_wire_first_byte (data[0]) == HYBRID_PEER_HYBRID);
    hybrid_wire_hello (again, m.flags);
    FUZZ_ASSERT (memcmp (again, data, 6) == 0);
  }

  ok = hybrid_wire_parse_welcome (data, size, &m, &error);
  fuzz_check_outcome ("hybrid_wire_parse_welcome", ok, &error);
  if (ok)
  {
    FUZZ_ASSERT (m.status <= HYBRID_STATUS_BUSY);
    FUZZ_ASSERT (strcmp (hybrid_wire_status_text (m.status), "unknown status") != 0);
    hybrid_wire_welcome (again, (HybridStatus) m.status, m.flags, m.token);
    FUZZ_ASSERT (memcmp (again, data, 7) == 0);
    FUZZ_ASSERT (memcmp (again + 8, data + 8, HYBRID_TOKEN_LEN) == 0);
  }

  ok = hybrid_wire_parse_commit (data, size, &m, &error);
  fuzz_check_outcome ("hybrid_wire_parse_commit", ok, &error);
  if (ok)
  {
    FUZZ_ASSERT (m.commit == HYBRID_COMMIT_RDMA || m.commit == HYBRID_COMMIT_TCP_ONLY);
    hybrid_wire_commit (again, (HybridCommit) m.commit);
    FUZZ_ASSERT (memcmp (again, data, 6) == 0);
  }

  /* every first byte is one kind of peer, and only the magic's is a hybrid client */
  if (size > 0)
  {
    HybridPeer peer = hybrid_wire_first_byte (data[0]);

    FUZZ_ASSERT (peer == HYBRID_PEER_HYBRID || peer == HYBRID_PEER_BUFFERED
                 || peer == HYBRID_PEER_FRAMED);
    FUZZ_ASSERT ((peer == HYBRID_PEER_HYBRID) == (data[0] == (HYBRID_WIRE_MAGIC >> 24)));
  }
  return 0;
}
