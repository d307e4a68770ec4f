service S {
  hint: concurrency = 4, concurrency = 8;
  void f() [ s_hint: polling = busy,
                     perf_pref = event; ]
  void g() [ hint: numa = 0; hint: numa = 1; ]
}
