#!/bin/sh
# The patched grammar has no LALR conflicts, as the stock grammar of Thrift 0.17.0 (which has
# none): bison reports no shift/reduce or reduce/reduce conflict.
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
top_builddir=${top_builddir:-.}
BISON=${BISON:-bison}
yy=$top_builddir/thrift-compiler-patch/src/thrift-0.17.0/compiler/cpp/src/thrift/thrifty.yy
if [ ! -f "$yy" ]; then
  printf "1..1\nnot ok 1 - no patched source tree (run make first)\n"
  exit 0
fi
echo "1..2"
out=$("$BISON" -Wconflicts-sr -Wconflicts-rr -o /dev/null "$yy" 2>&1)
if printf '%s\n' "$out" | grep -qi conflict; then
  echo "not ok 1 - patched thrifty.yy has no LALR conflicts"
  printf '%s\n' "$out" | grep -i conflict | sed 's/^/# /'
else
  echo "ok 1 - patched thrifty.yy has no LALR conflicts"
fi
if grep -q 'tok_hint_group' "$yy"; then
  echo "ok 2 - the grammar checked is the patched one"
else
  echo "not ok 2 - the grammar checked is the patched one"
fi
