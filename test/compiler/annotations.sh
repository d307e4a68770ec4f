#!/bin/sh
# Hints written as standard Thrift annotations (issue 24): the same IDL compiles with stock
# thrift for other languages, and thrift-hatrpc reads the same hints from it as from hint
# groups.  One TAP line per check.
#
# annotations/annotated.thrift writes with hatrpc.* annotations what annotations/grouped.thrift
# writes with hint: / c_hint: / s_hint: groups.  Stock thrift (Debian's thrift-compiler) must
# compile the annotated file for py, java and cpp; thrift-hatrpc must resolve both files to the
# same hints (THRIFT_HATRPC_DUMP_HINTS) and generate the same code from them, the comments that
# say where each hint was written aside.
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
STOCK_THRIFT=${STOCK_THRIFT:-thrift}
HATRPC=${HATRPC:-$top_builddir/thrift-compiler-patch/thrift-hatrpc}
src=$top_srcdir/test/compiler/annotations

echo "1..6"
if [ ! -x "$HATRPC" ]; then
  for i in 1 2 3 4 5 6; do echo "not ok $i - no thrift-hatrpc (run make first)"; done
  exit 1
fi
HATRPC=$(cd "$(dirname "$HATRPC")" && pwd)/$(basename "$HATRPC")   # used from other directories
work=$(mktemp -d "${TMPDIR:-/tmp}/hatrpc-annotations.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
fail=0
result () {  # NUMBER DESCRIPTION WHY (empty: ok)
  if [ -z "$3" ]; then echo "ok $1 - $2"; else echo "not ok $1 - $2: $3"; fail=$((fail + 1)); fi
}

# 1-3: stock compilers of other languages accept the annotated IDL
i=0
for lang in py java cpp; do
  i=$((i + 1))
  mkdir "$work/$lang"
  why=""
  if ! "$STOCK_THRIFT" --gen "$lang" -out "$work/$lang" "$src/annotated.thrift" > "$work/$lang.log" 2>&1; then
    why="exit status $?: $(head -n 2 "$work/$lang.log" | tr '\n' ' ')"
  elif [ -z "$(find "$work/$lang" -type f)" ]; then
    why="no files generated"
  fi
  result $i "stock thrift --gen $lang compiles the annotated IDL" "$why"
done

# Both spellings under one file name, so the generated includes match.
for spelling in annotated grouped; do
  mkdir -p "$work/$spelling/out"
  cp "$src/$spelling.thrift" "$work/$spelling/hints.thrift"
  (cd "$work/$spelling" && THRIFT_HATRPC_DUMP_HINTS=1 "$HATRPC" --gen c_glib -out out hints.thrift \
     > dump 2> errors) || echo "# thrift-hatrpc failed on $spelling.thrift: $(head -n 3 "$work/$spelling/errors")"
done

# 4: the same resolved hints, and some
why=""
if [ ! -s "$work/grouped/dump" ]; then
  why="no hints resolved from grouped.thrift"
elif ! cmp -s "$work/grouped/dump" "$work/annotated/dump"; then
  why="$(diff "$work/grouped/dump" "$work/annotated/dump" | grep '^[<>]' | head -n 4 | tr '\n' ' ')"
fi
result 4 "thrift-hatrpc resolves the annotations to the hints of the groups" "$why"

# 5: the same generated code, the comments on the hint lines aside
why=""
strip () { sed 's|, /\* .* at line [0-9]* \*/$|,|' "$1"; }
files=$(cd "$work/grouped/out" && ls)
[ -n "$files" ] || why="nothing generated from grouped.thrift"
for f in $files; do
  if [ ! -f "$work/annotated/out/$f" ]; then
    why="$f not generated from annotated.thrift"; break
  fi
  strip "$work/grouped/out/$f" > "$work/g"
  strip "$work/annotated/out/$f" > "$work/a"
  if ! cmp -s "$work/g" "$work/a"; then
    why="$f differs: $(diff "$work/g" "$work/a" | grep '^[<>]' | head -n 2 | tr '\n' ' ')"; break
  fi
done
[ -z "$why" ] && [ "$(cd "$work/annotated/out" && ls)" != "$files" ] && why="other files generated"
result 5 "thrift-hatrpc generates the same code from both spellings" "$why"

# 6: a table's comment says which annotation, and where, each hint came from
why=""
line=$(grep -n 'hatrpc\.c\.payload_size = "64"' "$src/annotated.thrift" | cut -d: -f1)
grep -q "/\* hatrpc\.c\.payload_size = 64 at line $line \*/\$" "$work/annotated/out/kv.c" ||
  why="no comment naming hatrpc.c.payload_size at line $line in kv.c"
result 6 "the tables name the annotations and their lines" "$why"
[ $fail -eq 0 ]
