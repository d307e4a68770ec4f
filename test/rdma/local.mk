# RDMA tests: each program here is added to rdma_tests and runs inside the soft-RoCE guest.
rdma_tests += test/rdma/test_verbs_path
check_PROGRAMS += test/rdma/test_verbs_path
test_rdma_test_verbs_path_LDADD = $(test_libs) $(RDMACM_LIBS) $(IBVERBS_LIBS)
test_rdma_test_verbs_path_LDFLAGS = $(test_link)
