#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# cq_channels (completion channels served by epoll, O_NONBLOCK, a blocked
# reader, a fork child) under pvrdma-sim, with --stats: on one host the
# client's adapter writes the server's CQEs in one copy and raises every
# one of their events on the server's channel itself (peer_events), no
# thread of the server in between; on the socket fabric
# (E2E_SIM_OPTS=--no-single-copy) the server's device raises them.
#
#   cq_channels.sh PROVIDER MODE [N]
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

prov=$(provider_of "$1")
mode=$2
n=${3:-}
e2e_setup
port=$(e2e_port)

args="--port $port --mode $mode${n:+ --expect $n}"
run_pair "$prov" "$prov" "--stats" "$port" \
	"$E2E_BIN/cq_channels --server $args" \
	"$E2E_BIN/cq_channels --client $args"
expect_rc "cq_channels client" "$client_rc" 0
expect_rc "cq_channels server" "$server_rc" 0
expect_out client "passed"
expect_out server "passed"
expect_no_out client "^FAIL"
expect_no_out server "^FAIL"

stat() {
	sed -n "s/^vmw_pvrdma0\.$2 //p" "$RUNDIR/$1.out" | tail -n 1
}

# The events the server's arms were answered with.
case $mode in
many) want=${n:-1000} ;;
blocking) want=20 ;;
*) want=1 ;;
esac
raised=$(stat client peer_events)
case " ${E2E_SIM_OPTS:-} " in
*" --no-single-copy "*)
	[ "${raised:-0}" = 0 ] ||
		e2e_fail "peer_events $raised with --no-single-copy" ;;
*)
	[ "${raised:-0}" = "$want" ] ||
		e2e_fail "peer_events ${raised:-none}, want $want: events" \
			"the requester did not raise itself" ;;
esac
e2e_pass "cq_channels $mode: $prov${raised:+, $raised raised by the peer}"
