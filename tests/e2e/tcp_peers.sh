#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Peers across hosts cost bounded resources and stall no other peer: two
# network namespaces play two hosts (198.51.100.1, and .2, .3 and .4 on
# the other), as in multihost.sh; rping's server (persistent) waits at .1.
# A connect to an address nobody holds must not hold up the process's
# other connects; silent connections to the CM agent (4792) are closed
# when their handshake time is up. Then a peer at .3 floods the adapter's
# TCP port (4791) with connections that send half a header and the CM
# agent's with ones that send half a message, one at .4 the adapter's
# with connections that say a good HELLO: the
# server keeps its descriptors within the per-peer limits and still
# serves rping from .2.
#
#   tcp_peers.sh PROVIDER
E2E_TIMEOUT=${E2E_TIMEOUT:-120}
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

skip() {
	echo "SKIP: $*"
	exit 77
}

prov=$(provider_of "$1")
[ "$(id -u)" = 0 ] || skip "needs root for network namespaces"
command -v ip >/dev/null 2>&1 || skip "no ip(8)"
e2e_setup
NS_A=pvs-ucma-$$a NS_B=pvs-ucma-$$b
ADDR_A=198.51.100.1 ADDR_B=198.51.100.2 ADDR_C=198.51.100.3
ADDR_D=198.51.100.4 ADDR_DEAD=198.51.100.9
FLOOD=200	# connections per port
FLOOD_S=30	# held until the client is done (ended then)
SILENT_S=8	# past one handshake deadline
# The limits of pvrdma-sim(1) for each peer: connections before their
# handshake on each of the two ports, links after it (8 each; .4 may have
# some of both at once), and slack.
MAX_EXTRA_FDS=40

cleanup() {
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	e2e_cleanup
}
trap 'cleanup' EXIT

ip netns add "$NS_A" 2>/dev/null || skip "cannot create a network namespace"
ip netns add "$NS_B" || e2e_fail "ip netns add $NS_B"
ip netns exec "$NS_A" true 2>/dev/null || skip "cannot run in a namespace"
ip link add "$NS_A" netns "$NS_A" type veth peer name "$NS_B" \
	netns "$NS_B" || skip "cannot create a veth pair"
ip -n "$NS_A" addr add "$ADDR_A/24" dev "$NS_A" &&
ip -n "$NS_B" addr add "$ADDR_B/24" dev "$NS_B" &&
ip -n "$NS_B" addr add "$ADDR_C/24" dev "$NS_B" &&
ip -n "$NS_B" addr add "$ADDR_D/24" dev "$NS_B" &&
ip -n "$NS_A" link set "$NS_A" up &&
ip -n "$NS_B" link set "$NS_B" up &&
ip -n "$NS_A" link set lo up &&
ip -n "$NS_B" link set lo up || e2e_fail "cannot configure the namespaces"
mkdir -p "$RUNDIR/$NS_A" "$RUNDIR/$NS_B"

# sim NS ADDR: the command line that runs a program under the sim in NS.
sim() {
	echo "ip netns exec $1 timeout -k 5 $E2E_TIMEOUT" \
	     "${E2E_PRELOAD:+env LD_PRELOAD=$E2E_PRELOAD}" \
	     "$E2E_SIM --provider $prov --rundir $RUNDIR/$1 --ipv4 $2 --"
}

# The process named $2 among $1 and its descendants.
find_proc() {
	local p
	[ "$(cat /proc/"$1"/comm 2>/dev/null)" = "$2" ] && echo "$1" &&
		return 0
	for p in $(pgrep -P "$1"); do
		find_proc "$p" "$2" && return 0
	done
	return 1
}

listening() {
	ip netns exec "$NS_A" ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

e2e_log "server: $(sim "$NS_A" $ADDR_A) rping -s -P -a $ADDR_A -V -C 10"
# shellcheck disable=SC2046
$(sim "$NS_A" $ADDR_A) rping -s -P -a $ADDR_A -V -C 10 \
	>"$RUNDIR/server.out" 2>&1 &
spid=$!
E2E_PIDS="$E2E_PIDS $spid"
i=0
until listening 4792; do
	i=$((i + 1))
	[ "$i" -lt 300 ] && kill -0 "$spid" 2>/dev/null ||
		e2e_fail "the server's CM agent never listened"
	sleep 0.1
done
rp=$(find_proc "$spid" rping) || e2e_fail "no rping process"
base=$(ls /proc/"$rp"/fd | wc -l)

# A connect to an address nobody holds (its SYN never leaves: no ARP
# answer) holds up no other connect of the process: LIVE's CM agent
# answers first (a reject: nobody listens at that port).
# shellcheck disable=SC2046
$(sim "$NS_B" $ADDR_B) "$E2E_BIN/cm_blackhole" $ADDR_DEAD $ADDR_A 7999 \
	>"$RUNDIR/blackhole.out" 2>&1
rc=$?
cat "$RUNDIR/blackhole.out"
expect_rc cm_blackhole "$rc" 0
expect_out blackhole "cm_blackhole: passed"

# A few silent connections, within the limits: closed when their
# handshake time is up (and opened again by the flood).
e2e_log "silent: tcp_flood $ADDR_C $ADDR_A 4792 4 $SILENT_S"
ip netns exec "$NS_B" timeout -k 5 "$E2E_TIMEOUT" "$E2E_BIN/tcp_flood" \
	$ADDR_C $ADDR_A 4792 4 $SILENT_S >"$RUNDIR/silent.out" 2>&1
cat "$RUNDIR/silent.out"
grep -q "closed by the peer" "$RUNDIR/silent.out" ||
	e2e_fail "tcp_flood did not finish"
grep -q " 0 closed by the peer" "$RUNDIR/silent.out" &&
	e2e_fail "silent connections to the CM agent were never closed"

# A first client: the server's adapter is open (and listens) from now on.
client() {
	e2e_log "$1: $(sim "$NS_B" $ADDR_B) rping -c -a $ADDR_A -C 10 -V -v"
	# shellcheck disable=SC2046
	$(sim "$NS_B" $ADDR_B) rping -c -a $ADDR_A -C 10 -V -v \
		>"$RUNDIR/$1.out" 2>&1
	eval "$1_rc=$?"
	rping_rc "$1"
	expect_out "$1" "ping data: rdma-ping-9: "
}
client client1
listening 4791 || e2e_fail "the server's adapter does not listen"
base=$(ls /proc/"$rp"/fd | wc -l)

# A flood at both ports: half a header or half a message from .3, good
# HELLOs from .4.
for f in $ADDR_C:4791:half $ADDR_D:4791:hello $ADDR_C:4792:half; do
	from=${f%%:*} port=${f#*:} how=${f##*:}
	port=${port%:*}
	e2e_log "flood: tcp_flood $from $ADDR_A $port $FLOOD $FLOOD_S $how"
	ip netns exec "$NS_B" timeout -k 5 "$E2E_TIMEOUT" \
		"$E2E_BIN/tcp_flood" $from $ADDR_A $port $FLOOD $FLOOD_S \
		$how >"$RUNDIR/flood_$port$how.out" 2>&1 &
	E2E_PIDS="$E2E_PIDS $!"
done
sleep 3
fds=$(ls /proc/"$rp"/fd | wc -l)
e2e_log "server descriptors: $base before the flood, $fds under it"
[ "$fds" -le $((base + MAX_EXTRA_FDS)) ] ||
	e2e_fail "the flood took $((fds - base)) descriptors of the server"

# Another peer is served meanwhile.
client client2
e2e_pass "a flooding peer at both TCP ports: $prov"
