#!/usr/bin/env bash
# layering.sh: the engine's layers, from the sources' #include lines (followed through every
# header of the tree they name, as the compiler does): the poller (rdma_poll.c) does not see
# the connection (no cycle: the connection registers a sink with it), the GObject shells
# (lib/c_glib/transport/thrift_*.c) do not see inside an RdmaConn (rdma_conn_private.h is for
# the engine, proto/ and white-box tests), and the connection (rdma_conn*.c) does not see its
# helpers (the ring, bulk, the keepalive: they plug in through rdma_helper.h, as the protocols
# through rdma_proto.h). Prints TAP; needs the sources only, so it never skips.
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
if [ "${1:-}" = "--help" ]; then sed -n '2,8s/^# \{0,1\}//p' "$0"; exit 0; fi
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

echo "1..3"
bad=$(headers "$t/rdma/rdma_poll.c" | grep -E '^(rdma_conn|rdma_conn_private|rdma_keepalive|rdma_proto)\.h$')
if [ -z "$bad" ]; then echo "ok 1 rdma_poll.c does not include the connection's headers"
else echo "not ok 1 rdma_poll.c does not include the connection's headers (it does:" $bad")"; fi

bad= n=0
for f in "$t"/thrift_*.c; do
  n=$((n + 1))
  headers "$f" | grep -qx 'rdma_conn_private.h' && bad="$bad $(basename "$f")"
done
if [ $n -eq 0 ]; then echo "not ok 2 the shells do not include rdma_conn_private.h (no thrift_*.c found)"
elif [ -z "$bad" ]; then echo "ok 2 the shells ($n files) do not include rdma_conn_private.h"
else echo "not ok 2 the shells do not include rdma_conn_private.h (these do:$bad)"; fi

bad= n=0
for f in "$t"/rdma/rdma_conn*.c; do
  n=$((n + 1))
  headers "$f" | grep -qxE 'rdma_(ring|bulk|keepalive)\.h' && bad="$bad $(basename "$f")"
done
if [ $n -eq 0 ]; then echo "not ok 3 the connection does not include its helpers' headers (no rdma_conn*.c found)"
elif [ -z "$bad" ]; then echo "ok 3 the connection ($n files) does not include its helpers' headers"
else echo "not ok 3 the connection does not include its helpers' headers (these do:$bad)"; fi
