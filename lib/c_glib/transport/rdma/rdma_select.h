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
 * rdma_select.h: from a message's resolved hints to what the engine does with it (paper
 * Sec. 3.3, Fig. 6): the polling mode of its wait (the protocol is rdma_plan_make's).
 * Hints the engine cannot act on are reported once per hint set, never ignored in silence.
 */
#ifndef _RDMA_SELECT_H
#define _RDMA_SELECT_H

#include <glib.h>

#include <thrift/c_glib/transport/thrift_hints.h>
#include <thrift/c_glib/transport/thrift_rdma.h>

#include "rdma_plan.h"

G_BEGIN_DECLS

/* The polling mode for a wait, as rdma_plan_make decides it (HatRPC Fig. 6): @h's
 * polling, else what its perf_goal and concurrency give for a small message (for every
 * message when @h has payload_size), else @fallback.  @h may be NULL.  *@measure (nullable)
 * gets the measure by which an EVENT wait may spin instead (RdmaMeasure, rdma_plan.h). */
ThriftRdmaPolling rdma_select_polling (const ThriftHintSet *h, ThriftRdmaPolling fallback,
                                       RdmaMeasure *measure);

/* Logs, once per hint set for the life of the process, a warning for each hint of @h that
 * is accepted but cannot be acted on (transport = tcp on an rdma:// connection), and one
 * when @h asks for busy polling with concurrency above the cores.
 * Returns the number of warnings this call logged (0 once the set was seen).  Thread-safe. */
guint rdma_select_warn_unimplemented (const ThriftHintSet *h);

G_END_DECLS

#endif
