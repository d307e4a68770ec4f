#!/bin/sh
# Byte-identity test (issue 3, item 6): every .thrift file of the Thrift 0.17.0 source tree
# goes through the stock compiler and through thrift-hatrpc with `--gen c_glib`; the output
# trees, the exit status and the diagnostics must be identical.  One TAP line per file.
#
# Environment: top_builddir (set by the test harness), STOCK_THRIFT (default: thrift on PATH),
# HATRPC (default: $top_builddir/thrift-compiler-patch/thrift-hatrpc), THRIFT_SRC (default:
# the extracted source tree left by the build in $top_builddir/thrift-compiler-patch/src).
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
top_builddir=${top_builddir:-.}
STOCK_THRIFT=${STOCK_THRIFT:-thrift}
HATRPC=${HATRPC:-$top_builddir/thrift-compiler-patch/thrift-hatrpc}
THRIFT_SRC=${THRIFT_SRC:-$top_builddir/thrift-compiler-patch/src/thrift-0.17.0}

if [ ! -x "$HATRPC" ] || [ ! -d "$THRIFT_SRC" ]; then
  printf "1..1\nnot ok 1 - no thrift-hatrpc or source tree (run make first)\n"
  exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/hatrpc-corpus.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM

( cd "$THRIFT_SRC" && find . -name '*.thrift' -type f | LC_ALL=C sort ) > "$work/list"
n=$(wc -l < "$work/list")
echo "1..$n"
i=0
fail=0
while IFS= read -r f; do
  i=$((i + 1))
  rel=${f#./}
  for which in stock hatrpc; do
    if [ $which = stock ]; then cc=$STOCK_THRIFT; else cc=$HATRPC; fi
    mkdir -p "$work/$which"
    ( cd "$THRIFT_SRC" && "$cc" --gen c_glib -out "$work/$which" "$rel" ) \
      > "$work/$which.log" 2>&1
    echo $? > "$work/$which.rc"
  done
  why=""
  if ! cmp -s "$work/stock.rc" "$work/hatrpc.rc"; then
    why="exit status $(cat "$work/stock.rc") (stock) vs $(cat "$work/hatrpc.rc") (hatrpc)"
  elif ! diff -r "$work/stock" "$work/hatrpc" > "$work/diff" 2>&1; then
    why="generated files differ"
  elif ! cmp -s "$work/stock.log" "$work/hatrpc.log"; then
    why="diagnostics differ"
  fi
  nfiles=$(find "$work/stock" -type f | wc -l)
  if [ -z "$why" ]; then
    echo "ok $i - $rel (exit $(cat "$work/stock.rc"), $nfiles files)"
  else
    fail=$((fail + 1))
    echo "not ok $i - $rel: $why"
    { diff -r "$work/stock" "$work/hatrpc"; diff "$work/stock.log" "$work/hatrpc.log"; } 2>&1 \
      | head -n 20 | sed 's/^/# /'
  fi
  rm -rf "$work/stock" "$work/hatrpc"
done < "$work/list"
[ $fail -eq 0 ]
