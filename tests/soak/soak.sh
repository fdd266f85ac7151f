#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A randomized multi-process soak of pvrdma-sim: rounds of RDMA programs
# on one host (verbs and rdma_cm), some of them killed with SIGKILL at
# random times, for DURATION seconds. After every round it checks that
#   - nothing hung: every process of the round ended by itself, the
#     survivor of a killed peer within GRACE seconds of the kill (a
#     program waiting for a peer that is gone may wait forever: it is
#     then ended and counted, not failed), and the long-lived target
#     (same_host_hub, which all rounds' hub clients use) still answers;
#   - nothing failed: a process none of whose peers was killed exited 0,
#     and none crashed (died of SIGSEGV, SIGABRT, SIGBUS, SIGILL, SIGFPE);
#   - a peer's death was told: an rping server that pinged with its client
#     is told of the client's death (DISCONNECTED) and exits within GRACE;
#   - nothing leaked: the target holds no QP, descriptor or ring file of
#     a client that is gone; the run directory holds no file of a process
#     that exited, nor of one that died of a signal in an earlier round
#     (the next process to start prunes those); no pvrdma file is left in
#     /dev/shm.
#
#   tests/soak/soak.sh [-b BUILD_DIR] [-n JOBS] [-s SEED] [-k] DURATION
# JOBS: jobs started a round (default 4; a job is one or two processes);
# SEED: the random seed (default: the pid), printed so a run can be
# repeated; -k: keep the work directory (logs) even when it passes.
# Exits 0 when every round passed, 1 otherwise; the summary counts rounds,
# processes, kills and findings.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build
jobs_per_round=4
seed=$$
keep=0
while getopts b:n:s:k o; do
	case $o in
	b) build=$(cd "$OPTARG" && pwd) || exit 1 ;;
	n) jobs_per_round=$OPTARG ;;
	s) seed=$OPTARG ;;
	k) keep=1 ;;
	*) echo "usage: $0 [-b BUILD_DIR] [-n JOBS] [-s SEED] [-k] DURATION"
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
duration=${1:?"usage: $0 [-b BUILD_DIR] [-n JOBS] [-s SEED] [-k] DURATION"}
sim=$build/bin/pvrdma-sim
bin=$build/tests/e2e
[ -x "$sim" ] && [ -x "$bin/same_host_hub" ] ||
	{ echo "soak: build $build first"; exit 1; }
RANDOM=$seed
GRACE=20		# s a survivor of a killed peer may still run
ROUND_LIMIT=120		# s a round may run: beyond, a process hung
work=$(mktemp -d "${TMPDIR:-/tmp}/pvrdma-soak.XXXXXX") || exit 1
run=$work/run
mkdir -p "$run" "$work/logs"
rounds=0 procs=0 kills=0 peer_waits=0 findings=0
declare -A killed_at=()		# pid -> round it was killed in (by us)
declare -A job_killed=()	# job -> 1 when one of its peers was killed
hub_pid=0 hub_port=0 hub_log="" hub_fds=0 hub_rings=0

say() { printf '[soak] %s\n' "$*"; }
finding() {
	findings=$((findings + 1))
	say "FINDING: $*"
}

# A TCP port nothing listens on.
port_next=$((30000 + seed % 20000))
free_port() {
	while ss -Hltn "sport = :$port_next" 2>/dev/null | grep -q .; do
		port_next=$((port_next + 1))
	done
	port=$port_next
	port_next=$(( (port_next - 29999) % 25000 + 30000 ))
}

wait_listen() {	# PORT PID
	local i
	for i in $(seq 200); do
		ss -Hltn "sport = :$1" 2>/dev/null | grep -q . && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

wait_cm() {	# IPV4 PID: its rdma_cm agent answers
	local name i
	name="@pvrdma-sim-cm:$run/$(printf '00000000000000000000ffff%02x%02x%02x%02x' ${1//./ })"
	for i in $(seq 200); do
		grep -qF -- "$name" /proc/net/unix && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# Starts one process of job J under the sim: "J NAME OPTS -- CMD..."; its
# pid goes to the job's pid file (the launcher execs the program, so it is
# the program's pid).
start() {
	local j=$1 name=$2 opts=$3 prov
	shift 3
	prov=pvrdma
	[ $((RANDOM % 2)) = 0 ] && prov=vmw_pvrdma
	# shellcheck disable=SC2086
	"$sim" --provider $prov --rundir "$run" $opts -- "$@" \
		>"$work/logs/r$rounds.j$j.$name.log" 2>&1 &
	echo "$! $name" >>"$work/j$j.pids"
	last=$!
}

# The body of a job, in a subshell of its own: starts its processes,
# waits for them and writes their exit statuses.
job_body() {
	local j=$1 kind=$2 port=$3 a b sp cp args n
	n=$((50 + RANDOM % 400))
	case $kind in
	hub_mixed)
		start "$j" mixed "" "$bin/same_host_hub" --client \
			--port "$hub_port" --mode mixed --expect "$n" ;;
	hub_writer)
		start "$j" writer "" "$bin/same_host_hub" --client \
			--port "$hub_port" --mode writer --expect $((1 + n % 3)) ;;
	rc_pingpong|srq_pingpong)
		args="-d vmw_pvrdma0 -g 0 -p $port -n $((n * 4)) -s 4096"
		[ $((RANDOM % 2)) = 0 ] && args="$args -e"
		start "$j" server "" ibv_$kind $args
		sp=$last
		wait_listen "$port" "$sp" &&
			start "$j" client "" ibv_$kind $args localhost ;;
	ib_write_bw|ib_read_bw|ib_atomic_bw|ib_send_lat)
		args="-d vmw_pvrdma0 -F -p $port -n $((n * 4))"
		start "$j" server "" "$kind" $args
		sp=$last
		wait_listen "$port" "$sp" &&
			start "$j" client "" "$kind" $args localhost ;;
	rping|ucmatose)
		a=127.4.$((j % 250)).$((1 + rounds % 250))
		b=127.5.$((j % 250)).$((1 + rounds % 250))
		if [ "$kind" = rping ]; then
			# its pings, line by line: connected_rping
			start "$j" server "--ipv4 $a" stdbuf -oL rping -s \
				-a "$a" -p "$port" -C "$n" -V -v
		else
			start "$j" server "--ipv4 $a" ucmatose -p "$port" -c 2 \
				-C 10
		fi
		sp=$last
		if wait_cm "$a" "$sp"; then
			sleep 0.2	# from agent to listener
			if [ "$kind" = rping ]; then
				start "$j" client "--ipv4 $b" rping -c -a "$a" \
					-p "$port" -C "$n" -V
			else
				start "$j" client "--ipv4 $b" ucmatose -s "$a" \
					-p "$port" -c 2 -C 10
			fi
		fi ;;
	esac
	while read -r cp name; do
		wait "$cp"
		echo "$cp $name $?" >>"$work/j$j.rc"
	done <"$work/j$j.pids"
	echo done >>"$work/j$j.rc"
}

KINDS=(hub_mixed hub_mixed hub_writer rc_pingpong srq_pingpong ib_write_bw
       ib_read_bw ib_atomic_bw ib_send_lat rping ucmatose)

hub_start() {
	free_port
	hub_port=$port
	hub_log=$work/logs/hub.$rounds.log
	"$sim" --provider pvrdma --rundir "$run" -- "$bin/same_host_hub" \
		--server --port "$hub_port" >"$hub_log" 2>&1 &
	hub_pid=$!
	wait_listen "$hub_port" "$hub_pid" || finding "the hub did not start"
	hub_fds=0
	say "hub $hub_pid on port $hub_port"
}

# Asks the hub for its status line: st_clients, st_fds, st_rings.
hub_status() {
	local before i line
	before=$(grep -c '^hub: clients' "$hub_log")
	kill -USR1 "$hub_pid" 2>/dev/null || return 1
	for i in $(seq 200); do
		if [ "$(grep -c '^hub: clients' "$hub_log")" -gt "$before" ]; then
			line=$(grep '^hub: clients' "$hub_log" | tail -n 1)
			read -r _ _ st_clients _ st_fds _ st_rings _ st_served \
				<<<"$line"
			return 0
		fi
		sleep 0.05
	done
	finding "round $rounds: the hub (pid $hub_pid) did not answer in 10 s"
	return 1
}

# The process runs (a zombie its job has not reaped yet does not).
alive() {
	local st
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}

# The pids of job j's processes that still run.
live_pids() {
	local p name
	[ -f "$work/j$1.pids" ] || return 0
	while read -r p name; do
		alive "$p" && echo "$p"
	done <"$work/j$1.pids"
}

# connected_rping J PID: PID is job J's rping server and exchanged pings
# with its client (a client killed before it connected is waited for, on
# Linux too). Its client's death then ends it: the client's kernel sends a
# DREQ, and rping exits on DISCONNECTED.
connected_rping() {
	local name
	[ "$(cat "$work/j$1.kind")" = rping ] || return 1
	name=$(awk -v p="$2" '$1 == p { print $2 }' "$work/j$1.pids")
	[ "$name" = server ] &&
		grep -q "server ping data" "$work/logs/r$rounds.j$1.server.log"
}

# What a hung process was doing, for the finding.
describe() {
	local p=$1
	printf '%s (%s) wchan=%s state=%s' "$p" \
		"$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-80)" \
		"$(cat "/proc/$p/wchan" 2>/dev/null)" \
		"$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)"
}

round() {
	local j njobs start kind kill_at=() p list now t hub_killed=0 bodies=""
	local -A kill_time=()
	rounds=$((rounds + 1))
	start=$(date +%s)
	[ "$hub_pid" != 0 ] && kill -0 "$hub_pid" 2>/dev/null || hub_start
	njobs=$jobs_per_round
	for j in $(seq "$njobs"); do
		rm -f "$work/j$j.pids" "$work/j$j.rc"
		: >"$work/j$j.pids"
		job_killed[$j]=0
		kind=${KINDS[RANDOM % ${#KINDS[@]}]}
		echo "$kind" >"$work/j$j.kind"
		free_port
		job_body "$j" "$kind" "$port" 2>/dev/null &
		bodies="$bodies $!"
	done
	# Kills: up to one a job, at random times in the first 4 s; the hub
	# now and then.
	for j in $(seq "$njobs"); do
		[ $((RANDOM % 3)) = 0 ] && kill_time[$j]=$((2 + RANDOM % 40))
	done
	[ $((RANDOM % 6)) = 0 ] && kill_time[hub]=$((5 + RANDOM % 30))
	for t in $(seq 45); do
		sleep 0.1
		for j in "${!kill_time[@]}"; do
			[ "${kill_time[$j]}" = "$t" ] || continue
			if [ "$j" = hub ]; then
				list=$hub_pid
			else
				list=$(live_pids "$j" | shuf -n 1 --random-source=<(yes $RANDOM))
			fi
			[ -n "$list" ] || continue
			kill -KILL "$list" 2>/dev/null || continue
			killed_at[$list]=$rounds
			kills=$((kills + 1))
			if [ "$j" = hub ]; then
				wait "$list" 2>/dev/null
				hub_killed=1
				say "round $rounds: killed the hub $list"
			else
				job_killed[$j]=1
				kill_at[$j]=$(date +%s)
			fi
		done
	done
	# Hub clients lose their peer with the hub.
	if [ "$hub_killed" = 1 ]; then
		for j in $(seq "$njobs"); do
			case $(cat "$work/j$j.kind") in hub_*)
				job_killed[$j]=1
				kill_at[$j]=${kill_at[$j]:-$(date +%s)} ;;
			esac
		done
		hub_pid=0
	fi
	# Until every job is done; survivors of a kill get GRACE seconds.
	while :; do
		now=$(date +%s)
		list=""
		for j in $(seq "$njobs"); do
			grep -q '^done' "$work/j$j.rc" 2>/dev/null && continue
			list="$list $j"
			if [ "${job_killed[$j]}" = 1 ] &&
			   [ $((now - ${kill_at[$j]})) -ge $GRACE ]; then
				for p in $(live_pids "$j"); do
					if connected_rping "$j" "$p"; then
						finding "round $rounds:" \
						    "$(describe "$p") pinged" \
						    "its killed client and" \
						    "still runs"
					else
						say "round $rounds:" \
						    "$(describe "$p") still" \
						    "waits for its killed" \
						    "peer: ended"
						peer_waits=$((peer_waits + 1))
					fi
					kill -KILL "$p"
					killed_at[$p]=$rounds
				done
			elif [ $((now - start)) -ge $ROUND_LIMIT ]; then
				for p in $(live_pids "$j"); do
					finding "round $rounds: hung: $(describe "$p")"
					kill -KILL "$p"
					killed_at[$p]=$rounds
				done
			fi
		done
		[ -z "$list" ] && break
		sleep 0.2
	done
	# shellcheck disable=SC2086
	wait $bodies
	round_check "$njobs"
	say "round $rounds: $(cat "$work"/j*.kind | tr '\n' ' ')in" \
	    "$(($(date +%s) - start)) s; kills $kills, findings $findings"
}

# Exit statuses, the hub's state, the run directory, /dev/shm.
round_check() {
	local j p name rc f pid
	for j in $(seq "$1"); do
		procs=$((procs + $(wc -l <"$work/j$j.pids")))
		while read -r p name rc; do
			[ "$p" = done ] && continue
			# Died of a signal (SIGPIPE from a peer's socket too):
			# no exit handlers, its files wait for the next process.
			[ "$rc" -gt 128 ] && killed_at[$p]=$rounds
			# A crash is a finding, whatever happened to the peer
			# (SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV).
			case $rc in 132|134|135|136|139)
				finding "round $rounds: $(cat "$work/j$j.kind")" \
					"$name died of signal $((rc - 128))"
				continue ;;
			esac
			[ "${job_killed[$j]}" = 1 ] && continue
			[ "$rc" = 0 ] && continue
			# rping's event thread may lose its race to exit
			# (tests/e2e/lib.sh, rping_rc): 255 after the last ping.
			if [ "$rc" = 255 ] && grep -q "$name DISCONNECT EVENT" \
			   "$work/logs/r$rounds.j$j.$name.log"; then
				continue
			fi
			finding "round $rounds: $(cat "$work/j$j.kind") $name" \
				"exited $rc: $(tail -n 2 \
				"$work/logs/r$rounds.j$j.$name.log" | tr '\n' ' ')"
		done <"$work/j$j.rc"
	done
	# The hub's descriptors after its first clients are its baseline (the
	# sim opens some at the first peer).
	if [ "$hub_pid" != 0 ] && hub_status && [ "$st_served" -gt 0 ]; then
		if [ "$hub_fds" = 0 ]; then
			hub_fds=$st_fds hub_rings=$st_rings
			say "hub $hub_pid: $hub_fds fds, $hub_rings rings"
		fi
		[ "$st_clients" = 0 ] && [ "$st_fds" = "$hub_fds" ] &&
		[ "$st_rings" = "$hub_rings" ] ||
			finding "round $rounds: the hub keeps clients" \
				"$st_clients, fds $st_fds (was $hub_fds)," \
				"rings $st_rings (was $hub_rings)"
	fi
	for f in "$run"/fabric-* "$run"/sysfs-*; do
		[ -e "$f" ] || continue
		pid=${f##*/}
		pid=${pid#fabric-}
		pid=${pid#sysfs-}
		pid=${pid%%[-.]*}
		alive "$pid" && continue
		# Pruned by the next process to start, not by the killed one.
		[ "${killed_at[$pid]:-0}" = "$rounds" ] && continue
		finding "round $rounds: left in the run directory: ${f##*/}"
		rm -rf "$f"
	done
	# GID registry entries name the socket of their adapter.
	for f in "$run"/gid/*; do
		[ -L "$f" ] || continue
		pid=$(readlink "$f")
		pid=${pid##*/fabric-}
		pid=${pid%%-*}
		alive "$pid" && continue
		[ "${killed_at[$pid]:-0}" = "$rounds" ] && continue
		finding "round $rounds: left in the run directory: gid/${f##*/}" \
			"of process $pid"
		rm -f "$f"
	done
	for f in /dev/shm/*pvrdma*; do
		[ -e "$f" ] && finding "round $rounds: left in /dev/shm: $f"
	done
}

say "seed $seed, $jobs_per_round jobs a round, $duration s; work $work"
end=$(($(date +%s) + duration))
while [ "$(date +%s)" -lt "$end" ]; do
	round
done
[ "$hub_pid" != 0 ] && kill -TERM "$hub_pid" 2>/dev/null && wait "$hub_pid"
say "$rounds rounds, $procs processes, $kills kills, $peer_waits survivors" \
    "ended after their peer's death, $findings findings"
if [ "$findings" = 0 ] && [ "$keep" = 0 ]; then
	rm -rf "$work"
else
	say "logs kept in $work"
fi
[ "$findings" = 0 ]
