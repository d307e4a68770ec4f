# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The thrift-c-glib-rdma authors (see LICENSE).
# test/packages: the Debian packages (debian/; issue 24 item 6) built from the committed tree
# with dpkg-buildpackage, unpacked into an empty root, and the tutorial built and run against
# them alone.
TESTS += test/packages/test-packages.sh
EXTRA_DIST += test/packages/test-packages.sh debian
