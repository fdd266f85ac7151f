#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The libibverbs example programs between two processes under pvrdma-sim.
#
#   pingpong.sh SERVER_PROVIDER CLIENT_PROVIDER rc|ud|srq [events]
# Passes when both sides exit 0 and both report every byte of every
# iteration ("N bytes in S seconds").
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

sprov=$(provider_of "$1")
cprov=$(provider_of "$2")
kind=$3
events=${4:-}
e2e_setup
port=$(e2e_port)

iters=200
case $kind in
rc) prog=ibv_rc_pingpong size=4096 ;;
ud) prog=ibv_ud_pingpong size=512 ;;
srq) prog=ibv_srq_pingpong size=4096 ;;
*) e2e_fail "unknown pingpong $kind" ;;
esac
args="-d vmw_pvrdma0 -g 0 -p $port -n $iters -s $size"
[ "$events" = events ] && args="$args -e"

run_pair "$sprov" "$cprov" "--mtu 1024" "$port" \
	"$prog $args" "$prog $args localhost"
expect_rc "$prog server" "$server_rc" 0
expect_rc "$prog client" "$client_rc" 0
bytes=$((size * iters * 2))
for side in server client; do
	expect_out $side "^$bytes bytes in [0-9.]+ seconds = " "all $iters iterations"
	expect_out $side "^$iters iters in [0-9.]+ seconds = "
done
e2e_pass "$prog${events:+ -e}: $sprov server, $cprov client"
