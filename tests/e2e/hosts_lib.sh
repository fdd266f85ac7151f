# SPDX-License-Identifier: BSD-2-Clause
# Hosts for the cluster tests, sourced after lib.sh: network namespaces
# joined by a bridge play the hosts of a cluster, 198.51.100.1 .. .N on
# their eth0 (a documentation range, configured only inside the
# namespaces: nothing leaves the machine), and a head node at
# 198.51.100.254 whose namespace holds the bridge. Each host's namespace is
# pvs-rsh-PID-ADDRESS: named after its address, as pvrdma-sim-rsh's
# "ip netns exec" transport needs.
#
#   hosts_up N       the head node and hosts 1 .. N (skips, 77, where
#                    namespaces cannot be made)
#   hosts_ns ADDR    a host's namespace
#   hosts_down       removes them all (hosts_up sets it to run at exit)
#   HOSTS_HEAD       the head node's namespace
#   HOSTS_ADDRS      the hosts' addresses
HOSTS_NET=198.51.100
HOSTS_PREFIX=pvs-rsh-$$
HOSTS_HEAD=$HOSTS_PREFIX-head
HOSTS_ADDRS=""

hosts_skip() {
	echo "SKIP: $*"
	exit 77
}

hosts_ns() {
	echo "$HOSTS_PREFIX-$1"
}

hosts_down() {
	local ns
	for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }'); do
		case $ns in
		"$HOSTS_PREFIX"-*) ip netns del "$ns" 2>/dev/null ;;
		esac
	done
}

hosts_up() {
	local n=$1 i addr ns
	[ "$(id -u)" = 0 ] || hosts_skip "needs root for network namespaces"
	command -v ip >/dev/null 2>&1 || hosts_skip "no ip(8)"
	command -v setpriv >/dev/null 2>&1 || hosts_skip "no setpriv(1)"
	trap 'hosts_down; e2e_cleanup' EXIT
	ip netns add "$HOSTS_HEAD" 2>/dev/null ||
		hosts_skip "cannot create a network namespace"
	ip -n "$HOSTS_HEAD" link add br0 type bridge 2>/dev/null ||
		hosts_skip "cannot create a bridge"
	ip -n "$HOSTS_HEAD" addr add "$HOSTS_NET.254/24" dev br0 &&
	ip -n "$HOSTS_HEAD" link set br0 up &&
	ip -n "$HOSTS_HEAD" link set lo up ||
		e2e_fail "cannot configure the head node"
	i=1
	while [ "$i" -le "$n" ]; do
		addr=$HOSTS_NET.$i
		ns=$(hosts_ns "$addr")
		ip netns add "$ns" || e2e_fail "ip netns add $ns"
		ip link add eth0 netns "$ns" type veth peer name "port$i" \
			netns "$HOSTS_HEAD" 2>/dev/null ||
			hosts_skip "cannot create a veth pair"
		ip -n "$ns" addr add "$addr/24" dev eth0 &&
		ip -n "$ns" link set eth0 up &&
		ip -n "$ns" link set lo up &&
		ip -n "$HOSTS_HEAD" link set "port$i" master br0 &&
		ip -n "$HOSTS_HEAD" link set "port$i" up ||
			e2e_fail "cannot configure host $addr"
		HOSTS_ADDRS="$HOSTS_ADDRS $addr"
		i=$((i + 1))
	done
}
