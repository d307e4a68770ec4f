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


// HatRPC's design-space table (Sec. 3.3, Fig. 6) as IDL, for test/rdma/test_table.c: one
// function per cell, named GOAL_SUBSCRIPTION_SIZE.  Every function echoes its argument.
//   GOAL          perf_goal = latency | throughput | res_util
//   SUBSCRIPTION  concurrency against the cores: under = 1 (at most one NUMA node's cores on
//                 any machine), over = 100000 (more than all cores on any machine this runs
//                 on).  full (more than one node's cores, at most all) depends on the machine,
//                 so no static value can name it: rdma_plan's host test covers it
//                 (test/unit/test_rdma_plan.c, on a machine of two 8-core nodes).
//   SIZE          small = payload_size 64, large = payload_size 65536, len = no payload_size
//                 (each message decided by its own length)
// and three functions whose explicit proto and polling hints override the table.
service Table {
  binary latency_under_small(1: binary data) [ hint: perf_goal = latency, concurrency = 1, payload_size = 64; ]
  binary latency_under_large(1: binary data) [ hint: perf_goal = latency, concurrency = 1, payload_size = 65536; ]
  binary latency_under_len(1: binary data) [ hint: perf_goal = latency, concurrency = 1; ]
  binary latency_over_small(1: binary data) [ hint: perf_goal = latency, concurrency = 100000, payload_size = 64; ]
  binary latency_over_large(1: binary data) [ hint: perf_goal = latency, concurrency = 100000, payload_size = 65536; ]
  binary latency_over_len(1: binary data) [ hint: perf_goal = latency, concurrency = 100000; ]

  binary throughput_under_small(1: binary data) [ hint: perf_goal = throughput, concurrency = 1, payload_size = 64; ]
  binary throughput_under_large(1: binary data) [ hint: perf_goal = throughput, concurrency = 1, payload_size = 65536; ]
  binary throughput_under_len(1: binary data) [ hint: perf_goal = throughput, concurrency = 1; ]
  binary throughput_over_small(1: binary data) [ hint: perf_goal = throughput, concurrency = 100000, payload_size = 64; ]
  binary throughput_over_large(1: binary data) [ hint: perf_goal = throughput, concurrency = 100000, payload_size = 65536; ]
  binary throughput_over_len(1: binary data) [ hint: perf_goal = throughput, concurrency = 100000; ]

  binary res_util_under_small(1: binary data) [ hint: perf_goal = res_util, concurrency = 1, payload_size = 64; ]
  binary res_util_under_large(1: binary data) [ hint: perf_goal = res_util, concurrency = 1, payload_size = 65536; ]
  binary res_util_under_len(1: binary data) [ hint: perf_goal = res_util, concurrency = 1; ]
  binary res_util_over_small(1: binary data) [ hint: perf_goal = res_util, concurrency = 100000, payload_size = 64; ]
  binary res_util_over_large(1: binary data) [ hint: perf_goal = res_util, concurrency = 100000, payload_size = 65536; ]
  binary res_util_over_len(1: binary data) [ hint: perf_goal = res_util, concurrency = 100000; ]

  // res_util, over, by length (eager small, a rendezvous large), proto forced for every size;
  // the polling stays the table's
  binary proto_override(1: binary data) [ hint: perf_goal = res_util, concurrency = 100000, proto = chained_write_send; ]
  // throughput, under, by length (event small, busy large), polling forced for every size;
  // the protocols stay the table's
  binary polling_override(1: binary data) [ hint: perf_goal = throughput, concurrency = 1, polling = hybrid; ]
  // latency, under, with each side's own overrides of both
  binary side_override(1: binary data) [ hint: perf_goal = latency, concurrency = 1; c_hint: proto = direct_write_send, polling = event; s_hint: proto = read_rndv, polling = busy; ]
}
