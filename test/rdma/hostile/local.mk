#
# Licensed to the Apache Software Foundation (ASF) under one
# or more contributor license agreements. See the NOTICE file
# distributed with this work for additional information
# regarding copyright ownership. The ASF licenses this file
# to you under the Apache License, Version 2.0 (the
# "License"); you may not use this file except in compliance
# with the License. You may obtain a copy of the License at
#
#   http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing,
# software distributed under the License is distributed on an
# "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
# KIND, either express or implied. See the License for the
# specific language governing permissions and limitations
# under the License.
#

# Hostile peers: hostile-peer attacks tutorial/calculator-server over raw verbs (or plain
# sockets), with none of the project's code; test-hostile.sh runs each attack in the
# soft-RoCE guest and judges the server (a good client served during and after, threads,
# fds and RSS back to baseline).
check_PROGRAMS += test/rdma/hostile/hostile-peer
test_rdma_hostile_hostile_peer_SOURCES = test/rdma/hostile/hostile_peer.c
test_rdma_hostile_hostile_peer_CPPFLAGS = $(GLIB_CFLAGS)
test_rdma_hostile_hostile_peer_LDADD = $(RDMACM_LIBS) $(IBVERBS_LIBS) $(GLIB_LIBS)

rdma_tests += $(abs_top_srcdir)/test/rdma/test-hostile.sh
EXTRA_DIST += test/rdma/test-hostile.sh
