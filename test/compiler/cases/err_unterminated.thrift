service S {
  void f() [ hint: perf_goal = latency ]
}
