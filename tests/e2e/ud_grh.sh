#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The GRH area of UD receives (ud_grh.c) over one GID of a RoCE mode.
#
#   ud_grh.sh SERVER_PROVIDER CLIENT_PROVIDER ROCE GID_INDEX MODE
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

sprov=$(provider_of "$1")
cprov=$(provider_of "$2")
roce=$3
gid=$4
mode=$5
e2e_setup
port=$(e2e_port)

args="--port $port --gid-index $gid --mode $mode"
run_pair "$sprov" "$cprov" "--roce $roce" "$port" \
	"$E2E_BIN/ud_grh --server $args" "$E2E_BIN/ud_grh --client $args"
expect_rc "ud_grh client" "$client_rc" 0
expect_rc "ud_grh server" "$server_rc" 0
expect_out server "passed"
expect_out client "passed"
expect_no_out server "^FAIL"
expect_no_out client "^FAIL"
e2e_pass "ud_grh RoCE v$roce GID $gid ($mode): $sprov server, $cprov client"
