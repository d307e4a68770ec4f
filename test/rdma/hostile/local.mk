# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# Hostile peers: hostile-peer attacks tutorial/calculator-server over raw verbs (or plain
# sockets), with none of the project's code; test-hostile.sh runs each attack in the
# soft-RoCE guest and judges the server (a good client served during and after, threads,
# fds and RSS back to baseline).
check_PROGRAMS += test/rdma/hostile/hostile-peer
test_rdma_hostile_hostile_peer_SOURCES = test/rdma/hostile/hostile_peer.c
test_rdma_hostile_hostile_peer_CPPFLAGS = $(GLIB_CFLAGS)
test_rdma_hostile_hostile_peer_LDADD = $(RDMACM_LIBS) $(IBVERBS_LIBS) $(GLIB_LIBS)

rdma_tests += $(abs_top_srcdir)/test/rdma/test-hostile.sh
EXTRA_DIST += test/rdma/test-hostile.sh
