#!/usr/bin/env bash
# test-bench-smoke.sh [--tap]: tiny runs of the benchmarks over tcp:// on 127.0.0.1: the
# latency benchmark thrift-rdma-bench (3 calls per size, 4 B to 64 KB) and each measurement
# of thrift-rdma-suite (a few calls, 0.2 s per point), checking that the tables are full, the
# CSV files hold together (bench/check-suite-csv) and the servers stop cleanly.
# It measures nothing: it keeps the benchmarks building and working. Prints TAP.
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
bench=${top_builddir:-.}/bench/thrift-rdma-bench
suite=${top_builddir:-.}/bench/thrift-rdma-suite
checker=${top_srcdir:-$(dirname "$0")/..}/bench/check-suite-csv
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

echo "1..22"
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
"$suite" --run latency --tcp tcp://127.0.0.1:1 --functions echo_nonesuch > /dev/null 2>&1
check "an unknown function is refused (exit 2)" test $? -eq 2
# bulk (issue 10) needs RDMA: here only what it refuses, and its rows when nothing answers
"$suite" --run bulk --bulk tcp://127.0.0.1:1 > /dev/null 2>&1
check "bulk: a tcp:// URI is refused (exit 2)" test $? -eq 2
"$suite" --bulk-server tcp://:1 > /dev/null 2>&1
check "bulk: a tcp:// server URI is refused (exit 2)" test $? -eq 2
"$suite" --run bulk --bulk "rdma://127.0.0.1:1?connect-timeout=500" --sizes 64K -d 0.1 -w 0 \
  --csv "$work/bulk.csv" > "$work/bulk" 2> "$work/progress"
rc=$?
check "bulk without a server: exit 1, a row per mode and buffer, each failed or skipped" \
  bash -c "test $rc -eq 1 && test \$(tail -n +2 '$work/bulk.csv' | cut -d, -f7 | grep -cxE 'failed|skipped') -eq 6"
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
"$suite" --run mixed --tcp "$uri" --sizes 512 --mixed-clients 2 -d 0.2 -w 1 \
  --csv "$work/mixed.csv" > "$work/mixed" 2> "$work/progress"
rc=$?
sed 's/^/# /' "$work/progress" "$work/mixed"
check "mixed exits 0" test $rc -eq 0
check "mixed.csv holds together" "$checker" mixed "$work/mixed.csv"
"$suite" --run calls --client "$uri" --calls 5 --csv "$work/calls.csv" 2> "$work/progress"
rc=$?
check "calls: 5 calls, one CSV row" bash -c "test $rc -eq 0 && test \$(sed -n 2p '$work/calls.csv' | cut -d, -f4) = 5"
check "suite server stops on SIGINT" stop_server
