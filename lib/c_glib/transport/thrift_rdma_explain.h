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
 * thrift_rdma_explain.h: what ThriftRdma will do with the messages of a hint set, and why,
 * as one line of text: the protocol and polling mode of a small and of a large message, and
 * the hints, machine and peer that decided them (the HatRPC paper's Fig. 6).
 *
 * The line, fields in this order (a stable format, meant for grep):
 *
 *   NAME: small (<= 4096 B) PROTO/POLLING, large PROTO/POLLING  [size: SIZE; proto: WHY;
 *   polling: WHY; subscription: SUB; peer: PEER; numa: NUMA]
 *
 * (one line; two spaces before '['), where
 *   NAME     "Service.function client" or "... server"; "(no hint set)" for NULL
 *   PROTO    the proto hint spelling: eager, write_rndv, direct_write_imm, rfp, ...
 *   POLLING  busy, event or hybrid
 *   SIZE     "by message length", or "payload_size=N <= 4096, all small" /
 *            "payload_size=N > 4096, all large" (both halves are then the same)
 *   WHY      what decided: "perf_goal=G, under|full|over", "proto=P hint", "polling=P hint",
 *            "proto=eager_rndv hint: eager up to 4 KiB, read_rndv above",
 *            "no perf_goal (the fast path)", "no perf_goal (the transport's polling)",
 *            "no hint set (...)"; a protocol the peer lacks adds
 *            ", peer cannot receive P: eager"; event polling left to what the waits measure
 *            (a throughput or res_util cell) adds " (spins until blocking measures the
 *            shorter call)" (by call time, cores to spare) or " (event until a spin measures
 *            less CPU per call)"
 *   SUB      "under (no concurrency hint)", "under (concurrency=N <= C cores per NUMA node)",
 *            "full (concurrency=N > C cores per NUMA node, <= T cores)",
 *            "over (concurrency=N > T cores)"
 *   PEER     "all", or the protocols the peer can receive, comma-separated
 *   NUMA     "node N (WHY)" or "none (WHY)": the NUMA node the set's buffers and polling
 *            thread are bound to, WHY one of "numa hint", "numa-node property", "no numa
 *            hint" (", no numa-node property" on a connection), "the default hint set's
 *            numa, at connect", led by "hint numa=H ignored, nodes here: LIST" when the set
 *            names a node the machine lacks, and followed by "; polling thread only, the
 *            buffers were placed at connect on node B" (or "on no node") when a function's
 *            hint came after the connection's buffers were placed elsewhere
 *
 * for example
 *
 *   Calculator.add client: small (<= 4096 B) direct_write_imm/busy, large direct_write_imm/busy
 *   [size: payload_size=64 <= 4096, all small; proto: perf_goal=latency, under; polling:
 *   perf_goal=latency, under; subscription: under (concurrency=4 <= 8 cores per NUMA node);
 *   peer: all; numa: none (no numa hint)]
 *
 * thrift_rdma_explain_set () and _sets () do not know the peer: they explain for a peer that
 * can receive every protocol, and the transport: their NUMA is the hint's, checked against
 * this machine; thrift_rdma_explain_connection () explains for the peer of a connection and
 * for its numa-node property and where its buffers were placed.  The engine maps each protocol to its implementation and reports its own
 * fallbacks (a protocol it does not have yet goes by eager, with a warning).
 *
 * Set THRIFT_RDMA_EXPLAIN=1 in the environment to have the transport print the line of each
 * hint set it meets, once per set (thrift_rdma_explain_print_once).
 */
#ifndef _THRIFT_RDMA_EXPLAIN_H
#define _THRIFT_RDMA_EXPLAIN_H

#include <glib.h>

#include <thrift/c_glib/transport/thrift_hints.h>
#include <thrift/c_glib/transport/thrift_rdma.h>

G_BEGIN_DECLS

/**
 * thrift_rdma_explain_set:
 * @hints: (nullable): a hint set (NULL: code generated without hints)
 * @default_polling: the transport's polling property (THRIFT_RDMA_DEFAULT_POLLING unless it
 *   was set), which applies when the hints do not decide the polling
 *
 * Returns: (transfer full): the line for @hints on this machine, without a newline; free
 * with g_free ().
 */
gchar *thrift_rdma_explain_set (const ThriftHintSet *hints, ThriftRdmaPolling default_polling);

/**
 * thrift_rdma_explain_sets:
 * @sets: a NULL-terminated table of hint sets, such as the <service>_hint_sets that
 *   thrift-hatrpc generates for a service with hints
 * @default_polling: as for thrift_rdma_explain_set ()
 *
 * Returns: (transfer full): one line per set, each ended by a newline ("" for an empty
 * table); free with g_free ().
 */
gchar *thrift_rdma_explain_sets (const ThriftHintSet *const *sets,
                                 ThriftRdmaPolling default_polling);

/**
 * thrift_rdma_explain_connection:
 * @self: a ThriftRdma, opened by a client or handed out by ThriftServerRdma's accept
 * @hints: (nullable): a hint set; NULL: the set of a message written without one (the
 *   transport's "hints" property, or none)
 *
 * As thrift_rdma_explain_set (), for this connection: the plan that messages written on
 * @self with @hints go by, made against the protocols the peer said in the handshake that it
 * can receive (PEER lists them; a protocol the peer lacks goes by eager, and WHY ends with
 * ", peer cannot receive P: eager") and against @self's polling property.  Where the plan
 * leaves event polling to measurement, the line ends with what this connection's calls
 * measured and do: " (measured on this connection: a spun call S us[ (CPU C us)], a blocked
 * one B us[ (CPU D us)] (by call time|by CPU per call, over N calls): spins|blocks, K
 * changes)" ("not measured yet" for a way without samples).  The plan is the one the
 * connection keeps for @hints (made now if no message used @hints yet).  Call it from the
 * thread that uses @self, as its other calls.
 *
 * Returns: (transfer full) (nullable): the line, without a newline, or NULL if @self is not
 * open; free with g_free ().
 */
gchar *thrift_rdma_explain_connection (ThriftRdma *self, const ThriftHintSet *hints);

/**
 * thrift_rdma_explain_enabled:
 *
 * Returns: TRUE if THRIFT_RDMA_EXPLAIN is set to a value other than "" and "0" in the
 * environment.  Read once per process.
 */
gboolean thrift_rdma_explain_enabled (void);

/**
 * thrift_rdma_explain_print_once:
 * @hints: (nullable): a hint set
 * @default_polling: as for thrift_rdma_explain_set ()
 *
 * If thrift_rdma_explain_enabled (), prints "ThriftRdma explain: " and the line for @hints to
 * stderr, the first time this process is given @hints (the same pointer); otherwise does
 * nothing.  Thread-safe.
 *
 * Returns: TRUE if it printed.
 */
gboolean thrift_rdma_explain_print_once (const ThriftHintSet *hints,
                                         ThriftRdmaPolling default_polling);

G_END_DECLS

#endif /* _THRIFT_RDMA_EXPLAIN_H */
