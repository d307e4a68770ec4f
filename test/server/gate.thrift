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

// Service of the threaded server tests (test/server/test_threaded_server.c).

service Gate {
  // Enters, waits until N calls are inside at once or TIMEOUT_MS passed, and returns the
  // most calls that were inside at once while it waited.
  i32 gather(1: i32 n, 2: i32 timeout_ms),
  binary echo(1: binary data),
  i32 ping(1: i32 x)
}
