/* rdma_transport.h: what ThriftServerRdma needs from ThriftRdma (internal). */
#ifndef _RDMA_TRANSPORT_H
#define _RDMA_TRANSPORT_H

#include <thrift/c_glib/thrift_configuration.h>
#include <thrift/c_glib/transport/thrift_rdma.h>

#include "rdma_conn.h"

G_BEGIN_DECLS

/* A ThriftRdma around an accepted, connected @conn (ownership taken). */
ThriftRdma *thrift_rdma_new_accepted (RdmaConn *conn, ThriftConfiguration *configuration,
                                      gpointer hints, ThriftRdmaPolling polling,
                                      guint call_timeout_ms, guint idle_timeout_ms,
                                      guint keepalive_ms);

/* The settings a ThriftRdma with this configuration and polling mode uses. */
void thrift_rdma_settings_for (ThriftConfiguration *configuration, ThriftRdmaPolling polling,
                               RdmaConnSettings *out);

G_END_DECLS

#endif
