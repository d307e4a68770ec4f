// A hint key written as if it were a group, at service level.
service S {
  perf_goal: latency;
  void f()
}
