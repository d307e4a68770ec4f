# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# RDMA tests: each program here is added to rdma_tests and runs inside the soft-RoCE guest.
rdma_tests += test/rdma/test_verbs_path
check_PROGRAMS += test/rdma/test_verbs_path
test_rdma_test_verbs_path_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_rdma_test_verbs_path_LDFLAGS = $(test_link)

# ThriftRdma / ThriftServerRdma end to end (transport level, binary protocol).
rdma_test_util = test/rdma/rdma_test_util.c test/rdma/rdma_test_util.h
rdma_tests += test/rdma/test_thrift_rdma
check_PROGRAMS += test/rdma/test_thrift_rdma
test_rdma_test_thrift_rdma_SOURCES = test/rdma/test_thrift_rdma.c $(rdma_test_util)
test_rdma_test_thrift_rdma_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
test_rdma_test_thrift_rdma_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_rdma_test_thrift_rdma_LDFLAGS = $(test_link)

# NUMA binding over real verbs: numa-node 0 on both sides (numa_maps, thread CPUs, explain),
# node 1 (which the guest lacks) an error at open and listen and a warning as a hint.
rdma_tests += test/rdma/test_numa_rdma
check_PROGRAMS += test/rdma/test_numa_rdma
test_rdma_test_numa_rdma_SOURCES = test/rdma/test_numa_rdma.c $(rdma_test_util) \
	test/unit/numa_test_util.c test/unit/numa_test_util.h
test_rdma_test_numa_rdma_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
test_rdma_test_numa_rdma_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_rdma_test_numa_rdma_LDFLAGS = $(test_link)

# Host-side tests of the engine (no RDMA device needed).
check_PROGRAMS += test/unit/test_rdma_engine
TESTS += test/unit/test_rdma_engine
test_unit_test_rdma_engine_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
test_unit_test_rdma_engine_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_unit_test_rdma_engine_LDFLAGS = $(test_link)

# The RDMA protocols, each forced by a proto hint: sizes, verbs footprint, switching.
rdma_tests += test/rdma/test_bulk
check_PROGRAMS += test/rdma/test_bulk
test_rdma_test_bulk_SOURCES = test/rdma/test_bulk.c $(rdma_test_util)
test_rdma_test_bulk_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
test_rdma_test_bulk_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_rdma_test_bulk_LDFLAGS = $(test_link)

# Bulk transfer's faults: a lender killed mid-pull (either side), a raw lender's wrong key or
# range past its window, the registration cache's bounds under a stream of new buffers.
rdma_tests += test/rdma/test_bulk_faults
check_PROGRAMS += test/rdma/test_bulk_faults
test_rdma_test_bulk_faults_SOURCES = test/rdma/test_bulk_faults.c $(rdma_test_util)
test_rdma_test_bulk_faults_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
test_rdma_test_bulk_faults_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_rdma_test_bulk_faults_LDFLAGS = $(test_link)

rdma_tests += test/rdma/test_protocols
check_PROGRAMS += test/rdma/test_protocols
test_rdma_test_protocols_SOURCES = test/rdma/test_protocols.c $(rdma_test_util)
test_rdma_test_protocols_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
test_rdma_test_protocols_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_rdma_test_protocols_LDFLAGS = $(test_link)

# Faults: a killed server, bad peers (raw engine connections), idle and vanishing clients.
rdma_tests += test/rdma/test_rdma_faults
check_PROGRAMS += test/rdma/test_rdma_faults
test_rdma_test_rdma_faults_SOURCES = test/rdma/test_rdma_faults.c $(rdma_test_util)
test_rdma_test_rdma_faults_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
test_rdma_test_rdma_faults_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_rdma_test_rdma_faults_LDFLAGS = $(test_link)

# The generated path: echo.thrift compiled with thrift-hatrpc, ThriftSimpleServer over RDMA.
echo_gen = test/rdma/gen/echo.c test/rdma/gen/echo.h \
	test/rdma/gen/echo_types.c test/rdma/gen/echo_types.h
test/rdma/gen/stamp: $(srcdir)/test/rdma/echo.thrift thrift-compiler-patch/thrift-hatrpc
	$(AM_V_GEN)rm -f $(echo_gen) && $(MKDIR_P) test/rdma/gen && \
	  thrift-compiler-patch/thrift-hatrpc --gen c_glib -out test/rdma/gen \
	    $(srcdir)/test/rdma/echo.thrift && touch $@
$(echo_gen): test/rdma/gen/stamp
	@test -f $@ || { rm -f test/rdma/gen/stamp; $(MAKE) $(AM_MAKEFLAGS) test/rdma/gen/stamp; }
CLEANFILES += $(echo_gen) test/rdma/gen/stamp
EXTRA_DIST += test/rdma/echo.thrift

rdma_tests += test/rdma/test_echo_generated
check_PROGRAMS += test/rdma/test_echo_generated
test_rdma_test_echo_generated_SOURCES = test/rdma/test_echo_generated.c $(rdma_test_util)
nodist_test_rdma_test_echo_generated_SOURCES = $(echo_gen)
test_rdma_test_echo_generated_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) -I$(builddir)/test/rdma/gen
test_rdma_test_echo_generated_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_rdma_test_echo_generated_LDFLAGS = $(test_link)
test/rdma/test_echo_generated-test_echo_generated.$(OBJEXT): test/rdma/gen/stamp

# What a user who only swaps the transport gets for large fields: stock_echo.thrift (no hints,
# so stock Thrift's code), ThriftSimpleServer, default properties, 16 KiB to 64 MiB.
stock_echo_gen = test/rdma/gen-stock/stock_echo.c test/rdma/gen-stock/stock_echo.h \
	test/rdma/gen-stock/stock_echo_types.c test/rdma/gen-stock/stock_echo_types.h
test/rdma/gen-stock/stamp: $(srcdir)/test/rdma/stock_echo.thrift thrift-compiler-patch/thrift-hatrpc
	$(AM_V_GEN)rm -f $(stock_echo_gen) && $(MKDIR_P) test/rdma/gen-stock && \
	  thrift-compiler-patch/thrift-hatrpc --gen c_glib -out test/rdma/gen-stock \
	    $(srcdir)/test/rdma/stock_echo.thrift && touch $@
$(stock_echo_gen): test/rdma/gen-stock/stamp
	@test -f $@ || { rm -f test/rdma/gen-stock/stamp; $(MAKE) $(AM_MAKEFLAGS) test/rdma/gen-stock/stamp; }
CLEANFILES += $(stock_echo_gen) test/rdma/gen-stock/stamp
EXTRA_DIST += test/rdma/stock_echo.thrift

rdma_tests += test/rdma/test_stock_echo
check_PROGRAMS += test/rdma/test_stock_echo
test_rdma_test_stock_echo_SOURCES = test/rdma/test_stock_echo.c $(rdma_test_util)
nodist_test_rdma_test_stock_echo_SOURCES = $(stock_echo_gen)
test_rdma_test_stock_echo_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) -I$(builddir)/test/rdma/gen-stock
test_rdma_test_stock_echo_CFLAGS = $(gen_cflags)
test_rdma_test_stock_echo_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_rdma_test_stock_echo_LDFLAGS = $(test_link)
test/rdma/test_stock_echo-test_stock_echo.$(OBJEXT): test/rdma/gen-stock/stamp

# ASan/UBSan: the engine and test_thrift_rdma compiled with sanitizers into one program (no
# libtool library), a short run: echo up to 1 MiB, 500 calls, polling modes, faults of the
# client.  Any invalid access, undefined behaviour or leak fails it.
rdma_tests += test/rdma/test_thrift_rdma_asan
check_PROGRAMS += test/rdma/test_thrift_rdma_asan
test_rdma_test_thrift_rdma_asan_SOURCES = test/rdma/test_thrift_rdma.c $(rdma_test_util) \
	$(rdma_engine_sources)
test_rdma_test_thrift_rdma_asan_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) -DRDMA_TEST_SHORT
test_rdma_test_thrift_rdma_asan_CFLAGS = $(AM_CFLAGS) -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer
test_rdma_test_thrift_rdma_asan_LDADD = $(THRIFT_LIBS) $(GLIB_LIBS) $(RDMACM_LIBS) $(IBVERBS_LIBS) \
	$(NUMA_LIBS)
test_rdma_test_thrift_rdma_asan_LDFLAGS = -fsanitize=address,undefined

# The protocols under ASan/UBSan: their buffers, rings and error paths.
rdma_tests += test/rdma/test_protocols_asan
check_PROGRAMS += test/rdma/test_protocols_asan
test_rdma_test_protocols_asan_SOURCES = test/rdma/test_protocols.c $(rdma_test_util) \
	$(rdma_engine_sources)
test_rdma_test_protocols_asan_CPPFLAGS = $(test_rdma_test_thrift_rdma_asan_CPPFLAGS)
test_rdma_test_protocols_asan_CFLAGS = $(test_rdma_test_thrift_rdma_asan_CFLAGS)
test_rdma_test_protocols_asan_LDADD = $(test_rdma_test_thrift_rdma_asan_LDADD)
test_rdma_test_protocols_asan_LDFLAGS = $(test_rdma_test_thrift_rdma_asan_LDFLAGS)

# The fault tests under ASan/UBSan too: the error and teardown paths are where leaks hide.
rdma_tests += test/rdma/test_rdma_faults_asan
check_PROGRAMS += test/rdma/test_rdma_faults_asan
test_rdma_test_rdma_faults_asan_SOURCES = test/rdma/test_rdma_faults.c $(rdma_test_util) \
	$(rdma_engine_sources)
test_rdma_test_rdma_faults_asan_CPPFLAGS = $(test_rdma_test_thrift_rdma_asan_CPPFLAGS)
test_rdma_test_rdma_faults_asan_CFLAGS = $(test_rdma_test_thrift_rdma_asan_CFLAGS)
test_rdma_test_rdma_faults_asan_LDADD = $(test_rdma_test_thrift_rdma_asan_LDADD)
test_rdma_test_rdma_faults_asan_LDFLAGS = $(test_rdma_test_thrift_rdma_asan_LDFLAGS)

# ThriftThreadedServer over ThriftServerRdma (gate.thrift's code from test/server/gen):
# 8 clients at once, max-connections, stop while idle and with clients connected (the workers
# woken by thrift_rdma_interrupt), and the interrupt itself in each polling mode.
rdma_tests += test/rdma/test_threaded_server_rdma
check_PROGRAMS += test/rdma/test_threaded_server_rdma
test_rdma_test_threaded_server_rdma_SOURCES = test/rdma/test_threaded_server_rdma.c \
	$(rdma_test_util) $(gate_test_support)
nodist_test_rdma_test_threaded_server_rdma_SOURCES = $(gate_gen)
test_rdma_test_threaded_server_rdma_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) \
	-I$(top_srcdir)/test/server -I$(builddir)/test/server/gen
test_rdma_test_threaded_server_rdma_CFLAGS = $(gen_cflags)
test_rdma_test_threaded_server_rdma_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_rdma_test_threaded_server_rdma_LDFLAGS = $(test_link)
test/rdma/test_threaded_server_rdma-test_threaded_server_rdma.$(OBJEXT) \
test/server/rdma_test_threaded_server_rdma-gate_handler.$(OBJEXT): test/server/gen/stamp

# What porting a c_glib program to RDMA runs into (issue 7): no stale reply after a call
# timeout, ThriftSimpleServer with the URI helpers' factories, and stopping it by SIGINT.
rdma_tests += test/rdma/test_porting_traps
check_PROGRAMS += test/rdma/test_porting_traps
test_rdma_test_porting_traps_SOURCES = test/rdma/test_porting_traps.c \
	$(rdma_test_util) $(gate_test_support)
nodist_test_rdma_test_porting_traps_SOURCES = $(gate_gen)
test_rdma_test_porting_traps_CPPFLAGS = $(test_rdma_test_threaded_server_rdma_CPPFLAGS)
test_rdma_test_porting_traps_CFLAGS = $(gen_cflags)
test_rdma_test_porting_traps_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_rdma_test_porting_traps_LDFLAGS = $(test_link)
test/rdma/test_porting_traps-test_porting_traps.$(OBJEXT) \
test/server/rdma_test_porting_traps-gate_handler.$(OBJEXT): test/server/gen/stamp


# HatRPC's design-space table (Fig. 6) end to end: table.thrift has a function per cell; explain
# on a connection and the carriers of real calls on both sides give what the table says.
table_gen = test/rdma/gen-table/table.c test/rdma/gen-table/table.h \
	test/rdma/gen-table/table_types.c test/rdma/gen-table/table_types.h
test/rdma/gen-table/stamp: $(srcdir)/test/rdma/table.thrift thrift-compiler-patch/thrift-hatrpc
	$(hatrpc_gen_recipe)
$(table_gen): test/rdma/gen-table/stamp
	@test -f $@ || { rm -f test/rdma/gen-table/stamp; $(MAKE) $(AM_MAKEFLAGS) test/rdma/gen-table/stamp; }
CLEANFILES += $(table_gen) test/rdma/gen-table/stamp
EXTRA_DIST += test/rdma/table.thrift

rdma_tests += test/rdma/test_table
check_PROGRAMS += test/rdma/test_table
test_rdma_test_table_SOURCES = test/rdma/test_table.c $(rdma_test_util)
nodist_test_rdma_test_table_SOURCES = $(table_gen)
test_rdma_test_table_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) -I$(builddir)/test/rdma/gen-table
test_rdma_test_table_CFLAGS = $(gen_cflags)
test_rdma_test_table_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_rdma_test_table_LDFLAGS = $(test_link)
test/rdma/test_table-test_table.$(OBJEXT): test/rdma/gen-table/stamp

# Ten functions with their own protocols interleaved on one connection (10,000 calls, every
# call switching), then several clients at once on ThriftThreadedServer over rdma://.
mix_gen = test/rdma/gen-mix/mix.c test/rdma/gen-mix/mix.h \
	test/rdma/gen-mix/mix_types.c test/rdma/gen-mix/mix_types.h
test/rdma/gen-mix/stamp: $(srcdir)/test/rdma/mix.thrift thrift-compiler-patch/thrift-hatrpc
	$(hatrpc_gen_recipe)
$(mix_gen): test/rdma/gen-mix/stamp
	@test -f $@ || { rm -f test/rdma/gen-mix/stamp; $(MAKE) $(AM_MAKEFLAGS) test/rdma/gen-mix/stamp; }
CLEANFILES += $(mix_gen) test/rdma/gen-mix/stamp
EXTRA_DIST += test/rdma/mix.thrift

rdma_tests += test/rdma/test_mix
check_PROGRAMS += test/rdma/test_mix
test_rdma_test_mix_SOURCES = test/rdma/test_mix.c $(rdma_test_util) \
	test/server/serve_thread.c test/server/serve_thread.h
nodist_test_rdma_test_mix_SOURCES = $(mix_gen)
test_rdma_test_mix_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir) -I$(top_srcdir)/test/server \
	-I$(builddir)/test/rdma/gen-mix
test_rdma_test_mix_CFLAGS = $(gen_cflags)
test_rdma_test_mix_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_rdma_test_mix_LDFLAGS = $(test_link)
test/rdma/test_mix-test_mix.$(OBJEXT): test/rdma/gen-mix/stamp

# Pairing (hybrid://) on the RDMA side: the admission function with one-shot tokens, clients
# with and without a pair-token, the refusals and their errors, a plain server's answer to a
# token, accept_ready and its descriptor (interrupt included), resources after refusals.
rdma_tests += test/rdma/test_pairing
check_PROGRAMS += test/rdma/test_pairing
test_rdma_test_pairing_SOURCES = test/rdma/test_pairing.c $(rdma_test_util)
test_rdma_test_pairing_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
test_rdma_test_pairing_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_rdma_test_pairing_LDFLAGS = $(test_link)

# fork () with open connections: calls go on while the process forks and its children write
# over their copy of the heap; a server that forks after listening serves (issue 24).
rdma_tests += test/rdma/test_fork
check_PROGRAMS += test/rdma/test_fork
test_rdma_test_fork_SOURCES = test/rdma/test_fork.c $(rdma_test_util) $(gate_test_support)
nodist_test_rdma_test_fork_SOURCES = $(gate_gen)
test_rdma_test_fork_CPPFLAGS = $(test_rdma_test_threaded_server_rdma_CPPFLAGS)
test_rdma_test_fork_CFLAGS = $(gen_cflags)
test_rdma_test_fork_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_rdma_test_fork_LDFLAGS = $(test_link)
test/rdma/test_fork-test_fork.$(OBJEXT) \
test/server/rdma_test_fork-gate_handler.$(OBJEXT): test/server/gen/stamp

# 4,096 connections to one default server: pinned memory within the budget (issue 22).
rdma_tests += $(abs_top_srcdir)/test/rdma/test-scale.sh
EXTRA_DIST += test/rdma/test-scale.sh

# The guest's fabric keeps each QP's packets in order, as RC needs (issue 21: a READ resent
# after its DONE failed the lender's QP when two CPUs reordered a flow).
rdma_tests += $(abs_top_srcdir)/test/rdma/test-fabric.sh
EXTRA_DIST += test/rdma/test-fabric.sh test/rdma/guest-test.sh
