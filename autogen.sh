#!/bin/sh
# Regenerates the build system (configure, Makefile.in) from configure.ac and Makefile.am.
set -e
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
cd "$(dirname "$0")"
autoreconf --force --install --verbose
