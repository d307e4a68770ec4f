#!/bin/sh
# Grammar, validation and resolution cases of thrift-hatrpc (issue 3).  One TAP line per case.
#
# Each cases/NAME.thrift with a cases/NAME.expected is a case.  NAME.expected holds:
#   exit N            the exit status thrift-hatrpc must have
#   same-as-stock     (optional) the output must also be byte-identical to the stock compiler's
#   --
#   the exact stdout+stderr of `THRIFT_HATRPC_DUMP_HINTS=1 thrift-hatrpc --gen c_glib`: the
#   resolved hint set of every function and side, or the errors, with @DIR@ for the directory
#   of the case files.
# A case that fails must also write nothing; one that succeeds must write the generated files.
# For every service with hints, the generated .c must also define <service>_hint_sets[] (the
# .h declaring it extern) with exactly the sets the dump lists for that service, client then
# server per function, in order, then NULL; a service without hints has no table.
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
STOCK_THRIFT=${STOCK_THRIFT:-thrift}
HATRPC=${HATRPC:-$top_builddir/thrift-compiler-patch/thrift-hatrpc}
cases=$top_srcdir/test/compiler/cases
# A case that hangs the compiler fails (status 124) instead of hanging the suite; the
# memory limit stops one that also grows without end.
timeout=""
command -v timeout > /dev/null 2>&1 && timeout="timeout 10"

if [ ! -x "$HATRPC" ]; then
  printf "1..1\nnot ok 1 - no thrift-hatrpc (run make first)\n"
  exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/hatrpc-hints.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
cp "$cases"/*.thrift "$work/"
dir=$(cd "$work" && pwd -P)

# Prints why the tables of hint sets in the generated files of $1 do not match the dump in $2,
# or nothing if they do.
check_tables () {
  for c in "$1"/*.c; do
    base=$(basename "$c" .c)
    case $base in *_types) continue ;; esac
    # the service's name, its table's name, then "Service.function side" per entry, then NULL
    awk '
      /^\/\* HatRPC hints of service / { svc = $6; sub(/,$/, "", svc); print "service " svc }
      /^static const ThriftHintSet [a-z0-9_]+ =$/ { cur = $4 }
      /^  \.service = "/ { split($0, q, "\""); s = q[2] }
      /^  \.function = "/ { split($0, q, "\""); f = q[2] }
      /^  \.side = THRIFT_HINT_SIDE_CLIENT,$/ { desc[cur] = s "." f " client" }
      /^  \.side = THRIFT_HINT_SIDE_SERVER,$/ { desc[cur] = s "." f " server" }
      /^const ThriftHintSet \*const [a-z0-9_]+\[\] =$/ { t = $4; sub(/\[\]$/, "", t); print "table " t; intable = 1; next }
      intable && /^  &[a-z0-9_]+,$/ { n = substr($1, 2); sub(/,$/, "", n); print (n in desc ? desc[n] : "undefined " n); next }
      intable && /^  NULL$/ { print "NULL"; next }
      intable && /^};$/ { intable = 0 }
    ' "$c" > "$work/table"
    svc=$(sed -n 's/^service //p' "$work/table")
    if [ -z "$svc" ]; then
      if grep -q '_hint_sets' "$c" "$1/$base.h"; then
        echo "$base.c has a table of hint sets but no hints"; return
      fi
      continue
    fi
    { echo "service $svc"; echo "table ${base}_hint_sets"
      grep "^$svc\.[^ ]* \(client\|server\):" "$2" | sed 's/:.*//'; echo NULL; } > "$work/want_table"
    if ! cmp -s "$work/want_table" "$work/table"; then
      echo "table of hint sets in $base.c: $(diff "$work/want_table" "$work/table" | grep '^[<>]' | head -n 3 | tr '\n' ' ')"
      return
    fi
    grep -qx "extern const ThriftHintSet \*const ${base}_hint_sets\[\];" "$1/$base.h" ||
      { echo "$base.h does not declare ${base}_hint_sets"; return; }
  done
}

n=$(ls "$cases"/*.expected | wc -l)
echo "1..$n"
i=0
fail=0
for expected in "$cases"/*.expected; do
  i=$((i + 1))
  name=$(basename "$expected" .expected)
  want_rc=$(sed -n 's/^exit //p' "$expected" | head -n 1)
  stock=no
  sed -n '1,/^--$/p' "$expected" | grep -qx same-as-stock && stock=yes
  sed '1,/^--$/d' "$expected" | sed "s|@DIR@|$dir|g" > "$work/want"

  rm -rf "$work/out" && mkdir "$work/out"
  got=$(cd "$work" && { ulimit -v 1048576 2> /dev/null || :; } &&
        THRIFT_HATRPC_DUMP_HINTS=1 $timeout "$HATRPC" --gen c_glib -out out "$name.thrift" 2>&1)
  rc=$?
  printf '%s\n' "$got" > "$work/got"

  why=""
  if [ "$rc" != "$want_rc" ]; then
    why="exit status $rc, expected $want_rc"
  elif ! cmp -s "$work/want" "$work/got"; then
    why="output differs"
  elif [ "$rc" -ne 0 ] && [ -n "$(ls -A "$work/out")" ]; then
    why="failed but wrote files: $(cd "$work/out" && find . -type f | head -n 3 | tr '\n' ' ')"
  elif [ "$rc" -eq 0 ] && [ -z "$(find "$work/out" -name '*.c')" ]; then
    why="generated no .c file"
  elif [ $stock = yes ]; then
    rm -rf "$work/stock" && mkdir "$work/stock"
    (cd "$work" && "$STOCK_THRIFT" --gen c_glib -out stock "$name.thrift" > /dev/null 2>&1)
    diff -r "$work/stock" "$work/out" > "$work/diff" 2>&1 || why="output differs from stock thrift"
  fi
  if [ -z "$why" ] && [ "$rc" -eq 0 ]; then
    why=$(check_tables "$work/out" "$work/got")
  fi

  if [ -z "$why" ]; then
    echo "ok $i - $name"
  else
    fail=$((fail + 1))
    echo "not ok $i - $name: $why"
    diff "$work/want" "$work/got" | head -n 20 | sed 's/^/# /'
  fi
done
[ $fail -eq 0 ]
