#!/bin/sh
# install_layout.sh SRC WORK: a tree configured for /usr and installed with
# "cmake --install --prefix /usr" into a DESTDIR holds exactly the files the
# packages ship, where libibverbs, the launcher, the dynamic linker and
# pkg-config look for them. The build stays in WORK/build and the install in
# WORK/root for packaging.pvrdmadv_consumer.
set -eu
src=$1
work=$2
. "$(dirname "$0")/lib.sh"
need_tools objdump:binutils pkg-config:pkgconf

ma=$(multiarch)
rm -rf "$work"
mkdir -p "$work"
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_INSTALL_PREFIX=/usr \
	>"$work/configure.log" 2>&1 ||
	{ show_log "$work/configure.log"; fail "configure"; }
cmake --build "$work/build" >"$work/build.log" 2>&1 ||
	{ show_log "$work/build.log"; fail "build"; }
DESTDIR="$work/root" cmake --install "$work/build" --prefix /usr \
	>"$work/install.log" 2>&1 ||
	{ cat "$work/install.log" >&2; fail "cmake --install"; }

cat >"$work/expected" <<EOT
etc/libibverbs.d/pvrdma.driver
usr/bin/pvrdma-sim
usr/bin/pvrdma-sim-rsh
usr/include/infiniband/pvrdmadv.h
usr/lib/$ma/libibverbs/libpvrdma-rdmav34.so
usr/lib/$ma/libpvrdma.so
usr/lib/$ma/libpvrdma.so.1
usr/lib/$ma/libpvrdma.so.1.0.0
usr/lib/$ma/pkgconfig/libpvrdma.pc
usr/lib/$ma/pvrdma-sim/libpvrdma-sim.so
usr/share/man/man1/pvrdma-sim-rsh.1
usr/share/man/man1/pvrdma-sim.1
usr/share/man/man3/pvrdmadv.3
usr/share/man/man7/pvrdma.7
EOT
(cd "$work/root" && find . ! -type d | sed 's|^\./||') >"$work/actual"
same_list "cmake --install" "$work/expected" "$work/actual"

# libibverbs turns "driver pvrdma" into libpvrdma-rdmav34.so in its
# provider directory.
grep -qx 'driver pvrdma' "$work/root/etc/libibverbs.d/pvrdma.driver" ||
	fail "pvrdma.driver does not say 'driver pvrdma'"
[ -x "$work/root/usr/bin/pvrdma-sim" ] || fail "launcher not executable"
[ -x "$work/root/usr/bin/pvrdma-sim-rsh" ] || fail "rsh agent not executable"

# libpvrdma.so.1: the runtime name is the SONAME, the development name
# points to it, and only the pvrdmadv API is exported, under its version.
lib=$work/root/usr/lib/$ma
[ "$(readlink "$lib/libpvrdma.so.1")" = libpvrdma.so.1.0.0 ] ||
	fail "libpvrdma.so.1 is not a link to libpvrdma.so.1.0.0"
[ "$(readlink "$lib/libpvrdma.so")" = libpvrdma.so.1 ] ||
	fail "libpvrdma.so is not a link to libpvrdma.so.1"
objdump -p "$lib/libpvrdma.so.1.0.0" | grep -Eq 'SONAME +libpvrdma\.so\.1$' ||
	fail "libpvrdma.so.1.0.0 has not the SONAME libpvrdma.so.1"
exported=$(objdump -T "$lib/libpvrdma.so.1.0.0" |
	awk '$4 == ".text" { print $6, $7 }' | sort)
[ "$exported" = "PVRDMA_1.0 pvrdmadv_is_supported
PVRDMA_1.0 pvrdmadv_query_counters
PVRDMA_1.0 pvrdmadv_query_device" ] ||
	fail "libpvrdma.so.1 exports other than the pvrdmadv API:
$exported"

# The .pc file names the paths the files were installed to.
pc=$lib/pkgconfig/libpvrdma.pc
[ "$(pkg-config --variable=libdir "$pc")" = "/usr/lib/$ma" ] ||
	fail "libpvrdma.pc: libdir is $(pkg-config --variable=libdir "$pc")"
[ "$(pkg-config --variable=includedir "$pc")" = /usr/include ] ||
	fail "libpvrdma.pc: includedir is $(pkg-config --variable=includedir "$pc")"
[ "$(pkg-config --modversion "$pc")" = "$(sed -n \
	's/^project(libpvrdma VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")" ] ||
	fail "libpvrdma.pc: version $(pkg-config --modversion "$pc")"
echo "install layout OK"
