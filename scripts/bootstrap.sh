#!/bin/sh
# Installs what building and testing libpvrdma needs on Debian 12 and
# derivatives. Installs nothing that is already there. The interop tests
# (tests/interop) boot a Debian guest with rxe under qemu (built by
# debootstrap) and check the wire with tcpdump and tshark.
set -eu

pkgs="build-essential cmake ninja-build pkg-config gcc
libibverbs-dev ibverbs-providers ibverbs-utils perftest rdmacm-utils
librdmacm-dev libfabric-bin
libcmocka-dev linux-libc-dev valgrind python3
debhelper dpkg-dev lintian rpm fakeroot man-db groff-base binutils
openmpi-bin libopenmpi-dev ucx-utils libucx-dev libfabric-bin
qemu-system-x86 debootstrap tcpdump tshark iproute2"

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "bootstrap: installing$missing"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
