# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# test/hybrid: hybrid:// (ThriftHybrid, ThriftServerHybrid). On the host, which has no RDMA
# device, the handshake, the wire and the fallback to TCP alone; in the guest, both legs.
EXTRA_DIST += test/hybrid/legs.thrift

legs_gen = \
	test/hybrid/gen/legs.c test/hybrid/gen/legs.h \
	test/hybrid/gen/legs_types.c test/hybrid/gen/legs_types.h
test/hybrid/gen/stamp: $(srcdir)/test/hybrid/legs.thrift thrift-compiler-patch/thrift-hatrpc
	$(hatrpc_gen_recipe)
$(legs_gen): test/hybrid/gen/stamp
	@test -f $@ || { rm -f test/hybrid/gen/stamp; $(MAKE) $(AM_MAKEFLAGS) test/hybrid/gen/stamp; }
CLEANFILES += $(legs_gen) test/hybrid/gen/stamp

legs_test_support = test/hybrid/legs_util.c test/hybrid/legs_util.h \
	test/server/serve_thread.c test/server/serve_thread.h

check_PROGRAMS += test/hybrid/test_hybrid
TESTS += test/hybrid/test_hybrid
test_hybrid_test_hybrid_SOURCES = test/hybrid/test_hybrid.c $(legs_test_support)
nodist_test_hybrid_test_hybrid_SOURCES = $(legs_gen)
test_hybrid_test_hybrid_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) -I$(builddir)/test/hybrid/gen \
	-I$(top_srcdir)/test/server
test_hybrid_test_hybrid_CFLAGS = $(gen_cflags)
test_hybrid_test_hybrid_LDADD = $(test_libs)
test_hybrid_test_hybrid_LDFLAGS = $(test_link)
test/hybrid/test_hybrid-test_hybrid.$(OBJEXT) \
test/hybrid/test_hybrid-legs_util.$(OBJEXT): test/hybrid/gen/stamp

# Both legs, in the soft-RoCE guest.
rdma_tests += test/hybrid/test_hybrid_rdma
check_PROGRAMS += test/hybrid/test_hybrid_rdma
test_hybrid_test_hybrid_rdma_SOURCES = test/hybrid/test_hybrid_rdma.c $(legs_test_support) \
	$(rdma_test_util)
nodist_test_hybrid_test_hybrid_rdma_SOURCES = $(legs_gen)
test_hybrid_test_hybrid_rdma_CPPFLAGS = $(test_hybrid_test_hybrid_CPPFLAGS) -I$(top_srcdir)/test/rdma
test_hybrid_test_hybrid_rdma_CFLAGS = $(gen_cflags)
test_hybrid_test_hybrid_rdma_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_hybrid_test_hybrid_rdma_LDFLAGS = $(test_link)
test/hybrid/test_hybrid_rdma-test_hybrid_rdma.$(OBJEXT) \
test/hybrid/test_hybrid_rdma-legs_util.$(OBJEXT): test/hybrid/gen/stamp
