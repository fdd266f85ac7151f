#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# ucx_perftest between two processes under pvrdma-sim, UCX on the adapter.
#
#   ucx_perftest.sh SERVER_PROVIDER CLIENT_PROVIDER TEST [TRANSPORT]
# e.g. ucx_perftest.sh pvrdma pvrdma tag_lat; TRANSPORT rc (default) or ud.
# Passes when both sides exit 0, the client prints its "Final:" line and
# the adapters' counters show the traffic.
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

sprov=$(provider_of "$1")
cprov=$(provider_of "$2")
test=$3
transport=${4:-rc}
e2e_setup
port=$(e2e_port)

command -v ucx_perftest >/dev/null || e2e_fail "no ucx_perftest (apt install ucx-utils)"
for v in $(env | sed -n 's/^\(UCX_[A-Z_]*\)=.*/\1/p'); do
	unset "$v"
done
export UCX_NET_DEVICES=vmw_pvrdma0:1
case $transport in
rc) export UCX_TLS=^sm ;;
ud) export UCX_TLS=ud_verbs,self ;;
*) e2e_fail "unknown transport $transport" ;;
esac

case $test in
*_bw) size=65536 ;;
*) size=8 ;;
esac
stats=$RUNDIR/stats
args="-p $port"
run_pair "$sprov" "$cprov" "--stats-file $stats" "$port" \
	"ucx_perftest $args" \
	"ucx_perftest $args -t $test -s $size -n 2000 localhost"
expect_rc "ucx_perftest server" "$server_rc" 0
expect_rc "ucx_perftest client" "$client_rc" 0
expect_out client "^Final: +2000 "
expect_no_out client "[Ee]rror|Fatal"
tx=$(sed -n 's/^vmw_pvrdma0\.bytes_tx //p' "$stats" |
     awk '{ s += $1 } END { print s + 0 }')
want=$((2000 * size))
e2e_log "bytes sent over the adapters: $tx"
[ "$tx" -ge "$want" ] || e2e_fail "only $tx bytes went over the adapters, want $want"
e2e_pass "ucx_perftest $test ($transport): $sprov server, $cprov client"
