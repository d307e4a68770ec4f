# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# bench: thrift-rdma-bench, the latency benchmark (echo of a binary argument, 4 B to 512 KB,
# tcp:// against rdma:// side by side), and run-latency, which runs it in the soft-RoCE guest;
# thrift-rdma-suite, the benchmark suite of issue 8 (latency per protocol and for the plan,
# throughput with N clients, the mixed benchmark, the hybrid mix, bulk transfer of large
# fields with run-bulk's perftest baselines, calls for strace; its latency, throughput and
# mixed parts also as atb_lat, atb_thr and atb_mix, the paper's names), run-all, which runs
# the whole suite in one guest boot and writes CSV, and plot-results, its figures.
# Not part of `make check` (performance is measured, not asserted); test-bench-smoke.sh, a
# tiny tcp:// run on the host, keeps them from rotting, and test-bench-rdma-smoke.sh a tiny
# run-all in the guest.
EXTRA_DIST += bench/echo.thrift bench/suite.thrift bench/run-latency bench/run-all bench/run-bulk \
	bench/test-bench-smoke.sh bench/test-bench-rdma-smoke.sh bench/check-suite-csv bench/plot-results

# What the benchmark programs share with HatKV's YCSB driver: clocks, CPU time, summaries,
# lists, CSV and counters.  A convenience library, so no program compiles another's sources.
noinst_LTLIBRARIES += bench/libbench_util.la
bench_libbench_util_la_SOURCES = bench/bench_util.c bench/bench_util.h
bench_libbench_util_la_CFLAGS = $(gen_cflags)
bench_util = bench/bench_serve.c bench/bench_serve.h

bench_gen = \
	bench/gen/bench_echo.c bench/gen/bench_echo.h \
	bench/gen/echo_types.c bench/gen/echo_types.h
bench/gen/stamp: $(srcdir)/bench/echo.thrift thrift-compiler-patch/thrift-hatrpc
	$(hatrpc_gen_recipe)
$(bench_gen): bench/gen/stamp
	@test -f $@ || { rm -f bench/gen/stamp; $(MAKE) $(AM_MAKEFLAGS) bench/gen/stamp; }
CLEANFILES += $(bench_gen) bench/gen/stamp

noinst_PROGRAMS += bench/thrift-rdma-bench
bench_thrift_rdma_bench_SOURCES = bench/thrift_rdma_bench.c $(bench_util)
nodist_bench_thrift_rdma_bench_SOURCES = $(bench_gen)
bench_thrift_rdma_bench_CPPFLAGS = $(AM_CPPFLAGS) -I$(builddir)/bench/gen -I$(srcdir)/bench
bench_thrift_rdma_bench_CFLAGS = $(gen_cflags)
bench_thrift_rdma_bench_LDADD = bench/libbench_util.la $(user_libs)
bench_thrift_rdma_bench_LDFLAGS = $(test_link)
bench/thrift_rdma_bench-thrift_rdma_bench.$(OBJEXT): bench/gen/stamp

# The suite's service: its generated code lives apart from echo.thrift's (another stamp).  With
# zero_copy_binary, a binary it reads keeps the protocol's buffer instead of a copy of it.
suite_gen = \
	bench/suite-gen/bench_suite.c bench/suite-gen/bench_suite.h \
	bench/suite-gen/suite_types.c bench/suite-gen/suite_types.h
bench/suite-gen/stamp: $(srcdir)/bench/suite.thrift thrift-compiler-patch/thrift-hatrpc
	$(hatrpc_gen_recipe_begin):zero_copy_binary $(hatrpc_gen_recipe_end)
$(suite_gen): bench/suite-gen/stamp
	@test -f $@ || { rm -f bench/suite-gen/stamp; $(MAKE) $(AM_MAKEFLAGS) bench/suite-gen/stamp; }
CLEANFILES += $(suite_gen) bench/suite-gen/stamp

noinst_PROGRAMS += bench/thrift-rdma-suite
bench_thrift_rdma_suite_SOURCES = bench/thrift_rdma_suite.c bench/suite_modes.h \
	bench/suite_client.c bench/suite_client.h bench/suite_handler.c bench/suite_handler.h \
	bench/suite_load.c bench/suite_load.h bench/suite_latency.c bench/suite_throughput.c \
	bench/suite_mixed.c bench/suite_calls.c bench/suite_hybrid.c bench/suite_bulk.c \
	bench/suite_scale.c \
	$(bench_util)
nodist_bench_thrift_rdma_suite_SOURCES = $(suite_gen)
bench_thrift_rdma_suite_CPPFLAGS = $(AM_CPPFLAGS) -I$(builddir)/bench/suite-gen -I$(srcdir)/bench
bench_thrift_rdma_suite_CFLAGS = $(gen_cflags)
bench_thrift_rdma_suite_LDADD = bench/libbench_util.la $(user_libs)
bench_thrift_rdma_suite_LDFLAGS = $(test_link)
$(bench_thrift_rdma_suite_OBJECTS): bench/suite-gen/stamp

# The Apache Thrift Benchmarks' programs (issue 11): thrift-rdma-suite under the paper's names,
# each one part (the name it is called by picks it).
atb_links = bench/atb_lat bench/atb_thr bench/atb_mix
noinst_SCRIPTS = $(atb_links)
$(atb_links): bench/thrift-rdma-suite$(EXEEXT)
	$(AM_V_GEN)ln -sf thrift-rdma-suite$(EXEEXT) $@
CLEANFILES += $(atb_links)

TESTS += bench/test-bench-smoke.sh
# In the RDMA suite's guest boot: run-all --quick and its CSV checked (about 30 s there).
rdma_tests += $(abs_top_srcdir)/bench/test-bench-rdma-smoke.sh
