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

// The hints of grouped.thrift as standard Thrift annotations, which stock compilers of every
// language accept (annotations.sh compiles this file with stock thrift for py, java and cpp).
exception Oops { 1: string why }

service Base {
  void b1()
} (hatrpc.perf_goal = "throughput", hatrpc.concurrency = "8", hatrpc.c.polling = "busy")

service Kv extends Base {
  binary get(1: binary key) (hatrpc.perf_goal = "latency", hatrpc.c.payload_size = "64",
                             hatrpc.s.payload_size = "1K")
  void put(1: binary k, 2: binary v) throws (1: Oops e) (hatrpc.c.proto = "direct_write_imm"
                                                          hatrpc.s.perf_pref = "busy")
  oneway void heartbeat() (hatrpc.perf_goal = "res_util");
  list<binary> scan(1: i32 n) (hatrpc.c.payload_size = "128KB"; hatrpc.c.proto = "hybrid_eager_rndv";
                               hatrpc.transport = "rdma"; hatrpc.numa = "0"),
  void plain() (doc = "an annotation of another tool")
} (hatrpc.concurrency = "64", hatrpc.s.polling = "event", other.tool = "ignored")

service Unhinted {
  void u()
}

service ChildOfUnhinted extends Unhinted {
  void c()
} (hatrpc.transport = "tcp")
