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

/* The hybrid transport's tests: functions pinned to each leg by their hints, one on the
 * service default, oneway calls and exceptions on each leg. */
exception Oops {
  1: i32 code
}

service Legs {
  binary bulk(1: binary data) [ hint: transport = tcp; ]
  binary quick(1: binary data) [ hint: transport = rdma, perf_goal = latency; ]
  binary plain(1: binary data)
  oneway void note_tcp(1: i32 x) [ hint: transport = tcp; ]
  oneway void note_rdma(1: i32 x) [ hint: transport = rdma; ]
  // the notes' running sum: proof that every oneway call arrived
  i64 noted(1: i32 dummy) [ hint: transport = tcp; ]
  i32 fail_tcp(1: i32 code) throws (1: Oops oops) [ hint: transport = tcp; ]
  i32 fail_rdma(1: i32 code) throws (1: Oops oops) [ hint: transport = rdma; ]
}
