# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# lib/c_glib/server: servers (ThriftThreadedServer, and servers from URIs), and choosing
# transports from URIs.
# Public headers install under include/thrift/c_glib/server/ beside Debian's thrift_server.h.
serverincludedir = $(includedir)/thrift/c_glib/server
serverinclude_HEADERS = lib/c_glib/server/thrift_threaded_server.h \
	lib/c_glib/server/thrift_server_uri.h
lib_c_glib_libthrift_c_glib_rdma_engine_la_SOURCES += \
	lib/c_glib/server/thrift_threaded_server.c \
	lib/c_glib/server/thrift_server_dispatch.c \
	lib/c_glib/server/thrift_server_dispatch.h \
	lib/c_glib/server/thrift_server_interrupt.c \
	lib/c_glib/server/thrift_server_interrupt.h \
	lib/c_glib/server/thrift_server_uri.c

# thrift_transport_uri: tcp:// and rdma:// URIs to transports (lib/c_glib/transport/).
transportinclude_HEADERS += lib/c_glib/transport/thrift_transport_uri.h
lib_c_glib_libthrift_c_glib_rdma_engine_la_SOURCES += lib/c_glib/transport/thrift_transport_uri.c

# Sources include <thrift/c_glib/server/...> as users do after `make install`. Debian's
# thrift/c_glib/server/ (thrift_server.h, ...) is found through THRIFT_CFLAGS: the staged
# directory only holds our headers, whose names differ from Debian's.
BUILT_SOURCES += stage/include/thrift/c_glib/server
stage/include/thrift/c_glib/server:
	$(AM_V_GEN)$(MKDIR_P) stage/include/thrift/c_glib && \
	  ln -sfn $(abs_top_srcdir)/lib/c_glib/server $@

# Recipe of the stamp rules that generate c_glib code with thrift-hatrpc (test/server, tutorial,
# bench): `DIR/stamp: IDL thrift-compiler-patch/thrift-hatrpc` regenerates DIR from IDL.
# A rule that passes c_glib generator options writes them between the two halves instead:
# `$(hatrpc_gen_recipe_begin):zero_copy_binary $(hatrpc_gen_recipe_end)` (plain make has no
# per-target variables or functions, and automake -Wall would reject GNU make's).
hatrpc_gen_recipe_begin = $(AM_V_GEN)$(MKDIR_P) $(@D) && rm -f $(@D)/*.[ch] && \
	thrift-compiler-patch/thrift-hatrpc --gen c_glib
hatrpc_gen_recipe_end = -out $(@D) $< && touch $@
hatrpc_gen_recipe = $(hatrpc_gen_recipe_begin) $(hatrpc_gen_recipe_end)
