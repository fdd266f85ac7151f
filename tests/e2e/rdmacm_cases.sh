#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# rdma_cm's refusals and failures (rdmacm_cases.c) under pvrdma-sim.
#
#   rdmacm_cases.sh SERVER_PROVIDER CLIENT_PROVIDER MODE
# Pair modes (no-listener, reject, peer-killed) run a server and a client;
# the others one process.
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

sprov=$(provider_of "$1")
cprov=$(provider_of "$2")
mode=$3
e2e_setup
port=$(e2e_port)
sip=127.1.0.1
prog="$E2E_BIN/rdmacm_cases --mode $mode --addr $sip --port $port"

case $mode in
no-listener|reject|peer-killed)
	run_cm_pair "$sprov" "$cprov" $sip 127.1.0.2 \
		"$prog --server" "$prog --client"
	expect_rc "rdmacm_cases client" "$client_rc" 0
	expect_out client "passed"
	if [ "$mode" = peer-killed ]; then
		[ "$server_rc" != 124 ] || e2e_fail "server hung"
		[ "$server_rc" != 0 ] || e2e_fail "server survived SIGKILL"
		expect_out server "dying now"
	else
		expect_rc "rdmacm_cases server" "$server_rc" 0
	fi
	;;
*)
	sim_run single "$sprov" "--ipv4 $sip" $prog
	expect_rc "rdmacm_cases $mode" "$rc" 0
	expect_out single "passed"
	;;
esac
e2e_pass "rdma_cm $mode: $sprov server, $cprov client"
