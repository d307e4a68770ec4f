#!/bin/sh
# The engine's host-side unit tests again under valgrind memcheck: any invalid access, use of
# uninitialised memory or definite leak makes valgrind exit 99, which fails this test (the
# TAP driver reports the exit status). The in-guest tests use ASan/UBSan builds instead,
# because valgrind does not know the memory that the verbs provider maps and writes.
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
for prog in test/unit/test_rdma_engine test/unit/test_device test/unit/test_rdma_plan \
    test/unit/test_numa; do
  if [ ! -x "$prog" ]; then
    printf '1..1\nnot ok 1 - %s is not built\n' "$prog"
    exit 0
  fi
done
n=0
for prog in test/unit/test_rdma_engine test/unit/test_device test/unit/test_rdma_plan \
    test/unit/test_numa; do
  n=$((n + 1))
  out=$(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
        --show-leak-kinds=definite "$prog" 2>&1)
  rc=$?
  printf '%s\n' "$out" | sed 's/^/# /'
  if [ "$rc" -eq 0 ]; then
    echo "ok $n - valgrind $prog"
  else
    echo "not ok $n - valgrind $prog (exit $rc)"
  fi
done
echo "1..$n"
exit 0
