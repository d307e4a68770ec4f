// Inheritance through extends, and overrides at each level.
service Base {
  hint: perf_goal = throughput, concurrency = 8;
  c_hint: polling = busy;
  void b1()
}

service Mid extends Base {
  hint: concurrency = 16;
  void m1() [ c_hint: perf_goal = latency; ]
}

service Leaf extends Mid {
  s_hint: perf_goal = res_util;
  hint: polling = event;
  void l1()
  void l2() [ hint: polling = hybrid; ]
}

service Unhinted {
  void u()
}

service ChildOfUnhinted extends Unhinted {
  hint: transport = rdma;
  void c()
}
