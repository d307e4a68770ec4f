#!/usr/bin/env bash
# style.sh: every C file of the tree is formatted as .clang-format says (Apache Thrift c_glib's
# style, for clang-format 14). Prints TAP; a file that differs is named with the first lines of
# what clang-format would change. Fix with: clang-format -i FILE.
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
cd "${top_srcdir:-$(dirname "$0")/..}" || exit 1
echo "1..1"
fmt=
for c in clang-format-14 clang-format; do
  command -v "$c" > /dev/null 2>&1 && { fmt=$c; break; }
done
if [ -z "$fmt" ]; then
  echo "not ok 1 the C files follow .clang-format # clang-format not found (Debian: clang-format, scripts/install-deps)"
  exit 0
fi
major=$("$fmt" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ "$major" != 14 ]; then
  # other versions lay out some constructs differently; the style is written for 14
  echo "ok 1 # SKIP $fmt is version $major, .clang-format is written for 14"
  exit 0
fi
# the files of a checkout; in a release tarball, its C files (generated code is built elsewhere)
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.c' '*.h')
else
  mapfile -t files < <(find lib bench hatkv test tutorial -name '*.[ch]' | sort)
fi
bad=()
for f in "${files[@]}"; do
  if ! "$fmt" --style=file --dry-run --Werror "$f" > /dev/null 2>&1; then
    bad+=("$f")
  fi
done
if [ ${#bad[@]} -eq 0 ]; then
  echo "ok 1 the ${#files[@]} C files follow .clang-format"
  exit 0
fi
echo "not ok 1 the C files follow .clang-format (${#bad[@]} of ${#files[@]} differ)"
for f in "${bad[@]}"; do
  echo "# $f"
done
"$fmt" --style=file "${bad[0]}" | diff -u "${bad[0]}" - | head -n 20 | sed 's/^/#   /'
