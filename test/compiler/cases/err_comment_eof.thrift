// A comment never closed, after a service with hints (stock thrift 0.17.0 hangs on one: 0010).
service S {
  hint: perf_goal = latency;
  void f() [ c_hint: payload_size = 4K; ]
}
/* not closed
