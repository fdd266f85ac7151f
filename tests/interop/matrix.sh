#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# pvrdma-sim against Linux soft-RoCE: one program pair, the sim in the
# namespace on its RoCE v2 wire (--wire roce --ipv4 198.51.100.1), rxe0 in
# the guest (198.51.100.2). Every run is captured on the namespace's bridge,
# decoded by tshark and each ICRC checked (roce_check.py).
#
#   matrix.sh sim_client|sim_server SCENARIO
#
# sim_client: the program's client runs on the sim, its server on rxe;
# sim_server: the other way round. SCENARIO:
#   rc_pingpong ud_pingpong srq_pingpong    libibverbs examples, buffers checked (-c)
#   write_bw read_bw send_bw atomic_bw write_lat read_lat send_lat atomic_lat
#   send_bw_ud send_lat_ud                  perftest, -c UD
#   write_bw_cm send_lat_cm                 ib_write_bw -R, ib_send_lat -R (rdma_cm)
#   rping                                   rdma_cm, every ping checked (-V)
#   ucmatose                                rdma_cm, 4 RC connections at once
#   udaddy                                  rdma_cm UD: SIDR REQ/REP
#   cm_refused                              no listener: REJECTED, IB CM reason 8
#   rping_killed                            sim_client only: the sim's rping client
#                                           SIGKILLed mid-run: rxe's server is told
#   data_integrity                          every opcode, data and completions checked
#   ud_grh                                  the GRH area of UD receives, RoCE v2 over IPv4
#   rnr                                     the responder has no receive: the
#                                           requester honours RNR NAKs, RNR_RETRY_EXC_ERR
#   bad_rkey                                a WRITE with a bad rkey: REM_ACCESS_ERR
#   link_down                               the link goes down mid-stream:
#                                           RETRY_EXC_ERR, flushes behind it
#
# Needs root, qemu, the cached guest and a pvrdma-sim with the RoCE v2
# wire; without them the test reports itself skipped (77) with the reason.
#
# INTEROP_PEER=rxe2 puts a second guest's rxe0 (198.51.100.3) where the sim
# would be: the harness and every check of the matrix proven rxe to rxe.
. "$(dirname "$0")/lib.sh"
. "$INTEROP_SRC/../e2e/rping_pings.sh"

dir=${1:-}
scenario=${2:-}
case $dir in
sim_client | sim_server) ;;
*) echo "usage: $0 sim_client|sim_server SCENARIO" >&2; exit 2 ;;
esac

PEER=${INTEROP_PEER:-sim}
# rdma_cm scenarios: the capture must hold these IB CM MADs on QP 1, each
# decoded by tshark's CM dissector (capture_check).
case $scenario in
write_bw_cm | send_lat_cm | rping | ucmatose) CM_EXPECT="REQ REP RTU DREQ DREP" ;;
udaddy) CM_EXPECT="SIDR_REQ SIDR_REP" ;;
cm_refused) CM_EXPECT="REQ REJ" ;;
rping_killed) CM_EXPECT="REQ REP RTU DREQ" ;;
cm_peer_death_req) CM_EXPECT="REQ REJ" ;;
*) CM_EXPECT="" ;;
esac
# perftest's -R server opens the listener of its test connection only
# after an exchange over its first rdma_cm connection. A client on the sim,
# not slowed by TCG as the server is, sends its REQ before that: rxe's CM
# rejects it at once (IB CM reason 8, as Linux's cm.c does for a service
# ID nothing listens on), and perftest 4.5's client then retries with the
# rdma_cm_ids it has just destroyed and crashes in librdmacm. Two rxe
# hosts race the same way when the client is the faster one (README). The
# client on the sim is therefore held before that connection until the
# guest shows its listener (cm_hold.c); INTEROP_CM_UNHELD=1 runs it
# unheld, to see the race.
CM_HELD=""
case $scenario in send_lat_cm | write_bw_cm)
	if [ "$dir" = sim_client ] && [ "$PEER" = sim ] && [ -z "${INTEROP_CM_UNHELD:-}" ]; then
		[ -f "${INTEROP_CM_HOLD:-}" ] ||
			skip "no libinterop_cm_hold.so (built where rdma/rdma_cma.h is found)"
		CM_HELD=1
	fi
esac
need_guest_host
[ "$PEER" = sim ] && need_sim_roce
need_guest
setup
GGID=$(guest_gid)
SGID=1
SDEV=vmw_pvrdma0
if [ "$PEER" = rxe2 ]; then
	guest status | grep -q '^guest 2 runs' || guest start 2 || fail "guest 2 did not boot"
	SIM_IP=198.51.100.3
	SGID=$(sed -n 's/^gid_v2_ipv4 //p' "${PVRDMA_INTEROP_RUN:-/run/pvrdma-interop}/2/spool/ready")
	SDEV=rxe0
fi
PORT=18515
ITERS=${INTEROP_ITERS:-100}
GIFACE=$(sed -n 's/^iface //p' "${PVRDMA_INTEROP_RUN:-/run/pvrdma-interop}/1/spool/ready")

if [ "$dir" = sim_client ]; then
	SERVER=guest CLIENT=sim SERVER_IP=$GUEST_IP
else
	SERVER=sim CLIENT=guest SERVER_IP=$SIM_IP
fi

# dev_args SIDE STYLE: how a program names its device and GID index.
dev_args() {
	if [ "$1" = sim ]; then dev=$SDEV gid=$SGID; else dev=rxe0 gid=$GGID; fi
	case $2 in
	pingpong) echo "-d $dev -g $gid" ;;
	perftest) echo "-d $dev -x $gid" ;;
	e2e) echo "--dev $dev --gid-index $gid" ;;
	none) ;;
	esac
}

# The guest runs our verbs programs from its spool (this build's binaries).
put_programs() {
	for p in "$@"; do
		[ -x "${E2E_BIN:-}/$p" ] || fail "no ${E2E_BIN:-}/$p (build the tree)"
		guest put "$E2E_BIN/$p" || fail "cannot copy $p to the guest"
		[ "$PEER" = rxe2 ] && { guest put -n 2 "$E2E_BIN/$p" || fail "cannot copy $p to guest 2"; }
	done
}

# run_on SIDE NAME 'CMD': CMD on SIDE, the sim in the namespace (split into
# words) or the guest's shell (as it is); sets $rc. start_on: in the
# background, $bg_pid or $bg_job.
run_on() {
	if [ "$1" = sim ] && [ "$PEER" = rxe2 ]; then
		guest exec -n 2 -t "$INTEROP_TIMEOUT" -- "$3" >"$RUNDIR/$2.out" 2>&1
		rc=$?
	elif [ "$1" = sim ]; then
		set -f
		# shellcheck disable=SC2086
		sim_bg "$2" $3
		set +f
		wait "$bg_pid"
		rc=$?
	else
		guest exec -t "$INTEROP_TIMEOUT" -- "$3" >"$RUNDIR/$2.out" 2>&1
		rc=$?
	fi
}

start_on() {
	if [ "$1" = sim ] && [ "$PEER" = rxe2 ]; then
		bg_job=$(guest bg -n 2 -- "$3") || fail "cannot queue '$3' in guest 2"
	elif [ "$1" = sim ]; then
		set -f
		# shellcheck disable=SC2086
		sim_bg "$2" $3
		set +f
	else
		guest_bg "$2" "$3"
	fi
}

finish_on() {
	if [ "$1" = sim ] && [ "$PEER" = rxe2 ]; then
		guest wait -n 2 -t "$INTEROP_TIMEOUT" "$bg_job" >"$RUNDIR/$2.out" 2>&1
	elif [ "$1" = sim ]; then
		wait "$bg_pid"
	else
		guest_collect "$2" "$bg_job"
	fi
}

# Until the server listens: on TCP PORT (KIND tcp), as an rdma_cm listener
# (cm: seen in the guest; the sim's is not visible, see CM_REFUSED), or not
# at all (none).
server_ready() {
	case $1 in
	tcp)
		if [ "$SERVER" = guest ]; then
			guest_listening "$PORT"
		elif [ "$PEER" = rxe2 ]; then
			guest exec -n 2 -t 30 -- "for i in \$(seq 100); do
				ss -Hltn 'sport = :$PORT' | grep -q . && exit 0; sleep 0.2; done; exit 1" \
				>/dev/null || fail "nothing listens on guest 2's port $PORT"
		else
			for i in $(seq 150); do
				ip netns exec "$NS" ss -Hltn "sport = :$PORT" | grep -q . && return
				kill -0 "$bg_pid" 2>/dev/null || fail "the sim server exited early"
				sleep 0.2
			done
			fail "the sim server never listened on TCP port $PORT"
		fi ;;
	cm_held)
		guest put "$INTEROP_SRC/guest_cm_listen.sh" || fail "cannot copy guest_cm_listen.sh"
		CM_IDN=$(guest exec -t 60 -- "sh ./guest_cm_listen.sh -1 50") ||
			fail "no rdma_cm listener in the guest" ;;
	cm)
		if [ "$SERVER" = guest ] || [ "$PEER" = rxe2 ]; then
			[ "$SERVER" = guest ] && n=1 || n=2
			guest exec -n $n -t 60 -- "for i in \$(seq 150); do
				rdma res show cm_id | grep -q LISTEN && exit 0; sleep 0.2; done
				exit 1" >/dev/null || fail "no rdma_cm listener in the guest"
		else
			sleep 1
		fi ;;
	esac
}

# A client that came before an rdma_cm listener is refused (IB CM reason 8),
# as on real hosts: that is no result, the pair is started again.
CM_REFUSED='REJECTED.*[^0-9]8([^0-9]|$)|UNREACHABLE.*[^0-9-]1([^0-9]|$)|Connection refused'

# pair KIND "SERVER CMD" "CLIENT CMD": the server, then the client; sets
# server_rc and client_rc. Both commands are whole lines for their side.
pair() {
	kind=$1 scmd=$2 ccmd=$3 tries=0
	while :; do
		start_on "$SERVER" server "$scmd"
		server_ready "$kind"
		if [ "$kind" = cm_held ]; then
			run_held_client "$ccmd"
		else
			run_on "$CLIENT" client "$ccmd"
		fi
		client_rc=$rc
		if [ "$kind" != cm ] || [ "$client_rc" = 0 ] || [ "$tries" -ge 10 ] ||
		   ! grep -Eq -- "$CM_REFUSED" "$RUNDIR/client.out"; then
			break
		fi
		tries=$((tries + 1))
		ilog "client refused: no listener yet; starting the pair again"
		if [ "$SERVER" = guest ]; then guest kill "$bg_job"
		elif [ "$PEER" = rxe2 ]; then guest kill -n 2 "$bg_job"
		else kill -TERM "-$bg_pid" 2>/dev/null; fi
		finish_on "$SERVER" server
	done
	finish_on "$SERVER" server
	server_rc=$?
}

# run_held_client 'CMD': CMD on the sim, its second rdma_resolve_addr (the
# test connection's; the first is the exchange's) held by cm_hold.c until
# the guest has a listener newer than the exchange's ($CM_IDN); sets $rc.
run_held_client() {
	rm -f "$RUNDIR/cm_hold"
	old_preload=${LD_PRELOAD:-}
	export INTEROP_CM_HOLD_FILE="$RUNDIR/cm_hold" INTEROP_CM_HOLD_CALL=2 \
		INTEROP_CM_HOLD_SECONDS="$INTEROP_TIMEOUT"
	export LD_PRELOAD="${old_preload:+$old_preload:}$INTEROP_CM_HOLD"
	start_on sim client "$1"
	if [ -n "$old_preload" ]; then LD_PRELOAD=$old_preload; else unset LD_PRELOAD; fi
	unset INTEROP_CM_HOLD_FILE INTEROP_CM_HOLD_CALL INTEROP_CM_HOLD_SECONDS
	if n=$(guest exec -t "$INTEROP_TIMEOUT" -- "sh ./guest_cm_listen.sh $CM_IDN $((INTEROP_TIMEOUT - 10))"); then
		ilog "the guest's test listener (cm_id $n, after $CM_IDN) is up: the client goes on"
	else
		ilog "the guest's server never listened for its test connection"
	fi
	: >"$RUNDIR/cm_hold"
	wait "$bg_pid"
	rc=$?
	ilog "$(grep '^cm_hold:' "$RUNDIR/client.out" || echo 'cm_hold: the client never held')"
}

both_ok() {
	expect_rc "$1 server ($SERVER)" "$server_rc" 0
	expect_rc "$1 client ($CLIENT)" "$client_rc" 0
}

pingpong() {
	prog=ibv_$1 extra=""
	[ "$1" = ud_pingpong ] && extra="-s 512"
	pair tcp "$prog $(dev_args "$SERVER" pingpong) -c -n 20 -p $PORT $extra" \
		"$prog $(dev_args "$CLIENT" pingpong) -c -n 20 -p $PORT $extra $SERVER_IP"
	both_ok "$prog"
	expect_out client "^20 iters in"
	expect_out server "^20 iters in"
}

# perftest PROGRAM [ARGS]: bandwidth or latency, the result line checked.
perftest() {
	prog=$1
	shift
	kind=tcp
	case " $* " in *" -R "*) kind=cm ;; esac
	[ -n "$CM_HELD" ] && kind=cm_held
	pair "$kind" "$prog $(dev_args "$SERVER" perftest) -F -n $ITERS -p $PORT $*" \
		"$prog $(dev_args "$CLIENT" perftest) -F -n $ITERS -p $PORT $* $SERVER_IP"
	both_ok "$prog"
	# perftest in the guest may find no CPU clock to time with under TCG
	# ("Correlation coefficient"): its times are then "inf", its run whole.
	num='[0-9]+\.[0-9]+'
	[ "$CLIENT" = guest ] || [ "$PEER" = rxe2 ] && num="($num|inf)"
	expect_out client "^ *[0-9]+ +$ITERS +$num"
	expect_no_out client "Couldn't|[Ff]ailed|[Ee]rror"
	[ -z "$CM_HELD" ] || expect_out client "^cm_hold: rdma_resolve_addr call 2 held [0-9.]+ s$"
}

# rping exits 255 when its event thread loses a race to the main thread's
# teardown after a clean run (see tests/e2e/lib.sh): not a failure.
rping_ok() {
	eval "r=\$${1}_rc"
	if [ "$r" = 255 ] && tail -n 1 "$RUNDIR/$1.out" |
	   grep -q '^rdma_get_cm_event: Bad file descriptor$'; then
		r=0
	fi
	expect_rc "rping $1" "$r" 0
}

rping() {
	pair cm "rping -s -a $SERVER_IP -V -C 10" "rping -c -a $SERVER_IP -C 10 -V -v"
	rping_ok server
	rping_ok client
	expect_out client "ping data: rdma-ping-9: "
	expect_no_out client "[Ee]rror|fail"
}

# ucmatose: four RC connections at once, ten messages each way on each.
ucmatose() {
	pair cm "ucmatose -b $SERVER_IP -p $PORT -c 4 -C 10" \
		"ucmatose -s $SERVER_IP -p $PORT -c 4 -C 10"
	both_ok ucmatose
	expect_out client "test complete"
	expect_out server "test complete"
}

# udaddy: UD ids; the client learns the server's QPN and Q_Key by SIDR
# (its -p is the port space: it listens on its own port, 7174).
udaddy() {
	pair cm "udaddy -b $SERVER_IP -c 2 -C 10" \
		"udaddy -s $SERVER_IP -c 2 -C 10"
	both_ok udaddy
	expect_out client "test complete"
	expect_out server "test complete"
}

# A connect to a port nothing listens on: the peer's CM rejects the REQ
# (reason 8, invalid service ID), and rping's client reports REJECTED.
# The sim's CM lives in its processes: one listens on another port.
cm_refused() {
	start_on "$SERVER" server "rping -s -a $SERVER_IP -p $PORT -C 1"
	server_ready cm
	run_on "$CLIENT" client "rping -d -c -a $SERVER_IP -p $((PORT + 7)) -C 1"
	client_rc=$rc
	if [ "$SERVER" = guest ]; then guest kill "$bg_job"
	elif [ "$PEER" = rxe2 ]; then guest kill -n 2 "$bg_job"
	else kill -TERM "-$bg_pid" 2>/dev/null; fi
	finish_on "$SERVER" server
	[ "$client_rc" != 0 ] || fail "rping connected to a port nothing listens on"
	[ "$client_rc" != 124 ] || fail "rping's client hung: no REJ came"
	expect_out client "cma_event type RDMA_CM_EVENT_REJECTED"
}

# The sim's rping client is killed (SIGKILL) while it pings: the DREQ its
# CM owes still reaches rxe (the sim's process that outlives the client
# sends it, as a kernel destroys a dead process's ids), and rxe's rping
# server gets DISCONNECTED and ends. Without that DREQ the server ends on
# its QP's retries, with no DISCONNECTED. The other way round, the killed
# client would be rxe's, whose kernel sends the DREQ: not the sim's doing.
rping_killed() {
	[ "$CLIENT" = sim ] && [ "$PEER" = sim ] ||
		skip "the client killed is the sim's (rxe's DREQ is its kernel's)"
	tries=0
	while :; do
		start_on "$SERVER" server "rping -s -a $SERVER_IP -V -C 1000000"
		server_ready cm
		sim_bg client rping -c -a "$SERVER_IP" -V -v -C 1000000
		cpid=$bg_pid
		rping_pings "$cpid"
		case $? in
		0) break ;;
		2) fail "the client never pinged" ;;
		esac
		[ "$tries" -lt 10 ] && grep -Eq -- "$CM_REFUSED" "$RUNDIR/client.out" ||
			fail "the client ended before it was killed"
		tries=$((tries + 1))
		ilog "client refused: no listener yet; starting the pair again"
		guest kill "$bg_job"
		finish_on "$SERVER" server
	done
	# the client's own process (setsid made the group)
	pkill -KILL -g "$cpid" -x rping || fail "no rping client to kill"
	ilog "the sim's client killed while it pinged"
	finish_on "$SERVER" server
	server_rc=$?
	[ "$server_rc" != 124 ] || fail "rxe's rping server never ended"
	expect_out server "server DISCONNECT EVENT"
}

# cm_peer_death.c's stage req: the client is SIGKILLed once its REQ is
# with the server, which has not accepted. Its CM's REJ reaches the
# server's, and rdma_ucm tells the server nothing of an id it has not
# accepted: its channel stays quiet and its rdma_accept is EINVAL.
cm_peer_death_req() {
	put_programs cm_peer_death
	prog="--addr $SERVER_IP --port $PORT --stage req"
	pair cm "$(our_cmd "$SERVER" cm_peer_death) --server $prog --sync /tmp/cm_peer_death.$PORT" \
		"$(our_cmd "$CLIENT" cm_peer_death) --client $prog --after 10"
	expect_rc "cm_peer_death server ($SERVER)" "$server_rc" 0
	expect_out client "kill at req"
	expect_out server "no event, the REQ is void"
}

# our_pair PROGRAM ARGS: one of our verbs programs on both sides. Their side
# channel is on loopback unless E2E_CHANNEL_ADDR says the server's address:
# both sides get it (the sim's side from the environment).
our_pair() {
	prog=$1
	shift
	put_programs "$prog"
	export E2E_CHANNEL_ADDR=$SERVER_IP
	# shellcheck disable=SC2086
	[ -n "${SERVER_ENV:-}" ] && export ${SERVER_ENV?}
	pair tcp "$(our_cmd "$SERVER" "$prog" ${SERVER_ENV:-}) --server --port $PORT $(dev_args "$SERVER" e2e) $*" \
		"$(our_cmd "$CLIENT" "$prog") --client --port $PORT $(dev_args "$CLIENT" e2e) $*"
	both_ok "$prog"
	expect_no_out client "^FAIL"
	expect_no_out server "^FAIL"
}

# our_cmd SIDE PROGRAM [ENV...]: how SIDE runs one of our programs.
our_cmd() {
	side=$1 prog=$2
	shift 2
	if [ "$side" = sim ] && [ "$PEER" = sim ]; then
		echo "$E2E_BIN/$prog"
	else
		echo "$* E2E_CHANNEL_ADDR=$SERVER_IP ./$prog"
	fi
}

# The link between the two goes down at once under a stream and comes back
# once the client's error completion came (rc_recovery sigstop-beyond): the
# oldest WR completes RETRY_EXC_ERR, the rest flush, the server tears down
# cleanly. The sim as client takes the guest's link down. rxe as client
# cannot have its own link down (rxe then fails the QP locally,
# LOC_QP_OP_ERR, before any retry): its link drops every packet instead.
link_down() {
	put_programs rc_recovery
	export E2E_CHANNEL_ADDR=$SERVER_IP
	if [ "$CLIENT" = sim ] && [ "$PEER" = sim ]; then
		# The sim's host is the namespace: it takes the guest's link
		# down through the control channel, which does not ride it.
		g="env -u LD_PRELOAD sh $INTEROP_SRC/rxe_guest.sh exec -t 60 --"
		export RC_RECOVERY_LINK_DOWN="$g 'ip link set $GIFACE down'"
		export RC_RECOVERY_LINK_UP="$g 'ip link set $GIFACE up'"
		cenv=""
	else
		cenv="RC_RECOVERY_LINK_DOWN='tc qdisc add dev $GIFACE root netem loss 100%'"
		cenv="$cenv RC_RECOVERY_LINK_UP='tc qdisc del dev $GIFACE root'"
	fi
	pair tcp "$(our_cmd "$SERVER" rc_recovery) --server --port $PORT --mode sigstop-beyond $(dev_args "$SERVER" e2e)" \
		"$(our_cmd "$CLIENT" rc_recovery "$cenv") --client --port $PORT --mode sigstop-beyond $(dev_args "$CLIENT" e2e)"
	heal="ip link set $GIFACE up; tc qdisc del dev $GIFACE root 2>/dev/null; true"
	guest exec -- "$heal" >/dev/null
	[ "$PEER" = rxe2 ] && guest exec -n 2 -- "$heal" >/dev/null
	both_ok rc_recovery
	expect_out client "transport retry counter exceeded"
	expect_out client "passed"
	expect_no_out client "^FAIL"
	expect_no_out server "^FAIL"
}

capture_start
case $scenario in
rc_pingpong | ud_pingpong | srq_pingpong) pingpong "$scenario" ;;
write_bw | send_bw) perftest "ib_$scenario" -s 16384 ;;
write_lat | send_lat) perftest "ib_$scenario" ;;
# perftest gives the QP the peer's count of outstanding READs and atomics
# (rxe offers 128), which an adapter with fewer (PVRDMA: 16) must refuse:
# both sides take 16.
read_bw) perftest ib_read_bw -s 16384 -o 16 ;;
read_lat | atomic_bw | atomic_lat) perftest "ib_$scenario" -o 16 ;;
send_bw_ud) perftest ib_send_bw -c UD ;;
send_lat_ud) perftest ib_send_lat -c UD ;;
write_bw_cm) perftest ib_write_bw -s 16384 -R ;;
send_lat_cm) perftest ib_send_lat -R ;;
rping) rping ;;
ucmatose) ucmatose ;;
udaddy) udaddy ;;
cm_refused) cm_refused ;;
rping_killed) rping_killed ;;
cm_peer_death_req) cm_peer_death_req ;;
data_integrity) our_pair data_integrity ;;
ud_grh)
	# A Linux RoCE sender puts its route's TTL (64) in the IPv4 header,
	# not the address handle's hop limit.
	SERVER_ENV=
	[ "$CLIENT" = guest ] || [ "$PEER" = rxe2 ] && SERVER_ENV="UD_GRH_TTL=64"
	our_pair ud_grh --mode ipv4 ;;
rnr) our_pair rc_errors --mode rnr ;;
bad_rkey) our_pair rc_errors --mode bad-rkey ;;
link_down) link_down ;;
*) echo "unknown scenario '$scenario'" >&2; exit 2 ;;
esac
capture_check 1
pass "$scenario: $SERVER server, $CLIENT client, over RoCE v2"
