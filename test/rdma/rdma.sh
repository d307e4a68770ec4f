#!/usr/bin/env bash
# The RDMA tests, all in one soft-RoCE guest boot (or directly on a host with an RDMA device).
# Prints TAP for automake's driver. RDMA_TESTS lists the programs (set by test/local.mk).
set -u
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
if [ "${GUEST_TESTS:-yes}" = no ]; then
  echo "1..0 # SKIP configured with --disable-guest-tests (make distcheck's build; scripts/test runs them)"
  exit 0
fi
if [ -z "${RDMA_TESTS:-}" ]; then
  echo "1..1"; echo "not ok 1 - RDMA_TESTS is empty: run through make check"; exit 0
fi
# shellcheck disable=SC2086
RUN_IN_GUEST_EXPOSE="$top_srcdir${RUN_IN_GUEST_EXPOSE:+:$RUN_IN_GUEST_EXPOSE}" \
  exec "$top_srcdir/test/softroce/run-in-guest" "$top_srcdir/test/rdma/run-suite" $RDMA_TESTS
