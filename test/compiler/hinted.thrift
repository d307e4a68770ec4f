# IDL with hints for the generated-code tests (test_hints_runtime.c).  The resolved sets it
# must produce are spelled out in test_hints_runtime.c and in cases/runtime-idl.expected.

exception Oops {
  1: string why
}

struct hint {
  1: i32 hint
}

service Kv {
  hint: perf_goal = throughput, concurrency = 64;
  s_hint: polling = event;

  binary get(1: binary key) [ hint: perf_goal = latency; c_hint: payload_size = 64; s_hint: payload_size = 1K; ]
  oneway void heartbeat() [ hint: perf_goal = res_util; ]
  i32 put(1: binary key, 2: binary value) throws (1: Oops oops) [ c_hint: proto = direct_write_imm, payload_size = 128KB; s_hint: proto = eager; ]
  hint plain(1: hint h)
}

service KvChild extends Kv {
  c_hint: transport = tcp;

  void ping() [ s_hint: perf_pref = busy, numa = 0; c_hint: proto = hybrid_eager_rndv; ]
}
