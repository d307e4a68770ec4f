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
 * hostile-peer: attacks a ThriftServerRdma (or a framed tcp:// Thrift server) the way a
 * broken or malicious client would, over raw librdmacm/libibverbs (or plain sockets).  It
 * uses none of the project's code: the two wire structures it needs are declared again
 * below, with lib/c_glib/transport/rdma/rdma_wire.h as the reference.  GLib is used for
 * option parsing only.
 *
 * Every subcommand prints what it did and exits 0 when the attack ran as intended; whether
 * the server survived it is for the caller (test/rdma/test-hostile.sh) to judge.  `probe` is
 * the exception: it is a check, and exits 1 when the server does not answer.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <glib.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* ---- the wire (reference: lib/c_glib/transport/rdma/rdma_wire.h), little-endian ---- */

#define WIRE_VERSION 4          /* THRIFT_RDMA_WIRE_VERSION */
#define HELLO_MAGIC 0x4d445254u /* RDMA_WIRE_HELLO_MAGIC, "TRDM" */
#define PROTO_EAGER 0           /* RDMA_PROTO_EAGER */
#define HDR_MAGIC 0xa7          /* RDMA_WIRE_MAGIC */
#define TYPE_DATA 1             /* RDMA_WIRE_DATA */
#define TYPE_CREDIT 2           /* RDMA_WIRE_CREDIT */
#define FLAG_FIRST 0x1
#define FLAG_LAST 0x2
#define CONTROL_SLOTS 4 /* RDMA_CREDIT_CONTROL_SLOTS */
#define SLOT_SIZE 4096u /* the server's slot size; the hello must match it */

typedef struct __attribute__ ((packed))
{
  uint32_t magic;
  uint16_t version;
  uint16_t protocols;
  uint32_t credits;
  uint32_t slot_size;
  uint32_t max_message;
  uint32_t rkey;
  uint64_t addr;
  uint32_t buf_len;
} WireHello; /* RdmaWireHello: 36 bytes of RDMA CM private data */

typedef struct __attribute__ ((packed))
{
  uint8_t magic;
  uint8_t version;
  uint8_t proto;
  uint8_t type;
  uint8_t flags;
  uint8_t reserved[3];
  uint32_t credits;
  uint32_t frag_len;
  uint32_t msg_len;
} WireHeader; /* RdmaWireHeader: the first 20 bytes of every SEND */

G_STATIC_ASSERT (sizeof (WireHello) == 36);
G_STATIC_ASSERT (sizeof (WireHeader) == 20);
#define HDR ((uint32_t) sizeof (WireHeader))
#define ROOM (SLOT_SIZE - HDR)

/* ---- options ---- */

static gint opt_hold = -1; /* seconds to stay (-1: until killed) */
static gchar *opt_source;
static gint opt_mib = 300;
static gboolean opt_tcp;
static gint opt_window = 8;
static gint opt_stall = 5;
static gint opt_time_limit = 60;
static gchar *opt_ready_file;
static gint opt_timeout_ms = 5000;
static gint opt_credits = 4;
static gint opt_msg_kib = 64;

static GOptionEntry entries[] = {
  { "hold", 0, 0, G_OPTION_ARG_INT, &opt_hold,
    "seconds to keep the connections before exiting (-1: until killed; half-open: 20)", "S" },
  { "source", 0, 0, G_OPTION_ARG_STRING, &opt_source, "source address to connect from", "ADDR" },
  { "mib", 0, 0, G_OPTION_ARG_INT, &opt_mib, "flood: MiB to try to push (default 300)", "M" },
  { "msg-kib", 0, 0, G_OPTION_ARG_INT, &opt_msg_kib,
    "flood: size of each reverse() call in KiB (default 64)", "K" },
  { "tcp", 0, 0, G_OPTION_ARG_NONE, &opt_tcp,
    "big-string/big-binary: over a plain TCP socket with a 4-byte frame length", NULL },
  { "window", 0, 0, G_OPTION_ARG_INT, &opt_window,
    "idle/vanish: connection requests in flight at once (default 8)", "W" },
  { "stall", 0, 0, G_OPTION_ARG_INT, &opt_stall,
    "flood: give up after S s without credits; idle: report after S s without progress "
    "(default 5)",
    "S" },
  { "time-limit", 0, 0, G_OPTION_ARG_INT, &opt_time_limit,
    "give up after S s (flood, idle, vanish; default 60)", "S" },
  { "ready-file", 0, 0, G_OPTION_ARG_FILENAME, &opt_ready_file, "write the ready line to FILE too",
    "FILE" },
  { "timeout", 0, 0, G_OPTION_ARG_INT, &opt_timeout_ms,
    "milliseconds for one connection set-up or answer (default 5000)", "MS" },
  { "credits", 0, 0, G_OPTION_ARG_INT, &opt_credits,
    "receive credits offered to the server (default 4; flood: 1)", "N" },
  { NULL }
};

static const char summary[] =
    "Subcommands (ADDR is the server's address; every attack exits 0 when it ran as intended):\n"
    "  half-open N ADDR PORT [--hold S]   N connection requests with a valid hello that never\n"
    "                         complete: rdma_connect, then the event channel is never read, so\n"
    "                         no RTU answers the server's reply; held S s (default 20)\n"
    "  flood ADDR PORT [--mib M]  a valid handshake offering 1 credit, two ping() calls whose\n"
    "                         second reply can never be sent (no credit ever returned), then\n"
    "                         64 KiB reverse() calls honouring the server's credits; reports the\n"
    "                         MiB that got through before credits stopped (--stall S) or --mib\n"
    "                         was reached or --time-limit passed; then holds (--hold)\n"
    "  vanish N ADDR PORT --source SRC  N connections from SRC, one ping() each, then sit until\n"
    "                         killed (the caller makes SRC's packets vanish, then kills -9)\n"
    "  idle N ADDR PORT       N connections that complete the handshake and sit idle (prints\n"
    "                         'ready: ...' once all are up or nothing progressed for --stall S)\n"
    "  big-string ADDR PORT [--tcp]  one 31-byte calculate() call whose Work.comment string\n"
    "                         announces 0x7ffffff0 bytes (rdma: one Eager DATA message; --tcp:\n"
    "                         one frame)\n"
    "  big-binary ADDR PORT [--tcp]  one 26-byte reverse() call whose binary announces\n"
    "                         0x7ffffff0 bytes\n"
    "  tcp-zero-frame ADDR PORT  a frame of length 0 on a framed tcp:// server\n"
    "  idle-tcp N ADDR PORT   N TCP connections that send nothing, until killed\n"
    "  probe ADDR PORT [--source SRC]  one connection and one ping(); exit 0 if answered\n"
    "                         within --timeout, 1 otherwise (a check, not an attack)";

/* ---- small helpers ---- */

static gint64
now_us (void)
{
  return g_get_monotonic_time ();
}

static void say (const char *fmt, ...) G_GNUC_PRINTF (1, 2);
static void
say (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  printf ("hostile-peer: ");
  vprintf (fmt, ap);
  printf ("\n");
  fflush (stdout);
  va_end (ap);
}

static void ready (const char *fmt, ...) G_GNUC_PRINTF (1, 2);
static void
ready (const char *fmt, ...)
{
  va_list ap;
  gchar *line;

  va_start (ap, fmt);
  line = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  /* the file first: a test that saw the line reads the file at once (test-hostile.sh's
   * vanish-default failed so once in the soak: the line was there, the file not yet) */
  if (opt_ready_file != NULL)
  {
    gchar *tmp = g_strconcat (opt_ready_file, ".tmp", NULL);
    gchar *text = g_strconcat (line, "\n", NULL);
    if (g_file_set_contents (tmp, text, -1, NULL))
      rename (tmp, opt_ready_file);
    g_free (tmp);
    g_free (text);
  }
  say ("ready: %s", line);
  g_free (line);
}

static void
sleep_ms (int ms)
{
  struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
  {
  }
}

/* Holds for opt_hold seconds (or forever), calling @tick every 100 ms. */
static void
hold (void (*tick) (void *), void *data)
{
  gint64 until = opt_hold >= 0 ? now_us () + (gint64) opt_hold * 1000000 : G_MAXINT64;
  while (now_us () < until)
  {
    if (tick != NULL)
      tick (data);
    sleep_ms (100);
  }
}

/* ---- Thrift binary protocol (strict), just enough ---- */

static void
put32 (GByteArray *b, uint32_t v)
{
  uint32_t be = htobe32 (v);
  g_byte_array_append (b, (guint8 *) &be, 4);
}

static void
put16 (GByteArray *b, uint16_t v)
{
  uint16_t be = htobe16 (v);
  g_byte_array_append (b, (guint8 *) &be, 2);
}

static void
put8 (GByteArray *b, uint8_t v)
{
  g_byte_array_append (b, &v, 1);
}

static void
call_begin (GByteArray *b, const char *name, uint32_t seqid)
{
  put8 (b, 0);            /* ThriftRdma's envelope byte: a plain message */
  put32 (b, 0x80010001u); /* VERSION_1 | CALL */
  put32 (b, (uint32_t) strlen (name));
  g_byte_array_append (b, (const guint8 *) name, (guint) strlen (name));
  put32 (b, seqid);
}

#define T_STRING 11
#define T_STRUCT 12
#define HUGE_LEN 0x7ffffff0u

static GByteArray *
msg_ping (uint32_t seqid)
{
  GByteArray *b = g_byte_array_new ();
  call_begin (b, "ping", seqid);
  put8 (b, 0); /* ping_args: STOP */
  return b;
}

static GByteArray *
msg_reverse (uint32_t seqid, guint32 n)
{
  GByteArray *b = g_byte_array_new ();
  call_begin (b, "reverse", seqid);
  put8 (b, T_STRING);
  put16 (b, 1);
  put32 (b, n);
  g_byte_array_set_size (b, b->len + n);
  memset (b->data + b->len - n, 'x', n);
  put8 (b, 0);
  return b;
}

/* calculate(1: i32 logid, 2: Work w) with w.comment (field 4, string) announcing 2 GiB. */
static GByteArray *
msg_big_string (void)
{
  GByteArray *b = g_byte_array_new ();
  call_begin (b, "calculate", 1);
  put8 (b, T_STRUCT);
  put16 (b, 2);
  put8 (b, T_STRING);
  put16 (b, 4);
  put32 (b, HUGE_LEN);
  return b;
}

/* reverse(1: binary data) with data announcing 2 GiB. */
static GByteArray *
msg_big_binary (void)
{
  GByteArray *b = g_byte_array_new ();
  call_begin (b, "reverse", 1);
  put8 (b, T_STRING);
  put16 (b, 1);
  put32 (b, HUGE_LEN);
  return b;
}

/* ---- RDMA: many connections on one event channel, one PD, CQ and MR ---- */

typedef enum
{
  C_NEW,
  C_ADDR,
  C_ROUTE,
  C_CONNECTING,
  C_ESTABLISHED,
  C_FAILED,
  C_DISCONNECTED
} CState;

typedef struct
{
  guint index;
  struct rdma_cm_id *id;
  CState state;
  gint64 deadline;
  const char *why;      /* failure */
  guint32 send_credits; /* the server's data slots we may still fill */
  guint32 peer_credits; /* what its hello offered */
  guint32 pending;      /* our slots reposted since we last said so */
  guint32 free_send;    /* bitmask of free send slots */
  guint32 send_len[32]; /* payload bytes of each posted send */
  guint64 replies;      /* complete DATA messages received */
  guint64 bytes_acked;  /* payload bytes of our SENDs that completed */
  guint64 credit_msgs;
  gboolean destroy;
} Conn;

typedef struct
{
  struct rdma_event_channel *ch;
  struct ibv_context *verbs;
  struct ibv_pd *pd;
  struct ibv_comp_channel *cc;
  struct ibv_cq *cq;
  struct ibv_mr *mr;
  guint8 *buf;
  Conn *conns;
  guint n;
  guint started;
  guint recv_per;
  guint send_per;
  guint32 adv_credits;
  gboolean give_credits; /* return credits like a real client (not: flood) */
  struct rdma_addrinfo *dst, *src;
  guint n_established, n_failed, n_disconnected;
  gint64 last_progress;
} Peer;

static guint8 *
slot_addr (Peer *p, Conn *c, guint slot)
{
  return p->buf + ((gsize) c->index * (p->recv_per + p->send_per) + slot) * SLOT_SIZE;
}

#define WRID(conn, slot, recv) \
  (((guint64) (recv) << 63) | ((guint64) (conn) << 32) | (guint64) (slot))

static gboolean
resolve (Peer *p, const char *addr, int port)
{
  struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
  char service[16];

  g_snprintf (service, sizeof service, "%d", port);
  if (rdma_getaddrinfo (addr, service, &hints, &p->dst) != 0)
  {
    say ("cannot resolve %s: %s", addr, g_strerror (errno));
    return FALSE;
  }
  if (opt_source != NULL)
  {
    struct rdma_addrinfo sh = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
    if (rdma_getaddrinfo (opt_source, NULL, &sh, &p->src) != 0)
    {
      say ("cannot resolve the source %s: %s", opt_source, g_strerror (errno));
      return FALSE;
    }
  }
  return TRUE;
}

/* Finds the device: one id resolved synchronously on the (still empty) channel. */
static gboolean
open_device (Peer *p)
{
  struct rdma_cm_id *id;
  struct rdma_cm_event *ev;
  struct ibv_device_attr attr;
  gsize bytes;
  int cqe;

  if (rdma_create_id (p->ch, &id, NULL, RDMA_PS_TCP) != 0
      || rdma_resolve_addr (id, p->src ? p->src->ai_src_addr : NULL, p->dst->ai_dst_addr,
                            opt_timeout_ms)
             != 0)
  {
    say ("rdma_resolve_addr: %s", g_strerror (errno));
    return FALSE;
  }
  {
    struct pollfd pfd = { p->ch->fd, POLLIN, 0 };
    poll (&pfd, 1, opt_timeout_ms); /* the channel is non-blocking */
  }
  ev = NULL;
  if (rdma_get_cm_event (p->ch, &ev) != 0 || ev->event != RDMA_CM_EVENT_ADDR_RESOLVED)
  {
    say ("resolving the address failed: %s", ev ? rdma_event_str (ev->event) : "no event");
    return FALSE;
  }
  rdma_ack_cm_event (ev);
  p->verbs = id->verbs;
  rdma_destroy_id (id);

  if (ibv_query_device (p->verbs, &attr) != 0)
    attr.max_cqe = 4096;
  p->pd = ibv_alloc_pd (p->verbs);
  p->cc = ibv_create_comp_channel (p->verbs);
  cqe = (int) MIN ((gsize) p->n * (p->recv_per + p->send_per) + 16, (gsize) attr.max_cqe);
  p->cq = p->pd && p->cc ? ibv_create_cq (p->verbs, cqe, NULL, p->cc, 0) : NULL;
  bytes = (gsize) p->n * (p->recv_per + p->send_per) * SLOT_SIZE;
  p->buf = g_malloc0 (bytes);
  p->mr = p->pd ? ibv_reg_mr (p->pd, p->buf, bytes, IBV_ACCESS_LOCAL_WRITE) : NULL;
  if (p->cq == NULL || p->mr == NULL)
  {
    say ("verbs set-up failed: %s", g_strerror (errno));
    return FALSE;
  }
  fcntl (p->cc->fd, F_SETFL, fcntl (p->cc->fd, F_GETFL) | O_NONBLOCK);
  ibv_req_notify_cq (p->cq, 0);
  return TRUE;
}

static Peer *
peer_new (guint n, guint32 adv_credits, guint send_per, gboolean give_credits, const char *addr,
          int port)
{
  Peer *p = g_new0 (Peer, 1);

  p->n = n;
  p->adv_credits = adv_credits;
  p->recv_per = adv_credits + 2 * CONTROL_SLOTS;
  p->send_per = MIN (send_per, 32u);
  p->give_credits = give_credits;
  p->conns = g_new0 (Conn, n);
  for (guint i = 0; i < n; i++)
    p->conns[i].index = i;
  p->ch = rdma_create_event_channel ();
  if (p->ch == NULL)
  {
    say ("rdma_create_event_channel: %s", g_strerror (errno));
    return NULL;
  }
  fcntl (p->ch->fd, F_SETFL, fcntl (p->ch->fd, F_GETFL) | O_NONBLOCK);
  if (!resolve (p, addr, port) || !open_device (p))
    return NULL;
  p->last_progress = now_us ();
  return p;
}

static void
fail_conn (Peer *p, Conn *c, const char *why)
{
  if (c->state == C_FAILED)
    return;
  if (c->state == C_ESTABLISHED)
    p->n_established--;
  c->state = C_FAILED;
  c->why = why;
  c->destroy = TRUE;
  p->n_failed++;
}

static gboolean
post_recv (Peer *p, Conn *c, guint slot)
{
  struct ibv_sge sge = { (uintptr_t) slot_addr (p, c, slot), SLOT_SIZE, p->mr->lkey };
  struct ibv_recv_wr wr = { .wr_id = WRID (c->index, slot, 1), .sg_list = &sge, .num_sge = 1 };
  struct ibv_recv_wr *bad;
  return ibv_post_recv (c->id->qp, &wr, &bad) == 0;
}

static void
start_conn (Peer *p, Conn *c)
{
  if (rdma_create_id (p->ch, &c->id, c, RDMA_PS_TCP) != 0)
  {
    fail_conn (p, c, "rdma_create_id failed");
    c->destroy = FALSE;
    return;
  }
  c->deadline = now_us () + (gint64) opt_timeout_ms * 1000;
  c->state = C_ADDR;
  if (rdma_resolve_addr (c->id, p->src ? p->src->ai_src_addr : NULL, p->dst->ai_dst_addr,
                         opt_timeout_ms)
      != 0)
    fail_conn (p, c, "rdma_resolve_addr failed");
}

static void
on_route (Peer *p, Conn *c)
{
  struct ibv_qp_init_attr qa = {
    .send_cq = p->cq,
    .recv_cq = p->cq,
    .qp_type = IBV_QPT_RC,
    .cap = { .max_send_wr = p->send_per,
             .max_recv_wr = p->recv_per,
             .max_send_sge = 1,
             .max_recv_sge = 1 },
  };
  WireHello h = {
    .magic = htole32 (HELLO_MAGIC),
    .version = htole16 (WIRE_VERSION),
    .protocols = htole16 (1u << PROTO_EAGER),
    .credits = htole32 (p->adv_credits),
    .slot_size = htole32 (SLOT_SIZE),
    .max_message = htole32 (100u << 20),
  };
  struct rdma_conn_param cp = {
    .private_data = &h,
    .private_data_len = sizeof h,
    .responder_resources = 1,
    .initiator_depth = 1,
    .retry_count = 7,
    .rnr_retry_count = 7,
  };

  if (rdma_create_qp (c->id, p->pd, &qa) != 0)
  {
    fail_conn (p, c, "rdma_create_qp failed");
    return;
  }
  for (guint s = 0; s < p->recv_per; s++)
    if (!post_recv (p, c, s))
    {
      fail_conn (p, c, "ibv_post_recv failed");
      return;
    }
  c->free_send = p->send_per >= 32 ? 0xffffffffu : (1u << p->send_per) - 1;
  c->state = C_CONNECTING;
  c->deadline = now_us () + (gint64) opt_timeout_ms * 1000;
  if (rdma_connect (c->id, &cp) != 0)
    fail_conn (p, c, "rdma_connect failed");
}

/* Handles every queued CM event. */
static void
cm_events (Peer *p)
{
  struct rdma_cm_event *ev;

  while (rdma_get_cm_event (p->ch, &ev) == 0)
  {
    Conn *c = ev->id->context;
    enum rdma_cm_event_type type = ev->event;
    WireHello h = { 0 };

    if (type == RDMA_CM_EVENT_ESTABLISHED && ev->param.conn.private_data != NULL
        && ev->param.conn.private_data_len >= sizeof h)
      memcpy (&h, ev->param.conn.private_data, sizeof h);
    rdma_ack_cm_event (ev);
    if (c == NULL || c->state == C_FAILED)
      continue;
    switch (type)
    {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      c->state = C_ROUTE;
      if (rdma_resolve_route (c->id, opt_timeout_ms) != 0)
        fail_conn (p, c, "rdma_resolve_route failed");
      break;
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
      on_route (p, c);
      break;
    case RDMA_CM_EVENT_ESTABLISHED:
      if (le32toh (h.magic) != HELLO_MAGIC || h.credits == 0)
      {
        fail_conn (p, c, "the server's hello is missing");
        break;
      }
      c->peer_credits = c->send_credits = le32toh (h.credits);
      c->state = C_ESTABLISHED;
      p->n_established++;
      p->last_progress = now_us ();
      break;
    case RDMA_CM_EVENT_DISCONNECTED:
      if (c->state == C_ESTABLISHED)
      {
        p->n_established--;
        p->n_disconnected++;
        c->state = C_DISCONNECTED;
      }
      break;
    case RDMA_CM_EVENT_REJECTED:
      fail_conn (p, c, "rejected");
      break;
    case RDMA_CM_EVENT_UNREACHABLE:
      fail_conn (p, c, "unreachable (no answer)");
      break;
    case RDMA_CM_EVENT_CONNECT_ERROR:
      fail_conn (p, c, "connect error");
      break;
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
      fail_conn (p, c, "address or route resolution failed");
      break;
    default:
      break;
    }
  }
  /* failed ids are destroyed once their events are acked */
  for (guint i = 0; i < p->started; i++)
  {
    Conn *c = &p->conns[i];
    if (c->destroy && c->id != NULL)
    {
      if (c->id->qp)
        rdma_destroy_qp (c->id);
      rdma_destroy_id (c->id);
      c->id = NULL;
      c->destroy = FALSE;
    }
  }
}

static gboolean
post_send (Peer *p, Conn *c, uint8_t type, uint8_t flags, const guint8 *payload, uint32_t frag,
           uint32_t msg_len)
{
  guint slot = (guint) g_bit_nth_lsf (c->free_send, -1);
  guint8 *dst = slot_addr (p, c, p->recv_per + slot);
  WireHeader h = {
    .magic = HDR_MAGIC,
    .version = WIRE_VERSION,
    .proto = PROTO_EAGER,
    .type = type,
    .flags = flags,
    .credits = htole32 (p->give_credits ? c->pending : 0),
    .frag_len = htole32 (frag),
    .msg_len = htole32 (msg_len),
  };
  struct ibv_sge sge = { (uintptr_t) dst, HDR + frag, p->mr->lkey };
  struct ibv_send_wr wr = {
    .wr_id = WRID (c->index, slot, 0),
    .sg_list = &sge,
    .num_sge = 1,
    .opcode = IBV_WR_SEND,
    .send_flags = IBV_SEND_SIGNALED,
  };
  struct ibv_send_wr *bad;

  memcpy (dst, &h, HDR);
  if (frag > 0)
    memcpy (dst + HDR, payload, frag);
  if (ibv_post_send (c->id->qp, &wr, &bad) != 0)
    return FALSE;
  if (p->give_credits)
    c->pending = 0;
  c->free_send &= ~(1u << slot);
  c->send_len[slot] = frag;
  if (type == TYPE_DATA)
    c->send_credits--;
  return TRUE;
}

/* Drains the CQ; returns the number of completions. */
static int
drain (Peer *p)
{
  struct ibv_wc wc[32];
  int n, total = 0;

  while ((n = ibv_poll_cq (p->cq, 32, wc)) > 0)
  {
    for (int i = 0; i < n; i++)
    {
      guint ci = (guint) ((wc[i].wr_id >> 32) & 0x7fffffffu);
      guint slot = (guint) (wc[i].wr_id & 0xffffffffu);
      gboolean recv = (wc[i].wr_id >> 63) != 0;
      Conn *c = ci < p->n ? &p->conns[ci] : NULL;

      if (c == NULL)
        continue;
      if (!recv)
        c->free_send |= 1u << slot;
      if (wc[i].status != IBV_WC_SUCCESS)
      {
        if (wc[i].status != IBV_WC_WR_FLUSH_ERR && c->state == C_ESTABLISHED)
          fail_conn (p, c, ibv_wc_status_str (wc[i].status));
        continue;
      }
      if (!recv)
      {
        c->bytes_acked += c->send_len[slot];
        continue;
      }
      {
        WireHeader h;
        memcpy (&h, slot_addr (p, c, slot), HDR);
        if (wc[i].byte_len >= HDR && h.magic == HDR_MAGIC)
        {
          c->send_credits += le32toh (h.credits);
          if (h.type == TYPE_DATA && (h.flags & FLAG_LAST))
            c->replies++;
          if (h.type == TYPE_CREDIT)
            c->credit_msgs++;
          if (h.type == TYPE_DATA && p->give_credits)
            c->pending++;
        }
      }
      if (c->id != NULL && c->id->qp != NULL)
        post_recv (p, c, slot);
    }
    total += n;
  }
  return total;
}

/* Waits up to @ms for CM events or completions and handles them. */
static void
peer_wait (Peer *p, int ms)
{
  struct pollfd pfd[2] = { { p->ch->fd, POLLIN, 0 }, { p->cc->fd, POLLIN, 0 } };

  cm_events (p);
  if (drain (p) > 0)
    return;
  if (poll (pfd, 2, ms) > 0)
  {
    if (pfd[1].revents & POLLIN)
    {
      struct ibv_cq *cq;
      void *ctx;
      if (ibv_get_cq_event (p->cc, &cq, &ctx) == 0)
      {
        ibv_ack_cq_events (cq, 1);
        ibv_req_notify_cq (p->cq, 0);
      }
    }
    cm_events (p);
  }
  drain (p);
}

/* Sends a one-slot message (waits for a credit and a send slot). */
static gboolean
send_small (Peer *p, Conn *c, GByteArray *m, gint64 deadline)
{
  while (c->state == C_ESTABLISHED && (c->send_credits == 0 || c->free_send == 0))
  {
    if (now_us () > deadline)
      return FALSE;
    peer_wait (p, 10);
  }
  return c->state == C_ESTABLISHED
         && post_send (p, c, TYPE_DATA, FLAG_FIRST | FLAG_LAST, m->data, m->len, m->len);
}

/* Connects every connection, @window requests in flight at once, until all are established
 * or failed, nothing progressed for @stall_s, or @limit_s passed.  Calls @on_up for each
 * newly established one. */
static void
connect_all (Peer *p, guint window, int stall_s, int limit_s, void (*on_up) (Peer *, Conn *))
{
  gint64 t0 = now_us (), limit = t0 + (gint64) limit_s * 1000000, next_report = t0 + 5000000;
  guint *seen = g_new0 (guint, p->n);

  for (;;)
  {
    guint in_flight = 0, done = 0;

    for (guint i = 0; i < p->started; i++)
    {
      Conn *c = &p->conns[i];
      if (c->state == C_ESTABLISHED && !seen[i])
      {
        seen[i] = 1;
        if (on_up != NULL)
          on_up (p, c);
      }
      if (c->state < C_ESTABLISHED)
      {
        in_flight++;
        if (now_us () > c->deadline)
        {
          /* no answer in time: give up on this one (the server may still hold it) */
          fail_conn (p, c, "no answer within --timeout");
        }
      }
      else
      {
        done++;
      }
    }
    while (in_flight < window && p->started < p->n)
    {
      start_conn (p, &p->conns[p->started++]);
      in_flight++;
    }
    if (done == p->n)
      break;
    if (now_us () > next_report)
    {
      say ("connecting: %u established, %u failed, %u in flight after %.0f s", p->n_established,
           p->n_failed, in_flight, (now_us () - t0) / 1e6);
      next_report += 5000000;
    }
    if (now_us () > limit || now_us () - p->last_progress > (gint64) stall_s * 1000000)
      break;
    peer_wait (p, 20);
    cm_events (p);
  }
  g_free (seen);
}

static void
count_failures (Peer *p, GString *s)
{
  GHashTable *why = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter it;
  gpointer k, v;

  for (guint i = 0; i < p->n; i++)
    if (p->conns[i].state == C_FAILED)
    {
      const char *w = p->conns[i].why ? p->conns[i].why : "?";
      g_hash_table_insert (why, (gpointer) w,
                           GUINT_TO_POINTER (GPOINTER_TO_UINT (g_hash_table_lookup (why, w)) + 1));
    }
  g_hash_table_iter_init (&it, why);
  while (g_hash_table_iter_next (&it, &k, &v))
    g_string_append_printf (s, "%s%u %s", s->len ? ", " : "", GPOINTER_TO_UINT (v),
                            (const char *) k);
  g_hash_table_destroy (why);
}

static void
tick_peer (void *data)
{
  Peer *p = data;
  guint before = p->n_established;
  peer_wait (p, 0);
  if (p->n_established != before)
    say ("now %u established, %u disconnected by the server", p->n_established, p->n_disconnected);
}

/* ---- idle, vanish, probe ---- */

static uint32_t next_seq = 1;

static void
on_up_ping (Peer *p, Conn *c)
{
  GByteArray *m = msg_ping (next_seq++);
  if (!send_small (p, c, m, now_us () + (gint64) opt_timeout_ms * 1000))
    fail_conn (p, c, "could not send ping()");
  g_byte_array_unref (m);
}

static int
cmd_idle (guint n, const char *addr, int port, gboolean call)
{
  gint64 t0 = now_us ();
  Peer *p = peer_new (n, (guint32) opt_credits, 2, TRUE, addr, port);
  guint answered = 0;
  GString *why = g_string_new (NULL);

  if (p == NULL)
    return 1;
  connect_all (p, (guint) MAX (opt_window, 1), opt_stall, opt_time_limit, call ? on_up_ping : NULL);
  if (call)
  {
    gint64 deadline = now_us () + (gint64) opt_timeout_ms * 1000;
    for (;;)
    {
      answered = 0;
      for (guint i = 0; i < p->n; i++)
        answered += p->conns[i].replies > 0;
      if (answered >= p->n_established || now_us () > deadline)
        break;
      peer_wait (p, 20);
    }
  }
  count_failures (p, why);
  {
    gchar *calls = call ? g_strdup_printf (", %u ping() answered", answered) : g_strdup ("");
    gchar *from = opt_source ? g_strdup_printf (" (from %s)", opt_source) : g_strdup ("");
    ready ("%u of %u established%s%s%s, %u never started, %u still pending, after %.1f s%s",
           p->n_established, n, calls, why->len ? "; failed: " : "", why->str, n - p->started,
           p->started - p->n_established - p->n_failed - p->n_disconnected, (now_us () - t0) / 1e6,
           from);
    g_free (calls);
    g_free (from);
  }
  g_string_free (why, TRUE);
  if (p->n_established == 0)
    return 1; /* nothing to hold: the attack did not happen */
  hold (tick_peer, p);
  say ("done holding: %u established, %u disconnected by the server", p->n_established,
       p->n_disconnected);
  return 0;
}

static int
cmd_probe (const char *addr, int port)
{
  Peer *p = peer_new (1, 4, 2, TRUE, addr, port);
  Conn *c;
  gint64 deadline = now_us () + (gint64) opt_timeout_ms * 1000;

  if (p == NULL)
  {
    say ("probe: no route to the server");
    return 1;
  }
  c = &p->conns[0];
  p->started = 1;
  start_conn (p, c);
  while (c->state < C_ESTABLISHED && now_us () < deadline)
    peer_wait (p, 20);
  if (c->state != C_ESTABLISHED)
  {
    say ("probe: no connection (%s)", c->why ? c->why : "timed out");
    return 1;
  }
  on_up_ping (p, c);
  while (c->replies == 0 && c->state == C_ESTABLISHED && now_us () < deadline)
    peer_wait (p, 20);
  if (c->replies == 0)
  {
    say ("probe: connected, but ping() got no answer");
    return 1;
  }
  say ("probe: ping() answered in %.1f ms",
       (now_us () - (deadline - (gint64) opt_timeout_ms * 1000)) / 1e3);
  rdma_disconnect (c->id);
  return 0;
}

/* ---- flood ---- */

static int
cmd_flood (const char *addr, int port)
{
  Peer *p = peer_new (1, 1, 16, FALSE, addr, port);
  Conn *c;
  gint64 t0, limit, last_credit;
  guint64 target = (guint64) opt_mib << 20, queued = 0;
  guint32 msg_size = (guint32) opt_msg_kib * 1024;
  GByteArray *m;
  guint messages = 0;
  const char *outcome;

  if (p == NULL)
    return 1;
  c = &p->conns[0];
  p->started = 1;
  start_conn (p, c);
  limit = now_us () + (gint64) opt_timeout_ms * 1000;
  while (c->state < C_ESTABLISHED && now_us () < limit)
    peer_wait (p, 20);
  if (c->state != C_ESTABLISHED)
  {
    say ("flood: no connection (%s)", c->why ? c->why : "timed out");
    return 1;
  }
  say ("flood: connected; offered the server %u credit, it offers %u", p->adv_credits,
       c->peer_credits);

  /* ping 1 takes the server's only credit; ping 2's reply can never be sent */
  m = msg_ping (next_seq++);
  send_small (p, c, m, limit);
  while (c->replies < 1 && c->state == C_ESTABLISHED && now_us () < limit)
    peer_wait (p, 20);
  if (c->replies < 1)
  {
    say ("flood: the first ping() got no answer");
    return 1;
  }
  g_byte_array_unref (m);
  m = msg_ping (next_seq++);
  send_small (p, c, m, limit);
  g_byte_array_unref (m);
  say ("flood: ping() answered; second ping() sent and no credit returned, so its reply "
       "is stuck: the worker is blocked sending");
  sleep_ms (200);

  m = msg_reverse (next_seq, msg_size);
  t0 = now_us ();
  limit = t0 + (gint64) opt_time_limit * 1000000;
  last_credit = t0;
  outcome = NULL;
  {
    guint32 off = 0;
    /* reverse() calls back to back, fragment by fragment, each SEND taking a credit */
    while (outcome == NULL)
    {
      if (c->state != C_ESTABLISHED)
      {
        outcome = "the server closed the connection";
      }
      else if (c->send_credits > 0 && c->free_send != 0)
      {
        guint32 frag = MIN (m->len - off, ROOM);
        uint8_t flags = (off == 0 ? FLAG_FIRST : 0) | (off + frag == m->len ? FLAG_LAST : 0);
        if (!post_send (p, c, TYPE_DATA, flags, m->data + off, frag, m->len))
        {
          outcome = "ibv_post_send failed";
          break;
        }
        off += frag;
        if (off == m->len)
        {
          off = 0;
          queued += m->len;
          messages++;
          if (queued >= target)
            outcome = "all sent";
        }
        drain (p);
      }
      else
      {
        peer_wait (p, 50);
      }
      if (c->send_credits > 0)
        last_credit = now_us ();
      if (outcome == NULL && now_us () - last_credit > (gint64) opt_stall * 1000000)
        outcome = "credits stopped";
      else if (outcome == NULL && now_us () > limit)
        outcome = "time limit";
    }
  }
  /* let the last SENDs complete */
  for (int i = 0; i < 50 && c->free_send != (1u << p->send_per) - 1; i++)
    peer_wait (p, 20);
  {
    double mib = c->bytes_acked / 1048576.0;
    double secs = (now_us () - t0) / 1e6;
    say ("flood done: %.1f MiB got through in %u whole %u-KiB reverse() calls in %.1f s "
         "(%.1f MiB/s); outcome: %s; %" G_GUINT64_FORMAT " credit messages from the server",
         mib, messages, (guint) opt_msg_kib, secs, secs > 0 ? mib / secs : 0.0, outcome,
         c->credit_msgs);
    ready ("flood accepted_mib=%.1f outcome=%s", mib,
           g_str_equal (outcome, "credits stopped") ? "credits-stopped"
           : g_str_equal (outcome, "all sent")      ? "all-sent"
           : g_str_equal (outcome, "time limit")    ? "time-limit"
                                                    : "closed");
  }
  g_byte_array_unref (m);
  hold (tick_peer, p);
  return 0;
}

/* ---- half-open ---- */

static int
cmd_half_open (guint n, const char *addr, int port)
{
  struct rdma_event_channel **ch = g_new0 (struct rdma_event_channel *, n);
  struct rdma_cm_id **id = g_new0 (struct rdma_cm_id *, n);
  gboolean *answered = g_new0 (gboolean, n);
  struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *dst = NULL, *src = NULL;
  struct ibv_pd *pd = NULL;
  struct ibv_cq *cq = NULL;
  char service[16];
  guint sent = 0, n_answered = 0;
  gint64 until;

  g_snprintf (service, sizeof service, "%d", port);
  if (rdma_getaddrinfo (addr, service, &hints, &dst) != 0)
  {
    say ("cannot resolve %s", addr);
    return 1;
  }
  if (opt_source != NULL)
  {
    struct rdma_addrinfo sh = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
    if (rdma_getaddrinfo (opt_source, NULL, &sh, &src) != 0)
    {
      say ("cannot resolve %s", opt_source);
      return 1;
    }
  }
  for (guint i = 0; i < n; i++)
  {
    struct rdma_cm_event *ev = NULL;
    struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .cap = { 1, 1, 1, 1, 0 } };
    WireHello h = {
      .magic = htole32 (HELLO_MAGIC),
      .version = htole16 (WIRE_VERSION),
      .protocols = htole16 (1u << PROTO_EAGER),
      .credits = htole32 (4),
      .slot_size = htole32 (SLOT_SIZE),
      .max_message = htole32 (100u << 20),
    };
    struct rdma_conn_param cp = {
      .private_data = &h,
      .private_data_len = sizeof h,
      .responder_resources = 1,
      .initiator_depth = 1,
      .retry_count = 7,
      .rnr_retry_count = 7,
    };

    /* one channel per request: the events of one never need reading to reach another */
    ch[i] = rdma_create_event_channel ();
    if (ch[i] == NULL || rdma_create_id (ch[i], &id[i], NULL, RDMA_PS_TCP) != 0)
      goto broken;
    if (rdma_resolve_addr (id[i], src ? src->ai_src_addr : NULL, dst->ai_dst_addr, opt_timeout_ms)
            != 0
        || rdma_get_cm_event (ch[i], &ev) != 0 || ev->event != RDMA_CM_EVENT_ADDR_RESOLVED)
      goto broken;
    rdma_ack_cm_event (ev);
    if (rdma_resolve_route (id[i], opt_timeout_ms) != 0 || rdma_get_cm_event (ch[i], &ev) != 0
        || ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED)
      goto broken;
    rdma_ack_cm_event (ev);
    if (pd == NULL)
    {
      pd = ibv_alloc_pd (id[i]->verbs);
      cq = pd ? ibv_create_cq (id[i]->verbs, (int) (2 * n + 2), NULL, NULL, 0) : NULL;
      if (cq == NULL)
        goto broken;
    }
    qa.send_cq = qa.recv_cq = cq;
    if (rdma_create_qp (id[i], pd, &qa) != 0 || rdma_connect (id[i], &cp) != 0)
      goto broken;
    sent++;
    continue;
  broken:
    say ("half-open: request %u could not be sent: %s", i, g_strerror (errno));
    return 1;
  }
  say ("half-open: sent %u connection requests with a valid hello; their event channels "
       "are never read, so the server's replies are never answered (no RTU)",
       sent);
  ready ("half-open %u requests sent", sent);
  /* Watch (poll(2) only, never read) for the server's answers: readable means the server
   * accepted (or rejected) and now waits for the RTU that never comes. */
  until = now_us () + (gint64) (opt_hold >= 0 ? opt_hold : 20) * 1000000;
  while (now_us () < until)
  {
    for (guint i = 0; i < n; i++)
    {
      struct pollfd pfd = { ch[i]->fd, POLLIN, 0 };
      if (!answered[i] && poll (&pfd, 1, 0) > 0)
      {
        answered[i] = TRUE;
        n_answered++;
        say ("half-open: request %u: the server answered after %.1f s (left unanswered)", i,
             (opt_hold >= 0 ? opt_hold : 20) - (until - now_us ()) / 1e6);
      }
    }
    sleep_ms (50);
  }
  say ("half-open: done holding: the server answered %u of %u requests; none got an RTU",
       n_answered, sent);
  /* exit without reading: the kernel destroys the ids (and rejects the server's replies) */
  _exit (0);
}

/* ---- big-string / big-binary over RDMA ---- */

static int
cmd_big_rdma (const char *addr, int port, gboolean binary)
{
  Peer *p = peer_new (1, 4, 2, TRUE, addr, port);
  Conn *c;
  GByteArray *m = binary ? msg_big_binary () : msg_big_string ();
  gint64 deadline = now_us () + (gint64) opt_timeout_ms * 1000;

  if (p == NULL)
    return 1;
  c = &p->conns[0];
  p->started = 1;
  start_conn (p, c);
  while (c->state < C_ESTABLISHED && now_us () < deadline)
    peer_wait (p, 20);
  if (c->state != C_ESTABLISHED)
  {
    say ("big-%s: no connection (%s)", binary ? "binary" : "string", c->why ? c->why : "?");
    return 1;
  }
  if (!send_small (p, c, m, deadline))
  {
    say ("big-%s: could not send", binary ? "binary" : "string");
    return 1;
  }
  say ("big-%s: sent a %u-byte %s() call whose %s announces %u bytes", binary ? "binary" : "string",
       m->len, binary ? "reverse" : "calculate", binary ? "binary 'data'" : "string 'w.comment'",
       HUGE_LEN);
  deadline = now_us () + 2000000;
  while (c->state == C_ESTABLISHED && c->replies == 0 && now_us () < deadline)
    peer_wait (p, 20);
  say ("big-%s: after 2 s: %s", binary ? "binary" : "string",
       c->replies                  ? "the server answered"
       : c->state == C_ESTABLISHED ? "no answer, the connection is still up"
                                   : "the connection is gone (the server closed it or died)");
  if (c->state == C_ESTABLISHED)
    rdma_disconnect (c->id);
  return 0;
}

/* ---- TCP ---- */

static int
tcp_connect (const char *addr, int port)
{
  struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res;
  char service[16];
  int fd;

  g_snprintf (service, sizeof service, "%d", port);
  if (getaddrinfo (addr, service, &hints, &res) != 0)
    return -1;
  fd = socket (res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && connect (fd, res->ai_addr, res->ai_addrlen) != 0)
  {
    close (fd);
    fd = -1;
  }
  freeaddrinfo (res);
  return fd;
}

/* Sends one frame (4-byte big-endian length, then @m) and reports what came back. */
static int
tcp_frame (const char *what, const char *addr, int port, GByteArray *m)
{
  int fd = tcp_connect (addr, port);
  uint32_t len = htobe32 (m ? m->len : 0);
  struct pollfd pfd;
  char buf[256];
  ssize_t r;

  if (fd < 0)
  {
    say ("%s: cannot connect to %s:%d: %s", what, addr, port, g_strerror (errno));
    return 1;
  }
  if (write (fd, &len, 4) != 4 || (m && write (fd, m->data, m->len) != (ssize_t) m->len))
  {
    say ("%s: write failed: %s", what, g_strerror (errno));
    return 1;
  }
  say ("%s: sent a frame of %u bytes%s", what, m ? m->len : 0,
       m ? " (one call whose field announces 0x7ffffff0 bytes)" : "");
  pfd = (struct pollfd){ fd, POLLIN, 0 };
  r = poll (&pfd, 1, 2000) > 0 ? read (fd, buf, sizeof buf) : -2;
  say ("%s: after the frame: %s", what,
       r > 0     ? "the server answered"
       : r == 0  ? "the server closed the connection"
       : r == -2 ? "no answer within 2 s"
                 : "the connection was reset");
  close (fd);
  return 0;
}

static int
cmd_idle_tcp (guint n, const char *addr, int port)
{
  int *fds = g_new (int, n);
  guint up = 0;

  for (guint i = 0; i < n; i++)
  {
    fds[i] = tcp_connect (addr, port);
    if (fds[i] >= 0)
      up++;
  }
  ready ("%u of %u tcp connections open (idle)", up, n);
  hold (NULL, NULL);
  return 0;
}

int
main (int argc, char **argv)
{
  GOptionContext *ctx = g_option_context_new ("SUBCOMMAND [N] ADDR PORT - a hostile peer");
  GError *error = NULL;
  const char *cmd;
  gboolean counted;
  guint n = 1;
  int ai, port;

  g_option_context_set_summary (ctx, "Attacks a ThriftServerRdma (rdma://) or a framed tcp:// "
                                     "Thrift server running tutorial/calculator.thrift.");
  g_option_context_set_description (ctx, summary);
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
  {
    fprintf (stderr, "hostile-peer: %s (try --help)\n", error->message);
    return 2;
  }
  if (argc < 2)
  {
    fprintf (stderr, "hostile-peer: a subcommand is needed (try --help)\n");
    return 2;
  }
  cmd = argv[1];
  counted = g_str_equal (cmd, "half-open") || g_str_equal (cmd, "vanish")
            || g_str_equal (cmd, "idle") || g_str_equal (cmd, "idle-tcp");
  ai = counted ? 3 : 2;
  if (argc != ai + 2)
  {
    fprintf (stderr, "hostile-peer: %s takes %sADDR PORT (try --help)\n", cmd, counted ? "N " : "");
    return 2;
  }
  if (counted)
    n = (guint) g_ascii_strtoull (argv[2], NULL, 10);
  port = atoi (argv[ai + 1]);
  if (n < 1 || port < 1 || port > 65535)
  {
    fprintf (stderr, "hostile-peer: bad N or PORT\n");
    return 2;
  }
  signal (SIGPIPE, SIG_IGN);
  setvbuf (stdout, NULL, _IOLBF, 0);

  if (g_str_equal (cmd, "half-open"))
    return cmd_half_open (n, argv[ai], port);
  if (g_str_equal (cmd, "flood"))
  {
    return cmd_flood (argv[ai], port);
  }
  if (g_str_equal (cmd, "vanish"))
  {
    if (opt_source == NULL)
    {
      fprintf (stderr, "hostile-peer: vanish needs --source\n");
      return 2;
    }
    return cmd_idle (n, argv[ai], port, TRUE);
  }
  if (g_str_equal (cmd, "idle"))
    return cmd_idle (n, argv[ai], port, FALSE);
  if (g_str_equal (cmd, "probe"))
    return cmd_probe (argv[ai], port);
  if (g_str_equal (cmd, "big-string") || g_str_equal (cmd, "big-binary"))
  {
    gboolean binary = g_str_equal (cmd, "big-binary");
    if (opt_tcp)
    {
      GByteArray *m = binary ? msg_big_binary () : msg_big_string ();
      return tcp_frame (cmd, argv[ai], port, m);
    }
    return cmd_big_rdma (argv[ai], port, binary);
  }
  if (g_str_equal (cmd, "tcp-zero-frame"))
    return tcp_frame (cmd, argv[ai], port, NULL);
  if (g_str_equal (cmd, "idle-tcp"))
    return cmd_idle_tcp (n, argv[ai], port);
  fprintf (stderr, "hostile-peer: unknown subcommand '%s' (try --help)\n", cmd);
  return 2;
}
