/* Default transports of the tutorial programs. */
#ifndef TUTORIAL_DEFAULTS_H
#define TUTORIAL_DEFAULTS_H

/* The server listens on every address; the client calls the soft-RoCE guest's server address
 * (veth0, rxe0). Use --transport tcp://... for TCP. */
#define TUTORIAL_SERVER_URI "rdma://:9090"
#define TUTORIAL_CLIENT_URI "rdma://10.77.0.1:9090"

#endif
