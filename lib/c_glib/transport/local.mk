# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# libthrift_c_glib_rdma: the RDMA transports and their engine.
lib_LTLIBRARIES = lib/c_glib/libthrift_c_glib_rdma.la

transportincludedir = $(includedir)/thrift/c_glib/transport
transportinclude_HEADERS = \
	lib/c_glib/transport/thrift_rdma_version.h \
	lib/c_glib/transport/thrift_hints.h \
	lib/c_glib/transport/thrift_idle_watch.h \
	lib/c_glib/transport/thrift_interruptible.h \
	lib/c_glib/transport/thrift_rdma.h \
	lib/c_glib/transport/thrift_rdma_explain.h \
	lib/c_glib/transport/thrift_server_rdma.h \
	lib/c_glib/transport/thrift_hybrid.h \
	lib/c_glib/transport/thrift_server_hybrid.h \
	lib/c_glib/transport/thrift_checked_framed_transport.h

# The engine and transports, also compiled into the ASan test variant (test/rdma/local.mk).
rdma_engine_sources = \
	lib/c_glib/transport/thrift_rdma_version.c \
	lib/c_glib/transport/thrift_hints.c \
	lib/c_glib/transport/thrift_idle_watch.c \
	lib/c_glib/transport/thrift_interruptible.c \
	lib/c_glib/transport/thrift_transport_unwrap.c \
	lib/c_glib/transport/thrift_transport_unwrap.h \
	lib/c_glib/transport/rdma/rdma_device.c \
	lib/c_glib/transport/rdma/rdma_device.h \
	lib/c_glib/transport/thrift_rdma.c \
	lib/c_glib/transport/thrift_server_rdma.c \
	lib/c_glib/transport/thrift_rdma_error.c \
	lib/c_glib/transport/rdma/rdma_status.c \
	lib/c_glib/transport/rdma/rdma_status.h \
	lib/c_glib/transport/rdma/rdma_resources.c \
	lib/c_glib/transport/rdma/rdma_resources.h \
	lib/c_glib/transport/rdma/rdma_verbs.c \
	lib/c_glib/transport/rdma/rdma_verbs.h \
	lib/c_glib/transport/rdma/rdma_wire.c \
	lib/c_glib/transport/rdma/rdma_wire.h \
	lib/c_glib/transport/rdma/rdma_admit.c \
	lib/c_glib/transport/rdma/rdma_admit.h \
	lib/c_glib/transport/rdma/rdma_credit.c \
	lib/c_glib/transport/rdma/rdma_credit.h \
	lib/c_glib/transport/rdma/rdma_machine.c \
	lib/c_glib/transport/rdma/rdma_machine.h \
	lib/c_glib/transport/rdma/rdma_numa.c \
	lib/c_glib/transport/rdma/rdma_numa.h \
	lib/c_glib/transport/rdma/rdma_pool.c \
	lib/c_glib/transport/rdma/rdma_pool.h \
	lib/c_glib/transport/rdma/rdma_rcache.c \
	lib/c_glib/transport/rdma/rdma_rcache.h \
	lib/c_glib/transport/rdma/rdma_unmap_watch.c \
	lib/c_glib/transport/rdma/rdma_unmap_watch.h \
	lib/c_glib/transport/rdma/rdma_bulk.c \
	lib/c_glib/transport/rdma/rdma_bulk.h \
	lib/c_glib/transport/rdma/rdma_bulk_msg.c \
	lib/c_glib/transport/rdma/rdma_bulk_msg.h \
	lib/c_glib/transport/rdma/rdma_bulk_stage.c \
	lib/c_glib/transport/rdma/rdma_bulk_stage.h \
	lib/c_glib/transport/rdma/rdma_bulk_wire.c \
	lib/c_glib/transport/rdma/rdma_bulk_wire.h \
	lib/c_glib/transport/rdma/rdma_proto.c \
	lib/c_glib/transport/rdma/rdma_proto.h \
	lib/c_glib/transport/rdma/rdma_op.h \
	lib/c_glib/transport/rdma/rdma_tx.c \
	lib/c_glib/transport/rdma/rdma_tx.h \
	lib/c_glib/transport/rdma/rdma_budget.c \
	lib/c_glib/transport/rdma/rdma_budget.h \
	lib/c_glib/transport/rdma/rdma_ring.c \
	lib/c_glib/transport/rdma/rdma_ring.h \
	lib/c_glib/transport/rdma/rdma_plan_cache.c \
	lib/c_glib/transport/rdma/rdma_plan_cache.h \
	lib/c_glib/transport/rdma/rdma_helper.c \
	lib/c_glib/transport/rdma/rdma_helper.h \
	lib/c_glib/transport/rdma/rdma_conn_window.c \
	lib/c_glib/transport/rdma/rdma_conn_window.h \
	lib/c_glib/transport/rdma/rdma_domain.c \
	lib/c_glib/transport/rdma/rdma_domain.h \
	lib/c_glib/transport/rdma/rdma_srq.c \
	lib/c_glib/transport/rdma/rdma_srq.h \
	lib/c_glib/transport/rdma/proto/rdma_proto_eager.c \
	lib/c_glib/transport/rdma/proto/rdma_write_send.c \
	lib/c_glib/transport/rdma/proto/rdma_write_send.h \
	lib/c_glib/transport/rdma/proto/rdma_proto_direct_write_send.c \
	lib/c_glib/transport/rdma/proto/rdma_proto_chained_write_send.c \
	lib/c_glib/transport/rdma/proto/rdma_proto_direct_write_imm.c \
	lib/c_glib/transport/rdma/proto/rdma_rndv.c \
	lib/c_glib/transport/rdma/proto/rdma_rndv.h \
	lib/c_glib/transport/rdma/proto/rdma_proto_write_rndv.c \
	lib/c_glib/transport/rdma/proto/rdma_proto_read_rndv.c \
	lib/c_glib/transport/rdma/rdma_plan.c \
	lib/c_glib/transport/rdma/rdma_plan.h \
	lib/c_glib/transport/rdma/proto/rdma_proto_rfp.c \
	lib/c_glib/transport/rdma/proto/rdma_proto_rfp.h \
	lib/c_glib/transport/rdma/proto/rdma_proto_batched_write.c \
	lib/c_glib/transport/rdma/proto/rdma_bw_private.h \
	lib/c_glib/transport/rdma/proto/rdma_bw_rx.c \
	lib/c_glib/transport/rdma/proto/rdma_bw_tx.c \
	lib/c_glib/transport/rdma/proto/rdma_proto_batched_write.h \
	lib/c_glib/transport/rdma/rdma_select.c \
	lib/c_glib/transport/rdma/rdma_select.h \
	lib/c_glib/transport/rdma/rdma_call_policy.c \
	lib/c_glib/transport/rdma/rdma_call_policy.h \
	lib/c_glib/transport/thrift_rdma_explain.c \
	lib/c_glib/transport/rdma/rdma_signal.c \
	lib/c_glib/transport/rdma/rdma_signal.h \
	lib/c_glib/transport/rdma/rdma_block.c \
	lib/c_glib/transport/rdma/rdma_block.h \
	lib/c_glib/transport/rdma/rdma_keepalive.c \
	lib/c_glib/transport/rdma/rdma_keepalive.h \
	lib/c_glib/transport/rdma/rdma_conn.c \
	lib/c_glib/transport/rdma/rdma_conn.h \
	lib/c_glib/transport/rdma/rdma_conn_private.h \
	lib/c_glib/transport/rdma/rdma_conn_msg.c \
	lib/c_glib/transport/rdma/rdma_conn_post.c \
	lib/c_glib/transport/rdma/rdma_conn_wait.c \
	lib/c_glib/transport/rdma/rdma_conn_wc.c \
	lib/c_glib/transport/rdma/rdma_poll.c \
	lib/c_glib/transport/rdma/rdma_poll.h \
	lib/c_glib/transport/rdma/rdma_choice.c \
	lib/c_glib/transport/rdma/rdma_choice.h \
	lib/c_glib/transport/rdma/rdma_lend_cost.c \
	lib/c_glib/transport/rdma/rdma_lend_cost.h \
	lib/c_glib/transport/rdma/rdma_poll_cost.c \
	lib/c_glib/transport/rdma/rdma_poll_cost.h \
	lib/c_glib/transport/rdma/rdma_spin.c \
	lib/c_glib/transport/rdma/rdma_spin.h \
	lib/c_glib/transport/rdma/rdma_gobject.c \
	lib/c_glib/transport/rdma/rdma_gobject.h \
	lib/c_glib/transport/rdma/rdma_transport.h \
	lib/c_glib/transport/hybrid/hybrid_wire.c \
	lib/c_glib/transport/hybrid/hybrid_wire.h \
	lib/c_glib/transport/hybrid/hybrid_transport.h \
	lib/c_glib/transport/thrift_hybrid.c \
	lib/c_glib/transport/thrift_checked_framed_transport.c \
	lib/c_glib/transport/thrift_server_hybrid.c
# Everything is built once into a convenience library, which the tests link (they look at
# the engine's insides); the installed library is the same objects exporting only the public
# API (the thrift_* names: libthrift_c_glib_rdma.map), so no engine symbol lands in
# librdmacm's rdma_* namespace of the programs that use it.
noinst_LTLIBRARIES += lib/c_glib/libthrift_c_glib_rdma_engine.la
lib_c_glib_libthrift_c_glib_rdma_engine_la_SOURCES = $(rdma_engine_sources)
lib_c_glib_libthrift_c_glib_rdma_engine_la_LIBADD = $(THRIFT_LIBS) $(GLIB_LIBS) $(RDMACM_LIBS) \
	$(IBVERBS_LIBS) $(NUMA_LIBS)
lib_c_glib_libthrift_c_glib_rdma_la_SOURCES =
lib_c_glib_libthrift_c_glib_rdma_la_LIBADD = lib/c_glib/libthrift_c_glib_rdma_engine.la \
	$(THRIFT_LIBS) $(GLIB_LIBS) $(RDMACM_LIBS) $(IBVERBS_LIBS) $(NUMA_LIBS)
lib_c_glib_libthrift_c_glib_rdma_la_LDFLAGS = -version-info 0:0:0 -no-undefined \
	-Wl,--version-script=$(srcdir)/lib/c_glib/libthrift_c_glib_rdma.map
EXTRA_lib_c_glib_libthrift_c_glib_rdma_la_DEPENDENCIES = $(srcdir)/lib/c_glib/libthrift_c_glib_rdma.map
EXTRA_DIST += lib/c_glib/libthrift_c_glib_rdma.map
