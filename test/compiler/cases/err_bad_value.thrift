service S {
  void f() [ c_hint: perf_goal = fast; ]
}
