#!/usr/bin/env bash
# check-license.sh: every source file of the project carries the Apache-2.0 header (C, headers
# and IDL the full notice; scripts and makefiles the SPDX line). Prints TAP.
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
cd "${top_srcdir:-$(dirname "$0")/..}" || exit 1
if ! git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  echo "1..0 # SKIP not a git checkout"; exit 0
fi
echo "1..2"
missing=()
while IFS= read -r f; do
  case "$f" in
    test/compiler/cases/*|test/compiler/hinted.thrift|thrift-compiler-patch/src/*) continue ;;
    # fuzzing inputs are data (the compiler's seeds are copies of test/compiler's IDL)
    test/fuzz/corpus/*|test/fuzz/regress/*) continue ;;
    *.c|*.h|*.thrift) grep -q 'Licensed under the Apache License, Version 2.0' "$f" || missing+=("$f") ;;
    *.am|*.mk|*.ac|*.sh) grep -q 'SPDX-License-Identifier: Apache-2.0' "$f" || missing+=("$f") ;;
    *) if head -c 2 "$f" | grep -q '#!'; then
         grep -q 'SPDX-License-Identifier: Apache-2.0' "$f" || missing+=("$f")
       fi ;;
  esac
done < <(git ls-files)
if [ ${#missing[@]} -eq 0 ]; then echo "ok 1 every source file has the license header"
else echo "not ok 1 every source file has the license header"; printf '# missing: %s\n' "${missing[@]}"; fi
if grep -q 'Apache License' LICENSE && grep -q 'Version 2.0, January 2004' LICENSE; then
  echo "ok 2 LICENSE is the Apache License 2.0"
else
  echo "not ok 2 LICENSE is the Apache License 2.0"
fi
