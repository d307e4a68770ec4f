#!/usr/bin/env bash
# cross-rdma.sh [--tap]: cross.sh's RDMA cases (CROSS_MODE=rdma), for the soft-RoCE guest's
# suite (test/rdma/run-suite): upstream's c_glib test client and server over rdma:// and
# hybrid:// with both legs, and a stock client at a hybrid server that listens for RDMA.
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
if [ "${1:-}" = "--help" ]; then sed -n '2,4s/^# \{0,1\}//p' "$0"; exit 0; fi
CROSS_MODE=rdma exec "$(dirname "$0")/cross.sh" "$@"
