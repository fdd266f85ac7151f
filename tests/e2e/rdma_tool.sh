#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# iproute2's rdma on pvrdma-sim: RDMA netlink answered as the kernel's
# nldev. rdma dev, link and system show the adapter; while an RC
# pingpong runs beside it, rdma resource lists its QPs with their pids
# and rdma statistic shows the counters rising by the traffic sent.
#
#   rdma_tool.sh PROVIDER
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

prov=$(provider_of "$1")
e2e_setup
command -v rdma >/dev/null || e2e_fail "no rdma (iproute2)"

sim_run dev "$prov" "" rdma dev
expect_rc "rdma dev" "$rc" 0
expect_out dev '^[1-9][0-9]*: vmw_pvrdma0: node_type ca fw [0-9.]+ node_guid ([0-9a-f]{4}:){3}[0-9a-f]{4} sys_image_guid' \
	"the adapter and its index"

sim_run link "$prov" "" rdma link
expect_rc "rdma link" "$rc" 0
expect_out link '^link vmw_pvrdma0/1 state ACTIVE physical_state LINK_UP netdev pvrdma0 *$' \
	"port 1 active, its netdev"

sim_run sys "$prov" "" rdma system
expect_out sys '^netns shared copy-on-fork off'

sim_run res_idle "$prov" "" rdma resource
expect_out res_idle '^[0-9]+: vmw_pvrdma0: pd 0 cq 0 qp 0 ' "nothing open yet"

# An RC pingpong long enough to be seen.
port=$(e2e_port)
size=4096
sim_start server "$prov" "" ibv_rc_pingpong -g 1 -p "$port" -s $size -n 100000000
spid=$bg_pid
wait_listen "$port" "$spid" || e2e_fail "pingpong server never listened"
sim_start client "$prov" "" ibv_rc_pingpong -g 1 -p "$port" -s $size -n 100000000 localhost
cpid=$bg_pid

# until_out NAME TRIES ERE CMD...: runs CMD until its output matches.
until_out() {
	name=$1 tries=$2 ere=$3
	shift 3
	while [ "$tries" -gt 0 ]; do
		sim_run "$name" "$prov" "" "$@"
		grep -Eq -- "$ere" "$RUNDIR/$name.out" && return 0
		tries=$((tries - 1))
		sleep 0.5
	done
	e2e_fail "$name: no line matching '$ere'"
}

until_out res_qp 40 'state RTS' rdma resource show qp
qp_re='^link vmw_pvrdma0/1 lqpn [0-9]+ rqpn [0-9]+ type RC state RTS .*pid [0-9]+ comm ibv_rc_pingpong'
sim_run res_qp "$prov" "" rdma resource show qp
n=$(grep -Ec "$qp_re" "$RUNDIR/res_qp.out")
[ "$n" = 2 ] || e2e_fail "rdma resource show qp lists $n RC QPs in RTS, want 2"
pids=$(sed -n 's/.* pid \([0-9]*\) .*/\1/p' "$RUNDIR/res_qp.out" | sort -u | wc -l)
[ "$pids" = 2 ] || e2e_fail "the two QPs belong to $pids processes, want 2"
sim_run res "$prov" "" rdma resource
expect_out res '^[0-9]+: vmw_pvrdma0: pd 2 cq [0-9]+ qp 2 .*mr 2 '

# counter NAME OUT: the value of a counter in rdma statistic's output.
counter() {
	sed -n "s/.* $1 \\([0-9]*\\) .*/\\1/p" "$RUNDIR/$2.out"
}

sim_run stat1 "$prov" "" rdma statistic show
expect_rc "rdma statistic show" "$rc" 0
sleep 1
sim_run stat2 "$prov" "" rdma statistic show
t1=$(counter tx_bytes stat1) t2=$(counter tx_bytes stat2)
s1=$(counter rdma_sends stat1) s2=$(counter rdma_sends stat2)
[ -n "$t1" ] && [ -n "$t2" ] || e2e_fail "no tx_bytes counter"
[ "$t2" -gt "$t1" ] || e2e_fail "tx_bytes did not rise ($t1, then $t2)"
[ "$s2" -gt "$s1" ] || e2e_fail "rdma_sends did not rise ($s1, then $s2)"
# Every SEND of the pingpong carries $size bytes. A SEND is counted when
# the adapter takes it from the ring and its bytes when they leave, which
# an RNR wait for the peer's receive may put off: each snapshot may hold
# one of each QP's SENDs taken and not sent yet.
d=$(((t2 - t1) - (s2 - s1) * size))
[ $(((t2 - t1) % size)) = 0 ] && [ "$d" -le $((2 * size)) ] &&
	[ "$d" -ge $((-2 * size)) ] ||
	e2e_fail "tx_bytes rose by $((t2 - t1)), $((s2 - s1)) sends of $size"

kill -TERM "-$spid" "-$cpid" 2>/dev/null
e2e_pass "rdma dev/link/system/resource/statistic on the simulated adapter"
