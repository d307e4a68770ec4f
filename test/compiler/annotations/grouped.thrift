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

// The hints of annotated.thrift as hint groups (annotations.sh: both give the same tables).
exception Oops { 1: string why }

service Base {
  hint: perf_goal = throughput, concurrency = 8;
  c_hint: polling = busy;
  void b1()
}

service Kv extends Base {
  hint: concurrency = 64;
  s_hint: polling = event;
  binary get(1: binary key) [ hint: perf_goal = latency; c_hint: payload_size = 64; s_hint: payload_size = 1K; ]
  void put(1: binary k, 2: binary v) throws (1: Oops e) [ c_hint: proto = direct_write_imm; s_hint: perf_pref = busy; ]
  oneway void heartbeat() [ hint: perf_goal = res_util; ]
  list<binary> scan(1: i32 n) [ c_hint: payload_size = 128KB, proto = hybrid_eager_rndv; hint: transport = rdma, numa = 0; ]
  void plain()
}

service Unhinted {
  void u()
}

service ChildOfUnhinted extends Unhinted {
  hint: transport = tcp;
  void c()
}
