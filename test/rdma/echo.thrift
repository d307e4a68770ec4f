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

// Echo service of the ThriftRdma tests: generated with thrift-hatrpc, served by
// ThriftSimpleServer over ThriftServerRdma.
service Echo {
  s_hint: polling = event;
  binary echo(1: binary payload) [ c_hint: perf_goal = latency; ]
  i32 add(1: i32 a, 2: i32 b)
}
