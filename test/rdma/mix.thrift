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


// Ten functions, each with its own protocols, for test/rdma/test_mix.c: a client that calls
// them in this order switches the protocol of its request on every call, and the server the
// protocol of its reply on every reply.  Comments: request / reply protocol.
exception MixError {
  1: string why,
  2: binary data
}

// What the server received from one client's oneway calls.
struct Tally {
  1: i32 client,
  2: i32 oneways,   // oneway calls received in order, byte-exact
  3: i32 bad        // oneway calls out of order or not byte-exact
}

service Mix {
  // eager / eager
  Tally tally(1: i32 client) [ hint: proto = eager; ]
  // direct_write_imm / direct_write_send, up to 4 KB: the data back
  binary put(1: binary data) [ c_hint: proto = direct_write_imm; s_hint: proto = direct_write_send; ]
  // chained_write_send / none
  oneway void note(1: i32 client, 2: i32 seq, 3: binary data) [ c_hint: proto = chained_write_send; ]
  // write_rndv / read_rndv, 5 to 40 KB: the data back
  binary bulk(1: binary data) [ c_hint: proto = write_rndv; s_hint: proto = read_rndv; ]
  // direct_write_send / direct_write_imm: always raises oops, with the data in it
  binary fail(1: binary data) throws (1: MixError oops) [ c_hint: proto = direct_write_send; s_hint: proto = direct_write_imm; ]
  // read_rndv / rfp: a small request for a large reply, LEN bytes of pattern SEED
  binary fetch(1: i32 seed, 2: i32 len) [ c_hint: proto = read_rndv; s_hint: proto = rfp; ]
  // batched_write / none
  oneway void log(1: i32 client, 2: i32 seq, 3: binary data) [ c_hint: proto = batched_write; ]
  // chained_write_send / chained_write_send: the data twice
  binary twice(1: binary data) [ hint: proto = chained_write_send; ]
  // by the table (latency, under: direct_write_imm both ways): the data back
  binary quick(1: binary data) [ hint: perf_goal = latency, concurrency = 1; ]
  // direct_write_send / write_rndv, 4 to 20 KB: the data back
  binary big(1: binary data) [ c_hint: proto = direct_write_send; s_hint: proto = write_rndv; ]
}
