#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# One of our e2e verbs programs as a server/client pair under pvrdma-sim.
#
#   verbs_pair.sh SERVER_PROVIDER CLIENT_PROVIDER PROGRAM [MODE]
# MODE peer-killed: the server kills itself on purpose; it must die (by
# signal, not by the hang guard) and the client must still pass.
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

sprov=$(provider_of "$1")
cprov=$(provider_of "$2")
prog=$3
mode=${4:-}
e2e_setup
port=$(e2e_port)

args="--port $port${mode:+ --mode $mode}"
run_pair "$sprov" "$cprov" "" "$port" \
	"$E2E_BIN/$prog --server $args" "$E2E_BIN/$prog --client $args"
expect_rc "$prog client" "$client_rc" 0
expect_out client "passed"
if [ "$mode" = peer-killed ]; then
	[ "$server_rc" != 124 ] || e2e_fail "$prog server hung"
	[ "$server_rc" != 0 ] || e2e_fail "$prog server survived SIGKILL"
	expect_out server "dying now"
else
	expect_rc "$prog server" "$server_rc" 0
	expect_out server "passed|done"
fi
expect_no_out client "^FAIL"
expect_no_out server "^FAIL"
e2e_pass "$prog${mode:+ $mode}: $sprov server, $cprov client"
