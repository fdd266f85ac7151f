#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The main job: a simulated PVRDMA fabric on this machine with real RDMA
# programs over libpvrdma. Installs what is missing (Debian 12), builds, then
# runs under pvrdma-sim --provider pvrdma --stats:
#   1. ibv_devinfo of the adapter
#   2. an ibv_rc_pingpong server/client pair
#   3. an ib_write_bw server/client pair (the deployment guide's command)
#   4. an MPI job: Open MPI over UCX (mpirun under the sim, 2 ranks),
#      mpi_check's latency and bandwidth table over the adapters
#   5. an rping server/client pair connected through rdma_cm
# and prints a summary. Exits non-zero if any step fails.
#
#   sh scripts/demo.sh            (BUILD_DIR=... to use another build tree)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${BUILD_DIR:-build}

sh scripts/bootstrap.sh
sh scripts/build.sh "$build"

sim="$top/$build/bin/pvrdma-sim"
[ -x "$sim" ] || { echo "demo: no launcher at $sim" >&2; exit 1; }
rundir=$(mktemp -d "${TMPDIR:-/tmp}/pvrdma-demo.XXXXXX")
logs="$rundir/logs"
mkdir -p "$logs"
pids=""
cleanup() {
	for pid in $pids; do
		kill -TERM "-$pid" 2>/dev/null || true
	done
	rm -rf "$rundir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

step() {
	printf '\n==== %s\n' "$*"
}

fail() {
	echo "demo: FAILED: $*" >&2
	exit 1
}

# A port nothing listens on yet, starting from $1.
free_port() {
	p=$1
	while ss -Hltn "sport = :$p" 2>/dev/null | grep -q .; do
		p=$((p + 1))
	done
	echo "$p"
}

# The launcher line every process of the demo uses: same run directory, so
# they share the simulated fabric; our provider; statistics at exit.
simulate() {
	echo "$sim --provider pvrdma --stats --rundir $rundir --"
}

# pair NAME PORT "SERVER ARGS" "CLIENT ARGS": runs a server in the
# background, waits until it listens, then the client; both must exit 0.
pair() {
	name=$1 port=$2
	echo "server: pvrdma-sim --provider pvrdma --stats -- $3"
	echo "client: pvrdma-sim --provider pvrdma --stats -- $4"
	# timeout(1) guards against a hang and leads a process group.
	# shellcheck disable=SC2046,SC2086
	timeout -k 5 120 $(simulate) $3 >"$logs/$name.server" 2>&1 &
	spid=$!
	pids="$pids $spid"
	i=0
	until ss -Hltn "sport = :$port" 2>/dev/null | grep -q .; do
		kill -0 "$spid" 2>/dev/null || break
		i=$((i + 1))
		[ "$i" -lt 300 ] || break
		sleep 0.1
	done
	crc=0
	# shellcheck disable=SC2046,SC2086
	timeout -k 5 120 $(simulate) $4 >"$logs/$name.client" 2>&1 || crc=$?
	src=0
	wait "$spid" || src=$?
	for side in server client; do
		echo "---- $name $side"
		cat "$logs/$name.$side"
	done
	[ "$src" -eq 0 ] || fail "$name server exited with $src"
	[ "$crc" -eq 0 ] || fail "$name client exited with $crc"
}

step "1. ibv_devinfo on a simulated PVRDMA adapter"
echo "pvrdma-sim --provider pvrdma --stats -- ibv_devinfo -d vmw_pvrdma0"
# shellcheck disable=SC2046
timeout -k 5 60 $(simulate) ibv_devinfo -d vmw_pvrdma0 >"$logs/devinfo" 2>&1 ||
	{ cat "$logs/devinfo"; fail "ibv_devinfo"; }
cat "$logs/devinfo"
grep -q 'PORT_ACTIVE' "$logs/devinfo" || fail "port 1 is not active"

step "2. ibv_rc_pingpong between two processes"
port=$(free_port 18515)
pair rc_pingpong "$port" \
	"ibv_rc_pingpong -d vmw_pvrdma0 -g 0 -p $port" \
	"ibv_rc_pingpong -d vmw_pvrdma0 -g 0 -p $port localhost"
grep -q ' bytes in ' "$logs/rc_pingpong.client" ||
	fail "ibv_rc_pingpong printed no result"

step "3. ib_write_bw between two processes"
port=$(free_port 18515)
pair write_bw "$port" \
	"ib_write_bw -x 0 -d vmw_pvrdma0 --report_gbits -p $port" \
	"ib_write_bw -x 0 -F -d vmw_pvrdma0 --report_gbits -p $port localhost"
result=$(grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+' "$logs/write_bw.client" |
	 tail -n 1)
[ -n "$result" ] || fail "ib_write_bw printed no result line"

step "4. MPI over UCX: mpi_check, 2 ranks"
mpi_check="$top/$build/tests/e2e/mpi_check"
[ -x "$mpi_check" ] || fail "no $mpi_check (Open MPI's headers missing?)"
# mpirun runs under the sim: every rank inherits the preload and gets an
# adapter of its own on the demo's fabric. UCX_NET_DEVICES keeps UCX's
# network transports on the adapter; UCX_TLS=^sm keeps it off shared memory,
# which it would take between ranks on one host.
mpi_stats="$rundir/mpi.stats"
echo "pvrdma-sim --provider pvrdma --stats-file F -- mpirun --allow-run-as-root" \
     "-np 2 --mca pml ucx -x UCX_NET_DEVICES=vmw_pvrdma0:1 -x UCX_TLS=^sm" \
     "mpi_check --max-size 1048576 --iters 50"
# shellcheck disable=SC2086
timeout -k 5 600 $sim --provider pvrdma --stats-file "$mpi_stats" \
	--rundir "$rundir" -- mpirun --allow-run-as-root --bind-to none \
	-np 2 --mca pml ucx -x UCX_NET_DEVICES=vmw_pvrdma0:1 -x UCX_TLS=^sm \
	"$mpi_check" --max-size 1048576 --iters 50 >"$logs/mpi" 2>&1 ||
	{ cat "$logs/mpi"; fail "mpirun mpi_check"; }
cat "$logs/mpi"
grep -q '^mpi_check: passed' "$logs/mpi" || fail "mpi_check did not pass"
mpi_lat=$(awk '$1 == 8 { print $2 " (median " $3 ")" }' "$logs/mpi")
mpi_bw=$(awk '$1 == 1048576 { print $4 }' "$logs/mpi")
mpi_tx=$(sed -n 's/^vmw_pvrdma0\.bytes_tx //p' "$mpi_stats" |
	 awk '{ s += $1 } END { print s + 0 }')
[ "$mpi_tx" -gt 16777216 ] ||
	fail "only $mpi_tx bytes of the MPI job went over the adapters"
step "5. rping through the RDMA connection manager (rdma_cm)"
# Each process gets its adapter address; the client finds the server's
# adapter by IP, as on a RoCE network.
sip=127.1.0.1 cip=127.1.0.2
echo "server: pvrdma-sim --provider pvrdma --stats --ipv4 $sip -- rping -s -a $sip -C 100 -V"
echo "client: pvrdma-sim --provider pvrdma --stats --ipv4 $cip -- rping -c -a $sip -C 100 -V -v"
# shellcheck disable=SC2046
timeout -k 5 120 $sim --provider pvrdma --stats --rundir "$rundir" \
	--ipv4 $sip -- rping -s -a $sip -C 100 -V >"$logs/rping.server" 2>&1 &
spid=$!
pids="$pids $spid"
# Up when its CM agent answers for its address; a client that comes
# before rping listens is rejected (no listener) and tries again.
agent="@pvrdma-sim-cm:$rundir/00000000000000000000ffff7f010001"
i=0
until grep -qF "$agent" /proc/net/unix; do
	kill -0 "$spid" 2>/dev/null || break
	i=$((i + 1))
	[ "$i" -lt 300 ] || break
	sleep 0.1
done
tries=0
while :; do
	crc=0
	timeout -k 5 120 $sim --provider pvrdma --stats --rundir "$rundir" \
		--ipv4 $cip -- rping -c -a $sip -C 100 -V -v \
		>"$logs/rping.client" 2>&1 || crc=$?
	[ "$crc" -ne 0 ] && [ "$tries" -lt 30 ] &&
		kill -0 "$spid" 2>/dev/null &&
		grep -q 'REJECTED' "$logs/rping.client" || break
	tries=$((tries + 1))
	sleep 0.3
done
src=0
wait "$spid" || src=$?
grep -E '^ping data: rdma-ping-(0|99):' "$logs/rping.client" || true
# rping's server may lose its own race at exit: its event thread reads
# from the channel its main thread has just destroyed (EBADF, exit 255).
if [ "$src" -eq 255 ] && tail -n 1 "$logs/rping.server" |
   grep -q '^rdma_get_cm_event: Bad file descriptor$'; then
	src=0
fi
[ "$src" -eq 0 ] || { cat "$logs/rping.server"; fail "rping server exited with $src"; }
[ "$crc" -eq 0 ] || fail "rping client exited with $crc"
pings=$(grep -c 'ping data: rdma-ping-' "$logs/rping.client")
[ "$pings" -eq 100 ] || fail "rping: $pings pings, want 100"

step "Summary"
field() {
	sed -n "s/^[[:space:]]*$1:[[:space:]]*//p" "$logs/devinfo" | head -n 1
}
echo "adapter:          $(field hca_id) fw $(field fw_ver)," \
     "vendor $(field vendor_id):$(printf '0x%04x' "$(field vendor_part_id)")," \
     "MTU $(field active_mtu), $(field link_layer)"
echo "ibv_rc_pingpong:  $(grep ' bytes in ' "$logs/rc_pingpong.client")"
echo "ib_write_bw:      $(echo "$result" | awk '{ printf "%s bytes x %s iterations, average %s Gb/s", $1, $2, $4 }')"
echo "MPI (UCX, 2 ranks): latency $mpi_lat us at 8 B, bandwidth $mpi_bw MB/s at 1 MiB, $mpi_tx bytes over the adapters"
echo "rping (rdma_cm):  $pings pings verified, $cip -> $sip"
echo "provider:         libpvrdma (pvrdma-sim --provider pvrdma)"
# --stats prints "vmw_pvrdmaN.counter value" at exit, on stderr.
stats() {
	grep -oE 'vmw_pvrdma[0-9]+\.[a-z_]+ [0-9]+' "$1" |
		awk '$2 != 0 { printf "    %-32s %s\n", $1, $2 }'
}
for side in server client; do
	echo "ib_write_bw $side, adapter statistics (non-zero):"
	stats "$logs/write_bw.$side"
done
echo
echo "demo: all steps passed"
