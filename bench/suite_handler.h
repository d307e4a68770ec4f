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
 * suite_handler.h: the server side of the benchmark suite's service: every echo function
 * sends its payload back; the mix functions first compute a checksum of it (work that grows
 * with the size, as the handler of the HatRPC paper's mixed benchmark); usage reports the
 * process's CPU time.
 */
#ifndef _SUITE_HANDLER_H
#define _SUITE_HANDLER_H

#include <glib-object.h>

G_BEGIN_DECLS

/* A new processor of BenchSuite with its handler. */
GObject *suite_processor_new (void);

G_END_DECLS

#endif
