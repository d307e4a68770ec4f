// A string never closed at the end of the file, in an annotation (stock thrift 0.17.0 hangs on one: 0010).
service S {
  void f() (hatrpc.perf_goal = "latency