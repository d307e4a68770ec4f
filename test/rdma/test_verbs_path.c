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
 * The RDMA path, end to end with raw verbs: librdmacm connects a client endpoint (rxe1 side)
 * to a server endpoint (rxe0 side), the two exchange buffer addresses and keys in the
 * connection's private data, then SEND/RECV, RDMA WRITE_WITH_IMM, RDMA WRITE and RDMA READ
 * move patterned data whose every byte, length and immediate is checked.
 *
 * Both endpoints live in this one thread: every verbs and CM call is asynchronous, so one
 * event channel serves both ids and each side's CQ is polled in turn.
 *
 * Addresses come from THRIFT_RDMA_TEST_SERVER_ADDR / THRIFT_RDMA_TEST_CLIENT_ADDR, by
 * default the soft-RoCE guest's veth pair (10.77.0.1 on rxe0, 10.77.0.2 on rxe1).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <string.h>

#include <glib.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <thrift/c_glib/transport/thrift_rdma_version.h>

#define BUF_SIZE (256 * 1024)
#define CQ_DEPTH 64
#define WAIT_MS 20000

/* Sent in the CM private data by both sides: where the peer may read and write. */
struct ep_info
{
  guint32 version;
  guint32 rkey;
  guint64 addr;
  guint32 len;
} __attribute__ ((packed));

typedef struct
{
  const char *name;
  struct rdma_cm_id *id;
  struct ibv_pd *pd;
  struct ibv_cq *cq;
  struct ibv_mr *mr;
  guint8 *buf;
  struct ep_info peer;
} Endpoint;

static struct rdma_event_channel *channel;
static struct rdma_cm_id *listener;
static Endpoint server = { .name = "server" };
static Endpoint client = { .name = "client" };
static gboolean connected;

static const char *
env_or (const char *name, const char *fallback)
{
  const char *v = g_getenv (name);
  return v && *v ? v : fallback;
}

static void
make_addr (struct sockaddr_in *sin, const char *ip, guint16 port)
{
  memset (sin, 0, sizeof *sin);
  sin->sin_family = AF_INET;
  sin->sin_port = htons (port);
  g_assert_cmpint (inet_pton (AF_INET, ip, &sin->sin_addr), ==, 1);
}

/* Patterns differ per use and per offset, so a byte landing in the wrong place is caught. */
static guint8
pattern (guint seed, gsize i)
{
  return (guint8) ((i * 131u + seed * 17u + (i >> 8)) & 0xff);
}

static void
fill (guint8 *p, gsize n, guint seed)
{
  for (gsize i = 0; i < n; i++)
    p[i] = pattern (seed, i);
}

static void
assert_pattern (const guint8 *p, gsize n, guint seed)
{
  for (gsize i = 0; i < n; i++)
    if (p[i] != pattern (seed, i))
      g_error ("byte %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " is 0x%02x, expected 0x%02x", i, n,
               p[i], pattern (seed, i));
}

static struct rdma_cm_event *
expect_event (enum rdma_cm_event_type type)
{
  struct pollfd pfd = { .fd = channel->fd, .events = POLLIN };
  struct rdma_cm_event *ev = NULL;

  int r = poll (&pfd, 1, WAIT_MS);
  if (r == 0)
    g_error ("timed out waiting for CM event %s", rdma_event_str (type));
  g_assert_cmpint (r, ==, 1);
  g_assert_cmpint (rdma_get_cm_event (channel, &ev), ==, 0);
  g_test_message ("CM event %s on id %p", rdma_event_str (ev->event), (void *) ev->id);
  if (ev->event != type)
    g_error ("expected CM event %s, got %s (status %d)", rdma_event_str (type),
             rdma_event_str (ev->event), ev->status);
  return ev;
}

static void
setup_endpoint (Endpoint *ep, struct rdma_cm_id *id)
{
  struct ibv_qp_init_attr attr = { 0 };

  ep->id = id;
  ep->pd = ibv_alloc_pd (id->verbs);
  g_assert_nonnull (ep->pd);
  ep->cq = ibv_create_cq (id->verbs, CQ_DEPTH, NULL, NULL, 0);
  g_assert_nonnull (ep->cq);
  attr.send_cq = ep->cq;
  attr.recv_cq = ep->cq;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = 16;
  attr.cap.max_recv_wr = 16;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  attr.sq_sig_all = 1;
  g_assert_cmpint (rdma_create_qp (id, ep->pd, &attr), ==, 0);
  ep->buf = g_malloc0 (BUF_SIZE);
  ep->mr = ibv_reg_mr (ep->pd, ep->buf, BUF_SIZE,
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  g_assert_nonnull (ep->mr);
}

static struct ep_info
describe (const Endpoint *ep)
{
  struct ep_info info = {
    .version = THRIFT_RDMA_WIRE_VERSION,
    .rkey = ep->mr->rkey,
    .addr = (guint64) (uintptr_t) ep->buf,
    .len = BUF_SIZE,
  };
  return info;
}

static void
teardown_endpoint (Endpoint *ep)
{
  if (ep->id && ep->id->qp)
    rdma_destroy_qp (ep->id);
  if (ep->mr)
    g_assert_cmpint (ibv_dereg_mr (ep->mr), ==, 0);
  if (ep->cq)
    g_assert_cmpint (ibv_destroy_cq (ep->cq), ==, 0);
  if (ep->pd)
    g_assert_cmpint (ibv_dealloc_pd (ep->pd), ==, 0);
  if (ep->id)
    g_assert_cmpint (rdma_destroy_id (ep->id), ==, 0);
  g_free (ep->buf);
  ep->id = NULL;
  ep->mr = NULL;
  ep->cq = NULL;
  ep->pd = NULL;
  ep->buf = NULL;
}

static void
post_recv (Endpoint *ep, gsize offset, gsize len, guint64 wr_id)
{
  struct ibv_sge sge = { .addr = (uintptr_t) (ep->buf + offset),
                         .length = len,
                         .lkey = ep->mr->lkey };
  struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = len ? 1 : 0 }, *bad;
  g_assert_cmpint (ibv_post_recv (ep->id->qp, &wr, &bad), ==, 0);
}

static void
post_send (Endpoint *ep, enum ibv_wr_opcode op, gsize offset, gsize len, guint64 remote_offset,
           guint32 imm, guint64 wr_id)
{
  struct ibv_sge sge = { .addr = (uintptr_t) (ep->buf + offset),
                         .length = len,
                         .lkey = ep->mr->lkey };
  struct ibv_send_wr wr = {
    .wr_id = wr_id, .sg_list = &sge, .num_sge = len ? 1 : 0, .opcode = op,
  }, *bad;

  if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM || op == IBV_WR_RDMA_READ)
  {
    g_assert_cmpuint (remote_offset + len, <=, ep->peer.len);
    wr.wr.rdma.remote_addr = ep->peer.addr + remote_offset;
    wr.wr.rdma.rkey = ep->peer.rkey;
  }
  if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
    wr.imm_data = htonl (imm);
  g_assert_cmpint (ibv_post_send (ep->id->qp, &wr, &bad), ==, 0);
}

/* Polls @ep's CQ until one completion arrives; checks status, opcode and wr_id. */
static struct ibv_wc
wait_wc (Endpoint *ep, enum ibv_wc_opcode opcode, guint64 wr_id)
{
  struct ibv_wc wc;
  gint64 deadline = g_get_monotonic_time () + WAIT_MS * 1000;
  int n;

  while ((n = ibv_poll_cq (ep->cq, 1, &wc)) == 0)
  {
    if (g_get_monotonic_time () > deadline)
      g_error ("%s: no completion for wr_id %" G_GUINT64_FORMAT " within %d ms", ep->name, wr_id,
               WAIT_MS);
    g_usleep (50);
  }
  g_assert_cmpint (n, ==, 1);
  if (wc.status != IBV_WC_SUCCESS)
    g_error ("%s: completion %" G_GUINT64_FORMAT " failed: %s", ep->name, (guint64) wc.wr_id,
             ibv_wc_status_str (wc.status));
  g_assert_cmpint (wc.opcode, ==, opcode);
  g_assert_cmpuint (wc.wr_id, ==, wr_id);
  return wc;
}

static void
test_connect (void)
{
  GError *error = NULL;
  struct sockaddr_in srv, cli;
  struct rdma_cm_event *ev;
  struct rdma_conn_param param = { 0 };
  struct ep_info info;
  const char *srv_ip = env_or ("THRIFT_RDMA_TEST_SERVER_ADDR", "10.77.0.1");
  const char *cli_ip = env_or ("THRIFT_RDMA_TEST_CLIENT_ADDR", "10.77.0.2");

  if (!thrift_rdma_device_available (&error))
    g_error ("%s", error->message);

  channel = rdma_create_event_channel ();
  g_assert_nonnull (channel);

  g_assert_cmpint (rdma_create_id (channel, &listener, NULL, RDMA_PS_TCP), ==, 0);
  make_addr (&srv, srv_ip, 0);
  g_assert_cmpint (rdma_bind_addr (listener, (struct sockaddr *) &srv), ==, 0);
  g_assert_cmpint (rdma_listen (listener, 4), ==, 0);
  srv.sin_port = rdma_get_src_port (listener);
  g_assert_cmpuint (ntohs (srv.sin_port), >, 0);

  /* client: resolve address and route from the client address to the server */
  struct rdma_cm_id *cid;
  g_assert_cmpint (rdma_create_id (channel, &cid, NULL, RDMA_PS_TCP), ==, 0);
  make_addr (&cli, cli_ip, 0);
  g_assert_cmpint (
      rdma_resolve_addr (cid, (struct sockaddr *) &cli, (struct sockaddr *) &srv, WAIT_MS), ==, 0);
  rdma_ack_cm_event (expect_event (RDMA_CM_EVENT_ADDR_RESOLVED));
  g_assert_cmpint (rdma_resolve_route (cid, WAIT_MS), ==, 0);
  rdma_ack_cm_event (expect_event (RDMA_CM_EVENT_ROUTE_RESOLVED));

  setup_endpoint (&client, cid);
  g_assert_cmpstr (ibv_get_device_name (cid->verbs->device), !=, NULL);
  post_recv (&client, 0, 4096, 1);
  info = describe (&client);
  param.private_data = &info;
  param.private_data_len = sizeof info;
  param.responder_resources = 1;
  param.initiator_depth = 1;
  param.retry_count = 7;
  g_assert_cmpint (rdma_connect (cid, &param), ==, 0);

  /* server: accept, reading the client's buffer description from the request */
  ev = expect_event (RDMA_CM_EVENT_CONNECT_REQUEST);
  g_assert_cmpuint (ev->param.conn.private_data_len, >=, sizeof (struct ep_info));
  memcpy (&server.peer, ev->param.conn.private_data, sizeof server.peer);
  struct rdma_cm_id *sid = ev->id;
  rdma_ack_cm_event (ev);
  g_assert_cmpuint (server.peer.version, ==, THRIFT_RDMA_WIRE_VERSION);
  g_assert_cmpuint (server.peer.addr, ==, info.addr);
  g_assert_cmpuint (server.peer.rkey, ==, info.rkey);
  setup_endpoint (&server, sid);
  info = describe (&server);
  param.private_data = &info;
  g_assert_cmpint (rdma_accept (sid, &param), ==, 0);

  /* both sides see ESTABLISHED; the client's carries the server's private data */
  for (int established = 0; established < 2; established++)
  {
    ev = expect_event (RDMA_CM_EVENT_ESTABLISHED);
    if (ev->id == cid)
    {
      g_assert_cmpuint (ev->param.conn.private_data_len, >=, sizeof (struct ep_info));
      memcpy (&client.peer, ev->param.conn.private_data, sizeof client.peer);
    }
    else
    {
      g_assert_true (ev->id == sid);
    }
    rdma_ack_cm_event (ev);
  }
  g_assert_cmpuint (client.peer.version, ==, THRIFT_RDMA_WIRE_VERSION);
  g_assert_cmpuint (client.peer.addr, ==, info.addr);
  g_assert_cmpuint (client.peer.rkey, ==, info.rkey);
  g_assert_cmpuint (client.peer.len, ==, BUF_SIZE);

  /* The two ends must sit on different devices: rxe1 -> rxe0 in the guest. */
  if (!g_getenv ("THRIFT_RDMA_TEST_SERVER_ADDR"))
    g_assert_cmpstr (ibv_get_device_name (cid->verbs->device), !=,
                     ibv_get_device_name (sid->verbs->device));
  g_test_message ("connected %s (%s) -> %s (%s)", cli_ip, ibv_get_device_name (cid->verbs->device),
                  srv_ip, ibv_get_device_name (sid->verbs->device));
  connected = TRUE;
}

static void
require_connection (void)
{
  if (!connected)
    g_error ("no connection: /verbs/connect failed");
}

static void
test_send_recv (void)
{
  struct ibv_wc wc;
  const gsize sizes[] = { 1, 63, 4096 };

  require_connection ();
  for (guint k = 0; k < G_N_ELEMENTS (sizes); k++)
  {
    gsize n = sizes[k];
    /* client -> server */
    memset (server.buf, 0, 8192);
    post_recv (&server, 0, 4096, 100 + k);
    fill (client.buf + 8192, n, 10 + k);
    post_send (&client, IBV_WR_SEND, 8192, n, 0, 0, 200 + k);
    wait_wc (&client, IBV_WC_SEND, 200 + k);
    wc = wait_wc (&server, IBV_WC_RECV, 100 + k);
    g_assert_cmpuint (wc.byte_len, ==, n);
    assert_pattern (server.buf, n, 10 + k);
    g_assert_cmpuint (server.buf[n], ==, 0);
  }

  /* server -> client, into the receive the client posted before connecting */
  memset (client.buf, 0, 4096);
  fill (server.buf + 8192, 4000, 77);
  post_send (&server, IBV_WR_SEND, 8192, 4000, 0, 0, 300);
  wait_wc (&server, IBV_WC_SEND, 300);
  wc = wait_wc (&client, IBV_WC_RECV, 1);
  g_assert_cmpuint (wc.byte_len, ==, 4000);
  assert_pattern (client.buf, 4000, 77);
}

static void
test_write_with_imm (void)
{
  /* Each write lands at a different remote offset; the immediate tells the receiver
   * where and how much, the way Direct-WriteIMM will. */
  const struct
  {
    gsize off, len;
  } cases[] = { { 0, 1 }, { 4096, 4096 }, { 65536, 65536 + 7 } };

  require_connection ();
  for (guint k = 0; k < G_N_ELEMENTS (cases); k++)
  {
    gsize off = cases[k].off, len = cases[k].len;
    guint32 imm = (guint32) ((off / 4096) << 20 | len);
    struct ibv_wc wc;

    memset (server.buf, 0, BUF_SIZE);
    post_recv (&server, 0, 0, 400 + k);
    fill (client.buf + 131072, len, 30 + k);
    post_send (&client, IBV_WR_RDMA_WRITE_WITH_IMM, 131072, len, off, imm, 500 + k);
    wait_wc (&client, IBV_WC_RDMA_WRITE, 500 + k);
    wc = wait_wc (&server, IBV_WC_RECV_RDMA_WITH_IMM, 400 + k);
    g_assert_true (wc.wc_flags & IBV_WC_WITH_IMM);
    g_assert_cmpuint (ntohl (wc.imm_data), ==, imm);
    g_assert_cmpuint (wc.byte_len, ==, len);
    assert_pattern (server.buf + off, len, 30 + k);
    /* nothing outside the target range was touched */
    for (gsize i = 0; i < off; i++)
      g_assert_cmpuint (server.buf[i], ==, 0);
    g_assert_cmpuint (server.buf[off + len], ==, 0);
  }
}

static void
test_write (void)
{
  const gsize len = 100000, off = 12345;
  struct ibv_wc wc;

  require_connection ();
  memset (server.buf, 0, BUF_SIZE);
  post_recv (&server, 200000, 64, 600);
  fill (client.buf, len, 40);
  post_send (&client, IBV_WR_RDMA_WRITE, 0, len, off, 0, 700);
  /* RC ordering: a SEND after the WRITE completes at the receiver after the WRITE landed. */
  memcpy (client.buf + 150000, "done", 4);
  post_send (&client, IBV_WR_SEND, 150000, 4, 0, 0, 701);
  wait_wc (&client, IBV_WC_RDMA_WRITE, 700);
  wait_wc (&client, IBV_WC_SEND, 701);
  wc = wait_wc (&server, IBV_WC_RECV, 600);
  g_assert_cmpuint (wc.byte_len, ==, 4);
  g_assert_cmpmem (server.buf + 200000, 4, "done", 4);
  assert_pattern (server.buf + off, len, 40);
  g_assert_cmpuint (server.buf[off - 1], ==, 0);
  g_assert_cmpuint (server.buf[off + len], ==, 0);
}

static void
test_read (void)
{
  const gsize len = 200000, off = 4099;

  require_connection ();
  fill (server.buf + off, len, 50);
  memset (client.buf, 0, BUF_SIZE);
  post_send (&client, IBV_WR_RDMA_READ, 1, len, off, 0, 800);
  wait_wc (&client, IBV_WC_RDMA_READ, 800);
  assert_pattern (client.buf + 1, len, 50);
  g_assert_cmpuint (client.buf[0], ==, 0);
  g_assert_cmpuint (client.buf[len + 1], ==, 0);
}

static void
test_disconnect (void)
{
  struct rdma_cm_event *ev;
  gboolean client_seen = FALSE, server_seen = FALSE;

  require_connection ();
  /* The client hangs up; the server must notice (this is how a peer's death shows). */
  g_assert_cmpint (rdma_disconnect (client.id), ==, 0);
  while (!client_seen || !server_seen)
  {
    ev = expect_event (RDMA_CM_EVENT_DISCONNECTED);
    if (ev->id == server.id)
    {
      g_assert_false (server_seen);
      server_seen = TRUE;
      rdma_disconnect (server.id);
    }
    else
    {
      g_assert_true (ev->id == client.id);
      g_assert_false (client_seen);
      client_seen = TRUE;
    }
    rdma_ack_cm_event (ev);
  }
  teardown_endpoint (&server);
  teardown_endpoint (&client);
  g_assert_cmpint (rdma_destroy_id (listener), ==, 0);
  rdma_destroy_event_channel (channel);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/verbs/connect", test_connect);
  g_test_add_func ("/verbs/send_recv", test_send_recv);
  g_test_add_func ("/verbs/write_with_imm", test_write_with_imm);
  g_test_add_func ("/verbs/write", test_write);
  g_test_add_func ("/verbs/read", test_read);
  g_test_add_func ("/verbs/disconnect", test_disconnect);
  return g_test_run ();
}
