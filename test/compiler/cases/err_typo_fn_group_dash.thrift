// c-hint for c_hint in a function's [ ].
service S {
  void f() [ hint: perf_goal = latency;
             c-hint: payload_size = 64; ]
}
