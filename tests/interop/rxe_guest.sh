#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A Linux soft-RoCE (rdma_rxe) peer in a QEMU guest, for the interop tests.
#
#   rxe_guest.sh build                 debootstrap a Debian 12 guest into the cache
#   rxe_guest.sh start [N]             boot guest N (1 or 2) joined to the namespace
#   rxe_guest.sh stop [N|all]          power it off, remove the namespace with the last
#   rxe_guest.sh exec [-n N] [-t S] -- 'CMD'   run CMD in the guest, its output and status
#   rxe_guest.sh bg [-n N] -- 'CMD'    start CMD in the guest, print a job id
#   rxe_guest.sh wait [-n N] [-t S] ID its output and status
#   rxe_guest.sh kill [-n N] ID        end the job (its process group)
#   rxe_guest.sh put [-n N] FILE...    copy files to /spool/files in the guest
#   rxe_guest.sh status                what is cached and what runs
#
# The guest boots its own kernel and initrd with qemu-system-x86_64 (TCG unless
# PVRDMA_INTEROP_ACCEL=kvm), the cached ext4 root read-only underneath
# (-snapshot), and /sbin/pvs-init as PID 1: it brings eth0 up with
# 198.51.100.(1+N)/24, adds rxe0 on it, and serves a command spool shared
# over virtio-9p. The control channel therefore survives the guest's link
# going down. The host end of the link is a bridge in the network namespace
# $PVRDMA_INTEROP_NS with 198.51.100.1/24; each guest's tap joins it.
#
# Environment:
#   PVRDMA_INTEROP_CACHE   the built guest (default /var/cache/pvrdma-interop)
#   PVRDMA_INTEROP_RUN     per-guest run state (default /run/pvrdma-interop)
#   PVRDMA_INTEROP_NS      network namespace (default pvs-rxe-net)
#   PVRDMA_INTEROP_MIRROR  Debian mirror (default: the one apt is configured with)
#   PVRDMA_INTEROP_ACCEL   tcg (default) or kvm
#   PVRDMA_INTEROP_BOOT_TIMEOUT  seconds a boot may take (default 400)
set -eu

GUEST_VERSION=4	# bump when the guest's contents change: the cache rebuilds
CACHE=${PVRDMA_INTEROP_CACHE:-/var/cache/pvrdma-interop}
RUN=${PVRDMA_INTEROP_RUN:-/run/pvrdma-interop}
NS=${PVRDMA_INTEROP_NS:-pvs-rxe-net}
ACCEL=${PVRDMA_INTEROP_ACCEL:-tcg}
BOOT_TIMEOUT=${PVRDMA_INTEROP_BOOT_TIMEOUT:-400}
SUITE=bookworm
IMG=$CACHE/$SUITE
HOST_IP=198.51.100.1
BRIDGE=pvsrxebr0

# The guest's packages: the rxe module ships in linux-image-amd64.
GUEST_PKGS="linux-image-amd64,initramfs-tools,kmod,udev,rdma-core,\
ibverbs-providers,ibverbs-utils,perftest,rdmacm-utils,iproute2,tcpdump,\
procps,psmisc,netcat-openbsd,ethtool"

here=$(cd "$(dirname "$0")" && pwd)

die() {
	printf 'rxe_guest: %s\n' "$*" >&2
	exit 1
}

note() {
	printf 'rxe_guest: %s\n' "$*" >&2
}

now_ms() {
	date +%s%3N
}

# The first Debian archive apt is configured with (deb822 or one-line).
apt_mirror() {
	[ -n "${PVRDMA_INTEROP_MIRROR:-}" ] && { echo "$PVRDMA_INTEROP_MIRROR"; return; }
	m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }')
	[ -z "$m" ] && m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:.*\/debian\/?$/) { print $i; exit } }')
	echo "${m:-http://deb.debian.org/debian}"
}

built() {
	[ -f "$IMG/stamp" ] && [ "$(cat "$IMG/stamp")" = "$GUEST_VERSION" ]
}

# PID 1 of the guest, baked into the image: it mounts the spool the host
# shares and runs the init the host put there (guest_init.sh of this tree),
# so that changing that script needs no rebuild.
write_init() {
	cat >"$1/sbin/pvs-init" <<'EOF'
#!/bin/bash
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc 2>/dev/null
mount -t sysfs sys /sys 2>/dev/null
mount -t devtmpfs dev /dev 2>/dev/null
modprobe 9pnet_virtio; modprobe 9p
mkdir -p /spool
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 pvsspool /spool &&
	exec /bin/bash /spool/init.sh
echo "pvs-init: no spool, nothing to run" >/dev/console
exec /bin/bash
EOF
	chmod 0755 "$1/sbin/pvs-init"
}

# An initrd with only what mounts the root (virtio_pci, virtio_blk, ext4):
# the full one takes TCG a good part of the boot to unpack and probe.
small_initrd() {
	sed -i 's/^MODULES=.*/MODULES=list/' "$1/etc/initramfs-tools/initramfs.conf"
	printf 'virtio_pci\nvirtio_blk\next4\n' >>"$1/etc/initramfs-tools/modules"
	mount -t proc proc "$1/proc" || return 1
	rm -f "$1/boot/initrd.img-$2"
	chroot "$1" update-initramfs -c -k "$2"
	rc=$?
	umount "$1/proc"
	return $rc
}

cmd_build() {
	[ "$(id -u)" -eq 0 ] || die "build needs root (debootstrap, chroot)"
	command -v debootstrap >/dev/null || die "no debootstrap"
	command -v mkfs.ext4 >/dev/null || die "no mkfs.ext4"
	if built && [ -z "${PVRDMA_INTEROP_REBUILD:-}" ]; then
		note "guest $GUEST_VERSION already built in $IMG"
		return 0
	fi
	mkdir -p "$CACHE"
	exec 9>"$CACHE/.build.lock"
	flock -w 3600 9 || die "another build holds $CACHE/.build.lock"
	built && [ -z "${PVRDMA_INTEROP_REBUILD:-}" ] && return 0
	t0=$(now_ms)
	mirror=$(apt_mirror)
	work=$CACHE/.work
	rm -rf "$work"
	mkdir -p "$work"
	note "debootstrap $SUITE from $mirror (log: $work/build.log)"
	# The archive keyring of the host checks the guest's packages.
	debootstrap --variant=minbase --include="$GUEST_PKGS" \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		"$SUITE" "$work/root" "$mirror" >"$work/build.log" 2>&1 ||
		{ tail -20 "$work/build.log" >&2; die "debootstrap failed"; }
	t1=$(now_ms)
	root=$work/root
	write_init "$root"
	echo "pvs-rxe" >"$root/etc/hostname"
	printf '/dev/vda / ext4 rw 0 1\n' >"$root/etc/fstab"
	mkdir -p "$root/spool"
	# Debian's perftest, rdmacm-utils &c. find rxe through this provider.
	chroot "$root" sh -c 'ls /usr/lib/x86_64-linux-gnu/libibverbs/librxe*' \
		>/dev/null || die "no rxe provider in the guest"
	kver=$(ls "$root/lib/modules" | head -1)
	[ -n "$(find "$root/lib/modules/$kver" -name 'rdma_rxe.ko*')" ] ||
		die "no rdma_rxe module in $kver"
	small_initrd "$root" "$kver" >>"$work/build.log" 2>&1 ||
		die "update-initramfs failed (see $work/build.log)"
	cp "$root/boot/vmlinuz-$kver" "$work/vmlinuz"
	cp "$root/boot/initrd.img-$kver" "$work/initrd.img"
	# The apt lists and .debs are not needed to run; keep the image small.
	rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*
	size_mb=$(( $(du -sm "$root" | cut -f1) + 256 ))
	mkfs.ext4 -q -F -L pvsroot -d "$root" "$work/rootfs.ext4" "${size_mb}M" \
		>>"$work/build.log" 2>&1 || die "mkfs.ext4 -d failed"
	chroot "$root" dpkg-query -W -f='${Package} ${Version}\n' >"$work/packages"
	rm -rf "$root"
	t2=$(now_ms)
	printf 'kernel %s\ndebootstrap_ms %s\nimage_ms %s\nbuild_ms %s\nmirror %s\n' \
		"$kver" $((t1 - t0)) $((t2 - t1)) $((t2 - t0)) "$mirror" >"$work/manifest"
	echo "$GUEST_VERSION" >"$work/stamp"
	rm -rf "$IMG"
	mv "$work" "$IMG"
	note "built guest $GUEST_VERSION (kernel $kver) in $(( (t2 - t0) / 1000 )) s: $IMG"
}

. "$here/rxe_guest_run.sh"

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
build) cmd_build "$@" ;;
start) cmd_start "$@" ;;
stop) cmd_stop "$@" ;;
exec) cmd_exec "$@" ;;
bg) cmd_bg "$@" ;;
wait) cmd_wait "$@" ;;
kill) cmd_kill "$@" ;;
put) cmd_put "$@" ;;
status) cmd_status "$@" ;;
*) sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
