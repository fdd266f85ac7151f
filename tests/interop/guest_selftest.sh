#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The rxe guest on its own, before any sim takes part: the harness, the
# guest's rxe and the capture pipeline work.
#
#   guest_selftest.sh start        boot guest 1 (the fixture of every interop test)
#   guest_selftest.sh stop         power the guests off, remove the namespace
#   guest_selftest.sh loopback     ibv_rc_pingpong over rxe0 to itself, data checked
#   guest_selftest.sh udp_probe    a UDP datagram from the namespace to the
#                                  guest's port 4791 is seen by tcpdump there
#   guest_selftest.sh control      the control channel: output, status, timeout
#   guest_selftest.sh rxe_pair     a second guest; rxe0 <-> rxe0 over the bridge,
#                                  captured in the namespace, decoded by tshark,
#                                  every ICRC checked (roce_check.py)
. "$(dirname "$0")/lib.sh"

case ${1:-} in
start)
	need_guest_host
	guest start 1 || fail "guest 1 did not boot"
	cat "${PVRDMA_INTEROP_RUN:-/run/pvrdma-interop}/1/spool/ready"
	pass "guest 1 runs"
	;;
stop)
	[ -n "${PVRDMA_INTEROP:-}" ] || skip "the interop set was not asked for (PVRDMA_INTEROP=1)"
	[ "$(id -u)" = 0 ] || skip "needs root"
	guest stop all
	pass "guests stopped"
	;;
esac

need_guest
setup
gid=$(guest_gid)

case $1 in
loopback)
	guest_bg server "ibv_rc_pingpong -d rxe0 -g $gid -c -n 50 -p 18515"
	sj=$bg_job
	guest_listening 18515
	guest exec -t "$INTEROP_TIMEOUT" -- \
		"ibv_rc_pingpong -d rxe0 -g $gid -c -n 50 -p 18515 127.0.0.1" \
		>"$RUNDIR/client.out" 2>&1
	crc=$?
	guest_collect server "$sj"
	src=$?
	expect_rc client "$crc" 0
	expect_rc server "$src" 0
	expect_out client "^50 iters in"
	expect_out server "^50 iters in"
	pass "ibv_rc_pingpong over rxe0 to itself, buffers checked"
	;;
udp_probe)
	guest_bg tcpdump "timeout 60 tcpdump -n -i eth0 -c 1 -l -X udp dst port 4791 and src host $SIM_IP"
	tj=$bg_job
	guest exec -t 60 -- "for i in \$(seq 100); do
		pgrep -x tcpdump >/dev/null && exit 0; sleep 0.2; done; exit 1" >/dev/null ||
		fail "tcpdump did not start in the guest"
	# tcpdump runs: give it a moment to open its socket, then send.
	sleep 2
	ip netns exec "$NS" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
s.sendto(b"pvrdma-interop-probe", (sys.argv[2], 4791))' "$SIM_IP" "$GUEST_IP" ||
		fail "cannot send from the namespace"
	guest_collect tcpdump "$tj"
	expect_rc "tcpdump in the guest" $? 0
	expect_out tcpdump "$SIM_IP\.[0-9]+ > $GUEST_IP\.4791: UDP, length 20"
	expect_out tcpdump "pvrd"
	pass "a datagram from the namespace reaches the guest's port 4791"
	;;
control)
	out=$(guest exec -- 'echo out; echo err >&2; exit 7')
	rc=$?
	[ "$rc" = 7 ] || fail "exec status $rc, expected 7"
	[ "$out" = "out
err" ] || fail "exec output '$out'"
	guest exec -t 2 -- 'sleep 30' >/dev/null 2>&1
	rc=$?
	[ "$rc" = 124 ] || fail "a command past its time: status $rc, expected 124"
	# The timed-out job was ended, in the guest.
	guest exec -t 30 -- 'sleep 1; ! pgrep -x sleep' >/dev/null ||
		fail "the timed-out command still runs in the guest"
	pass "the control channel returns output and status, and ends what times out"
	;;
rxe_pair)
	guest status | grep -q '^guest 2 runs' || guest start 2 ||
		fail "guest 2 did not boot"
	g2=$(sed -n 's/^gid_v2_ipv4 //p' "${PVRDMA_INTEROP_RUN:-/run/pvrdma-interop}/2/spool/ready")
	capture_start
	guest_bg server "ibv_rc_pingpong -d rxe0 -g $gid -c -n 20 -s 3000 -p 18516"
	sj=$bg_job
	guest_listening 18516
	guest exec -n 2 -t "$INTEROP_TIMEOUT" -- \
		"ibv_rc_pingpong -d rxe0 -g $g2 -c -n 20 -s 3000 -p 18516 $GUEST_IP" \
		>"$RUNDIR/client.out" 2>&1
	crc=$?
	guest_collect server "$sj"
	src=$?
	[ -n "${INTEROP_KEEP_GUEST2:-}" ] || guest stop 2
	expect_rc "client (guest 2)" "$crc" 0
	expect_rc "server (guest 1)" "$src" 0
	expect_out client "^20 iters in"
	# 20 round trips of 3000 bytes at MTU 1024: 3 packets and an ACK each way.
	capture_check 80
	pass "rxe <-> rxe across the namespace's bridge, decoded, every ICRC right"
	;;
*)
	echo "usage: $0 start|stop|loopback|udp_probe|control|rxe_pair" >&2
	exit 2
	;;
esac
