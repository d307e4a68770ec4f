// Echo service of the ThriftRdma tests: generated with thrift-hatrpc, served by
// ThriftSimpleServer over ThriftServerRdma.
service Echo {
  s_hint: polling = event;
  binary echo(1: binary payload) [ c_hint: perf_goal = latency; ]
  i32 add(1: i32 a, 2: i32 b)
}
