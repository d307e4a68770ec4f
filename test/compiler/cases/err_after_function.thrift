service S {
  hint: perf_goal = latency;
  void f()
  c_hint: polling = busy;
  void g()
}
