#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The provider as an rdma-core provider: copies providers/pvrdma, unchanged,
# into a copy of an rdma-core source tree beside providers/vmw_pvrdma with
# its public header include/infiniband/pvrdmadv.h beside it (where
# rdma-core keeps a provider's dv header), adds it to the tree's top
# CMakeLists.txt and builds it there with the tree's own rdma_provider(),
# driver.h, ccan and util (compat/ is not on that include path).
#
#   scripts/rdma-core-dropin.sh RDMA_CORE_TREE [WORK_DIR [SIM_BUILD_DIR]]
#
# RDMA_CORE_TREE (empty: $PVRDMA_RDMA_CORE_TREE) is left untouched (e.g. `git archive v44.0` of
# linux-rdma/rdma-core, unpacked); the copy and its build go to WORK_DIR
# (default: a new directory under /tmp, removed on success). With
# SIM_BUILD_DIR (a build tree of this project), the provider built there
# is then loaded on that tree's pvrdma-sim: it must claim the adapter
# (provider_probe) and carry RC traffic (bench_fastpath's self-test).
#
# Exit status: 0 built (and ran), 1 failed, 77 no usable tree given (the
# ctest skips).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
tree=${1:-${PVRDMA_RDMA_CORE_TREE:-}}
work=${2:-}
sim_build=${3:-}

if [ -z "$tree" ] || [ ! -f "$tree/buildlib/rdma_functions.cmake" ] ||
   [ ! -d "$tree/providers/vmw_pvrdma" ]; then
	echo "rdma-core-dropin: no rdma-core source tree given (${tree:-none})" >&2
	exit 77
fi

fail() {
	echo "rdma-core-dropin: $*" >&2
	exit 1
}

own_work=
if [ -z "$work" ]; then
	work=$(mktemp -d /tmp/pvrdma-dropin.XXXXXX)
	own_work=1
fi
src=$work/rdma-core
build=$work/build
rm -rf "$src" "$build"
mkdir -p "$src"
cp -a "$tree/." "$src/"

# The drop-in: the directory as it is with its public header, one line in
# the top CMakeLists.txt.
rm -rf "$src/providers/pvrdma"
cp -a "$top/providers/pvrdma" "$src/providers/pvrdma"
cp "$top/include/infiniband/pvrdmadv.h" "$src/providers/pvrdma/"
grep -q '^add_subdirectory(providers/vmw_pvrdma)$' "$src/CMakeLists.txt" ||
	fail "no add_subdirectory(providers/vmw_pvrdma) in $tree/CMakeLists.txt"
sed -i 's|^add_subdirectory(providers/vmw_pvrdma)$|&\nadd_subdirectory(providers/pvrdma)|' \
	"$src/CMakeLists.txt"

cmake -S "$src" -B "$build" -G Ninja -DNO_PYVERBS=1 -DNO_MAN_PAGES=1 \
	>"$work/configure.log" 2>&1 ||
	{ tail -20 "$work/configure.log" >&2; fail "rdma-core does not configure"; }
# The provider and what it links (libibverbs); -j2: a shared machine.
cmake --build "$build" -j2 --target pvrdma-rdmav34 >"$work/build.log" 2>&1 ||
	{ grep -E 'error|warning' "$work/build.log" | head -40 >&2
	  fail "the provider does not build in rdma-core"; }

lib=$build/lib/libpvrdma-rdmav34.so
[ -f "$lib" ] || fail "no $lib"
[ -f "$build/include/infiniband/pvrdmadv.h" ] ||
	fail "pvrdmadv.h not published to $build/include/infiniband"
# Built against the tree's libibverbs: bound to its private ABI 34.
nm -D --undefined-only "$lib" | grep -q 'verbs_register_driver_34' ||
	fail "$lib does not register through verbs_register_driver_34"
# Warnings of rdma-core's own flags are reported, not fatal.
if grep -q 'warning:' "$work/build.log"; then
	echo "rdma-core-dropin: warnings:" >&2
	grep 'warning:' "$work/build.log" >&2
fi
echo "rdma-core-dropin: built $lib in rdma-core $(sed -n \
	's/^project(rdma-core C)$//;s/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' \
	"$src/CMakeLists.txt")"

if [ -n "$sim_build" ]; then
	sim=$sim_build/bin/pvrdma-sim
	rundir=$work/run
	mkdir -p "$rundir"
	out=$("$sim" --provider "$lib" --rundir "$rundir" -- \
		"$sim_build/bin/provider_probe") ||
		fail "provider_probe on pvrdma-sim failed: $out"
	echo "rdma-core-dropin: provider_probe: $out"
	case $out in
	*"vmw_pvrdma0 libpvrdma-rdmav34.so"*) ;;
	*) fail "the adapter is not driven by the rdma-core-built provider" ;;
	esac
	if [ -x "$sim_build/bin/bench_fastpath" ]; then
		"$sim" --provider "$lib" --rundir "$rundir" -- \
			"$sim_build/bin/bench_fastpath" 64 \
			>"$work/traffic.log" 2>&1 ||
			{ tail -5 "$work/traffic.log" >&2
			  fail "RC traffic failed"; }
		echo "rdma-core-dropin: RC traffic over it: ok"
	fi
fi

[ -z "$own_work" ] || rm -rf "$work"
