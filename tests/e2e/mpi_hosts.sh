#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# An MPI job over several hosts, started as users start one: mpirun on a
# head node, a hostfile, and Open MPI's rsh agent pvrdma-sim-rsh, which
# runs each host's daemon (and so its ranks) under pvrdma-sim with the
# adapter at that host's address and a run directory of that host.
#
#   mpi_hosts.sh SCENARIO
#
# The hosts are network namespaces joined by a bridge (hosts_lib.sh); the
# agent reaches them with "ip netns exec", then drops to what an
# unprivileged container or Kubernetes pod has: user nobody, no
# capabilities, no new privileges. mpirun runs on the head node, which is
# on no host's list, so every rank is started by the agent.
#
# SCENARIO:
#   job          4 hosts, 2 ranks each (-np 8): mpi_check (allreduce,
#                alltoall, a ping-pong between every pair of ranks, data
#                checked); the hosts' links carried the traffic between
#                hosts, single copies the traffic within them
#   host_down    one host's namespace is removed before the start: the job
#                fails, the agent's error names the host, no hang
#   rank_killed  a rank is killed mid-run: Open MPI reports it, no hang
#   alltoall N   N hosts, 8 ranks: the time of an 8-rank alltoall (bench/run)
#
# Needs root and ip(8) with network namespaces: otherwise the test reports
# itself skipped (exit 77) with the reason.
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"
. "$E2E_SRC/hosts_lib.sh"

scenario=${1:-}
E2E_TIMEOUT=${E2E_TIMEOUT_MPI:-240}
NRANKS=8
AGENT=$(dirname "$E2E_SIM")/pvrdma-sim-rsh

command -v mpirun >/dev/null || e2e_fail "no mpirun (apt install openmpi-bin)"
[ -x "$E2E_BIN/mpi_check" ] || e2e_fail "mpi_check was not built (libopenmpi-dev)"
[ -x "$AGENT" ] || e2e_fail "no pvrdma-sim-rsh beside $E2E_SIM"
e2e_setup

# cluster_up N: N hosts, a hostfile of 8 slots over them, a directory the
# unprivileged ranks may write (run directories, statistics) and a
# temporary directory for each host and the head node.
#
# The namespaces share /tmp and the host name, which real hosts never do.
# Open MPI keeps a daemon's session directory in TMPDIR under the host name
# and user, and a daemon starting clears its job's tree there: with one
# TMPDIR the daemons of a job removed each other's files as they started.
# One that lost its directory exited, silently (it is daemonized), and
# mpirun waited for it for good, before any rank ran.
cluster_up() {
	local n=$1 a
	hosts_up "$n"
	: >"$RUNDIR/hostfile"
	CLUSTER=$RUNDIR/cluster
	chmod 755 "$RUNDIR"
	mkdir -p "$CLUSTER" "$RUNDIR/tmp-head"
	for a in $HOSTS_ADDRS; do
		echo "$a slots=$(((NRANKS + n - 1) / n))" >>"$RUNDIR/hostfile"
		mkdir -p "$CLUSTER/tmp-$a"
	done
	chown -R 65534:65534 "$CLUSTER"
	# pvrdma-sim-rsh's settings, read on the head node. The transport:
	# the host's namespace and temporary directory, then a user with no
	# capabilities.
	export PVRDMA_SIM_RSH="ip netns exec $HOSTS_PREFIX-%h env TMPDIR=$CLUSTER/tmp-%h setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs"
	export PVRDMA_SIM_RSH_RUNDIR="$CLUSTER/run-%h"
	export PVRDMA_SIM_OPTS="--provider pvrdma --stats-file $CLUSTER/stats-%h.%p"
	for v in $(env | sed -n 's/^\(UCX_[A-Z_]*\)=.*/\1/p'); do
		unset "$v"
	done
}

# job NAME MPI_CHECK_ARGS...: mpirun on the head node, in the background
# (pid in $bg_pid). UCX on the adapter only, shared memory left out, so
# same-host ranks meet on the adapter's single-copy path; yielding ranks,
# 8 of them on this machine's cores.
job() {
	local name=$1
	shift
	e2e_log "$name (background): mpirun ... mpi_check $*"
	ip netns exec "$HOSTS_HEAD" env TMPDIR="$RUNDIR/tmp-head" \
		timeout -k 5 "$E2E_TIMEOUT" \
		mpirun --allow-run-as-root --hostfile "$RUNDIR/hostfile" \
		-np "$NRANKS" --bind-to none \
		--mca plm_rsh_agent "$AGENT" --mca plm_rsh_no_tree_spawn 1 \
		--mca oob_tcp_if_include "$HOSTS_NET.0/24" \
		--mca pml ucx --mca mpi_yield_when_idle 1 \
		-x UCX_NET_DEVICES=vmw_pvrdma0:1 -x UCX_TLS=^sm \
		"$E2E_BIN/mpi_check" "$@" >"$RUNDIR/$name.out" 2>&1 &
	bg_pid=$!
	E2E_PIDS="$E2E_PIDS $bg_pid"
}

# stat_sum ADDR COUNTER: the counter summed over the adapters of ADDR's
# processes.
stat_sum() {
	cat "$CLUSTER/stats-$1".* 2>/dev/null |
		sed -n "s/^vmw_pvrdma0\.$2 //p" | awk '{ s += $1 } END { print s + 0 }'
}

# session_dirs_own: fails unless every host's Open MPI session directory
# (its daemon's and ranks') is in that host's own TMPDIR; run while the
# job runs (Open MPI removes them at its end).
session_dirs_own() {
	local a
	for a in $HOSTS_ADDRS; do
		ls -d "$CLUSTER/tmp-$a"/ompi.* >/dev/null 2>&1 ||
			e2e_fail "host $a: no Open MPI session directory in its own TMPDIR"
	done
}

# eth_tx ADDR: bytes the host's eth0 sent.
eth_tx() {
	ip netns exec "$(hosts_ns "$1")" cat /sys/class/net/eth0/statistics/tx_bytes
}

scenario_job() {
	local a tx eth sc pair
	cluster_up 4
	job mpirun --iters 5 --max-size 4194304 --all-pairs
	sim_wait "$bg_pid"
	expect_rc mpirun "$rc" 0
	expect_out mpirun "^mpi_check: passed"
	expect_out mpirun "^# all pairs: 28 pairs" "the ping-pong of every pair"
	expect_no_out mpirun "^FAIL"
	# Every rank ran on its host's adapter, 2 per host, as nobody (the
	# owner of its statistics), in its host's run directory.
	for a in $HOSTS_ADDRS; do
		[ -z "$(find "$CLUSTER" -name "stats-$a.*" ! -uid 65534)" ] ||
			e2e_fail "host $a: a rank that was not user nobody"
		[ -d "$CLUSTER/run-$a" ] || e2e_fail "host $a: no run directory"
		[ "$(grep -l '^vmw_pvrdma0\.send_wqes [1-9]' "$CLUSTER/stats-$a".* |
		     wc -l)" -eq 2 ] ||
			e2e_fail "host $a: not 2 ranks that used the adapter"
	done
	# mpi_check --all-pairs: each rank sends each rank of another host
	# 5 messages of each size, one way; at least that crossed eth0.
	pair=$(( (8 + 4096 + 262144) * 5 * 6 * 2 ))
	for a in $HOSTS_ADDRS; do
		tx=$(stat_sum "$a" bytes_tx)
		sc=$(stat_sum "$a" single_copy)
		eth=$(eth_tx "$a")
		e2e_log "host $a: adapters sent $tx bytes, $sc WRs in one copy; eth0 sent $eth bytes"
		[ "$eth" -ge "$pair" ] ||
			e2e_fail "host $a: eth0 sent $eth bytes, less than the $pair its ranks sent to other hosts"
		[ "$sc" -gt 0 ] || e2e_fail "host $a: no single copy between its ranks"
	done
	# Ranks 0 and 1 share the first host: the 4 MiB bandwidth windows
	# between them (16 messages, 64 MiB) crossed their adapters, not eth0.
	a=${HOSTS_ADDRS# }
	a=${a%% *}
	tx=$(stat_sum "$a" bytes_tx)
	eth=$(eth_tx "$a")
	[ "$tx" -ge 67108864 ] || e2e_fail "host $a: its adapters sent only $tx bytes"
	[ "$eth" -lt 67108864 ] ||
		e2e_fail "host $a: eth0 sent $eth bytes: its ranks' traffic took the wire"
	e2e_pass "mpi_check, 8 ranks on 4 hosts through pvrdma-sim-rsh"
}

scenario_host_down() {
	local gone
	cluster_up 4
	gone=$HOSTS_NET.3
	ip netns del "$(hosts_ns "$gone")" || e2e_fail "cannot remove host $gone"
	job mpirun --iters 5
	sim_wait "$bg_pid"
	[ "$rc" != 124 ] || e2e_fail "mpirun hung with host $gone gone"
	[ "$rc" != 0 ] || e2e_fail "mpirun succeeded with host $gone gone"
	expect_out mpirun "^pvrdma-sim-rsh: cannot start on host $gone( |$)" \
		"the agent names the host"
	expect_no_out mpirun "^mpi_check: passed"
	e2e_pass "a host gone at the start: the job fails naming $gone"
}

scenario_rank_killed() {
	local i=0 victim t0 pid
	cluster_up 4
	# alltoalls until killed: every rank talks to every other.
	job mpirun --alltoall-time 4096 --iters 1000000
	until grep -q '^# alltoall: ' "$RUNDIR/mpirun.out" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -lt 1200 ] && kill -0 "$bg_pid" 2>/dev/null ||
			e2e_fail "mpi_check never got to its alltoalls"
		sleep 0.1
	done
	sleep 1
	session_dirs_own
	# A rank of this test's hosts (another test's may run beside it).
	victim=
	for pid in $(pgrep -u 65534 -f "$E2E_BIN/mpi_check"); do
		case $(ip netns identify "$pid" 2>/dev/null) in
		"$HOSTS_PREFIX"-*) victim=$pid ;;
		esac
	done
	[ -n "$victim" ] || e2e_fail "no rank to kill"
	e2e_log "killing rank process $victim"
	t0=$(date +%s)
	kill -KILL "$victim"
	sim_wait "$bg_pid"
	e2e_log "mpirun ended $(($(date +%s) - t0)) s after the kill, exit $rc"
	[ "$rc" != 124 ] || e2e_fail "mpirun hung after a rank died"
	[ "$rc" != 0 ] || e2e_fail "mpirun succeeded after a rank died"
	expect_out mpirun "process rank [0-9]+ with PID $victim on node $HOSTS_NET\.[0-9]+ exited on signal 9" \
		"Open MPI's report of the dead rank"
	expect_no_out mpirun "^mpi_check: passed"
	e2e_pass "a rank killed mid-run: Open MPI reports it, no hang"
}

# The mean time of an 8-rank alltoall of 64 KiB a pair, on N hosts.
scenario_alltoall() {
	local n=${1:-4}
	cluster_up "$n"
	job mpirun --alltoall-time 65536 --iters 20
	sim_wait "$bg_pid"
	expect_rc mpirun "$rc" 0
	expect_out mpirun "^alltoall " "the timing line"
	grep '^alltoall ' "$RUNDIR/mpirun.out" | sed "s/^/hosts $n: /"
	e2e_pass "alltoall timed on $n hosts"
}

case $scenario in
job) scenario_job ;;
host_down) scenario_host_down ;;
rank_killed) scenario_rank_killed ;;
alltoall) scenario_alltoall "${2:-4}" ;;
*) e2e_fail "unknown scenario '$scenario'" ;;
esac
