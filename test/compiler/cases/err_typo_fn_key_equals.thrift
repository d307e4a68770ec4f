// A hint without a group keyword, in a function's [ ]; the block after the separator.
service S {
  void f(); [ perf_goal = latency, concurrency = 4; ]
}
