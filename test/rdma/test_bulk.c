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
 * test_bulk.c: large binary fields lent and pulled (rdma_bulk.h) through ThriftRdma, in the
 * soft-RoCE guest.  Echoes from 16 KiB to 64 MiB arrive byte-exact with no CPU copy of the
 * field on either side (the copy counters hold the few inline bytes only) and every byte of
 * the field moved by READ; the unpipelined transfer does the same; a buffer unmapped and
 * mapped again at the same address between two calls sends its new bytes (the registration
 * cache is not stale); a field under the threshold is copied as before.
 */
#include "config.h"

#include <string.h>
#include <sys/mman.h>

#include <thrift/c_glib/protocol/thrift_binary_protocol.h>

#include "test/rdma/rdma_test_util.h"

#define THRESHOLD (16u << 10)
/* inline bytes of an echo besides the field: the binary's length, the envelope byte */
#define INLINE_MAX 64u

static RtEchoServer *server;

static ThriftTransport *
bulk_client (guint depth)
{
  ThriftTransport *t = rt_client_new (rt_echo_server_port (server), THRIFT_RDMA_POLLING_BUSY);
  GError *error = NULL;

  g_object_set (t, "bulk-threshold", THRESHOLD, "bulk-depth", depth, NULL);
  g_assert_true (thrift_transport_open (t, &error));
  g_assert_no_error (error);
  return t;
}

static void
bulk_server (guint depth)
{
  g_object_set (rt_echo_server_transport (server), "bulk-threshold", THRESHOLD, "bulk-depth", depth,
                NULL);
}

/* Closes @t and returns the counters of both sides for the connection. */
static void
finish (ThriftTransport *t, ThriftRdmaStats *client, ThriftRdmaStats *srv)
{
  thrift_rdma_get_stats (THRIFT_RDMA (t), client);
  thrift_transport_close (t, NULL);
  g_object_unref (t);
  rt_echo_server_settle (server);
  rt_echo_server_last_stats (server, srv);
  g_assert_cmpuint (rt_echo_server_failed (server), ==, 0);
}

static void
check_lent (const ThriftRdmaStats *s, const gchar *side, guint64 bytes, guint calls)
{
  g_test_message ("%s: copied %" G_GUINT64_FORMAT ", pulled %" G_GUINT64_FORMAT
                  ", lent %" G_GUINT64_FORMAT ", binds %" G_GUINT64_FORMAT
                  ", READs %" G_GUINT64_FORMAT ", cache hits %" G_GUINT64_FORMAT
                  " misses %" G_GUINT64_FORMAT,
                  side, s->bytes_copied, s->bulk_received, s->bulk_sent, s->window_binds, s->reads,
                  s->rcache_hits, s->rcache_misses);
  /* the field never went through the CPU: only the few inline bytes were copied */
  g_assert_cmpuint (s->bytes_copied, <=, (guint64) calls * 2 * INLINE_MAX);
  g_assert_cmpuint (s->bulk_received, ==, bytes);
  g_assert_cmpuint (s->bulk_sent, ==, bytes);
  /* one window per field lent, invalidated when it came back (the protocols' own windows, a
   * ring's or a rendezvous buffer's, are never invalidated, only freed) */
  g_assert_cmpuint (s->window_invalidations, ==, calls);
  g_assert_cmpuint (s->window_binds, >=, calls);
  g_assert_cmpuint (s->reads, >=, calls);
}

static void
test_sizes (gconstpointer data)
{
  guint depth = GPOINTER_TO_UINT (data);
  static const gsize sizes[] = { 16u << 10, 64u << 10, 1u << 20, 16u << 20, 64u << 20 };
  guint64 total = 0;
  ThriftRdmaStats c, s;
  ThriftTransport *t;

  bulk_server (depth);
  t = bulk_client (depth);
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
  {
    GError *error = NULL;
    if (depth == 1 && sizes[i] > (16u << 20))
      break; /* one READ at a time: the largest adds minutes in the emulator, nothing new */
    g_assert_true (rt_echo (t, sizes[i], i + 1, &error));
    g_assert_no_error (error);
    total += sizes[i];
  }
  finish (t, &c, &s);
  check_lent (&c, "client", total, G_N_ELEMENTS (sizes) - (depth == 1));
  check_lent (&s, "server", total, G_N_ELEMENTS (sizes) - (depth == 1));
  /* pipelined: a 64 MiB field took many READs of the chunk size */
  if (depth > 1)
    g_assert_cmpuint (c.reads, >=, (64u << 20) / (256u << 10));
}

/* The same address, new memory: the second call must send the new bytes. */
static void
test_not_stale (void)
{
  const gsize len = 2u << 20;
  ThriftRdmaStats c, s;
  ThriftTransport *t;
  guint8 *a, *b;

  bulk_server (4);
  t = bulk_client (4);
  a = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  g_assert_true (a != MAP_FAILED);
  for (gsize i = 0; i < len; i++)
    a[i] = rt_pattern (1, i);
  rt_echo_buffer (t, a, len);
  rt_echo_buffer (t, a, len); /* the same buffer again: served by the cache */
  munmap (a, len);
  b = mmap (a, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1,
            0);
  if (b == MAP_FAILED || b != a)
  {
    g_test_skip ("the address could not be mapped again");
    if (b != MAP_FAILED)
      munmap (b, len);
    finish (t, &c, &s);
    return;
  }
  for (gsize i = 0; i < len; i++)
    b[i] = rt_pattern (2, i);
  rt_echo_buffer (t, b, len);
  munmap (b, len);
  finish (t, &c, &s);
  g_test_message ("client cache: hits %" G_GUINT64_FORMAT " misses %" G_GUINT64_FORMAT
                  " invalidations %" G_GUINT64_FORMAT,
                  c.rcache_hits, c.rcache_misses, c.rcache_invalidations);
  g_assert_cmpuint (c.rcache_hits, >=, 1);
  g_assert_cmpuint (c.rcache_invalidations, >=, 1);
  g_assert_cmpuint (c.bulk_sent, ==, 3 * len);
}

/* Under the threshold a field is copied, as without bulk transfer. */
static void
test_small_copied (void)
{
  ThriftRdmaStats c, s;
  ThriftTransport *t;
  GError *error = NULL;

  bulk_server (4);
  t = bulk_client (4);
  g_assert_true (rt_echo (t, THRESHOLD - 1, 9, &error));
  g_assert_no_error (error);
  finish (t, &c, &s);
  g_assert_cmpuint (c.bulk_sent + c.bulk_received + c.window_invalidations, ==, 0);
  g_assert_cmpuint (c.bytes_copied, >=, 2 * (THRESHOLD - 1));
}

int
main (int argc, char **argv)
{
  gint baseline, rc;

  g_test_init (&argc, &argv, NULL);
  baseline = rt_live_resources ();
  server = rt_echo_server_start (THRIFT_RDMA_POLLING_BUSY, 100u << 20, 0);
  g_test_add_data_func ("/bulk/echo/pipelined", GUINT_TO_POINTER (4), test_sizes);
  g_test_add_data_func ("/bulk/echo/unpipelined", GUINT_TO_POINTER (1), test_sizes);
  g_test_add_func ("/bulk/cache/not-stale", test_not_stale);
  g_test_add_func ("/bulk/small-copied", test_small_copied);
  rc = g_test_run ();
  rt_echo_server_stop (server);
  g_assert_true (rt_resources_at_baseline (baseline));
  return rc;
}
