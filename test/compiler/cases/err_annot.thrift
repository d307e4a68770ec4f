// Errors in hatrpc annotations: the groups' checks, reported at the annotation's line.
service S {
  hint: polling = busy;
  void f() (hatrpc.perf_gaol = "latency",
            hatrpc.c.payload_size = "lots")
  void g() (hatrpc.c.payload_size = "1K") [ c_hint: payload_size = 2K; ]
  void h() (hatrpc.s.numa = "0", hatrpc.s.numa = "1", hatrpc.c = "1")
} (hatrpc.polling = "event", hatrpc.c.perf_pref = "busy", hatrpc.c.polling = "event")
