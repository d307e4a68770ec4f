// A hint key as a group keyword at the very end of the file: no value to show.
service S {
  void f()
  perf_goal: