# SPDX-License-Identifier: BSD-2-Clause
# Shell library of the interop tests: what they need (or why they are
# skipped), the guest, programs under pvrdma-sim in the namespace, captures.
# Sourced by the test scripts; POSIX sh.
#
# Environment (set by tests/interop/CMakeLists.txt, but PVRDMA_INTEROP):
#   PVRDMA_INTEROP  set (to 1) to run the set at all
#   PVRDMA_INTEROP_SIM  a pvrdma-sim launcher to use instead of the tree's
#   E2E_SIM       the pvrdma-sim launcher
#   E2E_BIN       where the e2e verbs programs (data_integrity &c.) are
#   INTEROP_TIMEOUT  seconds one program may run (default 120)
#   and the PVRDMA_INTEROP_* of rxe_guest.sh.

set -u

INTEROP_SRC=$(cd "$(dirname "$0")" && pwd)
# Another build's sim (one with a newer wire, say) may stand in for the tree's.
E2E_SIM=${PVRDMA_INTEROP_SIM:-${E2E_SIM:-}}
INTEROP_TIMEOUT=${INTEROP_TIMEOUT:-120}
NS=${PVRDMA_INTEROP_NS:-pvs-rxe-net}
BRIDGE=pvsrxebr0
SIM_IP=198.51.100.1
GUEST_IP=198.51.100.2
RUNDIR=""
FAILED=0
BG_PIDS=""

ilog() {
	printf '[interop] %s\n' "$*"
}

skip() {
	echo "SKIP: $*"
	exit 77
}

guest() {
	sh "$INTEROP_SRC/rxe_guest.sh" "$@"
}

# What every test needs to talk to the guest; skips with the reason. The
# set runs apart from the suite, for its time: only when asked for.
need_guest_host() {
	[ -n "${PVRDMA_INTEROP:-}" ] ||
		skip "the interop set runs on request: PVRDMA_INTEROP=1 ctest -L interop (scripts/test.sh does)"
	[ "$(id -u)" = 0 ] || skip "needs root (network namespace, tap device)"
	command -v qemu-system-x86_64 >/dev/null 2>&1 || skip "no qemu-system-x86_64"
	command -v ip >/dev/null 2>&1 || skip "no ip(8)"
	guest status | grep -q '^guest .* built' ||
		skip "no rxe guest built (sh tests/interop/rxe_guest.sh build)"
}

# The guest must run (the fixture boots it; a test run alone boots it too).
need_guest() {
	need_guest_host
	guest status | grep -q '^guest 1 runs' || guest start 1 ||
		skip "the rxe guest does not boot"
}

# The sim and its RoCE v2 wire, without which no sim<->rxe test can pass.
need_sim_roce() {
	[ -x "${E2E_SIM:-}" ] || skip "no pvrdma-sim launcher at '${E2E_SIM:-}'"
	"$E2E_SIM" --help 2>&1 | grep -q -- '--wire' ||
		skip "this pvrdma-sim has no --wire option (no RoCE v2 wire)"
}

cleanup() {
	for pid in $BG_PIDS; do
		kill -TERM "-$pid" 2>/dev/null
	done
	if [ -n "$RUNDIR" ]; then
		if [ "$FAILED" -ne 0 ]; then
			for f in "$RUNDIR"/*.out; do
				[ -f "$f" ] || continue
				printf '%s\n' "----- $(basename "$f" .out) -----"
				cat "$f"
			done
			ilog "kept $RUNDIR"
		else
			rm -rf "$RUNDIR"
		fi
	fi
}

fail() {
	FAILED=1
	ilog "FAIL: $*"
	exit 1
}

pass() {
	ilog "PASS: $*"
	exit 0
}

setup() {
	RUNDIR=$(mktemp -d "${TMPDIR:-/tmp}/pvrdma-interop.XXXXXX") && mkdir "$RUNDIR/sim" ||
		{ echo "mktemp failed"; exit 1; }
	trap 'cleanup' EXIT
	trap 'FAILED=1; exit 1' INT TERM
}

# The guest's GID index of its RoCE v2 IPv4 address (from its boot report).
guest_gid() {
	g=$(sed -n 's/^gid_v2_ipv4 //p' "${PVRDMA_INTEROP_RUN:-/run/pvrdma-interop}/1/spool/ready")
	case $g in [0-9]*) echo "$g" ;; *) fail "the guest has no RoCE v2 IPv4 GID" ;; esac
}

# sim_bg NAME CMD...: CMD under pvrdma-sim's RoCE v2 wire in the namespace,
# in the background, its output in $RUNDIR/NAME.out, its pid in $bg_pid.
# timeout(1) leads the process group that cleanup ends.
sim_bg() {
	name=$1
	shift
	setsid ip netns exec "$NS" timeout -k 5 "$INTEROP_TIMEOUT" \
		"$E2E_SIM" --provider "${INTEROP_PROVIDER:-pvrdma}" \
		--rundir "$RUNDIR/sim" --wire roce --ipv4 "$SIM_IP" -- "$@" \
		>"$RUNDIR/$name.out" 2>&1 &
	bg_pid=$!
	BG_PIDS="$BG_PIDS $bg_pid"
}

# guest_bg NAME 'CMD': CMD in the guest in the background; its job id in
# $bg_job. guest_collect NAME JOB: waits for it, its output in NAME.out.
guest_bg() {
	bg_job=$(guest bg -- "$2") || fail "cannot queue '$2' in the guest"
}

guest_collect() {
	guest wait -t "$INTEROP_TIMEOUT" "$2" >"$RUNDIR/$1.out" 2>&1
}

# wait_pid PID: its exit status.
wait_pid() {
	wait "$1"
}

expect_rc() {
	[ "$2" = "$3" ] || fail "$1 exited $2, expected $3"
}

expect_out() {
	grep -Eq "$2" "$RUNDIR/$1.out" || fail "$1: no line matching '$2'"
}

expect_no_out() {
	! grep -Eq "$2" "$RUNDIR/$1.out" || fail "$1: a line matches '$2'"
}

# Until the guest listens on TCP port $1 (the programs' exchange channels).
guest_listening() {
	guest exec -t 30 -- "for i in \$(seq 100); do
		ss -Hltn 'sport = :$1' | grep -q . && exit 0; sleep 0.2; done; exit 1" \
		>/dev/null || fail "nothing listens on the guest's port $1"
}

# capture_start: tcpdump on the namespace's bridge; capture_check decodes
# it with tshark and checks every ICRC (roce_check.py).
capture_start() {
	command -v tcpdump >/dev/null 2>&1 || { CAPTURE_PID=""; return; }
	setsid ip netns exec "$NS" tcpdump -i "$BRIDGE" -U -s 0 -w "$RUNDIR/wire.pcap" \
		udp port 4791 >"$RUNDIR/tcpdump.out" 2>&1 &
	CAPTURE_PID=$!
	BG_PIDS="$BG_PIDS $CAPTURE_PID"
	# tcpdump says when it listens.
	for i in $(seq 50); do
		grep -q "listening on" "$RUNDIR/tcpdump.out" && return
		sleep 0.1
	done
}

# tcpdump reads what the kernel gave it in its own time, and an interrupt
# ends it without reading the rest: ask for its counts (SIGUSR1) until it
# has captured all it received, then end it.
capture_stop() {
	[ -n "${CAPTURE_PID:-}" ] || return 0
	for i in $(seq 100); do
		kill -USR1 "$CAPTURE_PID" 2>/dev/null || break
		sleep 0.2
		# "tcpdump: N packets captured, M packets received by filter, ..."
		n=$(sed -n 's/^tcpdump: \([0-9]*\) packets\{0,1\} captured, \([0-9]*\) packets\{0,1\} received.*/\1 \2/p' \
			"$RUNDIR/tcpdump.out" | tail -1)
		[ -n "$n" ] && [ "${n% *}" = "${n#* }" ] && break
	done
	kill -INT "$CAPTURE_PID" 2>/dev/null
	wait "$CAPTURE_PID" 2>/dev/null
	CAPTURE_PID=""
}

# capture_check MIN: at least MIN RoCE v2 packets, none malformed to tshark,
# every ICRC right. Prints a summary.
capture_check() {
	capture_stop
	[ -f "$RUNDIR/wire.pcap" ] || { ilog "no capture (no tcpdump)"; return 0; }
	python3 "$INTEROP_SRC/roce_check.py" --min "$1" "$RUNDIR/wire.pcap" \
		>"$RUNDIR/icrc.out" 2>&1 || { FAILED=1; cat "$RUNDIR/icrc.out"; fail "ICRC check"; }
	ilog "$(tail -1 "$RUNDIR/icrc.out")"
	command -v tshark >/dev/null 2>&1 || { ilog "no tshark: not decoded"; return 0; }
	# rdma_cm scenarios name the IB CM MADs the wire must carry
	set -- "$RUNDIR/wire.pcap"
	[ -n "${CM_EXPECT:-}" ] && set -- "$@" --cm "$CM_EXPECT"
	sh "$INTEROP_SRC/tshark_check.sh" "$@" >"$RUNDIR/tshark.out" 2>&1 ||
		{ cat "$RUNDIR/tshark.out"; fail "tshark decode"; }
	ilog "$(grep '^tshark:' "$RUNDIR/tshark.out")"
	[ -z "${CM_EXPECT:-}" ] || ilog "CM:$(grep ' CM ' "$RUNDIR/tshark.out" | tr -s ' \n' ' ')"
}
