#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A stopped requester stalls no other process: a target (same_host_hub)
# serves two requesters of its host. One streams 1 MiB RDMA WRITEs into it
# and is stopped with SIGSTOP for 3 s in the middle of the stream; the
# other ping-pongs SENDs with the target all along, and none of its round
# trips may take the bound of pvrdma-sim(1) (1 s), while the stop lasts
# three. Then the writer continues and checks what it wrote.
#
#   same_host_stall.sh PROVIDER
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

# Until every thread of process $1 is stopped (a group stop reaches them
# one by one).
all_stopped() {
	local i=0
	while grep -qs '^[^)]*) [^Tt]' /proc/"$1"/task/*/stat; do
		i=$((i + 1))
		[ "$i" -lt 500 ] || e2e_fail "process $1 does not stop"
		sleep 0.01
	done
}

prov=$(provider_of "$1")
bound_ms=1000
e2e_setup
port=$(e2e_port)
hub="$E2E_BIN/same_host_hub --port $port"

sim_start hub "$prov" "" $hub --server --expect 2
hpid=$bg_pid
wait_listen "$port" "$hpid" || e2e_fail "the hub never listened"
sim_start writer "$prov" "" $hub --client --mode writer --expect 50
wpid=$bg_pid
# until NAME.out has a line matching ERE
wait_out() {
	local i=0
	until grep -q "$2" "$RUNDIR/$1.out"; do
		i=$((i + 1))
		[ "$i" -lt 600 ] || e2e_fail "$1: no line matching '$2'"
		sleep 0.1
	done
}
wait_out writer "^writer: streaming"
sim_start pinger "$prov" "" $hub --client --mode pinger --expect $bound_ms
ppid=$bg_pid
wait_out pinger "^pinger: ping-ponging"
sleep 0.5
# The program under timeout(1): the launcher execs it.
wprog=$(pgrep -P "$wpid")
[ -n "$wprog" ] || e2e_fail "no writer process"
hprog=$(pgrep -P "$hpid")
[ -n "$hprog" ] || e2e_fail "no hub process"
# Stopped right after one of its copies into the hub (the system call its
# stopped thread shows is process_vm_writev, 311, to the hub's pid): where
# a requester that copies under the target's lock would hold it.
copy=$(printf '^311 0x%x ' "$hprog")
tries=0
while :; do
	kill -STOP "$wprog"
	all_stopped "$wprog"
	grep -qs "$copy" /proc/"$wprog"/task/*/syscall && break
	kill -CONT "$wprog"
	tries=$((tries + 1))
	[ "$tries" -lt 2000 ] || e2e_fail "the writer was never caught copying"
	sleep 0.005
done
e2e_log "stopped the writer ($wprog) after a copy (try $tries); 3 s"
sleep 3
kill -CONT "$wprog"
e2e_log "continued the writer"
sleep 0.5
pprog=$(pgrep -P "$ppid")
kill -USR1 "$pprog" "$wprog"
sim_wait "$ppid"
expect_rc pinger "$rc" 0
sim_wait "$wpid"
expect_rc writer "$rc" 0
sim_wait "$hpid"
expect_rc hub "$rc" 0
expect_out pinger "^pinger: passed"
expect_out writer "^writer: passed"
grep -h "round trips" "$RUNDIR/pinger.out"
e2e_pass "a writer stopped 3 s held the other requester up < $bound_ms ms"
