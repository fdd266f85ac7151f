#!/bin/sh
# install_layout.sh SRC WORK: a tree configured for /usr and installed with
# "cmake --install --prefix /usr" into a DESTDIR holds exactly the files the
# packages ship, where libibverbs and the launcher look for them.
set -eu
src=$1
work=$2
. "$(dirname "$0")/lib.sh"

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
usr/lib/$ma/libibverbs/libpvrdma-rdmav34.so
usr/lib/$ma/pvrdma-sim/libpvrdma-sim.so
usr/share/man/man1/pvrdma-sim.1
usr/share/man/man7/pvrdma.7
EOT
(cd "$work/root" && find . ! -type d | sed 's|^\./||') >"$work/actual"
same_list "cmake --install" "$work/expected" "$work/actual"

# libibverbs turns "driver pvrdma" into libpvrdma-rdmav34.so in its
# provider directory.
grep -qx 'driver pvrdma' "$work/root/etc/libibverbs.d/pvrdma.driver" ||
	fail "pvrdma.driver does not say 'driver pvrdma'"
[ -x "$work/root/usr/bin/pvrdma-sim" ] || fail "launcher not executable"
echo "install layout OK"
