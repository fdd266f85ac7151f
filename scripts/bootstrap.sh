#!/bin/sh
# Installs what building and testing libpvrdma needs on Debian 12 and
# derivatives. Installs nothing that is already there. The interop tests
# (tests/interop) boot a Debian guest with rxe under qemu (built by
# debootstrap) and check the wire with tcpdump and tshark.
#
#   bootstrap.sh [--matrix]
#
# --matrix adds what the build matrix of scripts/test.sh needs: clang, and
# on amd64 the aarch64 cross compiler with libibverbs for arm64 (Debian
# multiarch: the arm64 architecture is added to dpkg).
set -eu

pkgs="build-essential cmake ninja-build pkg-config gcc
libibverbs-dev ibverbs-providers ibverbs-utils perftest rdmacm-utils qperf
librdmacm-dev libfabric-bin
libcmocka-dev linux-libc-dev valgrind python3
debhelper dpkg-dev lintian rpm fakeroot man-db groff-base binutils
openmpi-bin libopenmpi-dev ucx-utils libucx-dev libfabric-bin
iproute2 ethtool infiniband-diags tcpdump tshark python3-scapy
qemu-system-x86 debootstrap"

cross=""
if [ "${1:-}" = --matrix ]; then
	pkgs="$pkgs clang"
	if [ "$(dpkg --print-architecture)" = amd64 ]; then
		cross=arm64
		pkgs="$pkgs gcc-aarch64-linux-gnu libc6-dev:arm64
libibverbs-dev:arm64"
	fi
fi

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
if [ -n "$cross" ] && ! dpkg --print-foreign-architectures | grep -qx "$cross"
then
	$SUDO dpkg --add-architecture "$cross"
fi
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
