#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# PID 1 of the rxe interop guest, run by the image's /sbin/pvs-init from the
# spool (as /spool/init.sh). Brings up the guest's link with the address on
# the kernel command line (pvs.ip=), adds the soft-RoCE device rxe0 on it,
# and then serves the command spool that the host shares over virtio-9p:
#
#   req/ID.sh    a command the host wrote (renamed into place when complete)
#   run/ID.pid   the process group running it
#   out/ID.out   its stdout and stderr; out/ID.rc its exit status, written last
#                (in one write: the host waits for it to be non-empty)
#   kill/ID      the host asks for the job's process group to be ended
#   ready        written once the guest can take commands (holds a report)
#
# No systemd: a shell as init boots in seconds under TCG.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root

log() {
	echo "pvs-init: $*" >/dev/console
}

mounted() {
	grep -q " $1 " /proc/mounts 2>/dev/null
}

early_mounts() {
	mounted /proc || mount -t proc proc /proc
	mounted /sys || mount -t sysfs sys /sys
	mounted /dev || mount -t devtmpfs dev /dev
	mkdir -p /dev/pts /dev/shm
	mounted /dev/pts || mount -t devpts devpts /dev/pts
	mounted /dev/shm || mount -t tmpfs shm /dev/shm
	mounted /run || mount -t tmpfs run /run
	mounted /tmp || mount -t tmpfs tmp /tmp
	mount -o remount,rw / 2>/dev/null
}

cmdline_arg() {
	local a
	for a in $(cat /proc/cmdline); do
		case $a in "$1"=*) echo "${a#*=}"; return ;; esac
	done
}

# The first Ethernet interface: eth0 or its predictable name.
ether_iface() {
	local d
	for d in /sys/class/net/*; do
		[ "$(cat "$d/type" 2>/dev/null)" = 1 ] && [ -e "$d/device" ] &&
			{ basename "$d"; return; }
	done
}

setup_net() {
	local ip iface
	ip=$(cmdline_arg pvs.ip)
	modprobe virtio_net 2>/dev/null
	ip link set lo up
	iface=$(ether_iface)
	[ -n "$iface" ] || { log "no ethernet interface"; return 1; }
	ip addr add "$ip" dev "$iface"
	ip link set "$iface" up
	modprobe rdma_rxe || { log "modprobe rdma_rxe failed"; return 1; }
	rdma link add rxe0 type rxe netdev "$iface" || { log "rdma link add failed"; return 1; }
	echo "$iface"
}

# The GID index of rxe0's RoCE v2 IPv4-mapped address, once the GID table
# has it (rxe fills it from the netdev's address events).
v2_ipv4_gid() {
	local p=/sys/class/infiniband/rxe0/ports/1 i g t tries=0
	while [ $tries -lt 50 ]; do
		for i in $(seq 0 15); do
			g=$(cat "$p/gids/$i" 2>/dev/null) || continue
			t=$(cat "$p/gid_attrs/types/$i" 2>/dev/null)
			case $g in 0000:0000:0000:0000:0000:ffff:*)
				[ "$t" = "RoCE v2" ] && { echo "$i"; return; } ;;
			esac
		done
		tries=$((tries + 1))
		sleep 0.2
	done
	echo none
}

# The spool is mounted already: the image's /sbin/pvs-init ran us from it.
setup_spool() {
	mkdir -p /spool/req /spool/run /spool/out /spool/kill /spool/files
}

# Runs one request in a process group of its own (job control), in a
# subshell rather than a new shell: under TCG every exec costs most of a
# second. The status is written in one write(), after the output.
run_job() {
	local id=$1 pid rc
	set -m
	( . "/spool/req/$id.sh" ) >"/spool/out/$id.out" 2>&1 </dev/null &
	pid=$!
	set +m
	echo "$pid" >"/spool/run/$id.pid"
	wait "$pid"
	rc=$?
	echo "$rc" >"/spool/out/$id.rc"
}

serve() {
	local req id k pid
	declare -A taken
	mkfifo /run/pvs-tick
	exec 3<>/run/pvs-tick
	while :; do
		for req in /spool/req/*.sh; do
			[ -e "$req" ] || continue
			id=${req##*/}
			id=${id%.sh}
			# Taken once; the host removes it when the job is done.
			[ -n "${taken[$id]:-}" ] && continue
			taken[$id]=1
			run_job "$id" &
		done
		for k in /spool/kill/*; do
			[ -e "$k" ] || continue
			id=${k##*/}
			pid=$(cat "/spool/run/$id.pid" 2>/dev/null)
			[ -n "$pid" ] && kill -TERM -- "-$pid" 2>/dev/null
			rm -f "$k"
		done
		# A timed read on an idle fifo: a 0.2 s tick without a fork.
		read -r -t 0.2 <&3
	done
}

early_mounts
hostname pvs-rxe
iface=$(setup_net)
setup_spool
{
	echo "iface ${iface:-none}"
	echo "ip $(cmdline_arg pvs.ip)"
	echo "kernel $(uname -r)"
	echo "gid_v2_ipv4 $(v2_ipv4_gid)"
	echo "uptime $(cut -d' ' -f1 /proc/uptime)"
	rdma link show 2>&1
} >/spool/ready.tmp
mv /spool/ready.tmp /spool/ready
log "ready ($(cut -d' ' -f1 /proc/uptime) s)"
serve &
# As init: reap whatever is orphaned to us, forever.
while :; do
	wait
	sleep 5
done
