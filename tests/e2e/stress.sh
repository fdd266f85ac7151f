#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The stress program as a server/client pair under pvrdma-sim, RUNS times
# in a row (a fresh pair each time); each run is under the hang guard, so a
# hang is a failure, not a stuck test.
#
#   stress.sh SERVER_PROVIDER CLIENT_PROVIDER [MESSAGES [RUNS [MODE]]]
# MESSAGES: what each side sends in all (default 200000); RUNS default 1;
# MODE sigstop: the client stops the server for 2 s midway (stress.c).
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

sprov=$(provider_of "$1")
cprov=$(provider_of "$2")
msgs=${3:-200000}
runs=${4:-1}
mode=${5:+--mode $5}
e2e_setup

run=1
while [ "$run" -le "$runs" ]; do
	port=$(e2e_port)
	start=$(date +%s)
	run_pair "$sprov" "$cprov" "" "$port" \
		"$E2E_BIN/stress --server --port $port --expect $msgs $mode" \
		"$E2E_BIN/stress --client --port $port --expect $msgs $mode"
	expect_rc "stress client (run $run)" "$client_rc" 0
	expect_rc "stress server (run $run)" "$server_rc" 0
	expect_out client "stress client: passed"
	expect_out server "stress server: passed"
	expect_no_out client "^FAIL"
	expect_no_out server "^FAIL"
	e2e_log "run $run of $runs: $msgs messages each way" \
		"in $(($(date +%s) - start)) s"
	grep -hE "messages sent|stopped|continued" "$RUNDIR/server.out" \
		"$RUNDIR/client.out"
	run=$((run + 1))
done
e2e_pass "stress${5:+ $5}, $runs run(s) of $msgs messages each way:" \
	"$sprov server, $cprov client"
