// A hint key written as if it were a group, in a function's [ ].
service S {
  void f() [ perf_goal: latency; ]
}
