#!/usr/bin/env bash
# The tutorial end to end over rdma:// (run in the soft-RoCE guest by test/rdma/run-suite).
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
TUTORIAL_SCHEME=rdma exec "$(dirname "$0")/test-tutorial.sh" "$@"
