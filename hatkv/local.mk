# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# hatkv: the HatRPC paper's key-value store on LMDB (hatkv.thrift, one service per variant of
# its Sec. 5.4), hatkv-server, hatkv-cli, and hatkv-ycsb, a YCSB-style driver (load and run
# phases, workloads A and B with MultiGET and MultiPUT, zipfian keys, a model check).
EXTRA_DIST += hatkv/hatkv.thrift hatkv/test-hatkv.sh hatkv/test-hatkv-rdma.sh hatkv/run-ycsb

hatkv_gen = \
	hatkv/gen/hatkv_types.c hatkv/gen/hatkv_types.h \
	hatkv/gen/kv_service.c hatkv/gen/kv_service.h \
	hatkv/gen/kv_function.c hatkv/gen/kv_function.h \
	hatkv/gen/kv_ar_grpc.c hatkv/gen/kv_ar_grpc.h \
	hatkv/gen/kv_herd.c hatkv/gen/kv_herd.h \
	hatkv/gen/kv_pilaf.c hatkv/gen/kv_pilaf.h
hatkv/gen/stamp: $(srcdir)/hatkv/hatkv.thrift thrift-compiler-patch/thrift-hatrpc
	$(hatrpc_gen_recipe_begin):zero_copy_binary $(hatrpc_gen_recipe_end)
$(hatkv_gen): hatkv/gen/stamp
	@test -f $@ || { rm -f hatkv/gen/stamp; $(MAKE) $(AM_MAKEFLAGS) hatkv/gen/stamp; }
CLEANFILES += $(hatkv_gen) hatkv/gen/stamp

# What the server, the client tools and the tests share: the store, the variants, records.
noinst_LTLIBRARIES += hatkv/libhatkv.la
hatkv_libhatkv_la_SOURCES = \
	hatkv/kv_store.c hatkv/kv_store.h hatkv/kv_tuning.c hatkv/kv_tuning.h \
	hatkv/kv_handler.c hatkv/kv_handler.h hatkv/kv_variant.c hatkv/kv_variant.h \
	hatkv/kv_client.c hatkv/kv_client.h \
	hatkv/ycsb_record.c hatkv/ycsb_record.h hatkv/ycsb_zipf.c hatkv/ycsb_zipf.h \
	hatkv/ycsb_model.c hatkv/ycsb_model.h
nodist_hatkv_libhatkv_la_SOURCES = $(hatkv_gen)
hatkv_cppflags = $(AM_CPPFLAGS) $(LMDB_CFLAGS) -I$(builddir)/hatkv/gen -I$(srcdir)/hatkv \
	-I$(srcdir)/bench
hatkv_libhatkv_la_CPPFLAGS = $(hatkv_cppflags)
hatkv_libhatkv_la_CFLAGS = $(gen_cflags)
hatkv_libhatkv_la_LIBADD = $(LMDB_LIBS) -lm
$(hatkv_libhatkv_la_OBJECTS): hatkv/gen/stamp
hatkv_libs = hatkv/libhatkv.la $(user_libs)

noinst_PROGRAMS += hatkv/hatkv-server hatkv/hatkv-cli hatkv/hatkv-ycsb
hatkv_hatkv_server_SOURCES = hatkv/hatkv_server.c
hatkv_hatkv_server_CPPFLAGS = $(hatkv_cppflags)
hatkv_hatkv_server_CFLAGS = $(gen_cflags)
hatkv_hatkv_server_LDADD = $(hatkv_libs)
hatkv_hatkv_server_LDFLAGS = $(test_link)
$(hatkv_hatkv_server_OBJECTS): hatkv/gen/stamp

hatkv_hatkv_cli_SOURCES = hatkv/hatkv_cli.c
hatkv_hatkv_cli_CPPFLAGS = $(hatkv_cppflags)
hatkv_hatkv_cli_CFLAGS = $(gen_cflags)
hatkv_hatkv_cli_LDADD = $(hatkv_libs)
hatkv_hatkv_cli_LDFLAGS = $(test_link)
$(hatkv_hatkv_cli_OBJECTS): hatkv/gen/stamp

hatkv_hatkv_ycsb_SOURCES = hatkv/hatkv_ycsb.c
hatkv_hatkv_ycsb_CPPFLAGS = $(hatkv_cppflags)
hatkv_hatkv_ycsb_CFLAGS = $(gen_cflags)
hatkv_hatkv_ycsb_LDADD = bench/libbench_util.la $(hatkv_libs)
hatkv_hatkv_ycsb_LDFLAGS = $(test_link)
$(hatkv_hatkv_ycsb_OBJECTS): hatkv/gen/stamp

# Host-side: the store, the tuning, YCSB's records, distribution and model (g_test, TAP).
check_PROGRAMS += test/hatkv/test_hatkv
TESTS += test/hatkv/test_hatkv
test_hatkv_test_hatkv_SOURCES = test/hatkv/test_hatkv.c
test_hatkv_test_hatkv_CPPFLAGS = $(hatkv_cppflags)
test_hatkv_test_hatkv_CFLAGS = $(gen_cflags)
test_hatkv_test_hatkv_LDADD = $(hatkv_libs)
test_hatkv_test_hatkv_LDFLAGS = $(test_link)
$(test_hatkv_test_hatkv_OBJECTS): hatkv/gen/stamp

# HatKV end to end over tcp:// on 127.0.0.1 (TAP), and over rdma:// in the soft-RoCE guest.
TESTS += hatkv/test-hatkv.sh
rdma_tests += $(abs_top_srcdir)/hatkv/test-hatkv-rdma.sh
