#!/usr/bin/env bash
# layering.sh: the engine's layers as built, from the compiler's dependency files: the poller
# (rdma_poll.c) does not see the connection (no cycle: the connection registers a sink with
# it), the GObject shells (lib/c_glib/transport/thrift_*.c) do not see inside an RdmaConn
# (rdma_conn_private.h is for the engine, proto/ and white-box tests), and the connection
# (rdma_conn*.c) does not see its helpers (the ring, bulk, the keepalive: they plug in through
# rdma_helper.h, as the protocols through rdma_proto.h). Prints TAP.
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
if [ "${1:-}" = "--help" ]; then sed -n '2,5s/^# \{0,1\}//p' "$0"; exit 0; fi
b=${top_builddir:-.}/lib/c_glib/transport
echo "1..3"
# headers a dependency file lists (a dummy one, before the first build, lists none)
deps() { [ -f "$1" ] && grep -o '[^ :\\]*\.h' "$1" | sed 's|.*/||' | sort -u; }
poll=$b/rdma/.deps/rdma_poll.Plo
if ! grep -q 'rdma_poll\.c' "$poll" 2>/dev/null; then
  echo "ok 1 # SKIP no dependency file for rdma_poll.c (built without dependency tracking?)"
else
  bad=$(deps "$poll" | grep -E '^(rdma_conn|rdma_conn_private|rdma_keepalive|rdma_proto)\.h$')
  if [ -z "$bad" ]; then echo "ok 1 rdma_poll.c does not include the connection's headers"
  else
    echo "not ok 1 rdma_poll.c does not include the connection's headers (it does:" $bad")"
  fi
fi
shells=$(ls "$b"/.deps/thrift_*.Plo 2>/dev/null)
if [ -z "$shells" ]; then
  echo "ok 2 # SKIP no dependency files for the shells"
else
  bad=
  for f in $shells; do
    deps "$f" | grep -qx 'rdma_conn_private.h' && bad="$bad $(basename "$f" .Plo).c"
  done
  if [ -z "$bad" ]; then echo "ok 2 the shells do not include rdma_conn_private.h"
  else echo "not ok 2 the shells do not include rdma_conn_private.h (these do:$bad)"; fi
fi
conns=$(ls "$b"/rdma/.deps/rdma_conn*.Plo 2>/dev/null)
if [ -z "$conns" ]; then
  echo "ok 3 # SKIP no dependency files for the connection"
else
  bad=
  for f in $conns; do
    grep -q 'rdma_conn.*\.c' "$f" || continue   # a dummy file before the first build
    deps "$f" | grep -qxE 'rdma_(ring|bulk|keepalive)\.h' && bad="$bad $(basename "$f" .Plo).c"
  done
  if [ -z "$bad" ]; then echo "ok 3 the connection does not include its helpers' headers"
  else echo "not ok 3 the connection does not include its helpers' headers (these do:$bad)"; fi
fi
