/* Finding RDMA devices, with errors that say what to check. Internal to the engine. */
#ifndef _RDMA_DEVICE_H
#define _RDMA_DEVICE_H

#include <glib.h>

G_BEGIN_DECLS

/* Number of RDMA devices on this host (> 0), or 0 with @error set to the cause. */
gint rdma_device_probe (GError **error);

G_END_DECLS

#endif
