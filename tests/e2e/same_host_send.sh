#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# same_host_send (a target that sleeps in ibv_get_cq_event receives SENDs)
# under pvrdma-sim, with --stats: on one host the client's adapter executes
# the SENDs that find a receive itself (single_copy), on the socket fabric
# (E2E_SIM_OPTS=--no-single-copy) none; the server's counters are the same
# on both paths.
#
#   same_host_send.sh PROVIDER MODE
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

prov=$(provider_of "$1")
mode=$2
e2e_setup
port=$(e2e_port)

args="--port $port --mode $mode"
run_pair "$prov" "$prov" "--stats" "$port" \
	"$E2E_BIN/same_host_send --server $args" \
	"$E2E_BIN/same_host_send --client $args"
expect_rc "same_host_send client" "$client_rc" 0
expect_rc "same_host_send server" "$server_rc" 0
expect_out client "passed"
expect_out server "passed"
expect_no_out client "^FAIL"
expect_no_out server "^FAIL"

# stat NAME COUNTER: the adapter's counter in NAME.out (--stats).
stat() {
	sed -n "s/^vmw_pvrdma0\.$2 //p" "$RUNDIR/$1.out" | tail -n 1
}

# Of the 7 messages that find a receive (one a round with churn) most are
# executed by the requester (one may take the fabric when the target holds
# its lock too long on a loaded machine); the one that meets RNR and the
# one too long take the fabric either way. So do the 8 SENDs behind the
# one that met RNR, unless the stream returns to one copy once that one
# is acknowledged: at most 7 without it.
# With an SRQ the copy stays under the target's lock, which a loaded
# machine's target holds longer: each SEND that finds it held takes the
# fabric, and DIRECT_MISSES_HELD of them in a row send the stream there
# too. What holds whatever the load is that SENDs to the target, idle in
# ibv_get_cq_event, do take one copy: one at least.
copies=$(stat client single_copy)
want=10
[ "$mode" != srq ] || want=1
[ "$mode" != churn ] || want=150
[ "$mode" != gone ] || want=1
[ "$mode" != late ] || want=1
[ "$mode" != truncate ] || want=1
case " ${E2E_SIM_OPTS:-} " in
*" --no-single-copy "*)
	[ "$copies" = 0 ] ||
		e2e_fail "single_copy $copies with --no-single-copy" ;;
*)
	[ "${copies:-0}" -ge "$want" ] ||
		e2e_fail "single_copy ${copies:-none}: SENDs took the fabric" ;;
esac
# The server's adapter keeps its segment sealed: truncating it fails. A
# second one may be seen: a peer's, which its device thread maps for a
# moment when it sends a frame (shared_frame_sent), sealed as well.
[ "$mode" != truncate ] ||
	expect_out server "^segment files: [1-9][0-9]* found, 0 shrank" \
		"the segment, a sealed memory file"
# Counters of the server that is still there at the end.
if [ "$mode" = churn ] || [ "$mode" = gone ] || [ "$mode" = truncate ] ||
   [ "$mode" = late ]; then
	e2e_pass "same_host_send $mode: $prov (single_copy ${copies:-0})"
fi
# The server's adapter took 17 receives and wrote 17 CQEs; 76536 bytes
# arrived in the messages that succeeded.
[ "$(stat server recv_wqes)" = 17 ] ||
	e2e_fail "server recv_wqes $(stat server recv_wqes), want 17"
[ "$(stat server cqes)" = 17 ] ||
	e2e_fail "server cqes $(stat server cqes), want 17"
[ "$(stat server bytes_rx)" = 76536 ] ||
	e2e_fail "server bytes_rx $(stat server bytes_rx), want 76536"
e2e_pass "same_host_send $mode: $prov (single_copy ${copies:-0})"
