# libthrift_c_glib_rdma: the RDMA transports and their engine.
lib_LTLIBRARIES = lib/c_glib/libthrift_c_glib_rdma.la

transportincludedir = $(includedir)/thrift/c_glib/transport
transportinclude_HEADERS = \
	lib/c_glib/transport/thrift_rdma_version.h \
	lib/c_glib/transport/thrift_hints.h

lib_c_glib_libthrift_c_glib_rdma_la_SOURCES = \
	lib/c_glib/transport/thrift_rdma_version.c \
	lib/c_glib/transport/thrift_hints.c \
	lib/c_glib/transport/rdma/rdma_device.c \
	lib/c_glib/transport/rdma/rdma_device.h
lib_c_glib_libthrift_c_glib_rdma_la_LIBADD = $(THRIFT_LIBS) $(GLIB_LIBS) $(RDMACM_LIBS) $(IBVERBS_LIBS)
lib_c_glib_libthrift_c_glib_rdma_la_LDFLAGS = -version-info 0:0:0 -no-undefined
