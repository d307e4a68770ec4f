# guest-test.sh: what the guest's shell tests share (test-fabric.sh, test-scale.sh source it):
# TAP lines, the bench suite they drive, a scratch directory and a server of the suite's that
# goes with the test.  Sets top, SUITE, ADDR and PORT from the environment (top_builddir,
# THRIFT_RDMA_TEST_SERVER_ADDR), n (TAP count), work and server.
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
top=${top_builddir:-.}
SUITE=$top/bench/thrift-rdma-suite
ADDR=${THRIFT_RDMA_TEST_SERVER_ADDR:-10.77.0.1}
PORT=$((20000 + $$ % 20000))
n=0 work= server=

tap() {  # tap VERDICT(0/1) DESCRIPTION
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fi
}

# One failing test and exit 0 (the plan is the TAP's) when the suite is not built.
need_suite() {
  if [ ! -x "$SUITE" ]; then
    echo "1..1"; echo "not ok 1 $SUITE is not built (make check builds it; set top_builddir)"
    exit 0
  fi
}

guest_cleanup() { [ -n "$server" ] && kill -KILL "$server" 2>/dev/null; rm -rf "$work"; }

# make_work NAME: a scratch directory, removed (with the server killed) at exit.
make_work() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  trap guest_cleanup EXIT
  trap 'exit 1' INT TERM
}

# start_server ARG...: "$SUITE" ARG... in the background (server), its output in
# $work/server.log; 0 once it says it listens (30 s at most), else 1 with its log as TAP
# comments.
start_server() {
  "$SUITE" "$@" > "$work/server.log" 2>&1 &
  server=$!
  for _ in $(seq 1 300); do
    grep -q 'listening on' "$work/server.log" && return 0
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  grep -q 'listening on' "$work/server.log" && return 0
  sed 's/^/# server: /' "$work/server.log"
  return 1
}
