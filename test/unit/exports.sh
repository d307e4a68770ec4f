#!/usr/bin/env bash
# exports.sh: the installed library exports the public API only: thrift_* names, each declared
# in an installed header, so none of the engine's rdma_* functions lands in librdmacm's
# namespace of a program, and no internal helper becomes API by its name. Prints TAP.
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
if [ "${1:-}" = "--help" ]; then sed -n '2,4s/^# \{0,1\}//p' "$0"; exit 0; fi
lib=${top_builddir:-.}/lib/c_glib/.libs/libthrift_c_glib_rdma.so
srcdir=${top_srcdir:-.}
echo "1..3"
if [ ! -e "$lib" ]; then
  echo "not ok 1 $lib is built"; echo "not ok 2 skipped: no library"
  echo "not ok 3 skipped: no library"; exit 0
fi
# every defined dynamic symbol, of whatever kind (functions, data, weak, indirect), but the
# absolute ones that name version nodes
syms=$(nm -D --defined-only "$lib" | awk 'NF >= 3 && $2 != "A" { sub(/@.*/, "", $3); print $3 }')
others=$(printf '%s\n' "$syms" | grep -v '^thrift_' | grep -v '^$')
if [ -z "$others" ]; then echo "ok 1 only thrift_* names are exported"
else echo "not ok 1 only thrift_* names are exported"; printf '# also: %s\n' $others | head -n 20; fi
# the public API is there: the transports, the server, the URI helpers, the checked protocol
missing=
for s in thrift_rdma_get_type thrift_server_rdma_get_type thrift_threaded_server_get_type \
         thrift_hybrid_get_type thrift_server_hybrid_get_type thrift_hybrid_get_last_leg \
         thrift_transport_new_for_uri thrift_server_transport_new_for_uri thrift_hints_apply \
         thrift_server_new_for_uri thrift_server_serve_uris \
         thrift_checked_binary_protocol_factory_get_type thrift_idle_watch_get_type \
         thrift_interruptible_get_type thrift_interruptible_interrupt \
         thrift_rdma_get_stats thrift_rdma_interrupt thrift_rdma_explain_sets \
         thrift_rdma_explain_connection \
         thrift_rdma_error_status thrift_rdma_get_last_status thrift_server_rdma_get_last_status \
         thrift_rdma_get_peer_pair_token thrift_server_rdma_set_admission \
         thrift_server_rdma_get_fd thrift_server_rdma_accept_ready; do
  printf '%s\n' "$syms" | grep -qx "$s" || missing="$missing $s"
done
if [ -z "$missing" ]; then echo "ok 2 the public API is exported"
else echo "not ok 2 the public API is exported (missing:$missing)"; fi
# an exported name that no installed header declares is an internal helper that leaked
# (INSTALLED_HEADERS: the *include_HEADERS of the Makefile, relative to the source tree)
if [ -z "${INSTALLED_HEADERS:-}" ]; then
  echo "ok 3 # SKIP INSTALLED_HEADERS not set (run through make check)"; exit 0
fi
headers=
for h in $INSTALLED_HEADERS; do headers="$headers $srcdir/$h"; done
leaked=
for s in $syms; do
  # shellcheck disable=SC2086
  grep -qw -- "$s" $headers || leaked="$leaked $s"
done
if [ -z "$leaked" ]; then echo "ok 3 every exported name is declared in an installed header"
else echo "not ok 3 every exported name is declared in an installed header (not:$leaked)"; fi
