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
 * The latency benchmark's service (bench/thrift-rdma-bench): echo of a binary argument.
 * Hints ask for latency with one caller, which the RDMA transport answers with busy polling
 * and its lowest-latency protocol; the tcp:// baseline ignores them.
 */
service BenchEcho {
  hint: perf_goal = latency, concurrency = 1;
  binary echo(1: binary data)
}
