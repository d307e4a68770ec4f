# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# test/cross: upstream Thrift 0.17's cross-language test (issue 24 item 3).  Its c_glib
# test_client and test_server (test/c_glib/src of the source the compiler build extracts),
# given --uri by uri-option.patch, and its Python TestClient.py (Debian's python3-thrift,
# code from stock thrift --gen py), run by cross.sh on the host (tcp://, hybrid:// over TCP,
# stock clients at a hybrid server) and by cross-rdma.sh in the guest (rdma://, hybrid://).
cross_upstream = thrift-compiler-patch/src/thrift-0.17.0
EXTRA_DIST += test/cross/uri-option.patch test/cross/cross.sh test/cross/cross-rdma.sh

cross_src = \
	test/cross/src/test_client.c test/cross/src/test_server.c \
	test/cross/src/thrift_test_handler.c test/cross/src/thrift_test_handler.h \
	test/cross/src/thrift_second_service_handler.c test/cross/src/thrift_second_service_handler.h
test/cross/src/stamp: thrift-compiler-patch/stamp-source $(srcdir)/test/cross/uri-option.patch
	$(AM_V_GEN)rm -rf test/cross/src && $(MKDIR_P) test/cross/src && \
	  cp $(cross_upstream)/test/c_glib/src/*.[ch] test/cross/src/ && \
	  patch -d test/cross/src -p1 -s --no-backup-if-mismatch \
	    < $(srcdir)/test/cross/uri-option.patch && touch $@
$(cross_src): test/cross/src/stamp
	@test -f $@ || { rm -f test/cross/src/stamp; $(MAKE) $(AM_MAKEFLAGS) test/cross/src/stamp; }

cross_gen = \
	test/cross/gen-c_glib/t_test_thrift_test.c test/cross/gen-c_glib/t_test_thrift_test.h \
	test/cross/gen-c_glib/t_test_second_service.c test/cross/gen-c_glib/t_test_second_service.h \
	test/cross/gen-c_glib/t_test_thrift_test_types.c test/cross/gen-c_glib/t_test_thrift_test_types.h
test/cross/gen-c_glib/stamp: thrift-compiler-patch/stamp-source thrift-compiler-patch/thrift-hatrpc
	$(AM_V_GEN)rm -rf test/cross/gen-c_glib && $(MKDIR_P) test/cross/gen-c_glib && \
	  thrift-compiler-patch/thrift-hatrpc --gen c_glib -out test/cross/gen-c_glib \
	    $(cross_upstream)/test/ThriftTest.thrift 2> /dev/null && touch $@
$(cross_gen): test/cross/gen-c_glib/stamp
	@test -f $@ || { rm -f test/cross/gen-c_glib/stamp; $(MAKE) $(AM_MAKEFLAGS) test/cross/gen-c_glib/stamp; }

# the Python client's generated code, from the stock compiler as a Python user would make it
test/cross/gen-py/stamp: thrift-compiler-patch/stamp-source
	$(AM_V_GEN)rm -rf test/cross/gen-py && $(MKDIR_P) test/cross/gen-py && \
	  $(STOCK_THRIFT) --gen py -out test/cross/gen-py $(cross_upstream)/test/ThriftTest.thrift \
	    2> /dev/null && touch $@

# upstream's code, built as upstream builds it (its warnings are not ours to fix)
cross_cflags = -std=gnu11 -w
check_PROGRAMS += test/cross/test_client test/cross/test_server
nodist_test_cross_test_client_SOURCES = test/cross/src/test_client.c $(cross_gen)
test_cross_test_client_CFLAGS = $(cross_cflags)
test_cross_test_client_LDADD = lib/c_glib/libthrift_c_glib_rdma.la $(THRIFT_LIBS) $(GLIB_LIBS)
nodist_test_cross_test_server_SOURCES = test/cross/src/test_server.c \
	test/cross/src/thrift_test_handler.c test/cross/src/thrift_test_handler.h \
	test/cross/src/thrift_second_service_handler.c \
	test/cross/src/thrift_second_service_handler.h $(cross_gen)
test_cross_test_server_CFLAGS = $(cross_cflags)
test_cross_test_server_LDADD = lib/c_glib/libthrift_c_glib_rdma.la $(THRIFT_LIBS) $(GLIB_LIBS)
# (the objects' names are automake's: the program's base name, a dash, the source's)
test/cross/src/test_client-test_client.$(OBJEXT): test/cross/src/stamp test/cross/gen-c_glib/stamp
test/cross/src/test_server-test_server.$(OBJEXT) \
test/cross/src/test_server-thrift_test_handler.$(OBJEXT) \
test/cross/src/test_server-thrift_second_service_handler.$(OBJEXT): \
	test/cross/src/stamp test/cross/gen-c_glib/stamp
check_DATA = test/cross/gen-py/stamp

TESTS += test/cross/cross.sh
rdma_tests += $(abs_top_srcdir)/test/cross/cross-rdma.sh

clean-local: clean-cross
clean-cross:
	rm -rf test/cross/src test/cross/gen-c_glib test/cross/gen-py
.PHONY: clean-cross
