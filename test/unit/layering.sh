#!/usr/bin/env bash
# layering.sh: the engine's layers, from the sources' #include lines (followed through every
# header of the tree they name, as the compiler does): the poller (rdma_poll.c) does not see
# the connection (no cycle: the connection registers a sink with it), the GObject shells
# (lib/c_glib/transport/thrift_*.c) do not see inside an RdmaConn (rdma_conn_private.h is for
# the engine, proto/ and white-box tests), the connection (rdma_conn*.c) does not see its
# helpers (the ring, bulk, the keepalive: they plug in through rdma_helper.h, as the protocols
# through rdma_proto.h), no cycle among the engine's modules (rdma/ and rdma/proto/: a
# file's module is its stem, rdma_conn* one module, a *_private.h its owner's), and the generic
# server (lib/c_glib/server) names none of this library's transports (it asks interfaces:
# thrift_idle_watch.h, thrift_interruptible.h). Prints TAP;
# needs the sources only, so it never skips.
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
if [ "${1:-}" = "--help" ]; then sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0; fi
src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
t=$src/lib/c_glib/transport
[ -f "$t/rdma/rdma_poll.c" ] || { echo "1..1"; echo "not ok 1 no sources under $t"; exit 0; }

# headers FILE: the basenames of every header of the tree FILE includes, directly or through
# the tree's headers (quoted includes resolved beside the file, in rdma/, rdma/proto/ and the
# transport folder; <thrift/c_glib/transport/...> ones in the transport folder)
declare -A seen
walk() {
  local f=$1 name path
  while read -r name; do
    [ -n "${seen[$name]:-}" ] && continue
    for path in "$(dirname "$f")/$name" "$t/rdma/$name" "$t/rdma/proto/$name" "$t/$name"; do
      if [ -f "$path" ]; then
        seen[$name]=1
        walk "$path"
        break
      fi
    done
  done < <(sed -n 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]\(thrift/c_glib/transport/\)\{0,1\}\([^">]*\.h\)[">].*|\2|p' "$f" | sed 's|.*/||')
}
headers() {
  seen=()
  walk "$1"
  printf '%s\n' "${!seen[@]}" | sort
}

# none_include N WHAT PATTERN FILE...: rule N, "none of FILE... includes, directly or through
# the tree's headers, a header matching the extended regex PATTERN"; fails if no FILE exists
none_include() {
  local num=$1 what=$2 pattern=$3 f h bad= n=0
  shift 3
  for f in "$@"; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    for h in $(headers "$f" | grep -xE "$pattern"); do
      bad="$bad $(basename "$f"):$h"
    done
  done
  if [ $n -eq 0 ]; then echo "not ok $num $what (none of its files found)"
  elif [ -z "$bad" ]; then echo "ok $num $what ($n files)"
  else echo "not ok $num $what (these do:$bad)"; fi
}

echo "1..5"
bad=$(headers "$t/rdma/rdma_poll.c" | grep -E '^(rdma_conn|rdma_conn_private|rdma_keepalive|rdma_proto)\.h$')
if [ -z "$bad" ]; then echo "ok 1 rdma_poll.c does not include the connection's headers"
else echo "not ok 1 rdma_poll.c does not include the connection's headers (it does:" $bad")"; fi

none_include 2 "the shells do not include rdma_conn_private.h" 'rdma_conn_private\.h' \
  "$t"/thrift_*.c
none_include 3 "the connection does not include its helpers' headers" \
  'rdma_(ring|bulk|keepalive)\.h' "$t"/rdma/rdma_conn*.c

# includes FILE: the names of FILE's quoted includes, as written ("../rdma_op.h")
includes() {
  sed -n 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\.h\)".*|\1|p' "$1"
}

# module FILE: the engine module FILE is part of: its stem; the connection's files (rdma_conn*)
# are one module; a private header (X_private.h) is its owner's: X's if the engine has an X.c
# or X.h, else that of the first header of its own folder it includes (its module's public
# header: rdma_bw_private.h is rdma_proto_batched_write's)
module() {
  local dir stem own
  dir=$(dirname "$1") stem=$(basename "$1")
  stem=${stem%.*}
  case $stem in
    rdma_conn*) echo rdma_conn; return ;;
    *_private)
      own=${stem%_private}
      if [ -f "$dir/$own.c" ] || [ -f "$dir/$own.h" ]; then echo "$own"; return; fi
      own=$(includes "$1" | grep -v / | head -n 1)
      if [ -n "$own" ] && [ -f "$dir/$own" ]; then module "$dir/$own"; return; fi ;;
  esac
  echo "$stem"
}

# deps[M]: the modules M's files include directly (a cycle through headers is one of these)
declare -A deps
for f in "$t"/rdma/*.[ch] "$t"/rdma/proto/*.[ch]; do
  [ -f "$f" ] || continue
  from=$(module "$f")
  deps[$from]=${deps[$from]:-}
  for name in $(includes "$f" | sed 's|.*/||'); do
    for path in "$(dirname "$f")/$name" "$t/rdma/$name" "$t/rdma/proto/$name"; do
      if [ -f "$path" ]; then
        to=$(module "$path")
        [ "$to" != "$from" ] && deps[$from]="${deps[$from]} $to"
        break
      fi
    done
  done
done

# depth first from each module in order: an edge back to a module on the stack closes a
# cycle, recorded from that module ("a -> b -> a")
declare -A state
stack=() cycles=()
visit() {
  local m=$1 n i c
  state[$m]=open
  stack+=("$m")
  for n in $(printf '%s\n' ${deps[$m]} | sort -u); do
    case ${state[$n]:-new} in
      open)
        c=
        for ((i = ${#stack[@]} - 1; i >= 0; i--)); do
          c="${stack[i]} -> ${c:-$n}"
          [ "${stack[i]}" = "$n" ] && break
        done
        cycles+=("$c") ;;
      new) visit "$n" ;;
    esac
  done
  unset 'stack[${#stack[@]}-1]'
  state[$m]=done
}
for m in $(printf '%s\n' "${!deps[@]}" | sort); do
  [ -n "${state[$m]:-}" ] || visit "$m"
done
what="no cycle among the engine's modules"
if [ ${#deps[@]} -eq 0 ]; then echo "not ok 4 $what (no module found under $t/rdma)"
elif [ ${#cycles[@]} -eq 0 ]; then echo "ok 4 $what (${#deps[@]} modules)"
else
  echo "not ok 4 $what (${#cycles[@]} found)"
  printf '# cycle: %s\n' "${cycles[@]}"
fi

none_include 5 "the server includes no transport's header" \
  'thrift_(server_)?(rdma|hybrid)\.h' "$src"/lib/c_glib/server/*.c
