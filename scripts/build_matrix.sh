#!/bin/sh
# The build configurations the test suite does not run, built with warnings
# as errors: what users and distributions build must build, warning-free.
#
#   build_matrix.sh [PREFIX]    trees PREFIX-release, -debug, -clang and
#                               -aarch64 (default PREFIX: build-matrix)
#
#   release   GCC, -O3 (Release), with Debian's hardening flags
#             (dpkg-buildflags: _FORTIFY_SOURCE, stack protector, ...)
#   debug     GCC, -O0 -g (Debug): what the packages ship
#   clang     clang, Release
#   aarch64   the provider and libpvrdma.so.1 cross-built for arm64 (the
#             sim is x86-64 only), when the cross compiler is installed
#             (scripts/bootstrap.sh --matrix)
#
# RelWithDebInfo with GCC is the suite's own tree (build/). Prints the time
# of each configuration; exits non-zero if any failed to build.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-build-matrix}
rc=0
total=0

# one NAME TARGETS [cmake args...]: configures afresh (a stale cache would
# hide a changed default) and builds TARGETS ("all": everything).
one() {
	name=$1
	targets=$2
	shift 2
	dir=$prefix-$name
	start=$(date +%s)
	rm -rf "$dir"
	mkdir -p "$dir"
	# shellcheck disable=SC2086
	if { cmake -S "$top" -B "$dir" -G Ninja -DPVRDMA_WERROR=ON "$@" &&
	     cmake --build "$dir" -j"$(nproc)" --target $targets; } \
		>"$dir/build.log" 2>&1; then
		result=built
	else
		result=FAILED
		rc=1
		tail -n 40 "$dir/build.log"
	fi
	secs=$(($(date +%s) - start))
	total=$((total + secs))
	echo "build matrix: $name $result in ${secs}s (log: $dir/build.log)"
}

# Debian's flags as dpkg-buildpackage hands them to a package's build.
deb_flags() {
	DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get "$1"
}

# What the packages ship: the tests and benchmarks of the debug
# configuration are the ASan tree's (Debug) already.
products="pvrdma-sim pvrdma-sim-launcher pvrdma pvrdmadv"

if command -v dpkg-buildflags >/dev/null 2>&1; then
	one release all -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_C_FLAGS="$(deb_flags CFLAGS) $(deb_flags CPPFLAGS)" \
		-DCMAKE_EXE_LINKER_FLAGS="$(deb_flags LDFLAGS)" \
		-DCMAKE_SHARED_LINKER_FLAGS="$(deb_flags LDFLAGS)"
else
	one release all -DCMAKE_BUILD_TYPE=Release
fi
one debug "$products" -DCMAKE_BUILD_TYPE=Debug
if command -v clang >/dev/null 2>&1; then
	one clang all -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Release
else
	echo "build matrix: clang FAILED: no clang (scripts/bootstrap.sh --matrix)"
	rc=1
fi
if command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
	one aarch64 all -DCMAKE_TOOLCHAIN_FILE="$top/scripts/toolchain-aarch64-linux-gnu.cmake"
else
	echo "build matrix: aarch64 not built: no aarch64-linux-gnu-gcc" \
	     "(scripts/bootstrap.sh --matrix)"
fi
echo "build matrix: ${total}s in all"
exit "$rc"
