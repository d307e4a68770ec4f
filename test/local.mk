# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# Test suite. Host-side tests run directly; RDMA tests run in the soft-RoCE guest
# (test/softroce/run-in-guest), all of them in one guest boot through test/rdma/rdma.sh.
EXTRA_DIST += test/tap-run test/softroce/run-in-guest test/softroce/guest-init \
	test/rdma/run-suite test/rdma/rdma.sh

# Test programs link our library directly and never relink through libtool wrappers, so
# they run unchanged from the read-only host root inside the guest.
test_libs = lib/c_glib/libthrift_c_glib_rdma_engine.la $(THRIFT_LIBS) $(GLIB_LIBS)
# Programs that are users of the library (tutorial, benchmark) link the installed one, which
# exports the public API only.
user_libs = lib/c_glib/libthrift_c_glib_rdma.la $(THRIFT_LIBS) $(GLIB_LIBS)
test_link = -no-install

# --- the license header in every source file ---
TESTS += test/check-license.sh
EXTRA_DIST += test/check-license.sh

# --- one C style, .clang-format's ---
TESTS += test/style.sh
EXTRA_DIST += test/style.sh .clang-format

# --- the installed library exports the public API only ---
TESTS += test/unit/exports.sh
EXTRA_DIST += test/unit/exports.sh
AM_TESTS_ENVIRONMENT += INSTALLED_HEADERS='$(transportinclude_HEADERS) \
	$(serverinclude_HEADERS) $(protocolinclude_HEADERS)'; export INSTALLED_HEADERS;

# --- the engine's layers: no poller -> connection cycle, no shell inside an RdmaConn, no
# cycle among the engine's modules, no transport named by the generic server ---
TESTS += test/unit/layering.sh
EXTRA_DIST += test/unit/layering.sh

# --- host-side unit tests ---
check_PROGRAMS += test/unit/test_device
test_unit_test_device_LDADD = $(test_libs)
test_unit_test_device_LDFLAGS = $(test_link)
TESTS += test/unit/test_device

# The protocol and polling plan (HatRPC Fig. 6) and the explain API.
check_PROGRAMS += test/unit/test_rdma_plan
TESTS += test/unit/test_rdma_plan
test_unit_test_rdma_plan_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
test_unit_test_rdma_plan_LDADD = $(test_libs)
test_unit_test_rdma_plan_LDFLAGS = $(test_link)

# NUMA binding without verbs: the decision (hint, property, none; one-node machines), the
# shells' property and URI option, and a thread's CPUs and a buffer's memory policy after
# binding on this machine.
check_PROGRAMS += test/unit/test_numa
TESTS += test/unit/test_numa
numa_test_util = test/unit/numa_test_util.c test/unit/numa_test_util.h
test_unit_test_numa_SOURCES = test/unit/test_numa.c $(numa_test_util)
test_unit_test_numa_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
test_unit_test_numa_LDADD = $(test_libs) $(NUMA_LIBS)
test_unit_test_numa_LDFLAGS = $(test_link)

# The RDMA protocols on the host: two connections of one process over an in-memory verbs
# provider (test/unit/fake_verbs.c, put in place through rdma_verbs.h), so most protocol tests
# need no guest.  Built with the engine's sources under ASan/UBSan, as the in-guest _asan
# programs are.
check_PROGRAMS += test/unit/test_loopback
TESTS += test/unit/test_loopback
test_unit_test_loopback_SOURCES = test/unit/test_loopback.c test/unit/fake_verbs.c \
	test/unit/fake_verbs.h $(rdma_engine_sources)
test_unit_test_loopback_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
test_unit_test_loopback_CFLAGS = $(AM_CFLAGS) -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer
test_unit_test_loopback_LDADD = $(THRIFT_LIBS) $(GLIB_LIBS) $(RDMACM_LIBS) $(IBVERBS_LIBS) \
	$(NUMA_LIBS)
test_unit_test_loopback_LDFLAGS = -fsanitize=address,undefined

# A client's reply wait blocked in the completion channel's read alone (rdma_block.h), woken
# for each reason poll (2) watched.  ASan/UBSan.
check_PROGRAMS += test/unit/test_block
TESTS += test/unit/test_block
test_unit_test_block_SOURCES = test/unit/test_block.c test/unit/fake_verbs.c \
	test/unit/fake_verbs.h test/server/serve_thread.c test/server/serve_thread.h \
	$(rdma_engine_sources)
test_unit_test_block_CPPFLAGS = $(test_unit_test_loopback_CPPFLAGS)
test_unit_test_block_CFLAGS = $(test_unit_test_loopback_CFLAGS)
test_unit_test_block_LDADD = $(test_unit_test_loopback_LDADD)
test_unit_test_block_LDFLAGS = $(test_unit_test_loopback_LDFLAGS)

# Bulk transfer's framing: tables of lent fields written and taken apart, malformed ones
# refused (every cut, every field), and the reader's view of a message.  ASan/UBSan.
check_PROGRAMS += test/unit/test_bulk_wire
TESTS += test/unit/test_bulk_wire
test_unit_test_bulk_wire_SOURCES = test/unit/test_bulk_wire.c $(rdma_engine_sources)
test_unit_test_bulk_wire_CPPFLAGS = $(test_unit_test_loopback_CPPFLAGS)
test_unit_test_bulk_wire_CFLAGS = $(test_unit_test_loopback_CFLAGS)
test_unit_test_bulk_wire_LDADD = $(test_unit_test_loopback_LDADD)
test_unit_test_bulk_wire_LDFLAGS = $(test_unit_test_loopback_LDFLAGS)

# Bulk transfer over the in-memory provider: fields lent and pulled through every protocol,
# windows invalidated, faults (wrong key, past the window, a lender that vanishes mid-pull).
check_PROGRAMS += test/unit/test_bulk_loopback
TESTS += test/unit/test_bulk_loopback
test_unit_test_bulk_loopback_SOURCES = test/unit/test_bulk_loopback.c test/unit/fake_verbs.c \
	test/unit/fake_verbs.h $(rdma_engine_sources)
test_unit_test_bulk_loopback_CPPFLAGS = $(test_unit_test_loopback_CPPFLAGS)
test_unit_test_bulk_loopback_CFLAGS = $(test_unit_test_loopback_CFLAGS)
test_unit_test_bulk_loopback_LDADD = $(test_unit_test_loopback_LDADD)
test_unit_test_bulk_loopback_LDFLAGS = $(test_unit_test_loopback_LDFLAGS)

# Pairing (hybrid://) on the RDMA side: the token and refusal codes on the wire, the
# admission decision, the token through a handshake over the in-memory provider, the client's
# property.  ASan/UBSan as test_loopback.
check_PROGRAMS += test/unit/test_pairing
TESTS += test/unit/test_pairing
test_unit_test_pairing_SOURCES = test/unit/test_pairing.c test/unit/fake_verbs.c \
	test/unit/fake_verbs.h $(rdma_engine_sources)
test_unit_test_pairing_CPPFLAGS = $(test_unit_test_loopback_CPPFLAGS)
test_unit_test_pairing_CFLAGS = $(test_unit_test_loopback_CFLAGS)
test_unit_test_pairing_LDADD = $(test_unit_test_loopback_LDADD)
test_unit_test_pairing_LDFLAGS = $(test_unit_test_loopback_LDFLAGS)

# The bulk transfer properties and URI options (bulk-*, rcache-*) of the four shells: what a
# client's open and a server's accept give the engine, an accepted connection over the
# in-memory provider, ranges refused.  ASan/UBSan as test_loopback.
check_PROGRAMS += test/unit/test_bulk_props
TESTS += test/unit/test_bulk_props
test_unit_test_bulk_props_SOURCES = test/unit/test_bulk_props.c test/unit/fake_verbs.c \
	lib/c_glib/transport/thrift_transport_uri.c \
	test/unit/fake_verbs.h $(rdma_engine_sources)
test_unit_test_bulk_props_CPPFLAGS = $(test_unit_test_loopback_CPPFLAGS)
test_unit_test_bulk_props_CFLAGS = $(test_unit_test_loopback_CFLAGS)
test_unit_test_bulk_props_LDADD = $(test_unit_test_loopback_LDADD)
test_unit_test_bulk_props_LDFLAGS = $(test_unit_test_loopback_LDFLAGS)

# The registration cache (rdma_rcache) over the in-memory provider: bounds, LRU, held entries,
# threads, and a region unmapped and mapped again (userfaultfd).  ASan/UBSan as test_loopback.
check_PROGRAMS += test/unit/test_rcache
TESTS += test/unit/test_rcache
test_unit_test_rcache_SOURCES = test/unit/test_rcache.c test/unit/fake_verbs.c \
	test/unit/fake_verbs.h $(rdma_engine_sources)
test_unit_test_rcache_CPPFLAGS = $(test_unit_test_loopback_CPPFLAGS)
test_unit_test_rcache_CFLAGS = $(test_unit_test_loopback_CFLAGS)
test_unit_test_rcache_LDADD = $(test_unit_test_loopback_LDADD)
test_unit_test_rcache_LDFLAGS = $(test_unit_test_loopback_LDFLAGS)

# Type 2 memory windows in the in-memory provider, driven directly: binds, invalidations and
# READs through windows as a device checks them, in order and in pieces.  ASan/UBSan as
# test_loopback.
check_PROGRAMS += test/unit/test_fake_mw
TESTS += test/unit/test_fake_mw
test_unit_test_fake_mw_SOURCES = test/unit/test_fake_mw.c test/unit/fake_verbs.c \
	test/unit/fake_verbs.h $(rdma_engine_sources)
test_unit_test_fake_mw_CPPFLAGS = $(test_unit_test_loopback_CPPFLAGS)
test_unit_test_fake_mw_CFLAGS = $(test_unit_test_loopback_CFLAGS)
test_unit_test_fake_mw_LDADD = $(test_unit_test_loopback_LDADD)
test_unit_test_fake_mw_LDFLAGS = $(test_unit_test_loopback_LDFLAGS)

# NUMA binding through the engine's allocation paths and the shells' threads, over the same
# in-memory provider, under ASan/UBSan.
check_PROGRAMS += test/unit/test_numa_loopback
TESTS += test/unit/test_numa_loopback
test_unit_test_numa_loopback_SOURCES = test/unit/test_numa_loopback.c $(numa_test_util) \
	test/unit/fake_verbs.c test/unit/fake_verbs.h $(rdma_engine_sources)
test_unit_test_numa_loopback_CPPFLAGS = $(test_unit_test_loopback_CPPFLAGS)
test_unit_test_numa_loopback_CFLAGS = $(test_unit_test_loopback_CFLAGS)
test_unit_test_numa_loopback_LDADD = $(test_unit_test_loopback_LDADD)
test_unit_test_numa_loopback_LDFLAGS = $(test_unit_test_loopback_LDFLAGS)

# --- RDMA tests (soft-RoCE guest) ---
# Programs listed in rdma_tests (test/rdma/local.mk and others add to it) run in one guest boot.
rdma_tests =
# The registration cache on the guest's kernel (Debian's 6.1) too: its userfaultfd.
rdma_tests += test/unit/test_rcache
TESTS += test/rdma/rdma.sh
AM_TESTS_ENVIRONMENT += RDMA_TESTS='$(rdma_tests)'; export RDMA_TESTS; \
	GUEST_TESTS='$(GUEST_TESTS)'; export GUEST_TESTS;

# --- valgrind over the host-side engine tests ---
if HAVE_VALGRIND
TESTS += test/unit/valgrind.sh
endif
EXTRA_DIST += test/unit/valgrind.sh

# The guest's programs, for scripts/soak.
print-rdma-tests:
	@echo $(rdma_tests)
.PHONY: print-rdma-tests
