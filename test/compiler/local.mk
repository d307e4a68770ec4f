# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# Tests of thrift-hatrpc and the hint runtime (issue 3).  All host-side.
AM_TESTS_ENVIRONMENT += STOCK_THRIFT='$(STOCK_THRIFT)'; export STOCK_THRIFT; \
	BISON='$(BISON)'; export BISON;

# corpus.sh: byte-identity of the output for every .thrift file of the Thrift 0.17.0 source.
# hints.sh: grammar, validation and resolution cases (cases/NAME.thrift, NAME.expected).
# grammar.sh: the patched grammar has no LALR conflicts.
# cli.sh: --version, and the error for a generator that is not built in.
# annotations.sh: hints as hatrpc.* annotations (issue 24): stock thrift compiles the IDL for
# py, java and cpp; thrift-hatrpc reads from it the hints and code of the group spelling.
TESTS += test/compiler/hints.sh test/compiler/grammar.sh test/compiler/corpus.sh \
	test/compiler/cli.sh test/compiler/annotations.sh
EXTRA_DIST += test/compiler/hints.sh test/compiler/grammar.sh test/compiler/corpus.sh \
	test/compiler/cli.sh test/compiler/annotations.sh test/compiler/annotations \
	test/compiler/hinted.thrift test/compiler/cases

# test_hints_runtime: code generated from hinted.thrift, compiled with -Wall -Wextra -Werror
# and linked against Debian's libthrift_c_glib and our library, hands each function's
# resolved hints to a recording transport (directly, buffered, framed, multiplexed), and
# registers its types thread-safely (8 threads making each first _get_type call at once).
hinted_gen = \
	test/compiler/gen/hinted_types.c test/compiler/gen/hinted_types.h \
	test/compiler/gen/kv.c test/compiler/gen/kv.h \
	test/compiler/gen/kv_child.c test/compiler/gen/kv_child.h
test/compiler/gen/stamp: $(srcdir)/test/compiler/hinted.thrift thrift-compiler-patch/thrift-hatrpc
	$(AM_V_GEN)rm -f $(hinted_gen) && $(MKDIR_P) test/compiler/gen && \
	  thrift-compiler-patch/thrift-hatrpc --gen c_glib -out test/compiler/gen \
	    $(srcdir)/test/compiler/hinted.thrift && touch $@
$(hinted_gen): test/compiler/gen/stamp
	@test -f $@ || { rm -f test/compiler/gen/stamp; $(MAKE) $(AM_MAKEFLAGS) test/compiler/gen/stamp; }

check_PROGRAMS += test/compiler/test_hints_runtime
TESTS += test/compiler/test_hints_runtime
test_compiler_test_hints_runtime_SOURCES = test/compiler/test_hints_runtime.c
nodist_test_compiler_test_hints_runtime_SOURCES = $(hinted_gen)
test_compiler_test_hints_runtime_CPPFLAGS = $(AM_CPPFLAGS) -I$(builddir)/test/compiler/gen
test_compiler_test_hints_runtime_CFLAGS = -std=gnu11 -Wall -Wextra -Werror
test_compiler_test_hints_runtime_LDADD = lib/c_glib/libthrift_c_glib_rdma.la $(THRIFT_LIBS) $(GLIB_LIBS)
# the generated headers exist before the test's own object is compiled
test/compiler/test_hints_runtime-test_hints_runtime.$(OBJEXT): test/compiler/gen/stamp
CLEANFILES += $(hinted_gen) test/compiler/gen/stamp

# The generator option zero_copy_binary (issue 10).  zero_copy.sh: the code generated from
# zero_copy.thrift without it is stock Thrift's, with it every binary read takes the protocol's
# buffer (g_byte_array_new_take), process_<function> releases the reply only after the flush,
# and nothing else changes; the option's errors and --help.
# test_zero_copy_runtime: that code with the option, under ASan/UBSan, reads back empty, small
# and 1 MiB binaries in fields, containers, _args structs and recv_<function> byte for byte,
# each holding the very buffer read_binary handed out, with no leak; the processor's replies
# (new binaries, exceptions) are intact at the flush of a transport that lends large writes.
TESTS += test/compiler/zero_copy.sh
EXTRA_DIST += test/compiler/zero_copy.sh test/compiler/zero_copy.thrift
zc_gen = \
	test/compiler/zc-gen/zero_copy_types.c test/compiler/zc-gen/zero_copy_types.h \
	test/compiler/zc-gen/zc.c test/compiler/zc-gen/zc.h
test/compiler/zc-gen/stamp: $(srcdir)/test/compiler/zero_copy.thrift \
		thrift-compiler-patch/thrift-hatrpc
	$(hatrpc_gen_recipe_begin):zero_copy_binary $(hatrpc_gen_recipe_end)
$(zc_gen): test/compiler/zc-gen/stamp
	@test -f $@ || { rm -f test/compiler/zc-gen/stamp; $(MAKE) $(AM_MAKEFLAGS) test/compiler/zc-gen/stamp; }
CLEANFILES += $(zc_gen) test/compiler/zc-gen/stamp

check_PROGRAMS += test/compiler/test_zero_copy_runtime
TESTS += test/compiler/test_zero_copy_runtime
test_compiler_test_zero_copy_runtime_SOURCES = test/compiler/test_zero_copy_runtime.c
nodist_test_compiler_test_zero_copy_runtime_SOURCES = $(zc_gen)
test_compiler_test_zero_copy_runtime_CPPFLAGS = $(AM_CPPFLAGS) -I$(builddir)/test/compiler/zc-gen
test_compiler_test_zero_copy_runtime_CFLAGS = $(gen_cflags) -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer
test_compiler_test_zero_copy_runtime_LDADD = lib/c_glib/libthrift_c_glib_rdma.la $(THRIFT_LIBS) \
	$(GLIB_LIBS)
test_compiler_test_zero_copy_runtime_LDFLAGS = -fsanitize=address,undefined
test/compiler/test_zero_copy_runtime-test_zero_copy_runtime.$(OBJEXT): test/compiler/zc-gen/stamp
