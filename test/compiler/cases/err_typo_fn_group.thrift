// A misspelt group keyword in a function's [ ].
service S {
  void f() [ hints: perf_goal = latency; ]
}
