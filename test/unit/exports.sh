#!/usr/bin/env bash
# exports.sh: the installed library exports the public API only (thrift_* names), so none of
# the engine's rdma_* functions lands in librdmacm's namespace of a program. Prints TAP.
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
lib=${top_builddir:-.}/lib/c_glib/.libs/libthrift_c_glib_rdma.so
echo "1..2"
if [ ! -e "$lib" ]; then
  echo "not ok 1 $lib is built"; echo "not ok 2 skipped: no library"; exit 0
fi
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBR]$/ { print $3 }')
others=$(printf '%s\n' "$syms" | grep -v '^thrift_' | grep -v '^$')
if [ -z "$others" ]; then echo "ok 1 only thrift_* names are exported"
else echo "not ok 1 only thrift_* names are exported"; printf '# also: %s\n' $others | head -n 20; fi
# the public API is there: the transports, the server, the URI helpers, the checked protocol
missing=
for s in thrift_rdma_get_type thrift_server_rdma_get_type thrift_threaded_server_get_type \
         thrift_transport_new_for_uri thrift_server_transport_new_for_uri thrift_hints_apply \
         thrift_checked_binary_protocol_factory_get_type thrift_idle_watch_get_type \
         thrift_rdma_get_stats thrift_rdma_interrupt thrift_rdma_explain_sets \
         thrift_rdma_explain_connection \
         thrift_rdma_error_status thrift_rdma_get_last_status thrift_server_rdma_get_last_status; do
  printf '%s\n' "$syms" | grep -qx "$s" || missing="$missing $s"
done
if [ -z "$missing" ]; then echo "ok 2 the public API is exported"
else echo "not ok 2 the public API is exported (missing:$missing)"; fi
