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
 * HatKV: the key-value store of the HatRPC paper (Sec. 4.4, Fig. 10), on LMDB.  YCSB's records
 * are 24-byte keys with 10 fields of 100 bytes (a 1,000-byte value); MultiGET and MultiPUT
 * carry batches of 10, so a PUT sends about 1 KB, a MultiPUT about 10 KB, a GET returns 1 KB
 * and a MultiGET 10 KB.
 *
 * The same four functions appear in one service per variant of the paper's Sec. 5.4: the
 * services differ only in their hints, so one server process serves every variant (each on
 * a port of its own, over one store) and one client binary calls any of them.
 *
 *   KvService   HatRPC-Service: service-level hints only (perf_goal and concurrency)
 *   KvFunction  HatRPC-Function: the same, plus each function's payload sizes per side and
 *               the goal of the reads
 *   KvArGrpc    AR-gRPC's protocols: Eager-SendRecv up to 4 KiB, Read-RNDV above, both ways
 *   KvHerd      HERD's: requests by RDMA WRITE (Direct-Write-Send), responses by SEND
 *   KvPilaf     Pilaf/RFP's, read-based: requests by RDMA WRITE, responses fetched by the
 *               client with RDMA READ (RFP)
 *
 * Stock Thrift over TCP is KvService over tcp://, where every hint is ignored.
 */

/* A store failure the caller can act on: a missing key is not one (see get). */
exception KvError {
  1: string message
}

/* get of a key the store does not have. */
exception KvNotFound {
  1: binary key
}

service KvService {
  hint: perf_goal = throughput, concurrency = 128;

  binary get(1: binary key) throws (1: KvNotFound missing, 2: KvError failure)
  void put(1: binary key, 2: binary value) throws (1: KvError failure)
  /* one value per key, in order; an empty value for a key the store does not have */
  list<binary> multi_get(1: list<binary> keys) throws (1: KvError failure)
  /* keys[i] gets values[i], all or none */
  void multi_put(1: list<binary> keys, 2: list<binary> values) throws (1: KvError failure)
}

service KvFunction {
  hint: perf_goal = throughput, concurrency = 128;

  binary get(1: binary key) throws (1: KvNotFound missing, 2: KvError failure)
    [ hint: perf_goal = latency; c_hint: payload_size = 64; s_hint: payload_size = 1K; ]
  void put(1: binary key, 2: binary value) throws (1: KvError failure)
    [ c_hint: payload_size = 1K; s_hint: payload_size = 64; ]
  list<binary> multi_get(1: list<binary> keys) throws (1: KvError failure)
    [ c_hint: payload_size = 512; s_hint: payload_size = 10K; ]
  void multi_put(1: list<binary> keys, 2: list<binary> values) throws (1: KvError failure)
    [ c_hint: payload_size = 10K; s_hint: payload_size = 64; ]
}

service KvArGrpc {
  hint: perf_goal = throughput, concurrency = 128, proto = eager_rndv;

  binary get(1: binary key) throws (1: KvNotFound missing, 2: KvError failure)
  void put(1: binary key, 2: binary value) throws (1: KvError failure)
  list<binary> multi_get(1: list<binary> keys) throws (1: KvError failure)
  void multi_put(1: list<binary> keys, 2: list<binary> values) throws (1: KvError failure)
}

service KvHerd {
  hint: perf_goal = throughput, concurrency = 128;
  c_hint: proto = direct_write_send;
  s_hint: proto = eager;

  binary get(1: binary key) throws (1: KvNotFound missing, 2: KvError failure)
  void put(1: binary key, 2: binary value) throws (1: KvError failure)
  list<binary> multi_get(1: list<binary> keys) throws (1: KvError failure)
  void multi_put(1: list<binary> keys, 2: list<binary> values) throws (1: KvError failure)
}

service KvPilaf {
  hint: perf_goal = throughput, concurrency = 128;
  c_hint: proto = direct_write_imm;
  s_hint: proto = rfp;

  binary get(1: binary key) throws (1: KvNotFound missing, 2: KvError failure)
  void put(1: binary key, 2: binary value) throws (1: KvError failure)
  list<binary> multi_get(1: list<binary> keys) throws (1: KvError failure)
  void multi_put(1: list<binary> keys, 2: list<binary> values) throws (1: KvError failure)
}
