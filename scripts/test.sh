#!/bin/sh
# The whole test suite: installs what is missing, builds a release tree and
# an ASan+UBSan tree with warnings as errors, builds the other
# configurations users and distributions build (scripts/build_matrix.sh),
# and runs every test of both trees on pvrdma-sim with ctest.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
sh scripts/bootstrap.sh --matrix
sh scripts/build.sh build -DPVRDMA_WERROR=ON
sh scripts/build.sh build-asan -DPVRDMA_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
	-DPVRDMA_WERROR=ON
rc=0
# Before the suite, so that ctest's summary closes the output.
sh scripts/build_matrix.sh build-matrix || rc=1
# Interop with Linux rxe in a QEMU guest: apart from the suite, for its
# time. The guest is built once and cached (it needs root and the Debian
# archive); without it the tests report themselves skipped.
if [ "$(id -u)" -eq 0 ]; then
	sh tests/interop/rxe_guest.sh build ||
		echo "test.sh: no rxe guest built: the interop tests will be skipped"
fi
PVRDMA_INTEROP=1 ctest --test-dir build --output-on-failure -L interop || rc=1
ctest --test-dir build --output-on-failure -j2 -LE interop || rc=1
ctest --test-dir build-asan --output-on-failure -j2 -L sanitize || rc=1
exit $rc
