/*
 * The latency benchmark's service (bench/thrift-rdma-bench): echo of a binary argument.
 * Hints ask for latency with one caller, which the RDMA transport answers with busy polling
 * and its lowest-latency protocol; the tcp:// baseline ignores them.
 */
service BenchEcho {
  hint: perf_goal = latency, concurrency = 1;
  binary echo(1: binary data)
}
