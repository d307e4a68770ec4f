# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# thrift-hatrpc: Thrift 0.17.0's compiler with the HatRPC hint patches, c_glib generator only.
#
# stamp-source: the tarball (fetch-source: --with-thrift-source, the cache, or Debian's source
# package via a private apt configuration), checksum verified, extracted to
# thrift-compiler-patch/src and patched with the series.  Any change to the series, a patch or
# these scripts re-extracts it; build-compiler then runs cmake's own incremental build.
hatrpc_patches = \
	thrift-compiler-patch/0001-namespaces-of-languages-built-out.patch \
	thrift-compiler-patch/0002-parse-tree-hint-groups.patch \
	thrift-compiler-patch/0003-lexer-grammar-hint-groups.patch \
	thrift-compiler-patch/0004-validate-resolve-hints.patch \
	thrift-compiler-patch/0005-c_glib-generator-hints.patch \
	thrift-compiler-patch/0006-command-line-version-and-generators.patch \
	thrift-compiler-patch/0007-c_glib-generator-hint-set-table.patch \
	thrift-compiler-patch/0008-c_glib-generator-zero-copy-binary.patch \
	thrift-compiler-patch/0009-hint-annotations.patch \
	thrift-compiler-patch/0010-lexer-end-of-input.patch \
	thrift-compiler-patch/0011-oneway-function-of-a-named-type.patch \
	thrift-compiler-patch/0012-include-cycles-and-non-files.patch
hatrpc_scripts = \
	thrift-compiler-patch/fetch-source \
	thrift-compiler-patch/apply \
	thrift-compiler-patch/build-compiler \
	thrift-compiler-patch/refresh
EXTRA_DIST += $(hatrpc_patches) $(hatrpc_scripts) \
	thrift-compiler-patch/series \
	thrift-compiler-patch/thrift-0.17.0.sha256 \
	thrift-compiler-patch/README.md

bin_SCRIPTS += thrift-compiler-patch/thrift-hatrpc
CLEANFILES += thrift-compiler-patch/thrift-hatrpc thrift-compiler-patch/stamp-source

thrift-compiler-patch/stamp-source: $(hatrpc_patches:%=$(srcdir)/%) \
		$(srcdir)/thrift-compiler-patch/series \
		$(srcdir)/thrift-compiler-patch/thrift-0.17.0.sha256 \
		$(srcdir)/thrift-compiler-patch/fetch-source \
		$(srcdir)/thrift-compiler-patch/apply
	@$(MKDIR_P) thrift-compiler-patch
	$(AM_V_GEN)tarball=`$(SHELL) $(srcdir)/thrift-compiler-patch/fetch-source '$(THRIFT_SOURCE)'` && \
	  $(SHELL) $(srcdir)/thrift-compiler-patch/apply "$$tarball" thrift-compiler-patch/src && \
	  touch $@

thrift-compiler-patch/thrift-hatrpc: thrift-compiler-patch/stamp-source \
		$(srcdir)/thrift-compiler-patch/build-compiler
	+$(AM_V_GEN)CMAKE='$(CMAKE)' MAKE='$(MAKE)' $(SHELL) $(srcdir)/thrift-compiler-patch/build-compiler \
	  thrift-compiler-patch/src/thrift-0.17.0 thrift-compiler-patch/build $@

.PHONY: clean-hatrpc
clean-local: clean-hatrpc
clean-hatrpc:
	-rm -rf thrift-compiler-patch/src thrift-compiler-patch/build
