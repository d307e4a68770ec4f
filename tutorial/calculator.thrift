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
 * The tutorial's service: a small calculator, with HatRPC hints (see
 * thrift-compiler-patch/README.md for the syntax). Compile with
 *
 *   thrift-hatrpc --gen c_glib -out gen calculator.thrift
 *
 * Hints are advice to the transport: ThriftRdma uses them to choose how it polls and which
 * RDMA protocol carries each message; ThriftSocket ignores them. Handler code is the same
 * either way.
 */

enum Operation {
  ADD = 1,
  SUBTRACT = 2,
  MULTIPLY = 3,
  DIVIDE = 4
}

struct Work {
  1: i32 num1 = 0,
  2: i32 num2,
  3: Operation op,
  4: optional string comment
}

exception InvalidOperation {
  1: i32 whatOp,
  2: string why
}

service Calculator {
  // Service level: small calls answered quickly, a few clients at once.
  hint: perf_goal = latency, concurrency = 4;
  // The server blocks on the completion channel instead of spinning while it waits.
  s_hint: polling = event;

  void ping(),

  i32 add(1: i32 num1, 2: i32 num2) [ c_hint: payload_size = 64; s_hint: payload_size = 64; ]

  i32 calculate(1: i32 logid, 2: Work w) throws (1: InvalidOperation ouch)

  // A binary payload both ways: large messages, so ask for throughput; and over TCP when the
  // client runs hybrid:// (bulk moves faster over TCP than over soft-RoCE).
  binary reverse(1: binary data) [ hint: perf_goal = throughput, payload_size = 64K, transport = tcp; ]

  // Fire and forget: nothing comes back, so spare resources.
  oneway void zip() [ hint: perf_goal = res_util; ]
}
