# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# bench: thrift-rdma-bench, the latency benchmark (echo of a binary argument, 4 B to 512 KB,
# tcp:// against rdma:// side by side), and run-latency, which runs it in the soft-RoCE guest.
# Not part of `make check` (performance is measured, not asserted); test-bench-smoke.sh, a
# tiny tcp:// run on the host, keeps it from rotting.
EXTRA_DIST += bench/echo.thrift bench/run-latency bench/test-bench-smoke.sh

bench_gen = \
	bench/gen/bench_echo.c bench/gen/bench_echo.h \
	bench/gen/echo_types.c bench/gen/echo_types.h
bench/gen/stamp: $(srcdir)/bench/echo.thrift thrift-compiler-patch/thrift-hatrpc
	$(hatrpc_gen_recipe)
$(bench_gen): bench/gen/stamp
	@test -f $@ || { rm -f bench/gen/stamp; $(MAKE) $(AM_MAKEFLAGS) bench/gen/stamp; }
CLEANFILES += $(bench_gen) bench/gen/stamp

noinst_PROGRAMS += bench/thrift-rdma-bench
bench_thrift_rdma_bench_SOURCES = bench/thrift_rdma_bench.c
nodist_bench_thrift_rdma_bench_SOURCES = $(bench_gen)
bench_thrift_rdma_bench_CPPFLAGS = $(AM_CPPFLAGS) -I$(builddir)/bench/gen
bench_thrift_rdma_bench_CFLAGS = $(gen_cflags)
bench_thrift_rdma_bench_LDADD = $(user_libs)
bench_thrift_rdma_bench_LDFLAGS = $(test_link)
bench/thrift_rdma_bench-thrift_rdma_bench.$(OBJEXT): bench/gen/stamp

TESTS += bench/test-bench-smoke.sh
