// The example of thrift-compiler-patch/README.md (HatRPC paper, Fig. 7 syntax).
service Kv {
  hint: perf_goal = throughput, concurrency = 64;
  s_hint: polling = event;
  binary get(1: binary key) [ hint: perf_goal = latency; c_hint: payload_size = 64; s_hint: payload_size = 1024; ]
  oneway void heartbeat() [ hint: perf_goal = res_util; ]
}
