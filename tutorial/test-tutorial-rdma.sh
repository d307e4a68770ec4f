#!/usr/bin/env bash
# The tutorial end to end over rdma:// (run in the soft-RoCE guest by test/rdma/run-suite).
TUTORIAL_SCHEME=rdma exec "$(dirname "$0")/test-tutorial.sh" "$@"
