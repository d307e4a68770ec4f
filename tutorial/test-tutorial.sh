#!/usr/bin/env bash
# test-tutorial.sh [--tap]: the tutorial end to end, printing TAP. Starts calculator-server,
# runs calculator-client against it, checks each printed result, stops the server with
# SIGINT and checks that it stopped cleanly.
#
# Environment: TUTORIAL_SCHEME=tcp (default; 127.0.0.1) or rdma (the soft-RoCE guest's
# 10.77.0.1, or THRIFT_RDMA_TEST_SERVER_ADDR); top_builddir (where the programs are built;
# default: the current directory).
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
scheme=${TUTORIAL_SCHEME:-tcp}
bin=${top_builddir:-.}/tutorial
n=0
failed=0
check() {  # check DESCRIPTION COMMAND...
  local what=$1; shift
  n=$((n + 1))
  if "$@"; then echo "ok $n $what"; else echo "not ok $n $what"; failed=1; fi
}
work=$(mktemp -d "${TMPDIR:-/tmp}/test-tutorial.XXXXXX")
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill -KILL "$server_pid" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ "$scheme" != tcp ]; then
  addr=${THRIFT_RDMA_TEST_SERVER_ADDR:-10.77.0.1}
else
  addr=127.0.0.1
fi

# A port nobody uses: try a few, as the server reports a failed listen at once.
started=no
for try in 1 2 3 4 5; do
  port=$((20000 + (RANDOM % 20000)))
  "$bin/calculator-server" --transport "$scheme://$addr:$port" > "$work/server.out" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 100); do
    if grep -q 'listening on' "$work/server.out"; then started=yes; break; fi
    if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  [ $started = yes ] && break
  wait "$server_pid" 2>/dev/null; server_pid=
done
legs=0
[ "$scheme" = hybrid ] && legs=2
echo "1..$((11 + legs))"
check "server listens on $scheme://$addr" test $started = yes
sed 's/^/# /' "$work/server.out"
if [ $started != yes ]; then
  for i in $(seq 2 $((11 + legs))); do echo "not ok $i skipped: no server"; done
  exit 0
fi

"$bin/calculator-client" --transport "$scheme://$addr:$port" --payload 100000 > "$work/client.out" 2>&1
rc=$?
sed 's/^/# /' "$work/client.out"
out=$work/client.out
check "client exits 0" test $rc -eq 0
check "client used $scheme" grep -q "^client: connected over $scheme " "$out"
if [ "$scheme" = hybrid ]; then
  # the line after a call's result and hints says which leg it took
  check "hybrid: add went by the rdma leg" \
    bash -c "grep -A2 '^ok   add(1, 1)' '$out' | grep -q 'transport: hybrid leg=rdma'"
  check "hybrid: reverse (transport = tcp) went by the tcp leg" \
    bash -c "grep -A2 '^ok   reverse(' '$out' | grep -q 'transport: hybrid leg=tcp'"
fi
check "ping" grep -q '^ok   ping() .*-> ok' "$out"
check "add(1, 1) = 2" grep -q '^ok   add(1, 1) .*-> 2$' "$out"
check "divide by zero raises InvalidOperation" \
  grep -q '^ok   calculate(1, 1 DIVIDE 0) .*InvalidOperation(whatOp=4, why="Cannot divide by 0")' "$out"
check "calculate 15 - 10 = 5, and reverse of 100000 bytes" \
  bash -c "grep -q '^ok   calculate(2, 15 SUBTRACT 10) .*-> 5\$' '$out' && grep -q '^ok   reverse(100000 bytes) .*every byte reversed' '$out'"
check "oneway zip reached the server, the next call still works" \
  bash -c "grep -q '^server: zip() (oneway)' '$work/server.out' && grep -q '^ok   add(20, 22) .*-> 42\$' '$out'"

kill -INT "$server_pid"
for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$server_pid" 2>/dev/null; then
  check "server stops on SIGINT within 10 s" false
  kill -KILL "$server_pid"; wait "$server_pid" 2>/dev/null; server_pid=
  check "server exits 0 after SIGINT" false
else
  check "server stops on SIGINT within 10 s" true
  wait "$server_pid"; src=$?; server_pid=
  sed -n '/listening on/,$p' "$work/server.out" | tail -n 3 | sed 's/^/# /'
  check "server exits 0 after SIGINT" bash -c "test $src -eq 0 && grep -q '^server: stopped' '$work/server.out'"
fi

# --explain: one line per function and side of the service, without a server
"$bin/calculator-client" --explain > "$work/explain.out" 2>&1
rc=$?
sed 's/^/# /' "$work/explain.out"
explained() {
  [ "$rc" -eq 0 ] && [ "$(wc -l < "$work/explain.out")" -eq 10 ] || return 1
  for f in ping add calculate reverse zip; do
    for side in client server; do
      grep -q "^Calculator\.$f $side: small (<= 4096 B) [a-z_]*/[a-z]*, large [a-z_]*/[a-z]*  \[size: " \
        "$work/explain.out" || return 1
    done
  done
}
check "client --explain lists every function and side" explained
exit 0
