# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# tutorial: the calculator service (calculator.thrift, with hints), a server and a client that
# take --transport URI, and run-demo, which runs them end to end over rdma:// and tcp://.
EXTRA_DIST += tutorial/calculator.thrift tutorial/run-demo tutorial/test-tutorial.sh \
	tutorial/test-tutorial-rdma.sh tutorial/test-tutorial-hybrid.sh

calculator_gen = \
	tutorial/gen/calculator.c tutorial/gen/calculator.h \
	tutorial/gen/calculator_types.c tutorial/gen/calculator_types.h
tutorial/gen/stamp: $(srcdir)/tutorial/calculator.thrift thrift-compiler-patch/thrift-hatrpc
	$(hatrpc_gen_recipe)
$(calculator_gen): tutorial/gen/stamp
	@test -f $@ || { rm -f tutorial/gen/stamp; $(MAKE) $(AM_MAKEFLAGS) tutorial/gen/stamp; }
CLEANFILES += $(calculator_gen) tutorial/gen/stamp

tutorial_cppflags = $(AM_CPPFLAGS) -I$(builddir)/tutorial/gen -I$(srcdir)/tutorial

noinst_PROGRAMS += tutorial/calculator-server tutorial/calculator-client
tutorial_calculator_server_SOURCES = tutorial/calculator_server.c tutorial/tutorial_defaults.h
nodist_tutorial_calculator_server_SOURCES = $(calculator_gen)
tutorial_calculator_server_CPPFLAGS = $(tutorial_cppflags)
tutorial_calculator_server_CFLAGS = $(gen_cflags)
tutorial_calculator_server_LDADD = $(user_libs)
tutorial_calculator_server_LDFLAGS = $(test_link)
tutorial/calculator_server-calculator_server.$(OBJEXT): tutorial/gen/stamp

tutorial_calculator_client_SOURCES = tutorial/calculator_client.c tutorial/tutorial_defaults.h
nodist_tutorial_calculator_client_SOURCES = $(calculator_gen)
tutorial_calculator_client_CPPFLAGS = $(tutorial_cppflags)
tutorial_calculator_client_CFLAGS = $(gen_cflags)
tutorial_calculator_client_LDADD = $(user_libs)
tutorial_calculator_client_LDFLAGS = $(test_link)
tutorial/calculator_client-calculator_client.$(OBJEXT): tutorial/gen/stamp

# Host-side: the tutorial end to end over tcp:// on 127.0.0.1 (TAP).
TESTS += tutorial/test-tutorial.sh
# In the soft-RoCE guest: the same over rdma://.
rdma_tests += $(abs_top_srcdir)/tutorial/test-tutorial-rdma.sh
# ... and over hybrid://: each call on the leg its hint names.
rdma_tests += $(abs_top_srcdir)/tutorial/test-tutorial-hybrid.sh
