// Value forms: sizes with units, decimals, quoted strings, aliases, an empty [ ], separators.
service V {
  void a() [ c_hint: payload_size = 4K; s_hint: payload_size = 128KB; ]
  void b() [ c_hint: payload_size = 1M; s_hint: payload_size = 2MiB; ],
  void c(); [ c_hint: payload_size = 1.5K; s_hint: payload_size = 512B; ]
  void d() [ hint: polling = "event", proto = 'rfp', concurrency = 1,
                   numa = 1023, transport = tcp; ];
  void e() [ c_hint: proto = rndv; s_hint: proto = eager_sendrecv; ]
  void f() [ ]
  void g() [
    # comments inside the block
    hint: payload_size = 1G /* and inside a group */, perf_goal = res_util;
  ]
}
