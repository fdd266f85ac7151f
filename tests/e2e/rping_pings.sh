# SPDX-License-Identifier: BSD-2-Clause
# What the tests that kill an rping client share (tests/e2e/lib.sh and
# tests/interop/matrix.sh source it); POSIX sh.

# rping_pings PID: waits until the rping client PID, its output in
# $RUNDIR/client.out, has pinged. Returns 0 once it pings and still runs,
# 1 if it ended first (refused, say), 2 if it has not pinged in 60 s.
rping_pings() {
	rping_pings_i=0
	# stdout is a file: rping's pings come in blocks
	until grep -q "ping data: rdma-ping-" "$RUNDIR/client.out"; do
		rping_pings_i=$((rping_pings_i + 1))
		[ "$rping_pings_i" -lt 600 ] || return 2
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	kill -0 "$1" 2>/dev/null || return 1
}
