#!/usr/bin/env bash
# test-bench-smoke.sh [--tap]: tiny runs of the benchmarks over tcp:// on 127.0.0.1: the
# latency benchmark thrift-rdma-bench (3 calls per size, 4 B to 64 KB) and each measurement
# of thrift-rdma-suite (a few calls, 0.2 s per point; mixed as atb_mix, at two sizes and two
# client counts), checking that the tables are full, the CSV files hold together
# (bench/check-suite-csv) and the servers stop cleanly; then bench/plot-results on those CSV
# files and a YCSB fixture: every figure a PNG of the size asked for, a missing column named.
# It measures nothing: it keeps the benchmarks building and working. Prints TAP.
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
bench=${top_builddir:-.}/bench/thrift-rdma-bench
suite=${top_builddir:-.}/bench/thrift-rdma-suite
checker=${top_srcdir:-$(dirname "$0")/..}/bench/check-suite-csv
plotter=${top_srcdir:-$(dirname "$0")/..}/bench/plot-results
rspreload=/usr/lib/x86_64-linux-gnu/rsocket/librspreload.so
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-smoke.XXXXXX")
server=
trap '[ -n "$server" ] && kill -KILL "$server" 2>/dev/null; rm -rf "$work"' EXIT
n=0
check() { n=$((n + 1)); if "${@:2}"; then echo "ok $n $1"; else echo "not ok $n $1"; fi; }

# start_server PROGRAM: serves tcp on a free port (tries five); sets server and port
start_server() {
  for _ in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 20000))
    "$1" --server "tcp://:$port" > "$work/server.out" 2>&1 &
    server=$!
    for _ in $(seq 1 150); do
      grep -q 'listening on' "$work/server.out" && break
      kill -0 "$server" 2>/dev/null || break
      sleep 0.1
    done
    grep -q 'listening on' "$work/server.out" && return 0
    # not listening within 15 s (a port taken, or a host too loaded): stop it before the next
    kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; server=
  done
  return 1
}
stop_server() {
  kill -INT "$server"; wait "$server"; src=$?; server=
  test $src -eq 0 && grep -q 'servers stopped' "$work/server.out"
}

echo "1..45"
# --- thrift-rdma-bench ---
start_server "$bench"
check "server listens" grep -q 'listening on' "$work/server.out"
"$bench" --client "tcp://127.0.0.1:$port" -n 3 -N 3 -w 1 --max-size 65536 > "$work/table" 2> "$work/progress"
rc=$?
sed 's/^/# /' "$work/progress" "$work/table"
check "client exits 0" test $rc -eq 0
check "the table names the baseline" grep -q 'ThriftSocket + ThriftFramedTransport.*baseline' "$work/table"
check "one row per size, 4 B to 64 KB, with three numbers" \
  bash -c "test \$(grep -cE '^(4 B|16 B|64 B|256 B|1 KB|4 KB|16 KB|64 KB) +\\| +[0-9.]+ +[0-9.]+ +[0-9.]+\$' '$work/table') -eq 8"
check "server stops on SIGINT" stop_server

# --- thrift-rdma-suite ---
check "thrift-rdma-suite --help" bash -c "'$suite' --help | grep -q -- '--run=WHAT'"
check "atb_lat, atb_thr, atb_mix --help: each its part and its options" bash -c "
  '${top_builddir:-.}/bench/atb_lat' --help | grep -q -- '--iterations=N' &&
  '${top_builddir:-.}/bench/atb_thr' --help | grep -q -- '--clients=N,N' &&
  '${top_builddir:-.}/bench/atb_mix' --help | grep -q -- '--mixed-clients=N,N' &&
  ! '${top_builddir:-.}/bench/atb_lat' --help | grep -q -- '--mixed-clients'"
"${top_builddir:-.}/bench/atb_lat" --run mixed --tcp tcp://127.0.0.1:1 > /dev/null 2>&1
check "atb_lat --run mixed is refused (exit 2)" test $? -eq 2
"$suite" --run latency --rsocket tcp://127.0.0.1:1 > /dev/null 2> "$work/err"
check "--rsocket without librspreload is refused (exit 2), saying so" \
  bash -c "test $? -eq 2 && grep -q 'not under LD_PRELOAD' '$work/err'"
if [ -r "$rspreload" ]; then
  LD_PRELOAD=$rspreload "$suite" --run latency --tcp tcp://127.0.0.1:1 > /dev/null 2> "$work/err"
  check "--tcp under librspreload is refused (exit 2): it would be rsocket" \
    bash -c "test $? -eq 2 && grep -q 'every socket is an rsocket' '$work/err'"
else
  n=$((n + 1)); echo "ok $n # SKIP $rspreload is not installed"
fi
"$suite" --run latency --tcp tcp://127.0.0.1:1 --functions echo_nonesuch > /dev/null 2>&1
check "an unknown function is refused (exit 2)" test $? -eq 2
"$suite" --run throughput --tcp tcp://127.0.0.1:1 --columns tcp,nonesuch > /dev/null \
  2> "$work/columns.err"
check "an unknown throughput column is refused (exit 2), naming the columns there are" \
  bash -c "test $? -eq 2 && grep -q 'plan, plain, e+r_rndv, tcp, rsocket' '$work/columns.err'"
"$suite" --run throughput --tcp tcp://127.0.0.1:1 --columns plan > /dev/null 2>&1
check "throughput: --columns naming no column whose server is given is refused (exit 2)" \
  test $? -eq 2
# bulk (issue 10) needs RDMA: here only what it refuses, and its rows when nothing answers
"$suite" --run bulk --bulk tcp://127.0.0.1:1 > /dev/null 2>&1
check "bulk: a tcp:// URI is refused (exit 2)" test $? -eq 2
"$suite" --bulk-server tcp://:1 > /dev/null 2>&1
check "bulk: a tcp:// server URI is refused (exit 2)" test $? -eq 2
"$suite" --run bulk --bulk "rdma://127.0.0.1:1?connect-timeout=500" --sizes 64K -d 0.1 -w 0 \
  --csv "$work/bulk.csv" > "$work/bulk" 2> "$work/progress"
rc=$?
check "bulk without a server: exit 1, a row per mode and buffer, each failed or skipped" \
  bash -c "test $rc -eq 1 && test \$(tail -n +2 '$work/bulk.csv' | cut -d, -f7 | grep -cxE 'failed|skipped') -eq 8"
start_server "$suite"
check "suite server listens" grep -q 'listening on' "$work/server.out"
uri=tcp://127.0.0.1:$port
"$suite" --run latency --tcp "$uri" --sizes 64,64K -n 3 -N 2 -w 1 --csv "$work/latency.csv" \
  > "$work/latency" 2> "$work/progress"
rc=$?
sed 's/^/# /' "$work/progress" "$work/latency"
check "latency exits 0" test $rc -eq 0
check "latency: a tcp row per size in the table" \
  bash -c "test \$(grep -cE '^tcp +(64 B|64 KB) +tcp +[0-9.]+ +[0-9.]+ +[0-9.]+\$' '$work/latency') -eq 2"
check "latency.csv holds together" "$checker" latency "$work/latency.csv"
"$suite" --run throughput --tcp "$uri" --sizes 512 --clients 1,3 -d 0.2 -w 1 --load-rounds 3 \
  --csv "$work/throughput.csv" > "$work/throughput" 2> "$work/progress"
rc=$?
sed 's/^/# /' "$work/progress" "$work/throughput"
check "throughput exits 0" test $rc -eq 0
check "throughput: 1 and 3 clients in the CSV" \
  bash -c "test \$(cut -d, -f5 '$work/throughput.csv' | grep -cxE '1|3') -eq 2"
check "throughput.csv holds together" "$checker" throughput "$work/throughput.csv"
check "throughput: each point measured in the 3 rounds asked for" \
  bash -c "test \$(grep -cE 'tcp echo_plain, 512 B, [13] clients, round [123]/3 ' '$work/progress') -eq 6"
"${top_builddir:-.}/bench/atb_mix" --tcp "$uri" --sizes 512,128K --mixed-clients 1,2 -d 0.2 -w 1 \
  --csv "$work/mixed.csv" > "$work/mixed" 2> "$work/progress"
rc=$?
sed 's/^/# /' "$work/progress" "$work/mixed"
check "mixed (atb_mix) exits 0" test $rc -eq 0
check "mixed.csv holds together" "$checker" mixed "$work/mixed.csv"
check "mixed: a row per size and client count (512 B and 128 KB, 1 and 2 clients)" \
  test "$(awk -F, 'NR > 1 { print $5 "/" $6 }' "$work/mixed.csv" | sort -u | tr '\n' ' ')" \
  = "131072/1 131072/2 512/1 512/2 "
check "mixed: a summary per size, latency and throughput function against N" \
  test "$(grep -cE '^(Latency|Throughput) function, ' "$work/mixed")" -eq 4
"$suite" --run calls --client "$uri" --calls 5 --csv "$work/calls.csv" 2> "$work/progress"
rc=$?
check "calls: 5 calls, one CSV row" bash -c "test $rc -eq 0 && test \$(sed -n 2p '$work/calls.csv' | cut -d, -f4) = 5"
"$suite" --run scale --tcp "$uri" --connections 2,8 --server-pid "$server" --csv "$work/scale.csv" \
  > "$work/scale" 2> "$work/progress"
rc=$?
sed 's/^/# /' "$work/progress" "$work/scale"
check "scale: 2 then 8 connections, the server's memory read, the CSV holds together" \
  bash -c "test $rc -eq 0 && '$checker' scale '$work/scale.csv' &&
           test \$(grep -cE '^tcp,tcp,(2|8),([^,]*,){11}[0-9]' '$work/scale.csv') -eq 2"
"$suite" --run scale --tcp "$uri" --connections 8,2 > /dev/null 2>&1
check "scale: connections that do not ascend are refused (exit 2)" test $? -eq 2
check "suite server stops on SIGINT" stop_server

# --- plot-results: the figures of those CSV files and of a YCSB fixture ---
# png_size FILE: "WIDTH HEIGHT" from the IHDR chunk, if FILE starts with the PNG signature
png_size() {
  local b
  b=$(od -An -tu1 -N24 "$1" 2>/dev/null | tr -s ' \n' ' ')
  set -- $b
  [ $# -eq 24 ] && [ "$1 $2 $3 $4 $5 $6 $7 $8" = "137 80 78 71 13 10 26 10" ] || return 1
  echo "$(( (${17} << 24) | (${18} << 16) | (${19} << 8) | ${20} ))" \
    "$(( (${21} << 24) | (${22} << 16) | (${23} << 8) | ${24} ))"
}
cat > "$work/ycsb.csv" <<'CSV'
workload,variant,threads,op,ops,errors,seconds,ops_per_s,avg_us,p50_us,p95_us,p99_us,gets,puts
a,hatrpc_service,4,all,4000,0,2.0,2000,1900,1500,4000,6000,1000,1000
a,hatrpc_service,4,get,1000,0,2.0,500,1500,1400,3000,5000,1000,0
a,hatrpc_function,4,all,4600,0,2.0,2300,1700,1400,3500,5500,1150,1150
a,thrift_tcp,4,all,2400,0,2.0,1200,3200,3000,7000,9000,600,600
b,hatrpc_service,4,all,6000,0,2.0,3000,1300,1100,2500,4000,2850,150
b,herd,4,all,3000,0,2.0,1500,2600,2400,5000,7000,1425,75
CSV
printf 'date: 2026-01-01 12:00 UTC\nhost: smoke\ncpu: test CPU (2 CPUs)\nrdma: none (tcp:// smoke)\n' \
  > "$work/machine.txt"
if command -v gnuplot > /dev/null; then
  "$plotter" --size 640x480 "$work" > "$work/plot.out" 2>&1
  rc=$?
  sed 's/^/# /' "$work/plot.out"
  check "plot-results exits 0" test $rc -eq 0
  for png in fig11-latency fig12-throughput fig13-mixed fig14-mixed fig15-ycsb-a fig16-ycsb-b; do
    check "$png.png: a PNG of 640x480" test "$(png_size "$work/$png.png")" = "640 480"
  done
  "$plotter" --size 320x200 --out "$work/other" "$work" > /dev/null 2>&1
  check "--size 320x200 --out DIR: the PNGs there at that size" \
    test "$(png_size "$work/other/fig11-latency.png")" = "320 200"
  mkdir -p "$work/renamed"
  sed '1s/,p50_us,/,median_us,/' "$work/latency.csv" > "$work/renamed/latency.csv"
  "$plotter" "$work/renamed" > /dev/null 2> "$work/plot.err"
  rc=$?
  sed 's/^/# /' "$work/plot.err"
  check "a CSV without a column it needs: exit 1, the column named" \
    bash -c "test $rc -eq 1 && grep -q 'latency.csv: no column \"p50_us\"' '$work/plot.err'"
  check "... and no figure made of it" test ! -e "$work/renamed/fig11-latency.png"
  "$plotter" "$work/renamed/nonesuch" > /dev/null 2>&1
  check "a directory that is not there: exit 1" test $? -eq 1
else
  for _ in $(seq 1 11); do n=$((n + 1)); echo "ok $n # SKIP gnuplot is not installed"; done
fi

# floor.csv (qperf, measured in the guest): the control connection of qperf is TCP, some 20
# segments a pair whatever the test; a point of few round trips (two polling pairs collapsing
# on two cores) must not read as RDMA traffic gone over TCP, and real TCP traffic must
cat > "$work/floor.csv" << 'CSV'
test,pairs,size,duration_s,round_trips,round_trips_per_s,one_way_us,cpu_user_us_per_rt,cpu_kernel_us_per_rt,rdma_pkts_per_rt,tcp_segs_per_rt,error
tcp_lat,1,512,1,2278,2278.0,220.0,13.2,338.0,0.000,2.011,
rc_lat,1,512,1,1939,1939.0,258.0,51.6,562.1,4.003,0.011,
rc_lat_poll,1,512,1,5278,5278.0,94.7,206.5,170.5,4.001,0.004,
tcp_lat,2,512,1,3481,3481.0,288.0,43.1,514.2,0.000,2.014,
rc_lat,2,512,1,1618,1618.0,800.0,148.3,920.9,4.005,0.025,
rc_lat_poll,2,512,1,126,126.0,8030.0,15793.7,238.1,4.063,0.333,
CSV
check "floor.csv: the control connection's segments on a point of 126 round trips pass" \
  "$checker" floor "$work/floor.csv"
sed 's/,4.063,0.333,$/,4.063,2.000,/' "$work/floor.csv" > "$work/floor-tcp.csv"
check "floor.csv: two TCP segments a round trip of an RDMA test are refused" \
  bash -c "! '$checker' floor '$work/floor-tcp.csv' > /dev/null 2>&1"
