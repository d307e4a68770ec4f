/*
 * Waking a thread that blocks in a server transport's accept or in a connection's peek or
 * read, from another thread, for the transports this library knows. Internal to
 * libthrift_c_glib_rdma (not installed).
 */
#ifndef _THRIFT_SERVER_INTERRUPT_H
#define _THRIFT_SERVER_INTERRUPT_H

#include <thrift/c_glib/transport/thrift_server_transport.h>
#include <thrift/c_glib/transport/thrift_transport.h>

G_BEGIN_DECLS

/* Makes a blocked (or the next) accept on LISTENER fail. Returns TRUE if that closed
 * LISTENER (the caller must not close it again), FALSE if LISTENER is still to be closed. */
gboolean thrift_server_interrupt_accept (ThriftServerTransport *listener);

/* Makes a blocked (or the next) peek or read on CONNECTION end; the connection's worker
 * still closes it. For a transport of unknown type this closes it. */
void thrift_server_interrupt_connection (ThriftTransport *connection);

G_END_DECLS

#endif /* _THRIFT_SERVER_INTERRUPT_H */
