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

/* fuzz_thrift.c: the peer's bytes on a socket, and a server reading requests (fuzz_thrift.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thrift/c_glib/thrift.h>
#include <thrift/c_glib/transport/thrift_buffered_transport.h>
#include <thrift/c_glib/transport/thrift_framed_transport.h>
#include <thrift/c_glib/transport/thrift_server_socket.h>

#include "test/fuzz/fuzz_common.h"
#include "test/fuzz/fuzz_thrift.h"

/* More than any harness's -max_len, less than a socket pair's buffer. */
#define PEER_MAX (64u << 10)

/* A request can hold no more messages than it has bytes; a bound all the same. */
#define MAX_REQUESTS 4096

/* The stack requests are read on: a server's worker may have less than a main thread's
 * 8 MiB, and an input of PEER_MAX bytes that nests containers a level every 3 to 5 bytes
 * must run out of it where the depth is not bounded (regress/checked_binary). */
#define READER_STACK (512u << 10)

static struct
{
  GType type;
  void (*finalize) (GObject *object);
} unchained[4];

/* The stock class nearest @object's finalize, then GObject's: the classes in between
 * (ThriftTransport, ThriftServerTransport) have none of their own. */
static void
chained_finalize (GObject *object)
{
  for (GType t = G_OBJECT_TYPE (object); t != 0; t = g_type_parent (t))
    for (guint i = 0; i < G_N_ELEMENTS (unchained); i++)
      if (unchained[i].type == t)
      {
        unchained[i].finalize (object);
        G_OBJECT_CLASS (g_type_class_peek (G_TYPE_OBJECT))->finalize (object);
        return;
      }
  FUZZ_FAIL ("no finalize for a %s", G_OBJECT_TYPE_NAME (object));
}

void
fuzz_thrift_init (void)
{
  GType types[] = { THRIFT_TYPE_SOCKET, THRIFT_TYPE_SERVER_SOCKET, THRIFT_TYPE_FRAMED_TRANSPORT,
                    THRIFT_TYPE_BUFFERED_TRANSPORT };

  G_STATIC_ASSERT (G_N_ELEMENTS (types) == G_N_ELEMENTS (unchained));
  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
  {
    GObjectClass *cls = g_type_class_ref (types[i]);

    unchained[i].type = types[i];
    unchained[i].finalize = cls->finalize;
    cls->finalize = chained_finalize;
  }
}

ThriftSocket *
fuzz_peer_socket (const guint8 *data, gsize size)
{
  ThriftSocket *socket;
  gsize done = 0;
  int sv[2];

  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    FUZZ_FAIL ("socketpair: %s", g_strerror (errno));
  /* what does not fit the socket's buffer is cut off, as a peer that stopped there */
  fcntl (sv[0], F_SETFL, O_NONBLOCK);
  size = MIN (size, PEER_MAX);
  while (done < size)
  {
    ssize_t n = write (sv[0], data + done, size - done);

    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    done += (gsize) n;
  }
  close (sv[0]);
  socket = g_object_new (THRIFT_TYPE_SOCKET, NULL);
  socket->sd = sv[1];
  return socket;
}

/* The arguments' struct: strings and binaries read as generated code reads them (by field
 * id, each way), everything else skipped as it skips an unknown field. */
static gint32
read_args (ThriftProtocol *protocol, GError **error)
{
  gchar *name = NULL;
  gint32 ret;

  if ((ret = thrift_protocol_read_struct_begin (protocol, &name, error)) < 0)
    return -1;
  g_free (name);
  for (;;)
  {
    ThriftType type;
    gint16 id;

    if ((ret = thrift_protocol_read_field_begin (protocol, &name, &type, &id, error)) < 0)
      return -1;
    if (type == T_STOP)
      break;
    if (type == T_STRING && (id & 1))
    {
      gchar *s = NULL;

      ret = thrift_protocol_read_string (protocol, &s, error);
      g_free (s);
    }
    else if (type == T_STRING)
    {
      gpointer b = NULL;
      guint32 len = 0;

      ret = thrift_protocol_read_binary (protocol, &b, &len, error);
      g_free (b);
    }
    else
    {
      ret = thrift_protocol_skip (protocol, type, error);
    }
    if (ret < 0 || thrift_protocol_read_field_end (protocol, error) < 0)
      return -1;
  }
  return thrift_protocol_read_struct_end (protocol, error);
}

static gpointer
read_requests (gpointer data)
{
  ThriftProtocol *protocol = data;
  ThriftTransport *transport = protocol->transport;

  for (guint i = 0; i < MAX_REQUESTS; i++)
  {
    gchar *name = NULL;
    ThriftMessageType type;
    gint32 seqid, ret;
    GError *error = NULL;
    gboolean ok;

    ret = thrift_protocol_read_message_begin (protocol, &name, &type, &seqid, &error);
    fuzz_check_outcome ("thrift_protocol_read_message_begin", ret >= 0, &error);
    if (ret < 0)
    {
      /* ThriftDispatchProcessor keeps no name from a header it could not read */
      if (name != NULL)
        FUZZ_FAIL ("a message header that failed left a name allocated (\"%s\")", name);
      return NULL;
    }
    /* ... and looks the name up in its table of functions */
    if (name == NULL)
      FUZZ_FAIL ("a message header was read without a name");
    g_free (name);

    ret = read_args (protocol, &error);
    fuzz_check_outcome ("reading a request's arguments", ret >= 0, &error);
    if (ret < 0)
      return NULL;
    ret = thrift_protocol_read_message_end (protocol, &error);
    fuzz_check_outcome ("thrift_protocol_read_message_end", ret >= 0, &error);
    if (ret < 0)
      return NULL;
    ok = thrift_transport_read_end (transport, &error);
    fuzz_check_outcome ("thrift_transport_read_end", ok, &error);
    if (!ok)
      return NULL;
  }
  return NULL;
}

void
fuzz_read_requests (ThriftProtocol *protocol)
{
  pthread_attr_t attr;
  pthread_t thread;

  if (pthread_attr_init (&attr) != 0 || pthread_attr_setstacksize (&attr, READER_STACK) != 0
      || pthread_create (&thread, &attr, read_requests, protocol) != 0)
    FUZZ_FAIL ("no thread to read requests on");
  pthread_join (thread, NULL);
  pthread_attr_destroy (&attr);
}
