// A hint without a group keyword, at service level.
service S {
  perf_goal = latency;
  void f()
}
