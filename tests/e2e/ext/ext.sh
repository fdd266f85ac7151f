#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# libpvrdma's extensions end to end, on pvrdma-sim with our provider.
#
#   ext.sh verbs MODE      ext_verbs MODE on two adapters of one process
#   ext.sh perftest RUN    ib_write_bw between two processes:
#        write_bw_inline         --inline_size=64 (bounce-slot inline)
#        write_bw_postlist       -l 8 (one doorbell per list)
#        write_bw_new_post_send  default: ibv_create_qp_ex + ibv_wr_*
E2E_SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$E2E_SRC/lib.sh"

e2e_setup
case $1 in
verbs)
	sim_run ext pvrdma "--adapters 2" "$E2E_BIN/ext_verbs" "$2"
	expect_rc "ext_verbs $2" "$rc" 0
	expect_out ext "^$2: ok$"
	e2e_pass "ext_verbs $2"
	;;
perftest)
	port=$(e2e_port)
	iters=200
	case $2 in
	write_bw_inline) extra="-s 64 --inline_size=64" ;;
	write_bw_postlist) extra="-s 256 -l 8" ;;
	write_bw_new_post_send) extra="-s 1024" ;;
	*) e2e_fail "unknown perftest run $2" ;;
	esac
	args="-x 0 -d vmw_pvrdma0 -F -p $port -n $iters $extra"
	# shellcheck disable=SC2086
	run_pair pvrdma pvrdma "--mtu 1024" "$port" \
		"ib_write_bw $args" "ib_write_bw $args localhost"
	expect_rc "ib_write_bw server" "$server_rc" 0
	expect_rc "ib_write_bw client" "$client_rc" 0
	expect_out client "^ *[0-9]+ +$iters +[0-9]+\.[0-9]+" \
		"result line, $iters iterations"
	expect_no_out client "Couldn't|[Ff]ailed|[Ee]rror"
	e2e_pass "ib_write_bw $extra on libpvrdma"
	;;
*)
	e2e_fail "usage: ext.sh verbs MODE | perftest RUN"
	;;
esac
