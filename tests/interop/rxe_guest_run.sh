# SPDX-License-Identifier: BSD-2-Clause
# Sourced by rxe_guest.sh: booting, stopping and talking to a built guest.
# Guest N (1 or 2) has the address 198.51.100.(1+N), tap pvsrxetapN and its
# state in $RUN/N: the spool shared with it, console.log, qemu.pid.

guest_ip() {
	echo "198.51.100.$((1 + $1))"
}

guest_dir() {
	echo "$RUN/$1"
}

guest_alive() {
	pidf=$(guest_dir "$1")/qemu.pid
	[ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null
}

check_id() {
	case $1 in 1 | 2) ;; *) die "guest number must be 1 or 2, not '$1'" ;; esac
}

# The namespace, with a bridge holding the host address; idempotent.
ns_up() {
	ip netns list | grep -qw "^$NS" || ip netns add "$NS"
	ip -n "$NS" link set lo up
	if ! ip -n "$NS" link show "$BRIDGE" >/dev/null 2>&1; then
		ip -n "$NS" link add "$BRIDGE" type bridge
		ip -n "$NS" addr add "$HOST_IP/24" dev "$BRIDGE"
		ip -n "$NS" link set "$BRIDGE" up
	fi
}

tap_up() {
	tap=pvsrxetap$1
	ip -n "$NS" link del "$tap" 2>/dev/null || true
	ip -n "$NS" tuntap add dev "$tap" mode tap
	ip -n "$NS" link set "$tap" master "$BRIDGE"
	ip -n "$NS" link set "$tap" up
}

accel_args() {
	case $ACCEL in
	kvm) echo "-accel kvm -cpu host" ;;
	tcg) echo "-accel tcg -cpu max" ;;
	*) die "PVRDMA_INTEROP_ACCEL must be tcg or kvm" ;;
	esac
}

# What the guest needs not spend TCG time on: crypto self-tests, the PS/2
# ports, speculation mitigations (a test guest), a timer check.
BOOT_ARGS="cryptomgr.notests i8042.noaux i8042.nokbd i8042.nopnp mitigations=off no_timer_check"

cmd_start() {
	n=${1:-1}
	check_id "$n"
	[ "$(id -u)" -eq 0 ] || die "start needs root (network namespace, tap)"
	command -v qemu-system-x86_64 >/dev/null || die "no qemu-system-x86_64"
	built || die "no guest built in $IMG (run: $0 build)"
	guest_alive "$n" && { note "guest $n already runs"; return 0; }
	d=$(guest_dir "$n")
	rm -rf "$d"
	mkdir -p "$d/spool"
	cp "$here/guest_init.sh" "$d/spool/init.sh"
	ns_up
	tap_up "$n"
	t0=$(now_ms)
	# -snapshot keeps the cached root pristine: writes go to a temporary file.
	# shellcheck disable=SC2046
	ip netns exec "$NS" qemu-system-x86_64 $(accel_args) -m 768 -smp 1 \
		-nodefaults -no-user-config -display none \
		-serial "file:$d/console.log" -monitor none \
		-kernel "$IMG/vmlinuz" -initrd "$IMG/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0 init=/sbin/pvs-init net.ifnames=0 quiet $BOOT_ARGS pvs.ip=$(guest_ip "$n")/24" \
		-drive "file=$IMG/rootfs.ext4,format=raw,if=virtio,snapshot=on" \
		-netdev "tap,id=n0,ifname=pvsrxetap$n,script=no,downscript=no" \
		-device "virtio-net-pci,netdev=n0,mac=52:54:00:9e:00:0$n,romfile=" \
		-virtfs "local,path=$d/spool,mount_tag=pvsspool,security_model=none,id=spool" \
		-pidfile "$d/qemu.pid" -daemonize >"$d/qemu.log" 2>&1 ||
		{ cat "$d/qemu.log" >&2; die "qemu did not start"; }
	deadline=$(( $(date +%s) + BOOT_TIMEOUT ))
	while [ ! -f "$d/spool/ready" ]; do
		guest_alive "$n" || { tail -30 "$d/console.log" >&2; die "guest $n died while booting"; }
		[ "$(date +%s)" -lt "$deadline" ] ||
			{ tail -30 "$d/console.log" >&2; die "guest $n not ready after $BOOT_TIMEOUT s"; }
		sleep 0.5
	done
	t1=$(now_ms)
	echo "boot_ms $((t1 - t0))" >>"$d/spool/ready"
	note "guest $n ($(guest_ip "$n")) ready in $(( (t1 - t0) / 1000 )).$(( (t1 - t0) % 1000 / 100 )) s ($ACCEL)"
	grep -q 'rxe0' "$d/spool/ready" || { cat "$d/spool/ready" >&2; die "guest $n has no rxe0"; }
}

stop_one() {
	d=$(guest_dir "$1")
	if guest_alive "$1"; then
		pid=$(cat "$d/qemu.pid")
		kill -TERM "$pid" 2>/dev/null || true
		i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	ip -n "$NS" link del "pvsrxetap$1" 2>/dev/null || true
	rm -rf "$d"
}

cmd_stop() {
	which=${1:-all}
	if [ "$which" = all ]; then
		stop_one 1
		stop_one 2
	else
		check_id "$which"
		stop_one "$which"
	fi
	guest_alive 1 || guest_alive 2 || ip netns del "$NS" 2>/dev/null || true
}

# Options shared by exec, bg, wait, kill, put: -n N, -t SECONDS.
parse_opts() {
	GN=1
	TMO=120
	while [ $# -gt 0 ]; do
		case $1 in
		-n) GN=$2; shift 2 ;;
		-t) TMO=$2; shift 2 ;;
		--) shift; break ;;
		*) break ;;
		esac
	done
	check_id "$GN"
	ARGS_LEFT=$#
}

spool_of() {
	guest_alive "$1" || die "guest $1 does not run"
	echo "$(guest_dir "$1")/spool"
}

# Queues CMD (one shell string) and prints its job id.
submit() {
	sp=$(spool_of "$1")
	id=$(date +%s%N)-$$
	printf 'cd /spool/files 2>/dev/null\n%s\n' "$2" >"$sp/req/.$id"
	mv "$sp/req/.$id" "$sp/req/$id.sh"
	echo "$id"
}

# Waits up to $3 seconds for job $2; prints its output, returns its status
# (124 and the job ended when the time ran out).
await() {
	sp=$(spool_of "$1")
	deadline=$(( $(date +%s) + $3 ))
	while [ ! -s "$sp/out/$2.rc" ]; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			: >"$sp/kill/$2"
			cat "$sp/out/$2.out" 2>/dev/null
			rm -f "$sp/req/$2.sh"
			note "job $2 timed out after $3 s"
			return 124
		fi
		sleep 0.1
	done
	cat "$sp/out/$2.out"
	rc=$(cat "$sp/out/$2.rc")
	rm -f "$sp/out/$2.out" "$sp/out/$2.rc" "$sp/run/$2.pid" "$sp/req/$2.sh"
	return "$rc"
}

cmd_exec() {
	parse_opts "$@"
	shift $(($# - ARGS_LEFT))
	[ $# -eq 1 ] || die "exec takes one command string"
	id=$(submit "$GN" "$1")
	await "$GN" "$id" "$TMO"
}

cmd_bg() {
	parse_opts "$@"
	shift $(($# - ARGS_LEFT))
	[ $# -eq 1 ] || die "bg takes one command string"
	submit "$GN" "$1"
}

cmd_wait() {
	parse_opts "$@"
	shift $(($# - ARGS_LEFT))
	await "$GN" "$1" "$TMO"
}

cmd_kill() {
	parse_opts "$@"
	shift $(($# - ARGS_LEFT))
	sp=$(spool_of "$GN")
	: >"$sp/kill/$1"
}

cmd_put() {
	parse_opts "$@"
	shift $(($# - ARGS_LEFT))
	sp=$(spool_of "$GN")
	# A new file under the name, never one rewritten in place: the guest
	# may still run (and page in) the old one.
	for f in "$@"; do
		b=$(basename "$f")
		cp -L "$f" "$sp/files/.$b.$$" && mv -f "$sp/files/.$b.$$" "$sp/files/$b" ||
			return 1
	done
}

cmd_status() {
	if built; then
		echo "guest $GUEST_VERSION built in $IMG:"
		sed 's/^/  /' "$IMG/manifest"
	else
		echo "no guest built in $IMG"
	fi
	for n in 1 2; do
		guest_alive "$n" && echo "guest $n runs: $(guest_ip "$n"), state in $(guest_dir "$n")"
	done
	return 0
}
