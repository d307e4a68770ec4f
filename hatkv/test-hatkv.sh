#!/usr/bin/env bash
# test-hatkv.sh: HatKV end to end, printing TAP: hatkv-server serving every variant over one
# LMDB store, hatkv-cli's commands, hatkv-ycsb's workloads A and B with every read checked
# against its model (and a run whose model is wrong, to see the check fail), the variants'
# protocols against what their hints claim (rdma only), and durability: the server killed
# (SIGKILL) in the middle of a load, restarted, and every acknowledged write still there.
#
# Environment: HATKV_SCHEME=tcp (default; 127.0.0.1, the variants all over TCP) or rdma (the
# soft-RoCE guest's 10.77.0.1, or THRIFT_RDMA_TEST_SERVER_ADDR; thrift_tcp over TCP beside
# them); top_builddir (where the programs are built; default: the current directory).
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
scheme=${HATKV_SCHEME:-tcp}
bin=${top_builddir:-.}/hatkv
srcdir=$(cd "$(dirname "$0")/.." && pwd)
n=0
check() {  # check DESCRIPTION COMMAND...
  local what=$1; shift
  n=$((n + 1))
  if "$@"; then echo "ok $n $what"; else echo "not ok $n $what"; fi
}
work=$(mktemp -d "${TMPDIR:-/tmp}/test-hatkv.XXXXXX")
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill -KILL "$server_pid" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ "$scheme" = rdma ]; then addr=${THRIFT_RDMA_TEST_SERVER_ADDR:-10.77.0.1}; else addr=127.0.0.1; fi
variants="service function ar_grpc herd pilaf_rfp"

# start_server PATH OUT [OPTIONS]: serves every variant from PATH on ports from a random
# base; sets base and server_pid; fails if it does not listen on all of them in 30 s.
start_server() {
  local path=$1 out=$2; shift 2
  local try i args
  for try in 1 2 3 4 5; do
    base=$((20000 + (RANDOM % 20000)))
    args=() i=0
    for v in $variants; do
      args+=(--listen "$v=$scheme://$addr:$((base + i))"); i=$((i + 1))
    done
    args+=(--listen "thrift_tcp=tcp://127.0.0.1:$((base + i))")
    rm -f "$out"   # or the last server's lines would pass for this one's
    "$bin/hatkv-server" --path "$path" "${args[@]}" "$@" > "$out" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 300); do
      [ "$(grep -c 'listening on' "$out" 2>/dev/null)" = 6 ] && return 0
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; server_pid=
  done
  return 1
}
stop_server() {  # SIGINT, then wait: TRUE if it stopped by itself, cleanly
  kill -INT "$server_pid" 2>/dev/null
  local rc
  wait "$server_pid"; rc=$?
  server_pid=
  return $rc
}
targets() {  # --target options for every variant of the running server
  local i=0
  for v in $variants; do printf -- '--target %s=%s://%s:%d ' "$v" "$scheme" "$addr" $((base + i)); i=$((i + 1)); done
  printf -- '--target thrift_tcp=tcp://127.0.0.1:%d' $((base + i))
}
cli() { "$bin/hatkv-cli" --transport "$scheme://$addr:$((base + 1))" "$@"; }

echo "1..21"
check "the server serves the five variants over $scheme and thrift_tcp over tcp" \
  start_server "$work/store" "$work/server.out"
sed 's/^/# /' "$work/server.out"

cli put hello world > "$work/cli.out" 2>&1
check "cli put" test $? -eq 0
check "cli get returns what put stored" test "$(cli get hello 2>&1)" = world
out=$(cli get nothere 2>&1); rc=$?
check "cli get of a missing key: exit 1, not found" \
  sh -c "test $rc -eq 1 && echo '$out' | grep -q 'not found'"
out=$(cli put '' x 2>&1); rc=$?
check "cli put of an empty key: refused by the server with its reason" \
  sh -c "test $rc -eq 1 && echo '$out' | grep -q 'key must be 1 to 511 bytes'"
cli multi-put a 1 b 2 > /dev/null 2>&1
out=$("$bin/hatkv-cli" --variant thrift_tcp --transport tcp://127.0.0.1:$((base + 5)) multi-get a b zz 2>&1)
check "cli multi-put by one variant, multi-get by another: one store" \
  test "$out" = "$(printf 'a\t1\nb\t2\nzz\t(missing)')"

# Workloads A and B on every variant: each read checked; one in 1 records modelled.
"$bin/hatkv-ycsb" $(targets) --workload a,b --records 500 --threads 2 --operations 200 \
  --rounds 1 --sample 1 --quiet --csv "$work/ycsb.csv" > "$work/ycsb.out" 2>&1
rc=$?
sed 's/^/# /' "$work/ycsb.out"
check "ycsb A and B on all six variants: every call succeeded and every check held" test $rc -eq 0
csv_ok() {  # check-suite-csv ycsb, an all row per variant and workload, every variant's reads
            # checked against the model
  "$srcdir/bench/check-suite-csv" ycsb "$work/ycsb.csv" | sed 's/^/# /'
  [ "${PIPESTATUS[0]}" -eq 0 ] || return 1
  awk -F, -v want="$(echo $variants thrift_tcp | wc -w)" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["op"] == "all" { rows++; if ($col["ops"] <= 0 || $col["model_checks"] <= 0) bad = bad " " $1 "/" $2 }
    END { if (rows != 2 * want) bad = bad " rows:" rows
          if (bad != "") { print "# " bad; exit 1 } }' "$work/ycsb.csv"
}
check "ycsb CSV holds together (check-suite-csv ycsb), a row per variant and workload, reads checked" csv_ok
check "workload A made all four calls on every variant" \
  sh -c "awk -F, 'NR > 1 && \$1 == \"a\" && \$4 != \"all\" && \$5 <= 0 { bad = 1 } END { exit bad }' '$work/ycsb.csv'"

# The model's check can fail: a run phase alone starts with a model where no record was
# written, while the store holds the records the first run wrote.
"$bin/hatkv-ycsb" --target "function=$scheme://$addr:$((base + 1))" --phase run --records 500 \
  --threads 1 --operations 100 --rounds 1 --sample 1 --quiet --workload b > "$work/neg.out" 2>&1
rc=$?
check "a run against a model that is wrong fails: exit 1, disagreements counted" \
  sh -c "test $rc -eq 1 && grep -q 'checks: [0-9]* reads of sampled records against the model, [1-9][0-9]* disagreed' '$work/neg.out'"

if [ "$scheme" = rdma ]; then
  "$bin/hatkv-ycsb" $(targets) --explain > "$work/explain.out"
  # claim VARIANT OP REQUEST REPLY: the protocols that variant's hints promise for that call
  claims_ok() {
    local bad=0 v op req rep got
    while read -r v op req rep; do
      got=$(awk -F, -v v="$v" -v op="$op" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
            $col["workload"] == "a" && $col["variant"] == v && $col["op"] == op {
              print $col["req_proto"], $col["rep_proto"] }' "$work/ycsb.csv")
      if [ "$got" != "$req $rep" ]; then echo "# $v $op: want $req > $rep, got $got"; bad=1; fi
    done
    return $bad
  }
  check "ar_grpc: eager up to 4 KiB, read_rndv above, both ways" claims_ok <<'CLAIMS'
ar_grpc get eager eager
ar_grpc put eager eager
ar_grpc multi_get eager read_rndv
ar_grpc multi_put read_rndv eager
CLAIMS
  check "herd: requests by direct_write_send, replies by eager" claims_ok <<'CLAIMS'
herd get direct_write_send eager
herd put direct_write_send eager
herd multi_get direct_write_send eager
herd multi_put direct_write_send eager
CLAIMS
  check "pilaf_rfp: requests by direct_write_imm, replies fetched by rfp" claims_ok <<'CLAIMS'
pilaf_rfp get direct_write_imm rfp
pilaf_rfp put direct_write_imm rfp
pilaf_rfp multi_get direct_write_imm rfp
pilaf_rfp multi_put direct_write_imm rfp
CLAIMS
  # service and function: what thrift_rdma_explain says of each function and side, at the
  # size of its messages (requests of get, put, multi_get and replies of get, put,
  # multi_put are under 4 KiB; a multi_put request and a multi_get reply are over)
  explained() {
    local svc=$1 v=$2 bad=0 op side size proto got
    for op in get put multi_get multi_put; do
      for side in client server; do
        size=small
        { [ $op = multi_put ] && [ $side = client ]; } && size=large
        { [ $op = multi_get ] && [ $side = server ]; } && size=large
        proto=$(grep "^$svc\.$op $side:" "$work/explain.out" | sed -n "s/.* $size[^ ]* \([a-z_]*\)\/.*/\1/p;s/.*small (<= [0-9]* B) \([a-z_]*\)\/[a-z]*, large \([a-z_]*\)\/.*/\1 \2/p" | head -n 1)
        [ $size = large ] && proto=${proto##* } || proto=${proto%% *}
        got=$(awk -F, -v v="$v" -v op="$op" -v s="$side" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
              $col["workload"] == "a" && $col["variant"] == v && $col["op"] == op {
                print (s == "client" ? $col["req_proto"] : $col["rep_proto"]) }' "$work/ycsb.csv")
        # a reply the table gave to rfp is written while the client asks for announcements
        # (after the first: 'rfp|direct_write_imm'), as explain's reason says (rdma_plan_cache.h)
        if [ "$proto" = rfp ] && echo "$got" | grep -Eqx '(rfp|direct_write_imm)(\|(rfp|direct_write_imm))*' \
           && grep "^$svc\.$op $side:" "$work/explain.out" | grep -q "rfp written by direct_write_imm"; then
          got=rfp
        fi
        if [ -z "$proto" ] || [ "$got" != "$proto" ]; then echo "# $v $op $side: explain says '$proto', carried by '$got'"; bad=1; fi
      done
    done
    return $bad
  }
  # the verbs counters of each row agree with themselves and with the protocols it names
  counters_ok() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      function c(name) { return $col[name] + 0 }
      $col["variant"] == "thrift_tcp" || $col["op"] == "all" { next }
      { row = $col["workload"] "/" $col["variant"] "/" $col["op"]; ops = c("ops")
        v = $col["variant"]; op = $col["op"]
        if (v == "herd" && c("writes") < ops) bad = bad " herd-writes:" row
        if (v == "pilaf_rfp" && (c("reads") < ops || c("write_imms") < ops)) bad = bad " rfp:" row
        if (v == "ar_grpc" && op == "multi_get" && c("reads") < ops) bad = bad " rndv-reads:" row
        if (v == "ar_grpc" && (op == "get" || op == "put") && (c("reads") != 0 || c("sends") < ops)) bad = bad " eager:" row }
      END { if (bad != "") { print "#" bad; exit 1 } }' "$work/ycsb.csv"
  }
  check "each variant's WRITEs, WRITE_IMMs, SENDs and READs per call are its protocols'" counters_ok
  check "service: each call carried as thrift_rdma_explain says for its hints" explained KvService service
  check "function: each call carried as thrift_rdma_explain says for its hints" explained KvFunction function
else
  for i in 1 2 3 4 5 6; do echo "ok $((n + i)) # SKIP protocols: over tcp:// every call is TCP"; done
  n=$((n + 6))
fi

check "the server stops on SIGINT, cleanly" stop_server
check "it reported what the store did" grep -q 'keys read,.*written in' "$work/server.out"

# Durability: kill the server in the middle of a load, restart it, find every acknowledged
# write (strategy $1).
durable() {
  local sync=$1 records=20000 acked ycsb_pid rc
  rm -rf "$work/d" "$work/acks"
  start_server "$work/d" "$work/d.out" --sync "$sync" || { echo "# no server"; sed "s/^/# server: /" "$work/d.out"; return 1; }
  "$bin/hatkv-ycsb" --target "function=$scheme://$addr:$((base + 1))" --phase load \
    --records $records --threads 2 --quiet --ack-log "$work/acks" > "$work/load.out" 2>&1 &
  ycsb_pid=$!
  for _ in $(seq 1 300); do
    [ "$(wc -l 2>/dev/null < "$work/acks" || echo 0)" -ge 200 ] && break
    sleep 0.05
  done
  kill -KILL "$server_pid"; wait "$server_pid" 2>/dev/null; server_pid=
  wait $ycsb_pid
  sed 's/^/# load: /' "$work/load.out" | tail -n 5
  acked=$(wc -l 2>/dev/null < "$work/acks" || echo 0)
  echo "# $sync: $acked of $records writes acknowledged before the kill"
  if [ "$acked" -lt 1 ] || [ "$acked" -ge $records ]; then echo "# the kill did not land mid-load"; return 1; fi
  start_server "$work/d" "$work/d.out" --sync "$sync" || { echo "# no server after restart"; return 1; }
  "$bin/hatkv-ycsb" --target "function=$scheme://$addr:$((base + 1))" --verify-log "$work/acks" \
    > "$work/verify.out" 2>&1
  rc=$?
  sed 's/^/# /' "$work/verify.out"
  stop_server
  [ $rc -eq 0 ] && grep -q "verify: $acked acknowledged writes: $acked present, 0 missing" "$work/verify.out"
}
check "sync durable: SIGKILL mid-load loses no acknowledged write" durable durable
check "sync group: SIGKILL mid-load loses no acknowledged write" durable group

# ... and the check can fail: the same log against an empty store.
start_server "$work/empty" "$work/e.out" > /dev/null
"$bin/hatkv-ycsb" --target "function=$scheme://$addr:$((base + 1))" --verify-log "$work/acks" \
  > "$work/verify2.out" 2>&1
rc=$?
stop_server
check "verify against an empty store: exit 1, every write missing" \
  sh -c "test $rc -eq 1 && grep -q 'present, [1-9][0-9]* missing' '$work/verify2.out'"
exit 0
