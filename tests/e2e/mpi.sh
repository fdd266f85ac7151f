#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Open MPI over UCX over the simulated adapter: mpirun itself runs under
# pvrdma-sim, so every rank it starts inherits the preload and gets an
# adapter of its own on the run directory's fabric, as ranks in separate
# virtual machines would.
#
#   mpi.sh PROVIDER NP TRANSPORT
#     TRANSPORT rc       UCX picks its transports on the adapter (rc_verbs)
#               ud       ud_verbs only
#               default  no UCX variable at all (UCX may use shared memory)
#
# Passes when mpi_check passes (every message and collective verified), and,
# unless TRANSPORT is default, the adapters' counters show the data: more
# bytes sent over them than the ping-pong and bandwidth tests move.
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

# mpirun starts every rank; 4 ranks on a loaded 2-core machine take a while.
E2E_TIMEOUT=${E2E_TIMEOUT_MPI:-180}
prov=$(provider_of "$1")
np=$2
transport=$3
e2e_setup

command -v mpirun >/dev/null || e2e_fail "no mpirun (apt install openmpi-bin)"
[ -x "$E2E_BIN/mpi_check" ] || e2e_fail "mpi_check was not built (libopenmpi-dev)"

# UCX_NET_DEVICES keeps UCX's network transports on the adapter; the shared
# memory transports are not network devices: on one host UCX would take
# them, so UCX_TLS leaves them out where the test is about the adapter.
case $transport in
rc) ucx="-x UCX_NET_DEVICES=vmw_pvrdma0:1 -x UCX_TLS=^sm" ;;
ud) ucx="-x UCX_NET_DEVICES=vmw_pvrdma0:1 -x UCX_TLS=ud_verbs,self" ;;
default) ucx="" ;;
*) e2e_fail "unknown transport $transport" ;;
esac
for v in $(env | sed -n 's/^\(UCX_[A-Z_]*\)=.*/\1/p'); do
	unset "$v"
done

stats=$RUNDIR/stats
# shellcheck disable=SC2086
sim_run mpirun "$prov" "--stats-file $stats" \
	mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" \
	--mca pml ucx $ucx "$E2E_BIN/mpi_check" --iters 20
expect_rc mpirun "$rc" 0
expect_out mpirun "^mpi_check: passed"
expect_out mpirun "^4194304 " "the 4 MiB row"
expect_no_out mpirun "^FAIL"

if [ "$transport" != default ]; then
	tx=$(sed -n 's/^vmw_pvrdma0\.bytes_tx //p' "$stats" |
	     awk '{ s += $1 } END { print s + 0 }')
	e2e_log "bytes sent over the adapters: $tx"
	# 4 MiB windows of 16 messages alone are 64 MiB.
	[ "$tx" -gt 67108864 ] ||
		e2e_fail "only $tx bytes went over the adapters"
fi
e2e_pass "mpi_check, $np ranks, $transport: $prov"
