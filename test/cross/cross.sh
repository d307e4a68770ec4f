#!/usr/bin/env bash
# cross.sh [--tap]: upstream Thrift 0.17's cross-language test over our transports (issue 24
# item 3), one TAP line per case.  Upstream's c_glib test_client and test_server (given --uri,
# test/cross/uri-option.patch) and its Python TestClient.py, each case a server started for
# it and a client whose exit status must be upstream's success (0) after its whole run.
#
# On the host (the default): the c_glib client against the c_glib server over tcp:// (framed
# and buffered) and hybrid:// (over TCP alone: the host has no RDMA) for the protocols binary,
# compact, multi and multic; upstream's client with its own options (--port, --transport
# framed or buffered, no --uri: a stock client) against a hybrid:// server; Python's client,
# framed and buffered, against tcp:// and hybrid:// servers.  With CROSS_MODE=rdma (the guest,
# cross-rdma.sh): the c_glib client over rdma:// and hybrid:// with both legs, and a stock
# client at a hybrid:// server that listens for RDMA too; rdma:// and hybrid:// over IPv6.
#
# Environment: top_builddir (default .), CROSS_MODE (host | rdma), CROSS_PYTHON (default
# /usr/bin/python3: Debian's, which has python3-thrift), THRIFT_RDMA_TEST_SERVER_ADDR and
# THRIFT_RDMA_TEST_SERVER_ADDR6 (rdma mode, default 10.77.0.1 and fd77::1).
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
set -u
if [ "${1:-}" = "--help" ]; then sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0; fi
top=${top_builddir:-.}
mode=${CROSS_MODE:-host}
python=${CROSS_PYTHON:-/usr/bin/python3}
client=$top/test/cross/test_client
server=$top/test/cross/test_server
pyclient=$top/thrift-compiler-patch/src/thrift-0.17.0/test/py/TestClient.py
genpy=$(cd "$top/test/cross/gen-py" 2>/dev/null && pwd)
addr=127.0.0.1
[ "$mode" = rdma ] && addr=${THRIFT_RDMA_TEST_SERVER_ADDR:-10.77.0.1}
addr6=${THRIFT_RDMA_TEST_SERVER_ADDR6:-fd77::1}
n=0 fail=0 spid=
work=$(mktemp -d "${TMPDIR:-/tmp}/cross.XXXXXX") || exit 1
cleanup () { [ -n "$spid" ] && kill -KILL "$spid" 2> /dev/null; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 1' INT TERM

tap () {  # tap WHY(empty: ok) DESCRIPTION
  n=$((n + 1))
  if [ -z "$1" ]; then echo "ok $n $2"; return; fi
  echo "not ok $n $2: $1"
  fail=$((fail + 1))
  # what the client and the server said, for the log
  grep -m 8 -i 'error\|fail\|refused\|exception' "$work/client.log" 2> /dev/null | sed 's/^/# client: /'
  tail -n 5 "$work/server.log" 2> /dev/null | sed 's/^/# server: /'
}

for f in "$client" "$server"; do
  if [ ! -x "$f" ]; then
    echo "1..1"; echo "not ok 1 $f is not built (make check builds it; set top_builddir)"; exit 0
  fi
done

port () { echo $((20000 + (RANDOM * 7 + $$) % 30000)); }

# start_server URI PROTOCOL: upstream's server in the background; 0 once it runs
start_server () {
  "$server" --uri "$1" --protocol="$2" > "$work/server.log" 2>&1 &
  spid=$!
  for _ in $(seq 1 100); do
    grep -q '^Starting' "$work/server.log" && return 0
    kill -0 "$spid" 2> /dev/null || return 1
    sleep 0.05
  done
  return 1
}

# stop_server: SIGINT (upstream's graceful stop), then KILL after 5 s
stop_server () {
  kill -INT "$spid" 2> /dev/null
  for _ in $(seq 1 50); do kill -0 "$spid" 2> /dev/null || break; sleep 0.1; done
  kill -KILL "$spid" 2> /dev/null
  wait "$spid" 2> /dev/null
  spid=
}

# run_client CMD...: upstream's client; it says "Connect failed" and exits 0 when the server
# does not listen yet, so that is tried again (10 s at most).  Prints why it failed, or nothing.
run_client () {
  local rc
  for _ in $(seq 1 100); do
    timeout 120 "$@" > "$work/client.log" 2>&1
    rc=$?
    grep -q '^Connect failed' "$work/client.log" || break
    sleep 0.1
  done
  if [ "$rc" -ne 0 ]; then
    echo "exit status $rc: $(grep -i -m 3 'fail\|error' "$work/client.log" | tr '\n' ' ')"
  elif ! grep -q '^Avg time' "$work/client.log"; then
    echo "no summary: $(tail -n 2 "$work/client.log" | tr '\n' ' ')"
  fi
}

# run_python PORT PROTOCOL TRANSPORT: Python's TestClient.py; prints why it failed, or nothing
run_python () {
  local rc
  for _ in $(seq 1 100); do
    timeout 120 "$python" "$pyclient" --genpydir="$genpy" --host "$addr" --port "$1" \
      --protocol "$2" --transport "$3" -q > "$work/client.log" 2>&1
    rc=$?
    grep -q 'Connection refused\|Could not connect' "$work/client.log" || break
    sleep 0.1
  done
  if [ "$rc" -ne 0 ]; then
    echo "exit status $rc: $(grep -m 3 'Error\|FAIL' "$work/client.log" | tr '\n' ' ')"
  fi
}

# case_uri SCHEME_URI_SUFFIX PROTOCOL: c_glib client and server, both given the URI
case_uri () {
  local uri="$1" why
  if ! start_server "$uri" "$2"; then
    tap "the server did not start: $(head -n 2 "$work/server.log" | tr '\n' ' ')" "c_glib $2 $uri"
    stop_server; return
  fi
  why=$(run_client "$client" --uri "$uri" --protocol="$2")
  stop_server
  tap "$why" "c_glib client and server, $2, $uri"
}

# stock_at_hybrid OPTIONS PROTOCOL LABEL [python]: a hybrid:// server (OPTIONS its URI's
# query), upstream's c_glib client with its own options, framed and buffered, and with
# "python" Python's client too
stock_at_hybrid () {
  local p tr
  p=$(port)
  if ! start_server "hybrid://$addr:$p$1" $2; then
    tap "the server did not start" "stock clients at hybrid://:$p$3, $2"; stop_server; return
  fi
  for tr in framed buffered; do
    tap "$(run_client "$client" --host "$addr" --port "$p" --transport=$tr --protocol=$2)" \
      "upstream's c_glib client ($tr, $2) at a hybrid:// server$3"
    [ "${4:-}" = python ] &&
      tap "$(run_python "$p" $2 $tr)" "Python's client ($tr, $2) at a hybrid:// server$3"
  done
  stop_server
}

protocols="binary compact multi multic"
if [ "$mode" = host ]; then
  for proto in $protocols; do
    case_uri "tcp://$addr:$(port)" $proto
    case_uri "tcp://$addr:$(port)?framing=buffered" $proto
    case_uri "hybrid://$addr:$(port)?fallback=tcp" $proto
  done
  # stock clients at a hybrid server: upstream's client with its own options, and Python's
  for proto in $protocols; do
    stock_at_hybrid "?fallback=tcp" $proto "" python
  done
  # Python at tcp:// servers of each framing
  for proto in $protocols; do
    for tr in framed buffered; do
      p=$(port) suffix=
      [ $tr = buffered ] && suffix="?framing=buffered"
      if ! start_server "tcp://$addr:$p$suffix" $proto; then
        tap "the server did not start" "Python's client ($tr, $proto) at tcp://"; stop_server; continue
      fi
      tap "$(run_python "$p" $proto $tr)" "Python's client ($tr, $proto) at a tcp://$suffix server"
      stop_server
    done
  done
else
  for proto in $protocols; do
    case_uri "rdma://$addr:$(port)" $proto
    case_uri "hybrid://$addr:$(port)" $proto
  done
  # IPv6: the guest's veth pair has fd77::1 and fd77::2 too (RoCE v2 GIDs of both families)
  for proto in binary compact; do
    case_uri "rdma://[$addr6]:$(port)" $proto
    case_uri "hybrid://[$addr6]:$(port)" $proto
  done
  for proto in binary compact; do
    stock_at_hybrid "" $proto " with RDMA"
  done
fi
echo "1..$n"
[ $fail -eq 0 ]
