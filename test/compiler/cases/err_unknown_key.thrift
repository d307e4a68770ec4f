service S {
  hint: perf_goal = latency, speed = fast;
  void f()
}
