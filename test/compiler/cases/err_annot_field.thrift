// A hatrpc annotation on an argument is not a hint.
service S {
  void f(1: i32 x (hatrpc.polling = "busy")) (hatrpc.perf_goal = "latency")
}
