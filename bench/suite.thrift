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
 * The benchmark suite's service (bench/thrift-rdma-suite, run by bench/run-all). Every function
 * but usage takes a binary payload and returns it. They differ only in their hints, so that
 * each measurement picks what the transport does by picking a function:
 *
 *   echo_plan            perf_goal = latency with one caller: the hint-selected plan
 *   echo_plain           no hints: what code generated from IDL without hints gets
 *   echo_<proto>         the same latency hints with the protocol forced (both sides);
 *                        echo_eager_rndv forces the pair eager_rndv (eager up to 4 KiB,
 *                        read_rndv above: AR-gRPC's, the HatRPC paper's Hybrid-EagerRNDV)
 *   tput_<size>_<sub>    perf_goal = throughput with the payload size of the throughput
 *                        benchmark (512 B or 128 KB) and a concurrency under (1) or over (64)
 *                        the cores: the client picks the one that tells the truth for N clients
 *   tput_<size>_<sub>_eager_rndv
 *                        the same with proto = eager_rndv: the Hybrid-EagerRNDV baseline
 *   mix_lat_<size>_<sub>, mix_tput_<size>_<sub>
 *                        the mixed benchmark (HatRPC paper Sec. 5.3): one latency and one
 *                        throughput function, labelled with the payload size and, like the
 *                        throughput functions, a concurrency under (1) or over (64) the cores
 *   mix_lat_<proto>, mix_tput_<proto>
 *                        the same two with the protocol forced
 *   bulk_echo            no hints: the bulk part (issue 10), where the rdma:// URI's bulk
 *                        options (on both sides) decide how a large field moves
 *
 * The mix functions make the server compute a checksum of the payload first, whose cost grows
 * with the size, as the paper's handler does. The tcp:// baseline ignores every hint.
 */

struct ServerUsage {
  1: i64 user_us,      // CPU time of the whole server process in user mode (getrusage)
  2: i64 system_us,    // and in the kernel
  3: i64 calls,        // benchmark calls served (usage itself not counted)
  4: i64 wakeups,      // connections its ThriftThreadedServers' dispatchers took from their
                       // epoll sets (the "wakeups" property; 0 for per-connection mode)
  5: i64 switches      // voluntary context switches of the whole process (getrusage
                       // ru_nvcsw): each a blocking wait that blocked
}

service BenchSuite {
  // latency: the plan, no hints, each protocol
  binary echo_plan(1: binary data)
    [ hint: perf_goal = latency, concurrency = 1; ]
  binary echo_plain(1: binary data)
  binary echo_eager(1: binary data)
    [ hint: perf_goal = latency, concurrency = 1, proto = eager; ]
  binary echo_write_rndv(1: binary data)
    [ hint: perf_goal = latency, concurrency = 1, proto = write_rndv; ]
  binary echo_read_rndv(1: binary data)
    [ hint: perf_goal = latency, concurrency = 1, proto = read_rndv; ]
  binary echo_direct_write_send(1: binary data)
    [ hint: perf_goal = latency, concurrency = 1, proto = direct_write_send; ]
  binary echo_chained_write_send(1: binary data)
    [ hint: perf_goal = latency, concurrency = 1, proto = chained_write_send; ]
  binary echo_direct_write_imm(1: binary data)
    [ hint: perf_goal = latency, concurrency = 1, proto = direct_write_imm; ]
  binary echo_rfp(1: binary data)
    [ hint: perf_goal = latency, concurrency = 1, proto = rfp; ]
  binary echo_batched_write(1: binary data)
    [ hint: perf_goal = latency, concurrency = 1, proto = batched_write; ]
  binary echo_eager_rndv(1: binary data)
    [ hint: perf_goal = latency, concurrency = 1, proto = eager_rndv; ]

  // throughput: N clients, each with its own connection
  binary tput_small_under(1: binary data)
    [ hint: perf_goal = throughput, payload_size = 512, concurrency = 1; ]
  binary tput_small_over(1: binary data)
    [ hint: perf_goal = throughput, payload_size = 512, concurrency = 64; ]
  binary tput_large_under(1: binary data)
    [ hint: perf_goal = throughput, payload_size = 128K, concurrency = 1; ]
  binary tput_large_over(1: binary data)
    [ hint: perf_goal = throughput, payload_size = 128K, concurrency = 64; ]
  binary tput_small_under_eager_rndv(1: binary data)
    [ hint: perf_goal = throughput, payload_size = 512, concurrency = 1, proto = eager_rndv; ]
  binary tput_small_over_eager_rndv(1: binary data)
    [ hint: perf_goal = throughput, payload_size = 512, concurrency = 64, proto = eager_rndv; ]
  binary tput_large_under_eager_rndv(1: binary data)
    [ hint: perf_goal = throughput, payload_size = 128K, concurrency = 1, proto = eager_rndv; ]
  binary tput_large_over_eager_rndv(1: binary data)
    [ hint: perf_goal = throughput, payload_size = 128K, concurrency = 64, proto = eager_rndv; ]

  // the mixed benchmark: 50/50 calls of a latency and a throughput function by N clients,
  // each pair with the concurrency that is true for N (as the throughput functions)
  binary mix_lat_small_under(1: binary data)
    [ hint: perf_goal = latency, payload_size = 512, concurrency = 1; ]
  binary mix_tput_small_under(1: binary data)
    [ hint: perf_goal = throughput, payload_size = 512, concurrency = 1; ]
  binary mix_lat_small_over(1: binary data)
    [ hint: perf_goal = latency, payload_size = 512, concurrency = 64; ]
  binary mix_tput_small_over(1: binary data)
    [ hint: perf_goal = throughput, payload_size = 512, concurrency = 64; ]
  binary mix_lat_large_under(1: binary data)
    [ hint: perf_goal = latency, payload_size = 128K, concurrency = 1; ]
  binary mix_tput_large_under(1: binary data)
    [ hint: perf_goal = throughput, payload_size = 128K, concurrency = 1; ]
  binary mix_lat_large_over(1: binary data)
    [ hint: perf_goal = latency, payload_size = 128K, concurrency = 64; ]
  binary mix_tput_large_over(1: binary data)
    [ hint: perf_goal = throughput, payload_size = 128K, concurrency = 64; ]
  // the same two with the protocol forced (their concurrency hint only picks the polling)
  binary mix_lat_eager(1: binary data)
    [ hint: perf_goal = latency, concurrency = 4, proto = eager; ]
  binary mix_tput_eager(1: binary data)
    [ hint: perf_goal = throughput, concurrency = 4, proto = eager; ]
  binary mix_lat_write_rndv(1: binary data)
    [ hint: perf_goal = latency, concurrency = 4, proto = write_rndv; ]
  binary mix_tput_write_rndv(1: binary data)
    [ hint: perf_goal = throughput, concurrency = 4, proto = write_rndv; ]
  binary mix_lat_read_rndv(1: binary data)
    [ hint: perf_goal = latency, concurrency = 4, proto = read_rndv; ]
  binary mix_tput_read_rndv(1: binary data)
    [ hint: perf_goal = throughput, concurrency = 4, proto = read_rndv; ]
  binary mix_lat_direct_write_send(1: binary data)
    [ hint: perf_goal = latency, concurrency = 4, proto = direct_write_send; ]
  binary mix_tput_direct_write_send(1: binary data)
    [ hint: perf_goal = throughput, concurrency = 4, proto = direct_write_send; ]
  binary mix_lat_chained_write_send(1: binary data)
    [ hint: perf_goal = latency, concurrency = 4, proto = chained_write_send; ]
  binary mix_tput_chained_write_send(1: binary data)
    [ hint: perf_goal = throughput, concurrency = 4, proto = chained_write_send; ]
  binary mix_lat_direct_write_imm(1: binary data)
    [ hint: perf_goal = latency, concurrency = 4, proto = direct_write_imm; ]
  binary mix_tput_direct_write_imm(1: binary data)
    [ hint: perf_goal = throughput, concurrency = 4, proto = direct_write_imm; ]
  binary mix_lat_rfp(1: binary data)
    [ hint: perf_goal = latency, concurrency = 4, proto = rfp; ]
  binary mix_tput_rfp(1: binary data)
    [ hint: perf_goal = throughput, concurrency = 4, proto = rfp; ]
  binary mix_lat_batched_write(1: binary data)
    [ hint: perf_goal = latency, concurrency = 4, proto = batched_write; ]
  binary mix_tput_batched_write(1: binary data)
    [ hint: perf_goal = throughput, concurrency = 4, proto = batched_write; ]
  binary mix_lat_eager_rndv(1: binary data)
    [ hint: perf_goal = latency, concurrency = 4, proto = eager_rndv; ]
  binary mix_tput_eager_rndv(1: binary data)
    [ hint: perf_goal = throughput, concurrency = 4, proto = eager_rndv; ]

  // hybrid:// (issue 9): small latency-bound calls by RDMA, bulk calls by TCP
  binary hy_small(1: binary data)
    [ hint: transport = rdma, perf_goal = latency, concurrency = 1; ]
  binary hy_bulk(1: binary data)
    [ hint: transport = tcp, perf_goal = throughput, payload_size = 1M, concurrency = 1; ]

  // bulk transfer of large fields (issue 10): a function of its own, so that hints given to
  // it later move no other part's figures
  binary bulk_echo(1: binary data)

  // the server's CPU time so far, for CPU seconds per RPC
  ServerUsage usage()
}
