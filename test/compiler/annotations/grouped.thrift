// The hints of annotated.thrift as hint groups (annotations.sh: both give the same tables).
exception Oops { 1: string why }

service Base {
  hint: perf_goal = throughput, concurrency = 8;
  c_hint: polling = busy;
  void b1()
}

service Kv extends Base {
  hint: concurrency = 64;
  s_hint: polling = event;
  binary get(1: binary key) [ hint: perf_goal = latency; c_hint: payload_size = 64; s_hint: payload_size = 1K; ]
  void put(1: binary k, 2: binary v) throws (1: Oops e) [ c_hint: proto = direct_write_imm; s_hint: perf_pref = busy; ]
  oneway void heartbeat() [ hint: perf_goal = res_util; ]
  list<binary> scan(1: i32 n) [ c_hint: payload_size = 128KB, proto = hybrid_eager_rndv; hint: transport = rdma, numa = 0; ]
  void plain()
}

service Unhinted {
  void u()
}

service ChildOfUnhinted extends Unhinted {
  hint: transport = tcp;
  void c()
}
