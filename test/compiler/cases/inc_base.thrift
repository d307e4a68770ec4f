// Included by include_child.thrift (not a case of its own).
service IncBase {
  hint: perf_goal = latency;
  void x()
}
