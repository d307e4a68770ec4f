/*
 * rdma_keepalive.h: noticing a peer that vanished without a disconnect (its host or link went
 * down, or every packet is lost).  Nothing tells a side that only waits to receive: its QP
 * has nothing in flight, so no retransmission ever fails.  So once the peer has been quiet
 * for a quarter of settings.keepalive_ms, a side posts a probe, a zero-byte RDMA WRITE: the
 * peer's adapter acknowledges it without its software and without a receive slot (a
 * zero-length RDMA operation needs no memory key, IBTA C9-88).  A dead peer never does, and
 * the probe fails with IBV_WC_RETRY_EXC_ERR after the QP's retries (ack timeout 2^17 *
 * 4.096 us, 7 retries: about 4 s), which fails the connection.  A peer quiet for all of
 * keepalive_ms is dead in any case.  Waits wake up for the ticks (rdma_keepalive_due), and
 * the clock is read only there: a completion just sets conn->alive_seen.
 */
#ifndef _RDMA_KEEPALIVE_H
#define _RDMA_KEEPALIVE_H

#include <glib.h>

#include "rdma_conn.h"

G_BEGIN_DECLS

/* Local ACK timeout of our QPs: 4.096 us * 2^17 = 0.54 s per try. */
#define RDMA_KEEPALIVE_ACK_TIMEOUT 17

/* Starts the keepalive of a connection that just became CONNECTED. */
void rdma_keepalive_start (RdmaConn *conn, gint64 now);
/* When the connection's next tick is due (monotonic us), or 0 if it has none. */
gint64 rdma_keepalive_due (const RdmaConn *conn);
/* Runs a tick: FALSE with @error (the connection failed) if the peer is dead. */
gboolean rdma_keepalive_tick (RdmaConn *conn, gint64 now, GError **error);
/* The probe completed successfully. */
void rdma_keepalive_probe_done (RdmaConn *conn);

G_END_DECLS

#endif
