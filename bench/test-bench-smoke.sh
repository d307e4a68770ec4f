#!/usr/bin/env bash
# test-bench-smoke.sh [--tap]: a tiny run of thrift-rdma-bench over tcp:// on 127.0.0.1
# (3 calls per size, 4 B to 64 KB), checking that it prints a full table and stops cleanly.
# It measures nothing: it keeps the benchmark building and working. Prints TAP.
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
bench=${top_builddir:-.}/bench/thrift-rdma-bench
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-smoke.XXXXXX")
server=
trap '[ -n "$server" ] && kill -KILL "$server" 2>/dev/null; rm -rf "$work"' EXIT
n=0
check() { n=$((n + 1)); if "${@:2}"; then echo "ok $n $1"; else echo "not ok $n $1"; fi; }
echo "1..5"
for _ in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 20000))
  "$bench" --server "tcp://:$port" > "$work/server.out" 2>&1 &
  server=$!
  for _ in $(seq 1 50); do
    grep -q 'listening on' "$work/server.out" && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  grep -q 'listening on' "$work/server.out" && break
  wait "$server" 2>/dev/null; server=
done
check "server listens" grep -q 'listening on' "$work/server.out"
"$bench" --client "tcp://127.0.0.1:$port" -n 3 -N 3 -w 1 --max-size 65536 > "$work/table" 2> "$work/progress"
rc=$?
sed 's/^/# /' "$work/progress" "$work/table"
check "client exits 0" test $rc -eq 0
check "the table names the baseline" grep -q 'ThriftSocket + ThriftFramedTransport.*baseline' "$work/table"
check "one row per size, 4 B to 64 KB, with three numbers" \
  bash -c "test \$(grep -cE '^(4 B|16 B|64 B|256 B|1 KB|4 KB|16 KB|64 KB) +\\| +[0-9.]+ +[0-9.]+ +[0-9.]+\$' '$work/table') -eq 8"
kill -INT "$server"; wait "$server"; src=$?; server=
check "server stops on SIGINT" bash -c "test $src -eq 0 && grep -q 'servers stopped' '$work/server.out'"
