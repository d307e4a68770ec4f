// Hint groups and hatrpc annotations mixed: an annotation is the layer of the group of its
// side and level (service hint: < service c_hint:/s_hint: < function hint: < c_hint:/s_hint:).
service M {
  hint: perf_goal = throughput;
  void a() (hatrpc.c.perf_goal = "latency") [ hint: concurrency = 4; ]
  void b() (hatrpc.perf_goal = "res_util", hatrpc.s.polling = "busy") [ c_hint: polling = event; ]
  void c()
} (hatrpc.s.perf_goal = "latency", hatrpc.concurrency = "16", note = "1")
