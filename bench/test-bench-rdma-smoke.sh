#!/usr/bin/env bash
# test-bench-rdma-smoke.sh [--tap]: bench/run-all --quick where RDMA works (the soft-RoCE
# guest of the RDMA suite: test/rdma/run-suite), printing TAP: every part runs, its table is
# printed, its CSV file is written and holds together (bench/check-suite-csv: the figures agree
# with each other and with the verbs counters, forced protocols carry their calls, the plan
# goes by Direct-WriteIMM; the bulk part's copy columns are measured, a bulk mode this build
# refuses is marked skipped, perftest's raw figures sit beside them; the rsocket column of
# latency, throughput and mixed is measured and its calls moved RDMA packets, not TCP
# segments; qperf's ping-pongs over TCP and RDMA, each on its own fabric; the figures are
# plotted when gnuplot is installed). It measures nothing: it keeps
# run-all working.
# Environment: top_builddir (default: the source tree).
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
srcdir=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-rdma-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT
n=0

echo "1..32"
start=$SECONDS
"$srcdir/bench/run-all" --quick --out "$work/csv" > "$work/out" 2> "$work/err"
rc=$?
echo "# run-all --quick took $((SECONDS - start)) s"
# the whole output only when something fails: run-suite costs a process per comment line
failures=0
check() {
  n=$((n + 1))
  if "${@:2}"; then echo "ok $n $1"; else echo "not ok $n $1"; failures=$((failures + 1)); fi
}
check "run-all --quick exits 0" test $rc -eq 0
for heading in "Latency: one call at a time" "Throughput: 512 B payload" \
               "Mixed (HatRPC Sec. 5.3): 512 B payload" "Hybrid mix (issue 9)" \
               "Bulk transfer (issue 10)" "Bulk transfer against raw RDMA" \
               "System calls per RPC" "YCSB on HatKV" "Scale: one client process" \
               "The fabric without Thrift"; do
  check "table: $heading" grep -qF "== $heading" "$work/out"
done
check "latency.csv: 12 columns x 2 sizes, and rsocket" \
  bash -c "test \$(tail -n +2 '$work/csv/latency.csv' | grep -vc ',rsocket,') -eq 24"
# the Hybrid-EagerRNDV baseline: eager at 64 B, read_rndv at 64 KB, both ways (check-suite-csv
# holds its READs to that)
check "latency.csv: e+r_rndv by eager at 64 B, by read_rndv at 64 KB" \
  bash -c "grep -qE '^e\\+r_rndv,echo_eager_rndv,rdma,64,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,eager,eager,0,' '$work/csv/latency.csv' &&
           grep -qE '^e\\+r_rndv,echo_eager_rndv,rdma,65536,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,read_rndv,read_rndv,0,' '$work/csv/latency.csv'"
check "throughput.csv: the e+r_rndv column at 512 B" \
  bash -c "grep -qE '^e\\+r_rndv,tput_small_(under|over)_eager_rndv,rdma,512,' '$work/csv/throughput.csv'"
check "latency.csv holds together" "$srcdir/bench/check-suite-csv" latency "$work/csv/latency.csv"
check "throughput.csv holds together" \
  "$srcdir/bench/check-suite-csv" throughput "$work/csv/throughput.csv"
check "mixed.csv holds together" "$srcdir/bench/check-suite-csv" mixed "$work/csv/mixed.csv"
check "ycsb.csv holds together (every variant, both workloads)" bash -c \
  "'$srcdir/bench/check-suite-csv' ycsb '$work/csv/ycsb.csv' && test \$(grep -c ',all,' '$work/csv/ycsb.csv') -eq 12"
check "syscalls.csv holds together" "$srcdir/bench/check-suite-csv" syscalls \
  "$work/csv/syscalls.csv" "$work/csv/syscalls-detail.csv"
check "hybrid.csv holds together (each call kind on its leg)" \
  "$srcdir/bench/check-suite-csv" hybrid "$work/csv/hybrid.csv"
check "bulk.csv holds together (every mode and buffer, skipped or measured)" \
  "$srcdir/bench/check-suite-csv" bulk "$work/csv/bulk.csv"
check "bulk.csv: copy measured with both buffers at 1 MB" \
  bash -c "test \$(grep -cE '^copy,(repeat|fresh),.*,1048576,ok,' '$work/csv/bulk.csv') -eq 2"
check "bulk.csv: default (no options) measured with both buffers at 1 MB" \
  bash -c "test \$(grep -cE '^default,(repeat|fresh),.*,1048576,ok,' '$work/csv/bulk.csv') -eq 2"
check "bulk-raw.csv holds together (ib_read_bw and ib_write_bw)" \
  "$srcdir/bench/check-suite-csv" bulk-raw "$work/csv/bulk-raw.csv"
check "the side-by-side table: perftest and copy figures at 1 MB" \
  grep -qE '^1 MB +[0-9.]+ +[0-9.]+ \| +[0-9.]+ ' "$work/out"
check "mixed.csv: the plan, 8 protocols, the pair eager_rndv and tcp, at 1 and 2 clients" \
  bash -c "test \$(tail -n +2 '$work/csv/mixed.csv' | grep -vc ',rsocket,') -eq 22"
# rsocket: stock Thrift over librspreload, its server and client processes of their own
for part in latency throughput mixed; do
  check "$part.csv: the rsocket column measured (not skipped)" \
    bash -c "awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) h[\$i] = i; next }
      \$h[\"column\"] == \"rsocket\" && \$h[\"error\"] == \"\" { n++ } END { exit !n }' '$work/csv/$part.csv'"
done
check "rsocket.csv: its calls moved RDMA packets and next to no TCP segments" \
  "$srcdir/bench/check-suite-csv" rsocket "$work/csv/rsocket.csv"
check "scale.csv holds together (rdma and tcp at 4 and 16 connections, the server measured)" \
  bash -c "'$srcdir/bench/check-suite-csv' scale '$work/csv/scale.csv' &&
           test \$(grep -cE '^(rdma,rdma|tcp,tcp),(4|16),([^,]*,){11}[0-9]' '$work/csv/scale.csv') -eq 4"
check "floor.csv holds together (qperf over TCP and RDMA, 1 and 2 pairs, each on its fabric)" \
  "$srcdir/bench/check-suite-csv" floor "$work/csv/floor.csv"
check "machine.txt says where it ran" grep -q '^rdma: ' "$work/csv/machine.txt"
if [ "$failures" -gt 0 ]; then
  sed 's/^/# /' "$work/err" "$work/out"
  for f in "$work"/csv/*.csv; do echo "# ---- $f"; sed 's/^/# /' "$f"; done
else
  sed -n '/== System calls per RPC/,$s/^/# /p' "$work/out"
fi
