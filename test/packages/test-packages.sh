#!/usr/bin/env bash
# test-packages.sh: the Debian packages (issue 24 item 6).  Builds them from the committed tree
# (git archive HEAD) with dpkg-buildpackage, unpacks them into an empty root, and builds and
# runs the tutorial against that root alone: thrift-hatrpc from it generates the code, the
# headers and the library come from it by its pkg-config file, and tutorial/test-tutorial.sh
# runs the programs over tcp:// on 127.0.0.1 with the library loaded from it.  Prints TAP.
# Takes a few minutes (a whole build); not the top of a git checkout (a dist tarball): SKIP.
#
# Environment: top_srcdir (default .), PACKAGES_KEEP=DIR (keep the .debs there).
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
set -u
if [ "${1:-}" = "--help" ]; then sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 0; fi
src=$(cd "${top_srcdir:-.}" && pwd)
# (the top of a work tree: make distcheck unpacks the tarball inside the checkout)
if ! git -C "$src" rev-parse --verify -q HEAD > /dev/null 2>&1 ||
   [ "$(cd "$(git -C "$src" rev-parse --show-toplevel)" && pwd -P)" != "$(cd "$src" && pwd -P)" ]; then
  echo "1..0 # SKIP not a git checkout: the packages are built from the committed tree"
  exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/test-packages.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM
n=0 fail=0
tap () {  # tap WHY(empty: ok) DESCRIPTION
  n=$((n + 1))
  if [ -z "$1" ]; then echo "ok $n $2"; else echo "not ok $n $2: $1"; fail=$((fail + 1)); fi
}
echo "1..7"

# 1: the packages build
mkdir -p "$work/build/src" "$work/root" "$work/tut/gen" "$work/tutorial"
git -C "$src" archive --format=tar HEAD | tar -x -C "$work/build/src"
(cd "$work/build/src" &&
   DEB_BUILD_OPTIONS="parallel=$(nproc) nocheck" dpkg-buildpackage -us -uc -b) \
  > "$work/build.log" 2>&1
rc=$?
debs=$(cd "$work/build" && ls libthrift-c-glib-rdma0_*.deb libthrift-c-glib-rdma-dev_*.deb \
         thrift-hatrpc_*.deb 2> /dev/null | grep -v dbgsym)
why=""
[ $rc -ne 0 ] && why="dpkg-buildpackage: exit status $rc: $(grep -m 3 'error' "$work/build.log" | tr '\n' ' ')"
[ -z "$why" ] && [ "$(echo "$debs" | wc -w)" -ne 3 ] && why="packages built: $(echo $debs)"
tap "$why" "dpkg-buildpackage builds libthrift-c-glib-rdma0, -dev and thrift-hatrpc"
[ -n "${PACKAGES_KEEP:-}" ] && mkdir -p "$PACKAGES_KEEP" && cp "$work"/build/*.deb "$PACKAGES_KEEP"/

# 2: they unpack into an empty root with what a user needs
for d in $debs; do dpkg -x "$work/build/$d" "$work/root"; done
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
lib=$work/root/usr/lib/$multiarch
why=""
for f in usr/bin/thrift-hatrpc usr/include/thrift/c_glib/transport/thrift_rdma.h \
         usr/include/thrift/c_glib/transport/thrift_transport_uri.h \
         usr/include/thrift/c_glib/server/thrift_threaded_server.h \
         usr/include/thrift/c_glib/server/thrift_server_uri.h \
         "usr/lib/$multiarch/libthrift_c_glib_rdma.so.0" \
         "usr/lib/$multiarch/pkgconfig/thrift_c_glib_rdma.pc"; do
  [ -e "$work/root/$f" ] || why="$why $f"
done
tap "${why:+missing:$why}" "the packages hold the compiler, the headers, the library and its pkg-config file"

# 3: the packaged compiler generates the tutorial's code
"$work/root/usr/bin/thrift-hatrpc" --gen c_glib -out "$work/tut/gen" "$src/tutorial/calculator.thrift" \
  > "$work/gen.log" 2>&1
rc=$?
why=""
[ $rc -ne 0 ] && why="exit status $rc: $(head -n 2 "$work/gen.log" | tr '\n' ' ')"
[ -z "$why" ] && [ ! -f "$work/tut/gen/calculator.c" ] && why="no calculator.c"
tap "$why" "the packaged thrift-hatrpc generates tutorial/calculator.thrift's code"

# 4: the tutorial compiles against the root alone: its pkg-config file, with the prefix moved
# to the root (what installing the packages there would give), and the packages it requires,
# the system's, as a user's would be
mkdir -p "$work/pc"
sed "s|^prefix=.*|prefix=$work/root/usr|" "$lib/pkgconfig/thrift_c_glib_rdma.pc" \
  > "$work/pc/thrift_c_glib_rdma.pc"
pc () { PKG_CONFIG_PATH="$work/pc" pkg-config "$@" thrift_c_glib_rdma; }
: > "$work/tut/config.h"   # the tree's own, which a user's build does not have
why=""
for prog in server client; do
  cc -std=gnu11 -I"$work/tut" -I"$work/tut/gen" -I"$src/tutorial" $(pc --cflags) \
     -o "$work/tutorial/calculator-$prog" "$src/tutorial/calculator_$prog.c" \
     "$work"/tut/gen/*.c $(pc --libs) > "$work/cc-$prog.log" 2>&1 ||
    why="$why calculator-$prog: $(grep -m 2 'error' "$work/cc-$prog.log" | tr '\n' ' ')"
done
case "$(pc --cflags)" in *"$work/root/usr/include"*) ;; *) why="$why pkg-config gave $(pc --cflags)";; esac
tap "$why" "the tutorial compiles against the packages' headers and library"

# 5: the programs load the packaged library
why=""
loaded=$(LD_LIBRARY_PATH="$lib" ldd "$work/tutorial/calculator-server" 2> /dev/null |
           awk '/libthrift_c_glib_rdma/ { print $3 }')
[ "$loaded" = "$lib/libthrift_c_glib_rdma.so.0" ] || why="it loads '$loaded'"
tap "$why" "calculator-server loads libthrift_c_glib_rdma from the packages"

# 6, 7: the tutorial's own end-to-end test over tcp://
LD_LIBRARY_PATH="$lib" top_builddir="$work" bash "$src/tutorial/test-tutorial.sh" > "$work/tutorial.tap" 2>&1
passed=$(grep -c '^ok ' "$work/tutorial.tap")
failed=$(grep -c '^not ok ' "$work/tutorial.tap")
sed 's/^/# /' "$work/tutorial.tap" | grep -v '^# # ' | head -n 20
tap "$([ "$passed" -gt 0 ] || echo "no test ran")" "tutorial/test-tutorial.sh runs against the packages ($passed passed)"
tap "$([ "$failed" -eq 0 ] || echo "$failed failed")" "tutorial/test-tutorial.sh: none failed"
[ $fail -eq 0 ]
