#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A perftest program between two processes under pvrdma-sim.
#
#   perftest.sh SERVER_PROVIDER CLIENT_PROVIDER PROGRAM [EXTRA ARGS...]
# e.g. perftest.sh pvrdma pvrdma ib_send_bw -c UD
# Passes when both sides exit 0 and the client prints its result line with
# every iteration counted.
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

sprov=$(provider_of "$1")
cprov=$(provider_of "$2")
prog=$3
shift 3
extra="$*"
e2e_setup
port=$(e2e_port)

iters=${E2E_ITERS:-100}
args="-x 0 -d vmw_pvrdma0 -F -p $port -n $iters $extra"
run_pair "$sprov" "$cprov" "--mtu 1024" "$port" \
	"$prog $args" "$prog $args localhost"
expect_rc "$prog server" "$server_rc" 0
expect_rc "$prog client" "$client_rc" 0
# " #bytes  #iterations  <numbers...>": the result table's line.
expect_out client "^ *[0-9]+ +$iters +[0-9]+\.[0-9]+" "result line, $iters iterations"
expect_no_out client "Couldn't|[Ff]ailed|[Ee]rror"
e2e_pass "$prog $extra: $sprov server, $cprov client"
