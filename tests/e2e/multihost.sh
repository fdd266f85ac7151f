#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# pvrdma-sim across hosts: two network namespaces joined by a veth pair play
# two hosts, 198.51.100.1 and .2 (a documentation range, configured only
# inside the namespaces: nothing leaves the machine). Each side runs its
# sim process in its namespace with its own run directory, so the adapters
# can reach each other only over the sim's TCP links.
#
#   multihost.sh SERVER_PROVIDER CLIENT_PROVIDER SCENARIO [ARGS...]
#
# SCENARIO: rc_pingpong | ud_pingpong (adapters by --netdev) | perftest PROGRAM [ARGS...] |
# link_flap (the veth goes down and up within the retry budget: the
# stream completes intact) | link_down (down for good: RETRY_EXC_ERR) |
# peer_killed (the server is killed mid-transfer: error completions, no
# hang) | read_held (a READ client stops: the server holds its requests,
# not a response for each) | fuzz (random and mutated frames at the server's TCP port, and
# frames half sent: it drops them and keeps working) | fuzz_hello (HELLOs
# in the client's name: requests still go to the client) | rping |
# perftest_cm PROGRAM [ARGS...] (perftest -R: rdma_cm across the hosts) |
# events PROGRAM [MODE] (cq_events, cq_channels: completion events) |
# fuzz_cm (random bytes at the server's CM agent, then rping) | mpi
# (mpi_check, one rank per host) | rping_killed (an rping client is
# killed: its server is told) | cm_peer_death STAGE DEATH (the same at each
# stage of a connection, cm_peer_death.c) | rdmacm_pair MODE (a pair mode
# of rdmacm_cases.c) | host_netdev (an adapter by --netdev:
# its netdev is the veth, whose address the interface calls list once) |
# verbs PROGRAM (an e2e verbs program, server and client: data_integrity,
# place_fault) | mtu (the port's active MTU follows the veths' MTU, as a
# RoCE NIC's follows its netdev; --mtu overrides it; then ib_write_bw at a
# veth MTU of 9000).
#
# Needs root, and network namespaces that commands run in, joined by veth
# pairs (netns_probe, lib.sh, tries all of it first): where any of it is
# missing the test reports itself skipped (exit 77) with the reason. Once
# the probe passed, a failure to set the hosts up is the test's failure.
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

. "$E2E_SRC/mh_roce.sh"

sprov=$(provider_of "$1")
cprov=$(provider_of "$2")
scenario=$3
shift 3

why=$(netns_probe "pvmh$$") || e2e_skip "$why"

e2e_setup
# MH_WIRE=roce: the adapters reach each other over RoCE v2 (--wire), in
# namespaces of their own name.
MH_NAME=pvmh
[ "${MH_WIRE:-sim}" = roce ] && MH_NAME=pvs-roce-
# MH_NS_PREFIX: another name for them (runs beside others' on a machine).
MH_NAME=${MH_NS_PREFIX:-$MH_NAME}
NS_A=$MH_NAME$$a NS_B=$MH_NAME$$b
VETH_A=$MH_NAME$$a VETH_B=$MH_NAME$$b
ADDR_A=198.51.100.1 ADDR_B=198.51.100.2
# Fixed ports: each namespace pair is the test's own.
PORT=18515

mh_cleanup() {
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	e2e_cleanup
}
trap 'mh_cleanup' EXIT

ip netns add "$NS_A" || e2e_fail "ip netns add $NS_A"
ip netns add "$NS_B" || e2e_fail "ip netns add $NS_B"
ip link add "$VETH_A" netns "$NS_A" type veth peer name "$VETH_B" \
	netns "$NS_B" || e2e_fail "cannot create a veth pair"
ip -n "$NS_A" addr add "$ADDR_A/24" dev "$VETH_A" &&
ip -n "$NS_B" addr add "$ADDR_B/24" dev "$VETH_B" &&
ip -n "$NS_A" link set "$VETH_A" up &&
ip -n "$NS_B" link set "$VETH_B" up &&
ip -n "$NS_A" link set lo up &&
ip -n "$NS_B" link set lo up || e2e_fail "cannot configure the namespaces"
mkdir -p "$RUNDIR/$NS_A" "$RUNDIR/$NS_B"

# mh_prefix NS ADDR PROVIDER "SIM OPTIONS": the command line that runs a
# program under the sim in NS, its adapter at ADDR (with MH_NETDEV=1: the
# address of NS's veth, by --netdev). ip netns exec execs timeout(1),
# which leads the process group e2e_cleanup ends.
mh_prefix() {
	local where="--ipv4 $2"
	[ "${MH_NETDEV:-0}" = 1 ] && where="--netdev $1"
	echo "ip netns exec $1 timeout -k 5 $E2E_TIMEOUT" \
	     "${E2E_PRELOAD:+env LD_PRELOAD=$E2E_PRELOAD}" \
	     "$E2E_SIM --provider $3 --rundir $RUNDIR/$1 $where" \
	     "${MH_WIRE:+--wire $MH_WIRE} $4 --"
}

# mh_start NAME NS ADDR PROVIDER "SIM OPTIONS" CMD...: in the background,
# pid in $bg_pid. mh_run: the same in the foreground, status in $rc.
mh_start() {
	local name=$1 ns=$2 addr=$3 prov=$4 opts=$5
	shift 5
	e2e_log "$name (background): $(mh_prefix "$ns" "$addr" "$prov" "$opts") $*"
	# shellcheck disable=SC2046
	$(mh_prefix "$ns" "$addr" "$prov" "$opts") "$@" \
		>"$RUNDIR/$name.out" 2>&1 &
	bg_pid=$!
	E2E_PIDS="$E2E_PIDS $bg_pid"
}

mh_run() {
	local name=$1 ns=$2 addr=$3 prov=$4 opts=$5
	shift 5
	e2e_log "$name: $(mh_prefix "$ns" "$addr" "$prov" "$opts") $*"
	# shellcheck disable=SC2046
	$(mh_prefix "$ns" "$addr" "$prov" "$opts") "$@" \
		>"$RUNDIR/$name.out" 2>&1
	rc=$?
	[ "$rc" -ne 124 ] || e2e_log "$name: timed out after ${E2E_TIMEOUT}s"
}

# mh_wait_listen NS PORT PID: until something listens on PORT in NS.
mh_wait_listen() {
	local i=0
	while [ "$i" -lt 300 ]; do
		ip netns exec "$1" ss -Hltn "sport = :$2" 2>/dev/null |
			grep -q . && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# mh_adapter_linked: the client's adapter has sent the server's its first
# RC packet: over TCP, it connected; over RoCE, which keeps no connection,
# it opened the UDP socket of its QP's source port (0xc000 and up; QP 1's,
# 55410, sends the CM's MADs).
mh_adapter_linked() {
	if [ "${MH_WIRE:-sim}" = roce ]; then
		ip netns exec "$NS_B" ss -Huan "sport >= :49152" |
			grep -v ":55410 " | grep -q .
	else
		ip netns exec "$NS_B" ss -Htn "dport = :4791" | grep -q ESTAB
	fi
}

# mh_wait_adapter_link PID: until mh_adapter_linked, or PID exited.
mh_wait_adapter_link() {
	local i=0
	until mh_adapter_linked; do
		i=$((i + 1))
		[ "$i" -lt 300 ] && kill -0 "$1" 2>/dev/null ||
			e2e_fail "no TCP link between the adapters"
		sleep 0.1
	done
}

# mh_pair "SIM OPTIONS" "SERVER CMD" "CLIENT CMD": the server in NS_A
# (listening on PORT for its side channel), then the client in NS_B.
mh_pair() {
	local opts=$1 scmd=$2 ccmd=$3 spid
	# shellcheck disable=SC2086
	mh_start server "$NS_A" "$ADDR_A" "$sprov" "$opts" $scmd
	spid=$bg_pid
	if ! mh_wait_listen "$NS_A" "$PORT" "$spid"; then
		sim_wait "$spid"
		server_rc=$rc
		client_rc=-1
		e2e_log "server never listened on port $PORT (exit $server_rc)"
		return 0
	fi
	# shellcheck disable=SC2086
	mh_run client "$NS_B" "$ADDR_B" "$cprov" "$opts" $ccmd
	client_rc=$rc
	sim_wait "$spid"
	server_rc=$rc
	e2e_log "server exit $server_rc, client exit $client_rc"
}

# Both sides' adapters carried the traffic over TCP, never a Unix socket:
# their run directories are apart, so no GID of the peer is registered.
expect_no_local_path() {
	[ ! -e "$RUNDIR/$NS_A/gid/$(gid_hex_of_ipv4 "$ADDR_B")" ] &&
	[ ! -e "$RUNDIR/$NS_B/gid/$(gid_hex_of_ipv4 "$ADDR_A")" ] ||
		e2e_fail "a GID of one host is in the other's run directory"
}

pingpong() {
	local prog=$1 size=$2 iters=200 args
	args="-d vmw_pvrdma0 -g 1 -p $PORT -n $iters -s $size"
	mh_pair "--mtu 1024" "$prog $args" "$prog $args $ADDR_A"
	expect_rc "$prog server" "$server_rc" 0
	expect_rc "$prog client" "$client_rc" 0
	for side in server client; do
		expect_out $side "^$((size * iters * 2)) bytes in [0-9.]+ seconds = " \
			"all $iters iterations"
		expect_out $side "GID ::ffff:$ADDR_A"
	done
	expect_no_local_path
	e2e_pass "$prog between two hosts: $sprov server, $cprov client"
}

perftest() {
	local prog=$1 iters=100 args
	shift
	args="-x 1 -d vmw_pvrdma0 -F -p $PORT -n $iters $*"
	mh_pair "--mtu 1024" "$prog $args" "$prog $args $ADDR_A"
	expect_rc "$prog server" "$server_rc" 0
	expect_rc "$prog client" "$client_rc" 0
	expect_out client "^ *[0-9]+ +$iters +[0-9]+\.[0-9]+" \
		"result line, $iters iterations"
	expect_no_out client "Couldn't|[Ff]ailed|[Ee]rror"
	e2e_pass "$prog $* between two hosts: $sprov server, $cprov client"
}

# The client takes its own end of the veth down (and up) from inside its
# namespace: rc_recovery runs the commands at its pause.
link_fault() {
	local mode=$1 args
	args="--port $PORT --gid-index 1 --mode $mode"
	export E2E_CHANNEL_ADDR=$ADDR_A
	# ip(8) runs with nothing of the program's preload (the ASan tree's).
	export RC_RECOVERY_LINK_DOWN="env -u LD_PRELOAD ip link set $VETH_B down"
	export RC_RECOVERY_LINK_UP="env -u LD_PRELOAD ip link set $VETH_B up"
	export RC_RECOVERY_PAUSE_MS=2000
	mh_pair "" "$E2E_BIN/rc_recovery --server $args" \
		"$E2E_BIN/rc_recovery --client $args"
	expect_rc "rc_recovery client" "$client_rc" 0
	expect_rc "rc_recovery server" "$server_rc" 0
	expect_out client "passed"
	expect_out server "passed|done"
	expect_no_out client "^FAIL"
	expect_no_out server "^FAIL"
	[ "$mode" = sigstop-beyond ] &&
		expect_out client "transport retry counter exceeded"
	e2e_pass "rc_recovery $mode, the link down and up: $sprov server, $cprov client"
}

# One of the e2e verbs programs as server and client across the hosts:
# data_integrity (every opcode, data and completions checked), place_fault
# (a WRITE whose target page faults mid-message, between two others: it
# fails, nothing after it is acknowledged or placed).
verbs_prog() {
	local prog=$1 args="--port $PORT --gid-index 1" placed
	export E2E_CHANNEL_ADDR=$ADDR_A
	mh_pair "--mtu 1024 --stats" "$E2E_BIN/$prog --server $args" \
		"$E2E_BIN/$prog --client $args"
	expect_rc "$prog client" "$client_rc" 0
	expect_rc "$prog server" "$server_rc" 0
	expect_no_out client "^FAIL"
	expect_no_out server "^FAIL"
	# data_integrity's long WRITE came as runs of packets, read straight
	# into the server's memory (fabric/roce_ahead.c), and checked there
	if [ "${MH_WIRE:-sim}" = roce ] && [ "$prog" = data_integrity ]; then
		placed=$(sed -n 's/^vmw_pvrdma0\.roce_rx_placed //p' \
			"$RUNDIR/server.out" | tail -n 1)
		e2e_log "server roce_rx_placed ${placed:-none}"
		[ "${placed:-0}" -gt 0 ] ||
			e2e_fail "no WRITE packet was read to its place"
	fi
	e2e_pass "$prog between two hosts: $sprov server, $cprov client"
}

# Completion events across the hosts (cq_events: one an arm, solicited
# only, re-armed with one unread; cq_channels MODE): the server's device
# raises them as the frames arrive over TCP, with --stats counting them.
events() {
	local prog=$1 mode=${2:-} args raised
	args="--port $PORT --gid-index 1${mode:+ --mode $mode}"
	export E2E_CHANNEL_ADDR=$ADDR_A
	mh_pair "--stats" "$E2E_BIN/$prog --server $args" \
		"$E2E_BIN/$prog --client $args"
	expect_rc "$prog client" "$client_rc" 0
	expect_rc "$prog server" "$server_rc" 0
	expect_out client "passed"
	expect_out server "passed"
	expect_no_out client "^FAIL"
	expect_no_out server "^FAIL"
	raised=$(sed -n 's/^vmw_pvrdma0\.comp_events //p' \
		"$RUNDIR/server.out" | tail -n 1)
	[ "${raised:-0}" -gt 0 ] ||
		e2e_fail "the server's device raised no completion event"
	expect_no_local_path
	e2e_pass "$prog${mode:+ $mode} between two hosts: $raised events"
}

# The server is killed while the client writes: the client's WRs complete
# in error (RETRY_EXC_ERR) and it exits, within the hang guard.
peer_killed() {
	local args="-x 1 -d vmw_pvrdma0 -F -p $PORT -s 65536 -D 40" spid cpid
	mh_start server "$NS_A" "$ADDR_A" "$sprov" "" ib_write_bw $args
	spid=$bg_pid
	mh_wait_listen "$NS_A" "$PORT" "$spid" ||
		e2e_fail "ib_write_bw server never listened"
	mh_start client "$NS_B" "$ADDR_B" "$cprov" "" ib_write_bw $args "$ADDR_A"
	cpid=$bg_pid
	mh_wait_adapter_link "$cpid"
	sleep 1
	e2e_log "killing the server"
	kill -KILL "-$spid"
	sim_wait "$spid"
	sim_wait "$cpid"
	[ "$rc" != 124 ] || e2e_fail "ib_write_bw client hung after its peer died"
	[ "$rc" != 0 ] || e2e_fail "ib_write_bw client did not notice its peer died"
	expect_out client "[Cc]ompletion with error|[Ff]ailed status|retry"
	e2e_pass "peer killed: the client fails, no hang: $cprov client"
}

# mh_rss_kb PGID PROGRAM: the resident set of PROGRAM in process group
# PGID (mh_start's pid leads it), in KiB.
mh_rss_kb() {
	local pid
	pid=$(pgrep -g "$1" -x "$2" | head -n 1)
	[ -n "$pid" ] && awk '$1 == "VmRSS:" { print $2 }' "/proc/$pid/status"
}

# ib_read_bw, and the client stops (SIGSTOP) with its READs outstanding:
# its adapter reads no responses. The server's adapter must hold further
# requests unread rather than queue a response for each (tcp.c): from
# before the client came, its memory grows by its buffer and about one
# response, not by the READs outstanding (not in the ASan tree, whose
# allocator keeps freed memory). Then the client goes on and the
# run completes.
read_held() {
	local size=$((8 << 20)) spid cpid before after
	# -u 20: a 4 s ACK timeout outlasts the stop, so the stream goes on
	# with no resend of READs the server is still answering.
	local args="-x 1 -d vmw_pvrdma0 -F -p $PORT -s $size -n 300 -u 20"
	mh_start server "$NS_A" "$ADDR_A" "$sprov" "" ib_read_bw $args
	spid=$bg_pid
	mh_wait_listen "$NS_A" "$PORT" "$spid" ||
		e2e_fail "ib_read_bw server never listened"
	before=$(mh_rss_kb "$spid" ib_read_bw)
	e2e_log "server RSS ${before} KiB before the client"
	mh_start client "$NS_B" "$ADDR_B" "$cprov" "" ib_read_bw $args "$ADDR_A"
	cpid=$bg_pid
	mh_wait_adapter_link "$cpid"
	sleep 0.5
	e2e_log "stopping the client"
	kill -STOP "-$cpid"
	sleep 2
	after=$(mh_rss_kb "$spid" ib_read_bw)
	kill -CONT "-$cpid"
	e2e_log "server RSS ${after} KiB with the client stopped"
	[ -n "$before" ] && [ -n "$after" ] ||
		e2e_fail "no resident set of the server"
	[ $((after - before)) -lt $((6 * size / 1024)) ] ||
		e2e_fail "the server grew by $((after - before)) KiB for a peer that reads nothing"
	sim_wait "$cpid"
	client_rc=$rc
	sim_wait "$spid"
	server_rc=$rc
	expect_rc "ib_read_bw server" "$server_rc" 0
	expect_rc "ib_read_bw client" "$client_rc" 0
	expect_out client "^ *$size +300 +[0-9]+\.[0-9]+" "result line"
	e2e_pass "READ responses held for a stopped reader: $sprov server, $cprov client"
}

# While a pingpong server waits, connections from the client's host say
# HELLO in the client adapter's name, as any process there may: the server
# must still send its messages over a connection of its own.
fuzz_hello() {
	local args="-d vmw_pvrdma0 -g 1 -p $PORT -n 200 -s 1024" spid
	local fuzz="$E2E_BIN/fabric_fuzz $ADDR_A 4791 $ADDR_B hello"
	mh_start server "$NS_A" "$ADDR_A" "$sprov" "" ibv_rc_pingpong $args
	spid=$bg_pid
	mh_wait_listen "$NS_A" 4791 "$spid" ||
		e2e_fail "the server's adapter never listened on TCP"
	e2e_log "$fuzz (background)"
	# shellcheck disable=SC2086
	ip netns exec "$NS_B" timeout -k 5 "$E2E_TIMEOUT" \
		${E2E_PRELOAD:+env LD_PRELOAD=$E2E_PRELOAD} $fuzz \
		>"$RUNDIR/fuzz.out" 2>&1 &
	E2E_PIDS="$E2E_PIDS $!"
	sleep 0.3
	mh_run client "$NS_B" "$ADDR_B" "$cprov" "" ibv_rc_pingpong $args "$ADDR_A"
	client_rc=$rc
	sim_wait "$spid"
	server_rc=$rc
	expect_rc "ibv_rc_pingpong server" "$server_rc" 0
	expect_rc "ibv_rc_pingpong client" "$client_rc" 0
	expect_out client "^200 iters in"
	e2e_pass "HELLOs in the client's name: $sprov server, $cprov client"
}

# ib_write_bw while the server's TCP port is fuzzed: random and mutated
# frames, which the server's adapter drops with a log line each; then
# connections that hold frames half sent for seconds: the adapter must not
# wait inside them, or the client's writes run out of retries (its budget
# is half a second).
fuzz() {
	local args="-x 1 -d vmw_pvrdma0 -F -p $PORT -s 65536 -D 5" spid cpid
	local fuzz="$E2E_BIN/fabric_fuzz $ADDR_A 4791 $ADDR_B"
	# In the ASan tree: perftest's own leaks are not the sim's.
	[ -n "${ASAN_OPTIONS:-}" ] &&
		export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
	mh_start server "$NS_A" "$ADDR_A" "$sprov" "" ib_write_bw $args
	spid=$bg_pid
	mh_wait_listen "$NS_A" "$PORT" "$spid" ||
		e2e_fail "ib_write_bw server never listened"
	mh_start client "$NS_B" "$ADDR_B" "$cprov" "" ib_write_bw $args "$ADDR_A"
	cpid=$bg_pid
	mh_wait_adapter_link "$cpid"
	e2e_log "$fuzz"
	# shellcheck disable=SC2086
	ip netns exec "$NS_B" timeout -k 5 "$E2E_TIMEOUT" \
		${E2E_PRELOAD:+env LD_PRELOAD=$E2E_PRELOAD} $fuzz \
		>"$RUNDIR/fuzz.out" 2>&1 || e2e_fail "fabric_fuzz failed"
	e2e_log "$fuzz stall"
	# shellcheck disable=SC2086
	ip netns exec "$NS_B" timeout -k 5 "$E2E_TIMEOUT" \
		${E2E_PRELOAD:+env LD_PRELOAD=$E2E_PRELOAD} $fuzz stall \
		>"$RUNDIR/fuzz_stall.out" 2>&1 || e2e_fail "fabric_fuzz stall failed"
	sim_wait "$cpid"
	client_rc=$rc
	sim_wait "$spid"
	server_rc=$rc
	expect_rc "ib_write_bw server" "$server_rc" 0
	expect_rc "ib_write_bw client" "$client_rc" 0
	expect_out server "dropped the link to"
	expect_out client "^ *65536 +[0-9]+ +[0-9]+\.[0-9]+" "result line"
	expect_no_out client "Couldn't|[Ff]ailed|[Ee]rror"
	e2e_pass "fuzzed TCP port under ib_write_bw: $sprov server, $cprov client"
}

# mh_cm_pair "SERVER CMD" "CLIENT CMD": programs that connect through
# rdma_cm. The server's CM agent listens on TCP 4792 once it opened
# rdma_cm, and its program listens a moment later: a client rejected for
# want of a listener (reason 8) is no result, the pair starts again.
mh_cm_pair() {
	local scmd=$1 ccmd=$2 spid tries=0
	while :; do
		# shellcheck disable=SC2086
		mh_start server "$NS_A" "$ADDR_A" "$sprov" "" $scmd
		spid=$bg_pid
		mh_wait_listen "$NS_A" 4792 "$spid" ||
			e2e_fail "the server's CM agent never listened on TCP"
		# shellcheck disable=SC2086
		mh_run client "$NS_B" "$ADDR_B" "$cprov" "" $ccmd
		client_rc=$rc
		if [ "$client_rc" -eq 0 ] || [ "$tries" -ge 10 ] ||
		   ! grep -Eq -- "$CM_REFUSED" "$RUNDIR/client.out"; then
			break
		fi
		tries=$((tries + 1))
		e2e_log "client refused: no listener yet; starting the pair again"
		kill -TERM "-$spid" 2>/dev/null
		sim_wait "$spid"
	done
	sim_wait "$spid"
	server_rc=$rc
	e2e_log "server exit $server_rc, client exit $client_rc"
}

# rping through rdma_cm across the hosts, every ping's data checked (-V).
rping_hosts() {
	mh_cm_pair "rping -s -a $ADDR_A -V -C 50" \
		"rping -c -a $ADDR_A -C 50 -V -v"
	rping_rc server
	rping_rc client
	expect_out client "ping data: rdma-ping-49: "
	expect_no_out client "[Ee]rror|fail"
	e2e_pass "rping across hosts: $sprov server, $cprov client"
}

# Random bytes at the server's CM agent (TCP 4792), some connections held
# with half a message, while rping's server waits: then rping connects.
fuzz_cm() {
	local fuzz="$E2E_BIN/fabric_fuzz $ADDR_A 4792 $ADDR_B cm" spid
	mh_start server "$NS_A" "$ADDR_A" "$sprov" "" rping -s -a "$ADDR_A" -V -C 20
	spid=$bg_pid
	mh_wait_listen "$NS_A" 4792 "$spid" ||
		e2e_fail "the server's CM agent never listened on TCP"
	e2e_log "$fuzz"
	# shellcheck disable=SC2086
	ip netns exec "$NS_B" timeout -k 5 "$E2E_TIMEOUT" \
		${E2E_PRELOAD:+env LD_PRELOAD=$E2E_PRELOAD} $fuzz \
		>"$RUNDIR/fuzz.out" 2>&1 || e2e_fail "fabric_fuzz cm failed"
	rping_after_fuzz "$spid" mh_run client "$NS_B" "$ADDR_B" "$cprov" "" \
		rping -c -a "$ADDR_A" -C 20 -V -v
	e2e_pass "fuzzed CM agent, then rping: $sprov server, $cprov client"
}

# mpi_check with one rank per host: mpirun (under the sim, in the first
# namespace) starts the second rank's daemon through an rsh agent that
# runs it in the other namespace under a sim of its own (mh_rsh.sh), as
# ssh would on a second machine. Open MPI over UCX over the adapters.
mpi() {
	local stats=$RUNDIR/stats tx
	command -v mpirun >/dev/null || e2e_fail "no mpirun (apt install openmpi-bin)"
	[ -x "$E2E_BIN/mpi_check" ] ||
		e2e_fail "mpi_check was not built (libopenmpi-dev)"
	printf '%s slots=1\n%s slots=1\n' "$ADDR_A" "$ADDR_B" >"$RUNDIR/hosts"
	export MH_REMOTE_NS=$NS_B MH_SIM=$E2E_SIM MH_PROVIDER=$cprov
	export MH_RUNDIR=$RUNDIR/$NS_B MH_PRELOAD=$E2E_PRELOAD
	for v in $(env | sed -n 's/^\(UCX_[A-Z_]*\)=.*/\1/p'); do
		unset "$v"
	done
	E2E_TIMEOUT=${E2E_TIMEOUT_MPI:-180}
	mh_run mpirun "$NS_A" "$ADDR_A" "$sprov" "--stats-file $stats" \
		mpirun --allow-run-as-root --hostfile "$RUNDIR/hosts" -np 2 \
		--map-by node --bind-to none \
		--mca plm_rsh_agent "$E2E_SRC/mh_rsh.sh" \
		--mca oob_tcp_if_include 198.51.100.0/24 --mca pml ucx \
		-x UCX_NET_DEVICES=vmw_pvrdma0:1 -x UCX_TLS=^sm \
		"$E2E_BIN/mpi_check" --iters 10
	expect_rc mpirun "$rc" 0
	expect_out mpirun "^mpi_check: passed"
	expect_out mpirun "^4194304 " "the 4 MiB row"
	expect_no_out mpirun "^FAIL"
	tx=$(sed -n 's/^vmw_pvrdma0\.bytes_tx //p' "$stats" |
	     awk '{ s += $1 } END { print s + 0 }')
	e2e_log "bytes rank 0 sent over its adapter: $tx"
	# its half of the 4 MiB windows of 16 messages alone is 64 MiB
	[ "$tx" -gt 67108864 ] || e2e_fail "only $tx bytes went over the adapter"
	expect_no_local_path
	e2e_pass "mpi_check, one rank per host: $sprov, $cprov"
}

# perftest -R: its connections through rdma_cm across the hosts.
perftest_cm() {
	local prog=$1 args
	shift
	args="-R -d vmw_pvrdma0 -F -n 100 $*"
	mh_cm_pair "$prog $args" "$prog $args $ADDR_A"
	expect_rc "$prog server" "$server_rc" 0
	expect_rc "$prog client" "$client_rc" 0
	expect_out client "^ *[0-9]+ +100 +[0-9]+\.[0-9]+" "result line"
	expect_no_out client "Couldn't|[Ff]ailed|[Ee]rror"
	e2e_pass "$prog -R $* across hosts: $sprov server, $cprov client"
}

# A client of rdma_cm on the other host ends without a word to its CM
# (cm_peer_death.c): the server is told, over the wire, as Linux tells it.
cm_peer_death() {
	local stage=$1 death=$2 prog
	prog="$E2E_BIN/cm_peer_death --addr $ADDR_A --port $PORT"
	prog="$prog --stage $stage --death $death --sync $RUNDIR/connected"
	mh_cm_pair "$prog --server" "$prog --client"
	expect_death client "$client_rc" "$death"
	expect_out client "$death at $stage"
	expect_rc "cm_peer_death server" "$server_rc" 0
	expect_out server "passed"
	e2e_pass "the client's $death at $stage across hosts: the server is told"
}

# rdmacm_cases.c's pair MODE across hosts.
rdmacm_pair() {
	local mode=$1 prog
	prog="$E2E_BIN/rdmacm_cases --mode $mode --addr $ADDR_A --port $PORT"
	mh_cm_pair "$prog --server" "$prog --client"
	expect_rc "rdmacm_cases $mode server" "$server_rc" 0
	expect_rc "rdmacm_cases $mode client" "$client_rc" 0
	expect_out client "passed"
	e2e_pass "rdmacm_cases $mode across hosts: $sprov server, $cprov client"
}

# An rping client on the other host is SIGKILLed while it pings: the
# server gets DISCONNECTED and exits within the hang guard.
rping_killed() {
	mh_start server "$NS_A" "$ADDR_A" "$sprov" "" \
		rping -s -a "$ADDR_A" -C 1000000 -V
	mh_wait_listen "$NS_A" 4792 "$bg_pid" ||
		e2e_fail "the server's CM agent never listened on TCP"
	rping_client_killed "$bg_pid" mh_start client "$NS_B" "$ADDR_B" \
		"$cprov" "" rping -c -a "$ADDR_A" -C 1000000 -V -v
	e2e_pass "rping across hosts: the server sees its killed client go"
}

host_netdev() {
	MH_NETDEV=1 mh_run netdev "$NS_A" "$ADDR_A" "$sprov" "" \
		"$E2E_BIN/rdmacm_cases" --mode host_netdev --addr "$ADDR_A"
	expect_rc "rdmacm_cases host_netdev" "$rc" 0
	e2e_pass "the host's interface is the port's netdev ($sprov)"
}

# mh_veth_mtu BYTES: both ends of the veth at that MTU.
mh_veth_mtu() {
	ip -n "$NS_A" link set "$VETH_A" mtu "$1" &&
	ip -n "$NS_B" link set "$VETH_B" mtu "$1" ||
		e2e_fail "cannot set the veths' MTU to $1"
}

# mh_expect_port_mtu NAME "SIM OPTIONS" MTU: ibv_devinfo -v on the server's
# adapter reports the active MTU MTU (max_mtu stays 4096, as rxe's), and
# the port's netdev, as the sim's sysfs shows it, has the veth's MTU.
mh_expect_port_mtu() {
	local name=$1 opts=$2 want=$3 veth
	mh_run "$name" "$NS_A" "$ADDR_A" "$sprov" "$opts" \
		ibv_devinfo -v -d vmw_pvrdma0
	expect_rc "ibv_devinfo ($name)" "$rc" 0
	expect_out "$name" "max_mtu:[[:space:]]+4096 \(5\)"
	expect_out "$name" "active_mtu:[[:space:]]+$want \(" \
		"active MTU $want"
	veth=$(ip netns exec "$NS_A" cat "/sys/class/net/$VETH_A/mtu")
	mh_run "$name-sysfs" "$NS_A" "$ADDR_A" "$sprov" "$opts" \
		sh -c 'cat /sys/class/infiniband/vmw_pvrdma0/device/net/*/mtu'
	expect_rc "sysfs netdev mtu ($name)" "$rc" 0
	expect_out "$name-sysfs" "^$veth\$" "the veth's MTU"
}

mtu() {
	local args="-x 1 -d vmw_pvrdma0 -F -p $PORT -s 65536 -n 200"
	local pp="-d vmw_pvrdma0 -g 1 -p $PORT -n 10 -s 4096"

	mh_veth_mtu 9000
	mh_expect_port_mtu mtu-9000 "" 4096
	mh_expect_port_mtu mtu-9000-given "--mtu 2048" 2048
	mh_veth_mtu 1500
	mh_expect_port_mtu mtu-1500 "" 1024
	# The sim's wire (TCP) carries any --mtu; a RoCE datagram of it must
	# fit the interface (don't fragment): there --mtu is cut, and said.
	if [ "${MH_WIRE:-sim}" = roce ]; then
		mh_expect_port_mtu mtu-1500-over "--mtu 4096" 1024
		expect_out mtu-1500-over "--mtu 4096 does not fit $VETH_A"
		# A QP given a path MTU beyond it hears so at RTR, rather
		# than its full packets being lost at every send.
		mh_pair "" "ibv_rc_pingpong $pp -m 4096" \
			"ibv_rc_pingpong $pp -m 4096 $ADDR_A"
		expect_out server "Failed to modify QP to RTR"
		expect_no_out server "bytes in [0-9.]+ seconds"
		expect_no_out client "bytes in [0-9.]+ seconds"
	else
		mh_expect_port_mtu mtu-1500-over "--mtu 4096" 4096
	fi
	# One process sees the port follow the interface's MTU as it
	# changes (it sets its own end's MTU, 9000, 1500, then 9000).
	mh_run mtu-follow "$NS_A" "$ADDR_A" "$sprov" "" \
		"$E2E_BIN/rdmacm_cases" --mode mtu_follow --addr "$ADDR_A"
	expect_rc "rdmacm_cases mtu_follow" "$rc" 0
	# A stream at the port's MTU over jumbo frames: the path MTU is
	# 4096, and ib_write_bw's own run of 64 KiB messages completes.
	mh_veth_mtu 9000
	mh_pair "" "ib_write_bw $args" "ib_write_bw $args $ADDR_A"
	expect_rc "ib_write_bw server" "$server_rc" 0
	expect_rc "ib_write_bw client" "$client_rc" 0
	expect_out client "Mtu *: 4096\[B\]" "path MTU 4096"
	expect_out client "^ *65536 +200 +[0-9]+\.[0-9]+" "result line"
	expect_no_out client "Couldn't|[Ff]ailed|[Ee]rror"
	e2e_pass "the port's MTU follows the veths' (${MH_WIRE:-sim} wire)"
}

case $scenario in
rc_pingpong) pingpong ibv_rc_pingpong 4096 ;;
ud_pingpong) MH_NETDEV=1 pingpong ibv_ud_pingpong 512 ;;
perftest) perftest "$@" ;;
link_flap) link_fault sigstop ;;
link_down) link_fault sigstop-beyond ;;
peer_killed) peer_killed ;;
read_held) read_held ;;
fuzz) fuzz ;;
fuzz_hello) fuzz_hello ;;
rping) rping_hosts ;;
rping_killed) rping_killed ;;
cm_peer_death) cm_peer_death "$@" ;;
rdmacm_pair) rdmacm_pair "$@" ;;
events) events "$@" ;;
fuzz_cm) fuzz_cm ;;
roce_capture) roce_capture "$@" ;;
roce_fuzz) roce_fuzz ;;
roce_fuzz_cm) roce_fuzz_cm ;;
ack_asks) ack_asks ;;
cm_resend) cm_resend ;;
mpi) mpi ;;
host_netdev) host_netdev ;;
verbs) verbs_prog "$@" ;;
mtu) mtu ;;
perftest_cm) perftest_cm "$@" ;;
*) e2e_fail "unknown scenario $scenario" ;;
esac
