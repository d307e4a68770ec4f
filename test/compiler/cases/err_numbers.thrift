service S {
  hint: concurrency = 0, numa = 1024;
  void f() [ c_hint: payload_size = 1.3K; s_hint: payload_size = 4X, concurrency = -1; ]
}
