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
 * test_fork: a process with open RDMA connections that forks keeps working, and its children
 * do not reach its registered memory (issue 24 item 4).
 *
 * What rdma-core and the kernel guarantee: since Linux 5.12 a page pinned for DMA
 * (FOLL_PIN, as verbs registration pins) is copied for the child at fork instead of being
 * shared copy-on-write, so the parent keeps the very pages the NIC reads and writes, and
 * whatever the child writes goes to its own copy; rdma-core then reports
 * ibv_is_fork_initialized () == IBV_FORK_UNNEEDED and ibv_fork_init () is not needed.  On an
 * older kernel (IBV_FORK_DISABLED) the first write after a fork moves the parent's page and
 * DMA goes to the old one; ThriftRdma warns once there (rdma_device.c).  The child inherits
 * no usable verbs context either way: it must not use the parent's connections.
 *
 * In the guest (soft-RoCE): echoes of 64 B and 1 MiB (a bulk lend: registered memory read
 * by the peer) on two connections while another thread runs system ("true") and forks
 * children that write over every byte of the heap they can see; a server that forks a
 * worker after listening, and then serves.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib-object.h>
#include <infiniband/verbs.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol_factory.h>
#include <thrift/c_glib/server/thrift_threaded_server.h>
#include <thrift/c_glib/transport/thrift_transport_factory.h>

#include "gate.h"
#include "gate_client.h"
#include "gate_handler.h"
#include "rdma_test_util.h"
#include "serve_thread.h"

typedef struct
{
  ThriftServer *server;
  ThriftServerRdma *transport;
  ServeThread serve;
} Fixture;

static void
fixture_make (Fixture *f)
{
  GObject *handler, *processor, *tf, *pf;

  memset (f, 0, sizeof *f);
  serve_thread_init (&f->serve);
  f->transport = g_object_new (THRIFT_TYPE_SERVER_RDMA, "hostname", rt_server_addr (), "port", 0,
                               NULL);
  handler = g_object_new (test_gate_get_type (), NULL);
  processor = g_object_new (TYPE_GATE_PROCESSOR, "handler", handler, NULL);
  tf = g_object_new (THRIFT_TYPE_TRANSPORT_FACTORY, NULL);
  pf = g_object_new (THRIFT_TYPE_BINARY_PROTOCOL_FACTORY, NULL);
  f->server = g_object_new (THRIFT_TYPE_THREADED_SERVER, "processor", processor, "server_transport",
                            f->transport, "input_transport_factory", tf, "output_transport_factory",
                            tf, "input_protocol_factory", pf, "output_protocol_factory", pf, NULL);
  g_object_unref (handler);
  g_object_unref (processor);
  g_object_unref (tf);
  g_object_unref (pf);
}

/* Serves and returns the port once the server listens (5 s at most). */
static guint
fixture_start (Fixture *f)
{
  gint64 until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  gboolean listening = FALSE;

  serve_thread_start (&f->serve, f->server);
  while (!listening && g_get_monotonic_time () < until)
  {
    g_object_get (f->server, "listening", &listening, NULL);
    if (!listening)
      g_usleep (5000);
  }
  g_assert_true (listening);
  return thrift_server_rdma_get_port (f->transport);
}

static void
fixture_stop (Fixture *f)
{
  thrift_server_stop (f->server);
  g_assert_true (serve_thread_join (&f->serve, 10 * G_USEC_PER_SEC));
  g_clear_object (&f->server);
  g_clear_object (&f->transport);
  serve_thread_clear (&f->serve);
}

/* A child that writes over the heap it inherited (the parent's registered buffers among it,
 * if the kernel shared them) and exits 0. */
static void
scribble_and_exit (guint8 *block, gsize len)
{
  memset (block, 0xa5, len);
  _exit (0);
}

typedef struct
{
  gint stop; /* atomic */
  guint forks;
  guint failures; /* a child that did not exit 0 */
  guint8 *block;  /* heap the children write over */
  gsize len;
} Forker;

/* Forks until told to stop: system ("true") and scribbling children, in turn. */
static gpointer
forker_main (gpointer data)
{
  Forker *k = data;

  while (!g_atomic_int_get (&k->stop))
  {
    int status = -1;

    if (k->forks % 2 == 0)
    {
      status = system ("true");
    }
    else
    {
      pid_t pid = fork ();

      if (pid == 0)
        scribble_and_exit (k->block, k->len);
      if (pid > 0)
        waitpid (pid, &status, 0);
    }
    k->forks++;
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
      k->failures++;
    g_usleep (2000);
  }
  return NULL;
}

/* Echo calls of 64 B and 1 MiB on @c, checked byte for byte; FALSE at the first wrong one. */
static gboolean
echoes (GateTestClient *c, guint calls, guint seed)
{
  for (guint i = 0; i < calls; i++)
  {
    gsize len = i % 4 == 3 ? 1 << 20 : 64;
    g_autoptr (GByteArray) in = g_byte_array_sized_new (len);
    GByteArray *out = NULL;
    GError *error = NULL;
    gboolean same;

    g_byte_array_set_size (in, len);
    for (gsize b = 0; b < len; b++)
      in->data[b] = (guint8) (b * 13 + i + seed);
    if (!gate_if_echo (c->client, &out, in, &error))
    {
      g_printerr ("# call %u: %s\n", i, error != NULL ? error->message : "failed");
      g_clear_error (&error);
      return FALSE;
    }
    same = out->len == in->len && memcmp (out->data, in->data, len) == 0;
    g_byte_array_unref (out);
    if (!same)
    {
      g_printerr ("# call %u: the echo differs\n", i);
      return FALSE;
    }
  }
  return TRUE;
}

/* Two connections' calls, small and large, while the process forks all along. */
static void
test_fork_under_calls (void)
{
  Fixture f;
  GateTestClient c[2];
  Forker k = { .len = 8 << 20 };
  GThread *forker;
  GError *error = NULL;
  guint port;

  g_test_message ("ibv_is_fork_initialized: %d (%s)", ibv_is_fork_initialized (),
                  ibv_is_fork_initialized () == IBV_FORK_UNNEEDED
                      ? "the kernel copies pinned pages at fork"
                      : "fork is not safe here");
  fixture_make (&f);
  port = fixture_start (&f);
  for (guint i = 0; i < 2; i++)
  {
    gate_test_client_init (&c[i], rt_client_new (port, THRIFT_RDMA_POLLING_EVENT));
    g_assert_true (thrift_transport_open (c[i].transport, &error));
    g_assert_no_error (error);
  }
  g_assert_true (echoes (&c[0], 8, 1)); /* the buffers registered before the forks */

  k.block = g_malloc0 (k.len);
  forker = g_thread_new ("forker", forker_main, &k);
  for (guint round = 0; round < 10; round++)
  {
    g_assert_true (echoes (&c[round % 2], 20, round));
  }
  g_atomic_int_set (&k.stop, 1);
  g_thread_join (forker);
  g_test_message ("%u forks during the calls", k.forks);
  g_assert_cmpuint (k.forks, >=, 10);
  g_assert_cmpuint (k.failures, ==, 0);
  /* after the children are gone too */
  g_assert_true (echoes (&c[0], 8, 99) && echoes (&c[1], 8, 98));

  g_free (k.block);
  for (guint i = 0; i < 2; i++)
    gate_test_client_clear (&c[i]);
  fixture_stop (&f);
}

/* A server that forks a worker after it listens (as pre-fork servers do): the child writes
 * over its heap and exits; the parent then serves. */
static void
test_fork_after_listen (void)
{
  Fixture f;
  GateTestClient c;
  GError *error = NULL;
  guint port;
  pid_t pid;
  int status = -1;
  guint8 *block = g_malloc0 (4 << 20);

  fixture_make (&f);
  port = fixture_start (&f);
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    scribble_and_exit (block, 4 << 20);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);

  gate_test_client_init (&c, rt_client_new (port, THRIFT_RDMA_POLLING_EVENT));
  g_assert_true (thrift_transport_open (c.transport, &error));
  g_assert_no_error (error);
  g_assert_true (echoes (&c, 40, 7));
  gate_test_client_clear (&c);
  g_free (block);
  fixture_stop (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  alarm (120); /* a hang fails the run */
  g_test_add_func ("/fork/under-calls", test_fork_under_calls);
  g_test_add_func ("/fork/after-listen", test_fork_after_listen);
  return g_test_run ();
}
