#!/usr/bin/env bash
# test-fabric.sh [--tap]: the test fabric keeps each queue pair's packets in order, as RC
# requires of any RoCE fabric. Large echoes for a few seconds (the bench's bulk part: "copy",
# by SEND both ways, and "bulk", by pipelined READs) must leave rxe's counters of requests that came out of sequence
# (out_of_seq_request) or twice (duplicate_request), and of retries (completer_retry_err), as
# they were on both devices. Without receive packet steering on the guest's veth pair
# (test/softroce/guest-init) two CPUs reorder one QP's packets, and a READ sent again after
# its DONE fails the lender's QP (issue 21). Runs where RDMA works (the soft-RoCE guest:
# test/rdma/run-suite through make check), prints TAP.
#
# Environment: top_builddir (default .), THRIFT_RDMA_TEST_SERVER_ADDR (default 10.77.0.1),
# FABRIC_SECONDS (default 3, per column), FABRIC_MODES (default copy,bulk).
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
set -u
if [ "${1:-}" = "--help" ]; then sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 0; fi
. "$(dirname "$0")/guest-test.sh"
SECONDS_RUN=${FABRIC_SECONDS:-3}
COUNTERS="out_of_seq_request duplicate_request completer_retry_err"

need_suite
devices=$(ls /sys/class/infiniband 2>/dev/null)
if [ -z "$devices" ]; then
  echo "1..1"; echo "not ok 1 no RDMA device (/sys/class/infiniband is empty)"; exit 0
fi
echo "1..3"
make_work test-fabric

counters() {  # one line per device and counter: "dev counter value" (0 where not kept)
  local d c f
  for d in $devices; do
    for c in $COUNTERS; do
      f=/sys/class/infiniband/$d/ports/1/hw_counters/$c
      echo "$d $c $(cat "$f" 2>/dev/null || echo 0)"
    done
  done
}

start_server --bulk-server "rdma://$ADDR:$PORT"
tap $? "the bench's bulk server listens on rdma://$ADDR:$PORT"

counters > "$work/before"
"$SUITE" --run bulk --bulk "rdma://$ADDR:$PORT" --bulk-modes "${FABRIC_MODES:-copy,bulk}" --sizes 1M \
  -d "$SECONDS_RUN" --load-rounds 4 -w 1 > "$work/client.log" 2>&1
rc=$?
counters > "$work/after"
sed 's/^/# /' "$work/client.log" | grep -E 'MB/s|copy|error|fail' | head -8
tap $rc "large echoes (modes ${FABRIC_MODES:-copy,bulk}) over one connection each for ${SECONDS_RUN} s complete (exit $rc)"

changed=$(paste "$work/before" "$work/after" | awk '$6 != $3 { printf "%s %s +%d; ", $1, $2, $6 - $3 }')
[ -n "$changed" ] && echo "# counters that rose: $changed"
[ -z "$changed" ]
tap $? "each QP's packets arrive in order: no request out of sequence, none twice, no retry (rxe hw_counters: $COUNTERS)"

kill -INT "$server" 2>/dev/null
wait "$server" 2>/dev/null
server=
