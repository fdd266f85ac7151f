#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A client of rdma_cm ends without a word to its CM, on the same host as
# its server: the server is told (cm_peer_death.c) and does not wait for
# ever.
#
#   cm_peer_death.sh SERVER_PROVIDER CLIENT_PROVIDER STAGE DEATH
#   cm_peer_death.sh SERVER_PROVIDER CLIENT_PROVIDER rping
# STAGE: req | rep | established; DEATH: kill | exit | crash.
# rping: an rping client pinging its server is SIGKILLed; the server gets
# DISCONNECTED and exits within the hang guard.
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

sprov=$(provider_of "$1")
cprov=$(provider_of "$2")
stage=$3
death=${4:-kill}
e2e_setup
port=$(e2e_port)
sip=127.1.0.1


# rping_killed: an rping client is killed once it pings.
rping_killed() {
	sim_start server "$sprov" "--ipv4 $sip" rping -s -a $sip -p "$port" \
		-C 1000000 -V
	wait_cm_agent $sip "$bg_pid" || e2e_fail "the server never opened rdma_cm"
	rping_client_killed "$bg_pid" sim_start client "$cprov" \
		"--ipv4 127.1.0.2" rping -c -a $sip -p "$port" -C 1000000 -V -v
	e2e_pass "rping: the server sees its killed client go: $sprov server"
}

[ "$stage" = rping ] && rping_killed
sync=$RUNDIR/connected
prog="$E2E_BIN/cm_peer_death --addr $sip --port $port --stage $stage"
prog="$prog --death $death --sync $sync"
run_cm_pair "$sprov" "$cprov" $sip 127.1.0.2 "$prog --server" "$prog --client"
expect_death client "$client_rc" "$death"
expect_out client "$death at $stage"
expect_rc "cm_peer_death server" "$server_rc" 0
expect_out server "passed"
e2e_pass "the client's $death at $stage: the server is told: $sprov, $cprov"
