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

# listening PORT: a TCP socket listens on PORT (/proc/net/tcp and tcp6, hexadecimal, state 0A)
listening () {
  local hex
  hex=$(printf ':%04X' "$1")
  cat /proc/net/tcp /proc/net/tcp6 2> /dev/null | awk -v p="$hex" '$2 ~ p"$" && $4 == "0A" { f = 1 } END { exit !f }'
}

# start_server URI PROTOCOL: upstream's server in the background, URI's @PORT@ a free port
# (sport, suri); 0 once it runs.  Upstream's server says "Starting" before it binds, and other
# tests running beside this one take ports too: a server whose port was taken is started again
# on another, and one with a TCP listener counts as running once it listens.
start_server () {
  for _ in 1 2 3 4 5; do
    sport=$(port)
    suri=${1//@PORT@/$sport}
    "$server" --uri "$suri" --protocol="$2" > "$work/server.log" 2>&1 &
    spid=$!
    for _ in $(seq 1 200); do
      if ! kill -0 "$spid" 2> /dev/null; then
        break
      elif grep -q '^Starting' "$work/server.log"; then
        case $suri in rdma://*) return 0 ;; esac
        listening "$sport" && return 0
      fi
      sleep 0.05
    done
    grep -q 'failed to bind\|in use' "$work/server.log" || return 1
    stop_server
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

# case_uri URI PROTOCOL: c_glib client and server, both given the URI (its @PORT@ a free port)
case_uri () {
  local why
  if ! start_server "$1" "$2"; then
    tap "the server did not start: $(head -n 2 "$work/server.log" | tr '\n' ' ')" "c_glib $2 $1"
    stop_server; return
  fi
  why=$(run_client "$client" --uri "$suri" --protocol="$2")
  stop_server
  tap "$why" "c_glib client and server, $2, $suri"
}

# stock_at_hybrid OPTIONS PROTOCOL LABEL [python]: a hybrid:// server (OPTIONS its URI's
# query), upstream's c_glib client with its own options, framed and buffered, and with
# "python" Python's client too
stock_at_hybrid () {
  local tr
  if ! start_server "hybrid://$addr:@PORT@$1" $2; then
    tap "the server did not start" "stock clients at hybrid://$3, $2"; stop_server; return
  fi
  for tr in framed buffered; do
    tap "$(run_client "$client" --host "$addr" --port "$sport" --transport=$tr --protocol=$2)" \
      "upstream's c_glib client ($tr, $2) at a hybrid:// server$3"
    [ "${4:-}" = python ] &&
      tap "$(run_python "$sport" $2 $tr)" "Python's client ($tr, $2) at a hybrid:// server$3"
  done
  stop_server
}

protocols="binary compact multi multic"
if [ "$mode" = host ]; then
  for proto in $protocols; do
    case_uri "tcp://$addr:@PORT@" $proto
    case_uri "tcp://$addr:@PORT@?framing=buffered" $proto
    case_uri "hybrid://$addr:@PORT@?fallback=tcp" $proto
  done
  # stock clients at a hybrid server: upstream's client with its own options, and Python's
  for proto in $protocols; do
    stock_at_hybrid "?fallback=tcp" $proto "" python
  done
  # Python at tcp:// servers of each framing
  for proto in $protocols; do
    for tr in framed buffered; do
      suffix=
      [ $tr = buffered ] && suffix="?framing=buffered"
      if ! start_server "tcp://$addr:@PORT@$suffix" $proto; then
        tap "the server did not start" "Python's client ($tr, $proto) at tcp://"; stop_server; continue
      fi
      tap "$(run_python "$sport" $proto $tr)" "Python's client ($tr, $proto) at a tcp://$suffix server"
      stop_server
    done
  done
else
  for proto in $protocols; do
    case_uri "rdma://$addr:@PORT@" $proto
    case_uri "hybrid://$addr:@PORT@" $proto
  done
  # IPv6: the guest's veth pair has fd77::1 and fd77::2 too (RoCE v2 GIDs of both families)
  for proto in binary compact; do
    case_uri "rdma://[$addr6]:@PORT@" $proto
    case_uri "hybrid://[$addr6]:@PORT@" $proto
  done
  for proto in binary compact; do
    stock_at_hybrid "" $proto " with RDMA"
  done
fi
echo "1..$n"
[ $fail -eq 0 ]
