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

# Every place the c_glib generator reads a binary value: struct and exception fields (plain,
# optional, required), elements of list and set, keys and values of map, a nested container,
# a service's arguments (its _args structs) and results read by recv_<function> (a binary, a
# list, a map, a struct).  zero_copy.sh compares the code generated with and without
# c_glib:zero_copy_binary; test_zero_copy_runtime runs the code generated with it.  The
# processor's functions reply with a binary, a list, a map, a struct and a declared exception
# that hold binaries, and drop is oneway: with the option each keeps its reply alive until the
# flush.

struct Blobs {
  1: binary one,
  2: optional binary opt,
  3: required binary req,
  4: list<binary> blist,
  5: set<binary> bset,
  6: map<binary, binary> bmap,
  7: map<string, list<binary>> nested,
  8: string text,
}

exception Oops {
  1: binary why,
}

service Zc {
  binary echo(1: binary data, 2: list<binary> more) throws (1: Oops e),
  list<binary> many(1: map<binary, binary> m),
  map<binary, binary> pairs(1: set<binary> s),
  Blobs blobs(1: Blobs b),
  oneway void drop(1: binary data),
}
