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

/* Default transports of the tutorial programs. */
#ifndef TUTORIAL_DEFAULTS_H
#define TUTORIAL_DEFAULTS_H

/* The server listens on every address; the client calls the soft-RoCE guest's server address
 * (veth0, rxe0). Use --transport tcp://... for TCP. */
#define TUTORIAL_SERVER_URI "rdma://:9090"
#define TUTORIAL_CLIENT_URI "rdma://10.77.0.1:9090"

#endif
