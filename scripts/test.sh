#!/bin/sh
# The whole test suite: installs what is missing, builds a release tree and
# an ASan+UBSan tree, and runs every test of both on pvrdma-sim with ctest.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
sh scripts/bootstrap.sh
sh scripts/build.sh build
sh scripts/build.sh build-asan -DPVRDMA_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
rc=0
ctest --test-dir build --output-on-failure -j2 || rc=1
ctest --test-dir build-asan --output-on-failure -j2 -L sanitize || rc=1
exit $rc
