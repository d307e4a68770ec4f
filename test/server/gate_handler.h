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
 * gate_handler.h: the Gate handler of the threaded server tests (test/server over TCP,
 * test/rdma over RDMA): gather(n, timeout_ms) waits until n calls are inside at once (or the
 * timeout) and returns the most it saw; echo returns its data; ping returns x + 1.
 */
#ifndef _GATE_HANDLER_H
#define _GATE_HANDLER_H

#include "gate.h"

G_BEGIN_DECLS

GType test_gate_get_type (void);

/* The most gather calls inside at once since the last reset. */
void test_gate_reset_peak (void);
gint test_gate_peak (void);
/* ping(x) returns x + 1, after sleeping -x ms when x < 0; the calls served so far */
gint test_gate_pings (void);

G_END_DECLS

#endif
