# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# lib/c_glib/protocol: protocols (ThriftCheckedBinaryProtocol), installed under
# include/thrift/c_glib/protocol/ beside Debian's thrift_binary_protocol.h.
protocolincludedir = $(includedir)/thrift/c_glib/protocol
protocolinclude_HEADERS = lib/c_glib/protocol/thrift_checked_binary_protocol.h
lib_c_glib_libthrift_c_glib_rdma_engine_la_SOURCES += lib/c_glib/protocol/thrift_checked_binary_protocol.c

# Sources include <thrift/c_glib/protocol/...> as users do; Debian's headers of that
# directory are found through THRIFT_CFLAGS (the staged one only holds ours).
BUILT_SOURCES += stage/include/thrift/c_glib/protocol
stage/include/thrift/c_glib/protocol:
	$(AM_V_GEN)$(MKDIR_P) stage/include/thrift/c_glib && \
	  ln -sfn $(abs_top_srcdir)/lib/c_glib/protocol $@
