# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# test/server: ThriftThreadedServer and transport URIs, host-side (tcp:// on 127.0.0.1).
EXTRA_DIST += test/server/gate.thrift

# Code generated from gate.thrift by thrift-hatrpc, in the build tree.
gate_gen = \
	test/server/gen/gate.c test/server/gen/gate.h \
	test/server/gen/gate_types.c test/server/gen/gate_types.h
test/server/gen/stamp: $(srcdir)/test/server/gate.thrift thrift-compiler-patch/thrift-hatrpc
	$(hatrpc_gen_recipe)
$(gate_gen): test/server/gen/stamp
	@test -f $@ || { rm -f test/server/gen/stamp; $(MAKE) $(AM_MAKEFLAGS) test/server/gen/stamp; }
CLEANFILES += $(gate_gen) test/server/gen/stamp

# The Gate handler and the serve-in-a-thread harness, shared with
# test/rdma/test_threaded_server_rdma.
gate_test_support = test/server/gate_handler.c test/server/gate_handler.h \
	test/server/gate_client.c test/server/gate_client.h \
	test/server/serve_thread.c test/server/serve_thread.h

# Generated code is compiled without -Wmissing-prototypes (its static helpers are fine).
gen_cflags = -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-cast-function-type -Werror

check_PROGRAMS += test/server/test_threaded_server
TESTS += test/server/test_threaded_server
test_server_test_threaded_server_SOURCES = test/server/test_threaded_server.c $(gate_test_support)
nodist_test_server_test_threaded_server_SOURCES = $(gate_gen)
# (-I$(top_srcdir): the server's internal lib/c_glib/server/thrift_server_interrupt.h)
test_server_test_threaded_server_CPPFLAGS = $(AM_CPPFLAGS) -I$(builddir)/test/server/gen \
	-I$(top_srcdir)
test_server_test_threaded_server_CFLAGS = $(gen_cflags)
test_server_test_threaded_server_LDADD = $(test_libs)
test_server_test_threaded_server_LDFLAGS = $(test_link)
test/server/test_threaded_server-test_threaded_server.$(OBJEXT) \
test/server/test_threaded_server-gate_handler.$(OBJEXT): test/server/gen/stamp

# thrift_server_uri.h: servers from URIs and serving until a signal, over tcp:// on 127.0.0.1.
check_PROGRAMS += test/server/test_server_uri
TESTS += test/server/test_server_uri
test_server_test_server_uri_SOURCES = test/server/test_server_uri.c $(gate_test_support)
nodist_test_server_test_server_uri_SOURCES = $(gate_gen)
test_server_test_server_uri_CPPFLAGS = $(AM_CPPFLAGS) -I$(builddir)/test/server/gen
test_server_test_server_uri_CFLAGS = $(gen_cflags)
test_server_test_server_uri_LDADD = $(test_libs)
test_server_test_server_uri_LDFLAGS = $(test_link)
test/server/test_server_uri-test_server_uri.$(OBJEXT) \
test/server/test_server_uri-gate_handler.$(OBJEXT): test/server/gen/stamp

check_PROGRAMS += test/server/test_transport_uri
TESTS += test/server/test_transport_uri
test_server_test_transport_uri_SOURCES = test/server/test_transport_uri.c
test_server_test_transport_uri_LDADD = $(test_libs)
test_server_test_transport_uri_LDFLAGS = $(test_link)

# Upstream's SIGINT handler (SA_RESETHAND, calling thrift_server_stop) stops ThriftSimpleServer
# and ThriftThreadedServer on every server transport, idle and with a client connected: tcp://
# and hybrid:// (TCP alone) on the host, rdma:// and hybrid:// (both legs) in the guest.
check_PROGRAMS += test/server/test_stop_signal
TESTS += test/server/test_stop_signal
rdma_tests += test/server/test_stop_signal
test_server_test_stop_signal_SOURCES = test/server/test_stop_signal.c $(gate_test_support)
nodist_test_server_test_stop_signal_SOURCES = $(gate_gen)
test_server_test_stop_signal_CPPFLAGS = $(AM_CPPFLAGS) -I$(builddir)/test/server/gen
test_server_test_stop_signal_CFLAGS = $(gen_cflags)
test_server_test_stop_signal_LDADD = $(test_libs)
test_server_test_stop_signal_LDFLAGS = $(test_link)
test/server/test_stop_signal-test_stop_signal.$(OBJEXT) \
test/server/test_stop_signal-gate_handler.$(OBJEXT): test/server/gen/stamp
