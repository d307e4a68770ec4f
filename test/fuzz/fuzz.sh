#!/usr/bin/env bash
# The libFuzzer harnesses of test/fuzz (issue 25: the decoders, and thrift-hatrpc on an IDL
# text, which needs make to have built thrift-compiler-patch/), as a test: builds them with clang
# (scripts/fuzz), runs every committed input once (the corpus and the regressions: each was
# a crash once), then fuzzes each harness for FUZZ_SECONDS (default 30).  One TAP line per
# step; a crash is `not ok` with the sanitizer's summary and the input it kept.  Without clang
# or its libFuzzer runtime the build fails, and says which Debian package to install.
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
seconds=${FUZZ_SECONDS:-30}
fuzz=$top_srcdir/scripts/fuzz
out=$top_builddir/test/fuzz/build
harnesses=($("$fuzz" --list))

echo "1..$((1 + 2 * ${#harnesses[@]}))"
n=1
if log=$(nice -n 19 "$fuzz" --builddir "$top_builddir" --out "$out" --build-only 2>&1); then
  echo "ok $n build the harnesses with clang and libFuzzer"
  built=1
else
  echo "not ok $n build the harnesses with clang and libFuzzer"
  printf '%s\n' "$log" | tail -n 15 | sed 's/^/# /'
  built=0
fi

# Each step's line: ok, or not ok with what scripts/fuzz said about the crash.
step() { # TITLE ARGS...
  local title=$1 log
  shift
  n=$((n + 1))
  if [ $built -eq 0 ]; then
    echo "not ok $n $title # the harnesses were not built"
    return
  fi
  log=$(nice -n 19 "$fuzz" --builddir "$top_builddir" --out "$out" "$@" 2>&1)
  if [ $? -eq 0 ]; then
    echo "ok $n $title: $(printf '%s\n' "$log" | grep '^fuzz: ' | tail -n 1 | sed 's/^fuzz: [a-z_]*: //')"
  else
    echo "not ok $n $title"
    printf '%s\n' "$log" | sed 's/^/# /'
  fi
}

for h in "${harnesses[@]}"; do
  step "$h: every corpus and regression input" --replay "$h"
done
for h in "${harnesses[@]}"; do
  step "$h: fuzzed for $seconds s" --time "$seconds" "$h"
done
