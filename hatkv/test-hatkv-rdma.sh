#!/bin/sh
# test-hatkv-rdma.sh: test-hatkv.sh over rdma:// (in the soft-RoCE guest).
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
HATKV_SCHEME=rdma exec "$(dirname "$0")/test-hatkv.sh" "$@"
