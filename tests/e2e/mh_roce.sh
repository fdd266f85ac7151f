# SPDX-License-Identifier: BSD-2-Clause
# multihost.sh's scenarios of the RoCE v2 wire (MH_WIRE=roce), sourced by
# it:
#
# roce_capture SCENARIO [ARGS...]: runs a multihost scenario with tcpdump
#   on the server's end of the veth, then has the capture decoded by
#   implementations that are not the sim's: tshark's RoCE dissector (no
#   malformed packet) and scapy's RoCE layer (every packet a known opcode,
#   every ICRC right; the checker shows it catches a changed packet).
#   MH_CM_EXPECT="REQ REP ...": those IB CM MADs must be on the wire, all
#   decoded by tshark's CM dissector (rdma_cm over RoCE).
# roce_fuzz: random and mutated RoCE v2 datagrams (roce_fuzz.py) at the
#   server's adapter while an RC stream runs to it, then a new RC and UD
#   pingpong must work: the adapter dropped or answered them all as the
#   spec says, never crashed or hung. Its statistics show it counted them,
#   those of another partition (P_Key) among them.
# cm_resend: rping's client connects before its server runs: its first
#   REQ finds no QP 1 at the server's address and is lost, the CM sends it
#   again (every 4.3 s, as ib_cm) and the second one connects.
# roce_fuzz_cm: GMPs only (roce_fuzz.py --gmp) at QP 1 of a server whose
#   rdma_cm listens (rping): bad CM MADs of every kind are dropped or
#   answered, the server lives, and then rping connects to it.

# A python3 that has scapy (Debian's python3-scapy), or nothing.
mh_scapy_python() {
	local py
	for py in /usr/bin/python3 python3; do
		"$py" -c "import scapy.contrib.roce" 2>/dev/null &&
			{ echo "$py"; return; }
	done
}

# mh_capture_drain PID: tcpdump (the child of timeout PID) reads what the
# kernel gave it in its own time, and an interrupt ends it without reading
# the rest: ask for its counts (SIGUSR1) until it captured all it received.
mh_capture_drain() {
	local td n i
	td=$(pgrep -P "$1" tcpdump) || return 0
	for i in $(seq 50); do
		kill -USR1 "$td" 2>/dev/null || return 0
		sleep 0.2
		# "tcpdump: N packets captured, M packets received by filter, ..."
		n=$(sed -n 's/^tcpdump: \([0-9]*\) packets\{0,1\} captured, \([0-9]*\) packets\{0,1\} received.*/\1 \2/p' \
			"$RUNDIR/tcpdump.log" | tail -n 1)
		[ -n "$n" ] && [ "${n% *}" = "${n#* }" ] && return 0
	done
}

roce_capture() {
	local py cap="$RUNDIR/roce.pcap" tpid malformed
	command -v tcpdump >/dev/null 2>&1 || e2e_skip "no tcpdump"
	command -v tshark >/dev/null 2>&1 || e2e_skip "no tshark"
	py=$(mh_scapy_python)
	[ -n "$py" ] || e2e_skip "no python3-scapy"
	command -v ethtool >/dev/null 2>&1 || e2e_skip "no ethtool"
	# The sim hands the kernel batches of packets (UDP_SEGMENT), which
	# cross a veth whole, where a NIC would cut them. Without the offload
	# the kernel cuts them before they reach the veth: the capture shows
	# the packets of the wire, each with the IPv4 identification the
	# kernel gave it, which its ICRC must have counted.
	ip netns exec "$NS_A" ethtool -K "$VETH_A" tx-udp-segmentation off \
		>/dev/null 2>&1 &&
	ip netns exec "$NS_B" ethtool -K "$VETH_B" tx-udp-segmentation off \
		>/dev/null 2>&1 || e2e_fail "cannot turn the veths' UDP GSO off"
	# bounded by timeout(1), which passes our SIGINT on
	ip netns exec "$NS_A" timeout -s INT "$E2E_TIMEOUT" tcpdump \
		-i "$VETH_A" -U -s 0 -w "$cap" udp port 4791 \
		>"$RUNDIR/tcpdump.log" 2>&1 &
	tpid=$!
	# tcpdump says when it listens
	for _ in $(seq 50); do
		grep -q "listening on" "$RUNDIR/tcpdump.log" && break
		sleep 0.1
	done
	# the scenario's e2e_pass ends only the subshell
	("$@") || e2e_fail "$* failed"
	mh_capture_drain "$tpid"
	kill -INT "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
	# Warnings and errors of its experts count; its notes do not (a TTL
	# of 1, which ibv_ud_pingpong's hop limit asks for, is a note). Once
	# a CM REQ named the connection, its RPC-over-RDMA heuristic takes a
	# program's own payload for RPC and calls it malformed: not ours.
	malformed=$(tshark -r "$cap" --disable-protocol rpcordma \
		-Y "_ws.malformed || _ws.expert.severity >= 6291456" \
		2>/dev/null | wc -l)
	[ "$malformed" = 0 ] ||
		e2e_fail "tshark: $malformed malformed RoCE packets"
	# rdma_cm: the IB CM messages of the exchange, each decoded
	if [ -n "${MH_CM_EXPECT:-}" ]; then
		sh "$E2E_SRC/../interop/tshark_check.sh" "$cap" \
			--cm "$MH_CM_EXPECT" >"$RUNDIR/tshark_cm.out" 2>&1 ||
			{ cat "$RUNDIR/tshark_cm.out"; e2e_fail "tshark: CM MADs"; }
		cat "$RUNDIR/tshark_cm.out"
	fi
	"$py" "$E2E_SRC/roce_check.py" "$cap" --self-test \
		>"$RUNDIR/roce_check.out" 2>&1
	rc=$?
	cat "$RUNDIR/roce_check.out"
	case $rc in
	0) ;;
	3) e2e_fail "no RoCE v2 packet on the wire" ;;
	*) e2e_fail "scapy: bad RoCE packets (exit $rc)" ;;
	esac
	e2e_pass "RoCE v2 on the wire of $*: decoded, every ICRC right"
}

# stat NAME COUNTER: a counter of the adapter's --stats in NAME.out.
mh_stat() {
	sed -n "s/^vmw_pvrdma0\.$2 //p" "$RUNDIR/$1.out" | tail -n 1
}

roce_fuzz() {
	local py spid cpid args bad
	py=$(command -v python3)
	[ -x /usr/bin/python3 ] && py=/usr/bin/python3
	args="-x 1 -d vmw_pvrdma0 -F -p $PORT -s 4096 -D 6"
	mh_start server "$NS_A" "$ADDR_A" "$sprov" "--stats" ib_write_bw $args
	spid=$bg_pid
	mh_wait_listen "$NS_A" "$PORT" "$spid" ||
		e2e_fail "ib_write_bw server never listened"
	mh_start client "$NS_B" "$ADDR_B" "$cprov" "" ib_write_bw $args \
		"$ADDR_A"
	cpid=$bg_pid
	mh_wait_adapter_link "$cpid"
	ip netns exec "$NS_B" "$py" "$E2E_SRC/roce_fuzz.py" "$ADDR_B" \
		"$ADDR_A" 3000 "$$" 0x100 0x101 0x102 ||
		e2e_fail "roce_fuzz.py failed"
	sim_wait "$cpid"
	[ "$rc" != 124 ] || e2e_fail "the stream hung under fuzzing"
	sim_wait "$spid"
	[ "$rc" != 124 ] || e2e_fail "the server hung under fuzzing"
	for c in roce_rx_bad_icrc roce_rx_malformed roce_rx_bad_pkey \
		rx_no_qp; do
		bad=$(mh_stat server $c)
		e2e_log "server $c ${bad:-none}"
		[ "${bad:-0}" -gt 0 ] || e2e_fail "the server counted no $c"
	done
	# the adapters work on: RC and UD between them
	PORT=$((PORT + 1))
	(pingpong ibv_rc_pingpong 5000) || e2e_fail "RC after the fuzzing"
	# (not in the ASan tree: ibv_create_ah leaks a libnl address there)
	PORT=$((PORT + 1))
	[ "${E2E_SANITIZE:-0}" = 1 ] ||
		(pingpong ibv_ud_pingpong 512) || e2e_fail "UD after the fuzzing"
	e2e_pass "fuzzed RoCE v2 port under ib_write_bw, then RC and UD:" \
		"$sprov server, $cprov client"
}

# A stream of WRITEs the application posts one at a time, signaled one in
# 100 (perftest's CQ moderation): the requester asks for an ACK every
# quarter window and where its stream stops, and the responder holds the
# ACKs of the rest (device/req.c, resp.c), so the responder sends far
# fewer ACKs than there are WRITEs (one a round of them without it).
ack_asks() {
	local args acks wqes
	args="-x 1 -d vmw_pvrdma0 -F -p $PORT -s 65536 -n 4000"
	mh_pair "--stats" "ib_write_bw $args" "ib_write_bw $args $ADDR_A"
	expect_rc "ib_write_bw server" "$server_rc" 0
	expect_rc "ib_write_bw client" "$client_rc" 0
	acks=$(mh_stat server roce_tx_packets)
	wqes=$(mh_stat client send_wqes)
	e2e_log "server ACKs ${acks:-none} for ${wqes:-no} WRITEs"
	[ "${wqes:-0}" -ge 4000 ] || e2e_fail "the client sent no stream"
	[ "${acks:-0}" -gt 0 ] || e2e_fail "the server sent no ACK"
	[ $((acks * 2)) -lt "$wqes" ] ||
		e2e_fail "$acks ACKs for $wqes WRITEs: none held"
	e2e_pass "$acks ACKs for $wqes WRITEs: $sprov server, $cprov client"
}

roce_fuzz_cm() {
	local py spid bad
	py=$(command -v python3)
	[ -x /usr/bin/python3 ] && py=/usr/bin/python3
	mh_start server "$NS_A" "$ADDR_A" "$sprov" "--stats" \
		rping -s -a "$ADDR_A" -V -C 20
	spid=$bg_pid
	# its CM agent listens (rdma_cm's listener shows nowhere), rping's
	# listener a moment later
	mh_wait_listen "$NS_A" 4792 "$spid" ||
		e2e_fail "the server's CM never started"
	sleep 1
	ip netns exec "$NS_B" "$py" "$E2E_SRC/roce_fuzz.py" --gmp "$ADDR_B" \
		"$ADDR_A" 3000 "$$" || e2e_fail "roce_fuzz.py failed"
	rping_after_fuzz "$spid" mh_run client "$NS_B" "$ADDR_B" "$cprov" "" \
		rping -c -a "$ADDR_A" -C 20 -V -v
	bad=$(mh_stat server roce_rx_malformed)
	e2e_log "server roce_rx_malformed ${bad:-none}"
	[ "${bad:-0}" -gt 0 ] || e2e_fail "the server counted no bad GMP"
	e2e_pass "fuzzed QP 1 under an rdma_cm listener, then rping:" \
		"$sprov server, $cprov client"
}

cm_resend() {
	local cpid tries=0
	while :; do
		mh_start client "$NS_B" "$ADDR_B" "$cprov" "" \
			rping -c -a "$ADDR_A" -C 10 -V -v
		cpid=$bg_pid
		sleep 1.5
		mh_start server "$NS_A" "$ADDR_A" "$sprov" "" \
			rping -s -a "$ADDR_A" -V -C 10
		sim_wait "$cpid"
		client_rc=$rc
		# A server slower to listen than the resend (a loaded
		# machine) rejects it (reason 8): the REQ was sent again all
		# the same; the pair starts again.
		[ "$client_rc" != 0 ] && [ "$tries" -lt 3 ] &&
		grep -Eq -- "$CM_REFUSED" "$RUNDIR/client.out" || break
		tries=$((tries + 1))
		e2e_log "the resent REQ came before the listener; again"
		kill -TERM "-$bg_pid" 2>/dev/null
		sim_wait "$bg_pid"
	done
	sim_wait "$bg_pid"
	server_rc=$rc
	rping_rc server
	rping_rc client
	expect_out client "ping data: rdma-ping-9: " "10 pings"
	e2e_pass "a lost REQ sent again: $sprov server, $cprov client"
}
