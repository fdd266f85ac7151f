#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Programs that connect through rdma_cm (librdmacm), a server and a client
# under pvrdma-sim, each with its own address (--ipv4).
#
#   rdmacm.sh SERVER_PROVIDER CLIENT_PROVIDER SCENARIO
# SCENARIO: rping, rping_ipv6 (the link-local address of GID 0), write_bw, read_bw, send_lat, send_bw_ud (perftest -R),
# ucmatose, udaddy, rdma_client, rstream_blocking, rstream_nonblocking,
# riostream_blocking, riostream_nonblocking, rcopy; mckey (one process: a
# multicast join taken, the QP's attach refused); fi_info (one process:
# libfabric's verbs provider finds the adapter's MSG endpoint, and the RDM
# one of verbs;ofi_rxm on the adapter's address); fi_pingpong_msg and
# fi_pingpong_rdm (libfabric's verbs MSG and verbs;ofi_rxm RDM endpoints
# with no FI_* variable: MSG data checked, RxM's default CQ refused);
# fi_pingpong_rdm64 (RxM with FI_UNIVERSE_SIZE=64, data checked; not in
# ctest, see there).
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

sprov=$(provider_of "$1")
cprov=$(provider_of "$2")
scenario=$3
e2e_setup
port=$(e2e_port)
sip=127.1.0.1
cip=127.1.0.2

perftest() {
	local prog=$1
	shift
	args="-R -d vmw_pvrdma0 -F -p $port -n 100 $*"
	run_cm_pair "$sprov" "$cprov" $sip $cip "$prog $args" "$prog $args $sip"
	expect_rc "$prog server" "$server_rc" 0
	expect_rc "$prog client" "$client_rc" 0
	expect_out client "^ *[0-9]+ +100 +[0-9]+\.[0-9]+" "result line, 100 iterations"
	expect_no_out client "Couldn't|[Ff]ailed|[Ee]rror"
}

# rstream / riostream: 20 transfers of 4 KiB, data verified.
rsocket_pair() {
	local prog=$1 mode=$2 args
	args="-p $port -S 4096 -C 20 -T $mode -T verify"
	run_cm_pair "$sprov" "$cprov" $sip $cip "$prog $args" \
		"$prog -s $sip $args"
	expect_rc "$prog server" "$server_rc" 0
	expect_rc "$prog client" "$client_rc" 0
	expect_out client "^custom +4k +20 " "the transfer line"
}

# fi_pingpong over libfabric's verbs provider, data checked (-c), run as a
# user would: each side on an adapter of its own address, the client
# given the server's, and none of libfabric's FI_* variables set (the
# test's environment is stripped of them). The server binds "localhost"
# to check its passive address (libfabric's verbs provider does so with
# no source address), which rdma_cm binds on RoCE with no device of its
# own. The server opens rdma_cm once the client is on its control
# socket, and tells the client its address only then: no retry needed.
fi_pingpong() {
	local name=$1 ep=$2 prov=$3 vars=$4 args spid
	# shellcheck disable=SC2046
	args="env $(env | sed -n 's/^\(FI_[A-Za-z0-9_]*\)=.*/-u \1/p') $vars"
	args="$args fi_pingpong -p $prov -e $ep -I 10 -S 65536 -c"
	# shellcheck disable=SC2086
	sim_start "${name}_server" "$sprov" "--ipv4 $sip" $args -B $port
	spid=$bg_pid
	if wait_listen "$port" "$spid"; then
		# shellcheck disable=SC2086
		sim_run "${name}_client" "$cprov" "--ipv4 $cip" $args \
			-P $port $sip
		client_rc=$rc
	else
		client_rc=-1
	fi
	sim_wait "$spid"
	server_rc=$rc
	port=$((port + 1))
}

fi_pingpong_passes() {
	expect_rc "fi_pingpong server" "$server_rc" 0
	expect_rc "fi_pingpong client" "$client_rc" 0
	expect_out "${1}_client" "^64k +10 +=10 " "the 64 KiB transfers"
	expect_out "${1}_server" "^64k +10 +=10 " "the 64 KiB transfers"
}


case $scenario in
fi_pingpong_msg)
	fi_pingpong msg msg verbs ""
	fi_pingpong_passes msg
	;;
fi_pingpong_rdm)
	# RxM sizes its MSG CQ for FI_UNIVERSE_SIZE peers (1024 by default)
	# of 128 sends and 128 receives each: 262144 CQEs, beyond the
	# adapter's max_cqe (16384), so by default the server's CQ is refused
	# (fi_enable: EINVAL) and both sides end; 64 peers fit.
	fi_pingpong rdm rdm "verbs;ofi_rxm" ""
	[ "$server_rc" -ne 0 ] && [ "$client_rc" -ne 0 ] ||
		e2e_fail "RxM's default CQ was not refused"
	expect_out rdm_server "fi_enable\(\).*ret=-22 " "the CQ beyond max_cqe"
	;;
fi_pingpong_rdm64)
	# Not in ctest: libfabric 1.17's RxM closes a connection's MSG
	# endpoint before it drains the CQ they share (rxm_close_conn), and
	# destroying the QP takes that QP's completions out of the CQ, as
	# both providers do; a side whose last completion (of the "fin" both
	# send after the checked transfers) goes that way waits for it
	# forever, here as on a VM (libfabric later drains first).
	fi_pingpong rdm64 rdm "verbs;ofi_rxm" FI_UNIVERSE_SIZE=64
	fi_pingpong_passes rdm64
	;;
rping)
	# 100 pings, every one checked by rping (-V) on both sides.
	run_cm_pair "$sprov" "$cprov" $sip $cip \
		"rping -s -a $sip -p $port -C 100 -V" \
		"rping -c -a $sip -p $port -C 100 -v -V"
	rping_rc server
	rping_rc client
	expect_out client "ping data: rdma-ping-99: " "100 pings"
	expect_no_out client "[Ee]rror|mismatch|invalid"
	expect_no_out server "[Ee]rror|mismatch|invalid"
	;;
rping_ipv6)
	# The server's port by its IPv6 link-local address (GID index 0, made
	# from the MAC), the interface lo.
	ll=fe80::250:56ff:fe01:1%lo
	run_cm_pair "$sprov" "$cprov" $sip $cip \
		"rping -s -a $ll -p $port -C 20 -V" \
		"rping -c -a $ll -p $port -C 20 -v -V" \
		"--mac 00:50:56:01:00:01" "--mac 00:50:56:01:00:02"
	rping_rc server
	rping_rc client
	expect_out client "ping data: rdma-ping-19: " "20 pings"
	;;
write_bw) perftest ib_write_bw ;;
read_bw) perftest ib_read_bw ;;
send_lat) perftest ib_send_lat ;;
send_bw_ud) perftest ib_send_bw -c UD ;;
ucmatose)
	# Four connections at once, ten messages each way on each.
	run_cm_pair "$sprov" "$cprov" $sip $cip \
		"ucmatose -p $port -c 4 -C 10" \
		"ucmatose -s $sip -p $port -c 4 -C 10"
	expect_rc "ucmatose server" "$server_rc" 0
	expect_rc "ucmatose client" "$client_rc" 0
	expect_out client "test complete" && expect_out server "test complete"
	;;
udaddy)
	# UD: the client learns the server's QP through SIDR.
	run_cm_pair "$sprov" "$cprov" $sip $cip \
		"udaddy -c 2 -C 10" \
		"udaddy -s $sip -c 2 -C 10"
	expect_rc "udaddy server" "$server_rc" 0
	expect_rc "udaddy client" "$client_rc" 0
	expect_out client "test complete" && expect_out server "test complete"
	;;
rdma_client)
	# rdma_create_ep and rdma_getaddrinfo, synchronous ids.
	run_cm_pair "$sprov" "$cprov" $sip $cip \
		"rdma_server -p $port" "rdma_client -s $sip -p $port"
	expect_rc "rdma_server" "$server_rc" 0
	expect_rc "rdma_client" "$client_rc" 0
	expect_out client "end 0" && expect_out server "end 0"
	;;
rstream_blocking) rsocket_pair rstream blocking ;;
rstream_nonblocking) rsocket_pair rstream nonblocking ;;
riostream_blocking) rsocket_pair riostream blocking ;;
riostream_nonblocking) rsocket_pair riostream nonblocking ;;
rcopy)
	head -c 300000 /dev/urandom >"$RUNDIR/src.bin"
	cm_server_serves_forever=1
	run_cm_pair "$sprov" "$cprov" $sip $cip "rcopy -p $port" \
		"rcopy $RUNDIR/src.bin $sip:$RUNDIR/dst.bin -p $port"
	expect_rc "rcopy client" "$client_rc" 0
	cmp -s "$RUNDIR/src.bin" "$RUNDIR/dst.bin" ||
		e2e_fail "rcopy: the copy differs from the source"
	;;
mckey)
	# A multicast join as on a VM: the kernel takes it, and librdmacm's
	# attach of the QP then fails (vmw_pvrdma has no multicast), which
	# mckey sees as MULTICAST_ERROR with status -1; no hang.
	sim_run mckey "$sprov" "--ipv4 $sip" mckey -m 239.1.2.3 -b $sip
	expect_rc "mckey" "$rc" 0
	expect_out mckey "^mckey: joining$" "the join taken"
	expect_out mckey \
		"^mckey: event: RDMA_CM_EVENT_MULTICAST_ERROR, error: -1$" \
		"the attach refused"
	;;
fi_info)
	sim_run fi_info "$sprov" "--ipv4 $sip" fi_info -p verbs
	expect_rc "fi_info" "$rc" 0
	expect_out fi_info "type: FI_EP_MSG" "a verbs MSG endpoint"
	expect_out fi_info "domain: vmw_pvrdma0$" "on the adapter"
	sim_run fi_info_rxm "$sprov" "--ipv4 $sip" \
		fi_info -p "verbs;ofi_rxm" -s $sip
	expect_rc "fi_info verbs;ofi_rxm" "$rc" 0
	expect_out fi_info_rxm "provider: verbs;ofi_rxm" "an RxM provider"
	expect_out fi_info_rxm "type: FI_EP_RDM" "an RDM endpoint"
	;;
*)
	e2e_fail "unknown scenario $scenario"
	;;
esac
e2e_pass "$scenario: $sprov server, $cprov client"
