#!/bin/sh
# The c_glib generator option zero_copy_binary (issue 10): code generated from zero_copy.thrift
# without it is stock Thrift's, where every binary that is read is copied
# (g_byte_array_new + g_byte_array_append + g_free (data)); with it, every one of those reads
# makes its GByteArray take the protocol's buffer (g_byte_array_new_take), in each function
# that reads one.  The processor's process_<function> releases the reply (result, return
# value, arguments, exceptions) only after the flush, once each, and a oneway function writes
# nothing; nothing else in the output changes.  Also the option's errors and its line in
# --help.  One TAP line per check.
#
# Environment: top_builddir (set by the test harness), STOCK_THRIFT (default: thrift on PATH),
# HATRPC (default: $top_builddir/thrift-compiler-patch/thrift-hatrpc).
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
top_builddir=${top_builddir:-.}
srcdir=${srcdir:-$(dirname "$0")/../..}
STOCK_THRIFT=${STOCK_THRIFT:-thrift}
HATRPC=${HATRPC:-$top_builddir/thrift-compiler-patch/thrift-hatrpc}
idl=$srcdir/test/compiler/zero_copy.thrift

if [ ! -x "$HATRPC" ]; then
  printf "1..1\nnot ok 1 - no thrift-hatrpc (run make first)\n"
  exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/hatrpc-zc.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
mkdir "$work/plain" "$work/zc" "$work/stock"

i=0
fail=0
ok() { i=$((i + 1)); echo "ok $i - $1"; }
notok() { i=$((i + 1)); fail=$((fail + 1)); echo "not ok $i - $1"; }

# The functions of the generated code that read binaries, with how many each reads, counted
# from zero_copy.thrift: Blobs has 8 (one, opt, req, a list element, a set element, a map key
# and value, the element of the nested list), Oops 1; echo's args 2 (data, an element of more),
# its result 1 (success; e is a struct); many's args 2 (key, value), its result 1; pairs' args 1,
# its result 2; blobs' args and result hold a struct, so none; drop's args 1 (oneway: no result).
# recv_<function> reads the result itself: the same counts as the _result structs.
expected="blobs_read 8
oops_read 1
zc_echo_args_read 2
zc_echo_result_read 1
zc_many_args_read 2
zc_many_result_read 1
zc_pairs_args_read 1
zc_pairs_result_read 2
zc_blobs_args_read 0
zc_blobs_result_read 0
zc_drop_args_read 1
zc_client_recv_echo 1
zc_client_recv_many 1
zc_client_recv_pairs 2
zc_client_recv_blobs 0"
total=23

# count DIR FUNCTION PATTERN: lines matching PATTERN in FUNCTION's body (from its definition,
# "[type ]FUNCTION (" at the start of a line, to the first "}" at the start of a line).
count() {
  cat "$1"/*.c 2>/dev/null | awk -v f="$2" -v p="$3" '
    !inside && ($0 ~ "^" f " \\(" || $0 ~ "^[a-z0-9_]+ " f " \\(") { inside = 1; next }
    inside && /^}/ { inside = 0 }
    inside && index($0, p) { n++ }
    END { print n + 0 }'
}
# total DIR PATTERN: lines matching PATTERN in all the generated .c files
total() { cat "$1"/*.c 2>/dev/null | grep -c -F -e "$2"; }

gen() { out=$1; shift; "$HATRPC" "$@" -out "$out" "$idl"; }

# The processor's functions, one per function of the service, and the function that is oneway.
processes="echo many pairs blobs drop"
# body DIR NAME: the definition of zc_processor_process_NAME, from its first line to its "}"
body() {
  cat "$1"/*.c 2>/dev/null | awk -v f="zc_processor_process_$2" '
    $0 ~ "^" f " \\(ZcProcessor \\*self,$" { inside = 1 }
    inside { print }
    inside && /^}/ { exit }'
}
# without_processes DIR: the generated .c files without the bodies of the processor's functions
without_processes() {
  cat "$1"/*.c 2>/dev/null | awk '
    /^zc_processor_process_[a-z_]+ \(ZcProcessor \*self,$/ { inside = 1 }
    !inside { print }
    inside && /^}/ { inside = 0 }'
}
# releases DIR NAME: "flush=N early=... late=...": how many flushes NAME's body has, and what it
# releases (unref or g_free) before the flush and after it, sorted by name.  The input
# transport, released where the output one is taken (before the reply is written), is left out.
releases() {
  body "$1" "$2" | sed '/g_object_unref (transport);/{N;/g_object_get (output_protocol, "transport"/d;}' |
    awk '
      /thrift_transport_flush \(/ { flushes++; flushed = 1; next }
      /(_unref|g_free) \(/ {
        n = $0; sub(/^.*\(/, "", n); sub(/\);.*$/, "", n)
        if (flushed) late[++nl] = n; else early[++ne] = n
      }
      function sorted(a, k,   i, j, t, out) {
        for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
          t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        out = ""; for (i = 1; i <= k; i++) out = out (i > 1 ? " " : "") a[i]
        return out
      }
      END { printf "flush=%d early=%s late=%s\n", flushes, sorted(early, ne), sorted(late, nl) }'
}

echo "1..15"

# 1. Without the option: stock Thrift's output, byte for byte.
if ! gen "$work/plain" --gen c_glib > "$work/plain.log" 2>&1; then
  notok "without the option: generates"; sed 's/^/# /' "$work/plain.log"
elif ! command -v "$STOCK_THRIFT" > /dev/null 2>&1; then
  i=$((i + 1)); echo "ok $i # SKIP no stock thrift ($STOCK_THRIFT) to compare with"
elif "$STOCK_THRIFT" --gen c_glib -out "$work/stock" "$idl" > "$work/stock.log" 2>&1 &&
     diff -r "$work/stock" "$work/plain" > "$work/diff" 2>&1 &&
     cmp -s "$work/stock.log" "$work/plain.log"; then
  ok "without the option: identical to stock thrift"
else
  notok "without the option: differs from stock thrift"; head -n 20 "$work/diff" | sed 's/^/# /'
fi

# 2. Without the option every binary read is copied, in each function that reads one.
why=""
echo "$expected" | { while read -r f n; do
    a=$(count "$work/plain" "$f" "g_byte_array_append (")
    r=$(count "$work/plain" "$f" "thrift_protocol_read_binary (")
    [ "$a" = "$n" ] && [ "$r" = "$n" ] || echo "$f: $r reads, $a copies, expected $n"
  done; } > "$work/why"
[ "$(total "$work/plain" "thrift_protocol_read_binary (")" = $total ] ||
  echo "not $total binary reads in all" >> "$work/why"
if [ -s "$work/why" ]; then notok "without the option: each binary read is copied"; sed 's/^/# /' "$work/why"
else ok "without the option: each of the $total binary reads is copied (g_byte_array_append)"; fi

# 3. With the option, in each of those functions: as many g_byte_array_new_take as reads, and
# no copy.
zc_ok=""
if ! gen "$work/zc" --gen c_glib:zero_copy_binary > "$work/zc.log" 2>&1 || [ -s "$work/zc.log" ]; then
  notok "with the option: generates, silently"; sed 's/^/# /' "$work/zc.log"
else
  zc_ok=yes
  echo "$expected" | { while read -r f n; do
      t=$(count "$work/zc" "$f" "= g_byte_array_new_take ((guint8 *) data, (gsize) len);")
      a=$(count "$work/zc" "$f" "g_byte_array_append")
      r=$(count "$work/zc" "$f" "thrift_protocol_read_binary (")
      [ "$t" = "$n" ] && [ "$r" = "$n" ] && [ "$a" = 0 ] ||
        echo "$f: $r reads, $t takes, $a appends, expected $n, $n, 0"
    done; } > "$work/why"
  if [ -s "$work/why" ]; then notok "with the option: each binary read takes the buffer"; sed 's/^/# /' "$work/why"
  else ok "with the option: each binary read takes the protocol's buffer, per function"; fi
fi

# 4. ... and in all: no g_byte_array_append, no g_free (data), no g_byte_array_new () left.
a=$(total "$work/zc" "g_byte_array_append"); g=$(total "$work/zc" "g_free (data)")
n=$(total "$work/zc" "g_byte_array_new()"); t=$(total "$work/zc" "g_byte_array_new_take (")
if [ "$a$g$n" = 000 ] && [ "$t" = $total ]; then
  ok "with the option: $t takes, no copy, no g_free (data) anywhere"
else
  notok "with the option: $a appends, $g g_free (data), $n g_byte_array_new (), $t takes (want 0 0 0 $total)"
fi

# 5. With the option, outside the processor's functions nothing but binary reads changes: every
# line the diff removes or adds is one of the copy, the release of a previous value, the take,
# or the check of the length.
without_processes "$work/plain" > "$work/plain.rest"
without_processes "$work/zc" > "$work/zc.rest"
diff "$work/plain.rest" "$work/zc.rest" | grep '^[<>]' | grep -v -E \
  -e '^< +[a-z_>*.-]+[a-z0-9_]* = g_byte_array_new\(\);$' \
  -e '^< +g_byte_array_append \([a-z_>*.-]+[a-z0-9_]*, \(guint8 \*\) data, \(guint\) len\);$' \
  -e '^< +g_free \(data\);$' \
  -e '^< +g_free\([a-z_>*.-]+[a-z0-9_]*\);$' \
  -e '^> +g_byte_array_unref \([a-z_>*.-]+[a-z0-9_]*\);$' \
  -e '^> +[a-z_>*.-]+[a-z0-9_]* = g_byte_array_new_take \(\(guint8 \*\) data, \(gsize\) len\);$' \
  -e '^> +if \(data == NULL && len != 0\)$' -e '^> +[{}]$' \
  -e '^> +g_set_error \(error, THRIFT_PROTOCOL_ERROR, THRIFT_PROTOCOL_ERROR_NEGATIVE_SIZE,$' \
  -e '^> +"got negative size of %d", \(gint32\) len\);$' \
  -e '^> +return (0|-1);$' > "$work/other"
if [ -z "$zc_ok" ]; then notok "with the option: nothing generated to compare"
elif [ -s "$work/other" ]; then notok "with the option: other lines change"; head -n 20 "$work/other" | sed 's/^/# /'
else ok "with the option: only the binary reads change (outside the processor)"; fi

# 6. In the processor's functions, nothing else changes: without the lines that release
# something and the declaration of xception, each body is stock Thrift's, line for line (so
# the releases are all that moved); a oneway function only loses the exception it wrote.
# strip: a body without releases, the "if (X != NULL)" before them, xception's declaration
# and blank lines
strip() {
  sed -e '/if ([a-z_]* != NULL)$/{N;/\n *[a-z_]*_unref ([a-z_]*);$/d;/\n *g_free ([a-z_]*);$/d;}' \
      -e '/^ *[a-z_]*_unref ([a-z_]*);$/d' -e '/^ *ThriftApplicationException \*xception/d' \
      -e '/^$/d'
}
: > "$work/why"
for f in $processes; do
  body "$work/plain" $f | strip > "$work/p.$f"
  body "$work/zc" $f | strip > "$work/z.$f"
  if [ $f = drop ]; then
    # the stock oneway function makes and writes an exception when its handler fails, which
    # it never ends nor flushes; with the option only the g_clear_error of that block is left
    awk '/^ *xception =$/ { skip = 1 } skip && /g_clear_error \(error\);/ { print; next }
         skip && /thrift_struct_write \(THRIFT_STRUCT \(xception\),/ { tail = 1 }
         skip && tail && /error\) != -1\)\);$/ { skip = 0; tail = 0; next }
         !skip { print }' "$work/p.$f" > "$work/p.$f.new" && mv "$work/p.$f.new" "$work/p.$f"
  fi
  [ -s "$work/z.$f" ] || echo "$f: no body" >> "$work/why"
  diff "$work/p.$f" "$work/z.$f" > "$work/d.$f" || { echo "$f:"; cat "$work/d.$f"; } >> "$work/why"
done
if [ -z "$zc_ok" ]; then notok "processor: nothing generated to compare"
elif [ -s "$work/why" ]; then notok "processor: more than the releases changed"; head -n 20 "$work/why" | sed 's/^/# /'
else ok "processor: only the releases move (and a oneway function writes no exception)"; fi

# 7. With the option, process_<function> releases nothing of the reply before the flush, and
# after it releases each argument, the return value, the result, each declared exception and
# the application exception (when made) once, on every path (one return, at the end).  The
# oneway drop has no flush, writes nothing and releases its argument.  Expected from
# zero_copy.thrift: echo(data, more) throws (e), many(m), pairs(s), blobs(b), drop(data).
want_zc="echo flush=1 early= late=args data e more result_struct return_value transport xception
many flush=1 early= late=args m result_struct return_value transport xception
pairs flush=1 early= late=args result_struct return_value s transport xception
blobs flush=1 early= late=args b result_struct return_value transport xception
drop flush=0 early=args data transport late="
: > "$work/why"
echo "$want_zc" | while read -r f want; do
  got=$(releases "$work/zc" $f)
  [ "$got" = "$want" ] || echo "$f: $got; want $want"
  r=$(body "$work/zc" $f | grep -c -E '^ *return[ ;]')
  [ "$r" = 1 ] || echo "$f: $r lines with return, want 1"
done > "$work/why"
w=$(body "$work/zc" drop | grep -c -e 'thrift_protocol_write' -e 'thrift_struct_write' -e 'xception')
[ "$w" = 0 ] || echo "drop: $w lines write to output_protocol or make an exception" >> "$work/why"
if [ -z "$zc_ok" ]; then notok "processor: nothing generated to check"
elif [ -s "$work/why" ]; then notok "processor: the reply is released before the flush, or not once"; sed 's/^/# /' "$work/why"
else ok "processor: the reply is released after the flush, once, on every path"; fi

# 8. The same check on stock Thrift's code finds what the option mends: in each function that
# replies, the arguments, the return value, the result and the exceptions are released before
# the flush.
want_plain="echo flush=1 early=data e more result_struct return_value xception late=args transport
many flush=1 early=m result_struct return_value xception late=args transport
pairs flush=1 early=result_struct return_value s xception late=args transport
blobs flush=1 early=b result_struct return_value xception late=args transport
drop flush=0 early=args data transport xception late="
echo "$want_plain" | while read -r f want; do
  got=$(releases "$work/plain" $f)
  [ "$got" = "$want" ] || echo "$f: $got; want $want"
done > "$work/why"
if [ -s "$work/why" ]; then notok "without the option: not the releases expected"; sed 's/^/# /' "$work/why"
else ok "without the option: stock code releases the reply before the flush (the check sees it)"; fi

# 9. With the option, the previous value of a binary (a field sent twice) is released as the
# GByteArray it is, not with g_free; strings still are freed with g_free.
u=$(count "$work/zc" blobs_read "g_byte_array_unref (this_object->")
s=$(count "$work/zc" blobs_read "g_free(this_object->text);")
if [ "$u" = 3 ] && [ "$s" = 1 ]; then ok "with the option: a previous binary is unref'd, a string still g_free'd"
else notok "with the option: $u unrefs of a previous binary field (want 3), $s g_free of the string (want 1)"; fi

# check NAME WANT_RC WANT_OUTPUT ARGS...: thrift-hatrpc's stdout+stderr must be WANT_OUTPUT,
# and a failure must write nothing.
check() {
  name=$1 want_rc=$2 want=$3
  shift 3
  rm -rf "$work/out" && mkdir "$work/out"
  got=$("$HATRPC" "$@" 2>&1)
  rc=$?
  if [ "$rc" != "$want_rc" ]; then notok "$name: exit status $rc, expected $want_rc"
  elif [ "$got" != "$want" ]; then
    notok "$name: output differs"; printf 'want: %s\ngot:  %s\n' "$want" "$got" | sed 's/^/# /'
  elif [ "$rc" -ne 0 ] && [ -n "$(ls -A "$work/out")" ]; then notok "$name: failed but wrote files"
  else ok "$name"; fi
}
unknown() { echo "[FAILURE:generation:1] Error: unknown option c_glib:$1"; }
# 10-13. An unknown option is an error as in stock thrift; the option takes no value.
check "unknown option c_glib:zero_copy" 1 "$(unknown zero_copy)" \
  --gen c_glib:zero_copy -out "$work/out" "$idl"
check "unknown option after zero_copy_binary" 1 "$(unknown bogus)" \
  --gen c_glib:zero_copy_binary,bogus -out "$work/out" "$idl"
check "zero_copy_binary=yes" 1 "[FAILURE:generation:1] Error: option c_glib:zero_copy_binary takes no value" \
  --gen c_glib:zero_copy_binary=yes -out "$work/out" "$idl"
if command -v "$STOCK_THRIFT" > /dev/null 2>&1; then
  stock=$("$STOCK_THRIFT" --gen c_glib:zero_copy -out "$work/out" "$idl" 2>&1)
  [ "$stock" = "$(unknown zero_copy)" ] && ok "stock thrift words an unknown option the same" ||
    { notok "stock thrift's error differs"; echo "$stock" | sed 's/^/# /'; }
else
  i=$((i + 1)); echo "ok $i # SKIP no stock thrift ($STOCK_THRIFT)"
fi

# 14. --help lists the option under c_glib.
"$HATRPC" --help > "$work/help" 2>&1
if sed -n '/^  c_glib (C, using GLib):$/,$p' "$work/help" | grep -q '^    zero_copy_binary:'; then
  ok "--help lists zero_copy_binary under c_glib"
else
  notok "--help does not list zero_copy_binary under c_glib"; tail -n 8 "$work/help" | sed 's/^/# /'
fi

# 15. Strings: read into the protocol's buffer with no copy, with or without the option.
r=$(total "$work/zc" "thrift_protocol_read_string (protocol, &")
grep -F 'read_string' "$work/plain"/*.c 2>/dev/null | sed 's|^[^:]*/||' > "$work/s.plain"
grep -F 'read_string' "$work/zc"/*.c 2>/dev/null | sed 's|^[^:]*/||' > "$work/s.zc"
if [ "$r" -ge 1 ] && cmp -s "$work/s.plain" "$work/s.zc"; then
  ok "strings are read in place ($r reads), unchanged by the option"
else
  notok "strings: $r reads in place, or the option changed them"
fi
[ $fail -eq 0 ]
