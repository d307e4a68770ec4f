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

/* hybrid_wire.c: the messages that open a hybrid connection's TCP leg (hybrid_wire.h). */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include <thrift/c_glib/transport/thrift_transport.h>

#include "hybrid_wire.h"

static void
put_head (guint8 *out)
{
  out[0] = (HYBRID_WIRE_MAGIC >> 24) & 0xff;
  out[1] = (HYBRID_WIRE_MAGIC >> 16) & 0xff;
  out[2] = (HYBRID_WIRE_MAGIC >> 8) & 0xff;
  out[3] = HYBRID_WIRE_MAGIC & 0xff;
  out[4] = HYBRID_WIRE_VERSION;
}

HybridPeer
hybrid_wire_first_byte (guint8 first)
{
  /* TBinaryProtocol's strict version word begins 0x80, TCompactProtocol's protocol id is
   * 0x82: both are the first byte of a message written without a frame.  A frame's length
   * is positive, so its first byte is below 0x80 */
  if (first == ((HYBRID_WIRE_MAGIC >> 24) & 0xff))
    return HYBRID_PEER_HYBRID;
  if (first == 0x80 || first == 0x82)
    return HYBRID_PEER_BUFFERED;
  return HYBRID_PEER_FRAMED;
}

void
hybrid_wire_hello (guint8 out[HYBRID_HELLO_LEN], guint8 flags)
{
  memset (out, 0, HYBRID_HELLO_LEN);
  put_head (out);
  out[5] = flags;
}

void
hybrid_wire_welcome (guint8 out[HYBRID_WELCOME_LEN], HybridStatus status, guint8 flags,
                     const guint8 token[HYBRID_TOKEN_LEN])
{
  memset (out, 0, HYBRID_WELCOME_LEN);
  put_head (out);
  out[5] = (guint8) status;
  out[6] = flags;
  if (token != NULL)
    memcpy (out + 8, token, HYBRID_TOKEN_LEN);
}

void
hybrid_wire_commit (guint8 out[HYBRID_COMMIT_LEN], HybridCommit commit)
{
  memset (out, 0, HYBRID_COMMIT_LEN);
  put_head (out);
  out[5] = (guint8) commit;
}

/* Magic, length and version of a message called @what. */
static gboolean
check_head (const guint8 *data, gsize len, gsize want, const gchar *what, HybridMessage *out,
            GError **error)
{
  guint32 magic;

  memset (out, 0, sizeof *out);
  if (data == NULL || len < want)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                 "hybrid handshake: %s too short (%" G_GSIZE_FORMAT " bytes of %" G_GSIZE_FORMAT
                 ")",
                 what, data != NULL ? len : 0, want);
    return FALSE;
  }
  magic = ((guint32) data[0] << 24) | ((guint32) data[1] << 16) | ((guint32) data[2] << 8)
          | data[3];
  if (magic != HYBRID_WIRE_MAGIC)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                 "hybrid handshake: expected a %s, got bytes %02x %02x %02x %02x (a peer that "
                 "is not a hybrid:// transport?)",
                 what, data[0], data[1], data[2], data[3]);
    return FALSE;
  }
  out->version = data[4];
  if (out->version != HYBRID_WIRE_VERSION)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                 "hybrid handshake: the peer speaks version %u, this side %u", out->version,
                 HYBRID_WIRE_VERSION);
    return FALSE;
  }
  return TRUE;
}

gboolean
hybrid_wire_parse_hello (const guint8 *data, gsize len, HybridMessage *out, GError **error)
{
  if (!check_head (data, len, HYBRID_HELLO_LEN, "hello", out, error))
    return FALSE;
  out->flags = data[5];
  if (out->flags & ~HYBRID_WANT_RDMA)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                 "hybrid handshake: unknown hello flags 0x%02x", out->flags);
    return FALSE;
  }
  return TRUE;
}

gboolean
hybrid_wire_parse_welcome (const guint8 *data, gsize len, HybridMessage *out, GError **error)
{
  if (!check_head (data, len, HYBRID_WELCOME_LEN, "welcome", out, error))
    return FALSE;
  out->status = data[5];
  out->flags = data[6];
  memcpy (out->token, data + 8, HYBRID_TOKEN_LEN);
  if (out->status > HYBRID_STATUS_BUSY)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                 "hybrid handshake: unknown welcome status %u", out->status);
    return FALSE;
  }
  return TRUE;
}

gboolean
hybrid_wire_parse_commit (const guint8 *data, gsize len, HybridMessage *out, GError **error)
{
  if (!check_head (data, len, HYBRID_COMMIT_LEN, "commit", out, error))
    return FALSE;
  out->commit = data[5];
  if (out->commit != HYBRID_COMMIT_RDMA && out->commit != HYBRID_COMMIT_TCP_ONLY)
  {
    g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_RECEIVE,
                 "hybrid handshake: unknown commit %u", out->commit);
    return FALSE;
  }
  return TRUE;
}

gboolean
hybrid_wire_new_token (guint8 token[HYBRID_TOKEN_LEN], GError **error)
{
  gsize got = 0;

  /* the token is all that keeps another client from taking this one's place: the kernel's
   * random source, not GLib's PRNG */
  while (got < HYBRID_TOKEN_LEN)
  {
    ssize_t n = getrandom (token + got, HYBRID_TOKEN_LEN - got, 0);

    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
    {
      int err = errno;
      g_set_error (error, THRIFT_TRANSPORT_ERROR, THRIFT_TRANSPORT_ERROR_UNKNOWN,
                   "hybrid: no random bytes for a pair token: %s", g_strerror (err));
      return FALSE;
    }
    got += (gsize) n;
  }
  return TRUE;
}

const gchar *
hybrid_wire_status_text (guint8 status)
{
  switch (status)
  {
  case HYBRID_STATUS_OK:
    return "ok";
  case HYBRID_STATUS_VERSION:
    return "the server does not speak this version of the hybrid handshake";
  case HYBRID_STATUS_BUSY:
    return "the server has too many connections being set up (its backlog)";
  default:
    return "unknown status";
  }
}
