// A misspelt group keyword at service level.
service S {
  hints: perf_goal = latency;
  void f()
}
