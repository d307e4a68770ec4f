#!/bin/sh
# The command line of thrift-hatrpc (issue 7): --version names thrift-hatrpc and the Thrift
# release it is based on; a generator that is not built in (every one but c_glib) is an
# error that says so, before any IDL is read, and nothing is written.  One TAP line per check.
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
top_builddir=${top_builddir:-.}
HATRPC=${HATRPC:-$top_builddir/thrift-compiler-patch/thrift-hatrpc}

if [ ! -x "$HATRPC" ]; then
  printf "1..1\nnot ok 1 - no thrift-hatrpc (run make first)\n"
  exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/hatrpc-cli.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
cat > "$work/x.thrift" <<'IDL'
namespace py x.py
namespace java x.java
service S {
  void f() [ hint: perf_goal = latency; ]
}
IDL
# Not even parsed when the generator is refused.
printf 'service S {\n  hints: perf_goal = latency;\n}\n' > "$work/bad.thrift"

i=0
fail=0
# check NAME WANT_RC WANT_OUTPUT ARGS...: stdout+stderr must be WANT_OUTPUT exactly.
check() {
  name=$1 want_rc=$2 want=$3
  shift 3
  i=$((i + 1))
  rm -rf "$work/out" && mkdir "$work/out"
  got=$(cd "$work" && "$HATRPC" "$@" 2>&1)
  rc=$?
  why=""
  if [ "$rc" != "$want_rc" ]; then
    why="exit status $rc, expected $want_rc"
  elif [ "$got" != "$want" ]; then
    why="output differs"
  elif [ "$rc" -ne 0 ] && [ -n "$(ls -A "$work/out")" ]; then
    why="failed but wrote files"
  fi
  if [ -z "$why" ]; then
    echo "ok $i - $name"
  else
    fail=$((fail + 1))
    echo "not ok $i - $name: $why"
    printf 'want: %s\ngot:  %s\n' "$want" "$got" | sed 's/^/# /'
  fi
}

echo "1..9"
version="thrift-hatrpc 0.17.0-hatrpc (based on Apache Thrift 0.17.0, with HatRPC hints; generators: c_glib)"
check "--version" 0 "$version" --version
check "-version before a file" 0 "$version" -version x.thrift
refused() {
  echo "thrift-hatrpc: no generator '$1': only the c_glib generator is built into thrift-hatrpc; for other languages use the stock thrift compiler"
}
check "--gen py" 1 "$(refused py)" --gen py -out out x.thrift
check "--gen cpp" 1 "$(refused cpp)" --gen cpp -out out x.thrift
check "--gen foo (unknown)" 1 "$(refused foo)" --gen foo -out out x.thrift
check "--gen py:new_style (with options)" 1 "$(refused py)" --gen py:new_style -out out x.thrift
check "--gen c_glib --gen java" 1 "$(refused java)" --gen c_glib --gen java -out out x.thrift
check "--gen py before a syntax error in the IDL" 1 "$(refused py)" --gen py -out out bad.thrift
# c_glib still works, and namespaces of other languages still draw no warning.
check "--gen c_glib with py and java namespaces" 0 "" --gen c_glib -out out x.thrift
[ $fail -eq 0 ]
