#!/usr/bin/env bash
# test-scale.sh [--tap]: 4,096 rdma:// connections from one client process to one server
# (bench/thrift-rdma-suite's, a ThriftThreadedServer with default settings), a 64 B echo
# on each open connection in turn at 1,024 and at 4,096 connections; the server's pinned
# memory (VmPin) at most 64 MiB at 1,024 and within the default max-pinned-bytes (an eighth
# of the memory, at least 64 MiB: rdma_budget.h) at 4,096, and the client's at most 64 KiB
# per connection (issue 22). Runs where RDMA works (the soft-RoCE guest: test/rdma/run-suite
# through make check), prints TAP; the '# ' lines carry the figures (thrift-rdma-suite --run
# scale's table).
#
# Environment: top_builddir (default .), THRIFT_RDMA_TEST_SERVER_ADDR (default 10.77.0.1),
# SCALE_CONNECTIONS (default 1024,4096: the last point is checked against the budget).
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
set -u
if [ "${1:-}" = "--help" ]; then sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 0; fi
. "$(dirname "$0")/guest-test.sh"
POINTS=${SCALE_CONNECTIONS:-1024,4096}

need_suite
echo "1..5"
# two descriptors a connection on each side: past the kernel's default hard limit of 4,096
# (root may raise it; both programs then raise their soft limit to it)
ulimit -Hn 65536 2>/dev/null && ulimit -Sn 65536 2>/dev/null
make_work test-scale
if ! start_server --server "rdma://$ADDR:$PORT"; then
  tap 1 "the server listens on rdma://$ADDR:$PORT"
  exit 0
fi
disown "$server"   # (its kill at the end is no news)

# the default budget, as rdma_budget.c computes it for root: an eighth of the memory, at
# least 64 MiB
mem_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
budget_kib=$((mem_kib / 8))
[ "$budget_kib" -lt 65536 ] && budget_kib=65536

"$SUITE" --run scale --rdma "rdma://$ADDR:$PORT" --connections "$POINTS" \
  --server-pid "$server" --csv "$work/scale.csv" > "$work/out.txt" 2> "$work/err.txt"
rc=$?
sed 's/^/# /' "$work/out.txt"
grep -v ' connections open \.\.\.$' "$work/err.txt" | sed 's/^/# /'
tap "$((rc != 0))" "thrift-rdma-suite --run scale --connections $POINTS exits 0"

# one line per point: connections, client VmPin KiB per connection, server VmPin KiB, error
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  $c["column"] == "rdma" { print $c["connections"], $c["client_pin_kib_per_conn"],
                           $c["server_vmpin_kib"], ($c["error"] == "" ? "-" : "error") }' \
  "$work/scale.csv" > "$work/points" 2>/dev/null
last=${POINTS##*,}
ok=1 srv_1024= srv_last= cli_max=0
while read -r conns cli srv err; do
  [ "$err" = "-" ] || ok=0
  [ "$conns" = 1024 ] && srv_1024=$srv
  [ "$conns" = "$last" ] && srv_last=$srv
  cli_max=$(awk -v a="$cli_max" -v b="$cli" 'BEGIN { print (b > a ? b : a) }')
done < "$work/points"
[ -n "$srv_last" ] || ok=0
tap "$((ok != 1))" "every point up to $last connections measured, each connection served a call"
if [ -n "$srv_1024" ]; then
  tap "$(awk -v s="$srv_1024" 'BEGIN { print (s <= 65536 ? 0 : 1) }')" \
    "the server's VmPin at 1,024 connections is at most 64 MiB ($srv_1024 KiB)"
else
  tap 1 "the server's VmPin at 1,024 connections is at most 64 MiB (no such point)"
fi
tap "$(awk -v s="${srv_last:-0}" -v b="$budget_kib" 'BEGIN { print (s > 0 && s <= b ? 0 : 1) }')" \
  "the server's VmPin at $last connections is within the default budget (${srv_last:-?} KiB of $budget_kib)"
tap "$(awk -v c="$cli_max" 'BEGIN { print (c <= 64 ? 0 : 1) }')" \
  "the client pins at most 64 KiB per connection ($cli_max KiB)"
