# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# libFuzzer harnesses of every decoder of bytes from a peer or a user, and of thrift-hatrpc on
# an IDL text (fuzz_compiler.c: its hint grammar, annotations and validation; it needs the
# patched compiler tree that make builds) (issue 25).  fuzz.sh
# builds them with clang (scripts/fuzz, into test/fuzz/build), runs every committed input
# once (corpus/NAME: seeds; regress/NAME: inputs that crashed once), then fuzzes each harness
# for FUZZ_SECONDS (default 30; distcheck 5: configure FUZZ_SECONDS=N).  scripts/fuzz runs
# them longer.
TESTS += test/fuzz/fuzz.sh
EXTRA_DIST += test/fuzz/fuzz.sh test/fuzz/fuzz_common.h test/fuzz/fuzz_thrift.c \
	test/fuzz/fuzz_thrift.h test/fuzz/fuzz_rdma_wire.c test/fuzz/fuzz_bulk_wire.c \
	test/fuzz/fuzz_hybrid_wire.c test/fuzz/fuzz_hybrid_peer.c test/fuzz/fuzz_checked_binary.c \
	test/fuzz/fuzz_uri.c test/fuzz/fuzz_compiler.c test/fuzz/compiler.dict \
	test/fuzz/make_seeds.c test/fuzz/corpus test/fuzz/regress
# the URI harness builds transports: the engine's sources, as make knows them
AM_TESTS_ENVIRONMENT += FUZZ_ENGINE_SOURCES='$(lib_c_glib_libthrift_c_glib_rdma_engine_la_SOURCES)'; \
	export FUZZ_ENGINE_SOURCES; FUZZ_SECONDS=$${FUZZ_SECONDS:-$(FUZZ_SECONDS)}; \
	export FUZZ_SECONDS;

clean-local: clean-fuzz
clean-fuzz:
	-rm -rf test/fuzz/build

# The engine's sources, for scripts/fuzz run by hand.
print-engine-sources:
	@echo $(lib_c_glib_libthrift_c_glib_rdma_engine_la_SOURCES)
.PHONY: print-engine-sources clean-fuzz
