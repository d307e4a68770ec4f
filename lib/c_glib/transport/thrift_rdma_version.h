/*
 * thrift_c_glib_rdma: RDMA transports for Apache Thrift c_glib.
 */
#ifndef _THRIFT_RDMA_VERSION_H
#define _THRIFT_RDMA_VERSION_H

#include <glib.h>

G_BEGIN_DECLS

/* The wire protocol version exchanged in the connection handshake; peers with another
 * version are refused. */
#define THRIFT_RDMA_WIRE_VERSION 1

/* Library version as "major.minor.micro". */
const gchar *thrift_rdma_version_string (void);

/* TRUE when an RDMA device is usable on this host. When not, sets @error
 * (THRIFT_TRANSPORT_ERROR) to a message that names the cause and what to do. */
gboolean thrift_rdma_device_available (GError **error);

G_END_DECLS

#endif /* _THRIFT_RDMA_VERSION_H */
