// A file that includes itself (stock thrift 0.17.0 recurses until its stack overflows: 0012).
include "err_include_self.thrift"
service S {
  hint: perf_goal = latency;
  void f()
}
