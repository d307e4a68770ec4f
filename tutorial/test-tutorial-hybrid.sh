#!/usr/bin/env bash
# tutorial/test-tutorial-hybrid.sh: the tutorial over hybrid:// (in the soft-RoCE guest, with
# the RDMA tests): every call checked as over rdma://, and each on the leg its hint names.
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
TUTORIAL_SCHEME=hybrid exec "$(dirname "$0")/test-tutorial.sh" "$@"
