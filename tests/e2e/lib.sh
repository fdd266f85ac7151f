# SPDX-License-Identifier: BSD-2-Clause
# Shell library of the end-to-end tests: runs programs under pvrdma-sim, one
# alone or a server/client pair, each with a hang guard, and checks their
# exit status and output. Sourced by the scenario scripts; POSIX sh.
#
# Environment (set by tests/e2e/CMakeLists.txt for each test):
#   E2E_SIM        the pvrdma-sim launcher
#   E2E_BIN        where the e2e verbs programs are
#   E2E_PORT       a TCP port reserved for this test (a hint, see e2e_port)
#   E2E_SANITIZE   1 in the ASan+UBSan tree
#   E2E_TIMEOUT    seconds each process may run (default 60)

set -u

. "$E2E_SRC/rping_pings.sh"

E2E_TIMEOUT=${E2E_TIMEOUT:-60}
E2E_PIDS=""
E2E_PRELOAD=""
E2E_FAILED=0
RUNDIR=""

e2e_log() {
	printf '[e2e] %s\n' "$*"
}

# Prints every log of the test; ctest shows them on failure.
e2e_dump_logs() {
	for f in "$RUNDIR"/*.out; do
		[ -f "$f" ] || continue
		printf '%s\n' "----- $(basename "$f" .out) -----"
		cat "$f"
	done
	printf '%s\n' "-----"
}

e2e_cleanup() {
	for pid in $E2E_PIDS; do
		# Each process runs under timeout(1), which leads its own
		# process group: end the whole group, nothing else.
		kill -TERM "-$pid" 2>/dev/null
	done
	if [ "$E2E_FAILED" -ne 0 ]; then
		e2e_dump_logs
		e2e_log "kept $RUNDIR"
	elif [ -n "$RUNDIR" ]; then
		rm -rf "$RUNDIR"
	fi
}

e2e_fail() {
	E2E_FAILED=1
	e2e_log "FAIL: $*"
	exit 1
}

e2e_pass() {
	e2e_log "PASS: $*"
	exit 0
}

# e2e_skip REASON: this machine cannot run the test; ctest reports it
# skipped (SKIP_RETURN_CODE 77), with the reason in its output.
e2e_skip() {
	e2e_log "SKIP: $*"
	exit 77
}

# netns_probe NAME: whether this machine gives two "hosts" in network
# namespaces all that multihost.sh takes, tried end to end on a pair of its
# own (NAME-p, NAME-q) that it removes again: root, ip(8) and ss(8), the
# namespaces, a command run inside one (ip netns exec, which needs / to be
# a mount point: not so in a bare chroot), a veth pair between them with a
# link set up and an address, and ss inside. On the first missing piece it
# prints why and returns 1.
netns_probe() {
	local a="$1-p" b="$1-q" out why="" tool

	[ "$(id -u)" = 0 ] || { echo "needs root for network namespaces"; return 1; }
	for tool in ip ss timeout; do
		command -v "$tool" >/dev/null 2>&1 ||
			{ echo "no $tool(8) (iproute2, coreutils)"; return 1; }
	done
	if ! out=$(ip netns add "$a" 2>&1); then
		echo "cannot create a network namespace: $out"
		return 1
	fi
	if ! out=$(ip netns add "$b" 2>&1); then
		why="cannot create a second network namespace: $out"
	elif ! out=$(ip netns exec "$a" true 2>&1); then
		why="cannot run a command in a network namespace: $out"
	elif ! out=$(ip link add "$a" netns "$a" type veth peer name "$b" \
		     netns "$b" 2>&1); then
		why="cannot create a veth pair between namespaces: $out"
	elif ! out=$({ ip -n "$a" link set "$a" up &&
		       ip -n "$a" addr add 198.51.100.1/24 dev "$a" &&
		       ip -n "$a" link set lo up; } 2>&1); then
		why="cannot configure a link in a network namespace: $out"
	elif ! out=$(ip netns exec "$a" ss -Hltn 2>&1); then
		why="ss(8) does not run in a network namespace: $out"
	fi
	ip netns del "$a" 2>/dev/null
	ip netns del "$b" 2>/dev/null
	[ -z "$why" ] || { echo "$why"; return 1; }
}

# Refuses to run (ctest then reports the test as failed) when the pieces
# under test were not built.
e2e_setup() {
	[ -x "${E2E_SIM:-}" ] || { echo "no pvrdma-sim launcher at '${E2E_SIM:-}'"; exit 1; }
	RUNDIR=$(mktemp -d "${TMPDIR:-/tmp}/pvrdma-e2e.XXXXXX") ||
		{ echo "mktemp failed"; exit 1; }
	trap 'e2e_cleanup' EXIT
	trap 'E2E_FAILED=1; exit 1' INT TERM
	if [ "${E2E_SANITIZE:-0}" = 1 ]; then
		# The sim's preload library is sanitized: the ASan runtime must
		# be loaded before libc, even in unsanitized programs. The
		# launcher puts its library in front of LD_PRELOAD, so ASan's
		# "runtime comes first" check has to be relaxed.
		# Only the processes under test get it, not ss, grep & co.
		asan_rt=$(${CC:-cc} -print-file-name=libasan.so)
		E2E_PRELOAD="$asan_rt${LD_PRELOAD:+ $LD_PRELOAD}"
		# intercept_tls_get_addr=0: GCC 12's runtime takes a dynamic TLS
		# block (of a library loaded at run time, as libibverbs loads
		# its providers) whose start falls on one offset of a page for
		# a pre-2.25 glibc block with a header, reads that header from
		# the words before it, and LeakSanitizer's tracer then dies at
		# exit ("Tracer caught signal 11"), now and then, whatever the
		# program did.
		export ASAN_OPTIONS="${ASAN_OPTIONS:-verify_asan_link_order=0:detect_leaks=1:intercept_tls_get_addr=0}"
		export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
		if [ -f "$E2E_SRC/lsan.supp" ]; then
			export LSAN_OPTIONS="suppressions=$E2E_SRC/lsan.supp"
		fi
	fi
}

# Picks the TCP port of this test: the reserved hint unless something on the
# host already listens there (another tree's tests, say).
e2e_port() {
	local port=${E2E_PORT:-18515} tries=0
	while ss -Hltn "sport = :$port" 2>/dev/null | grep -q . ; do
		port=$((port + 997))
		[ "$port" -lt 65000 ] || port=$((port - 40000))
		tries=$((tries + 1))
		[ "$tries" -lt 20 ] || break
	done
	echo "$port"
}

# sim_prefix PROVIDER "SIM OPTIONS": the launcher's command line, rundir shared
# by every process of the test (they meet on the simulated fabric there).
# E2E_SIM_OPTS: options for every process (e.g. --no-single-copy, which
# e2e_fallback() in CMakeLists.txt sets for a test).
sim_prefix() {
	if [ -n "$E2E_PRELOAD" ]; then
		echo "env LD_PRELOAD=$E2E_PRELOAD $E2E_SIM --provider $1 --rundir $RUNDIR ${E2E_SIM_OPTS:-} $2 --"
	else
		echo "$E2E_SIM --provider $1 --rundir $RUNDIR ${E2E_SIM_OPTS:-} $2 --"
	fi
}

# sim_run NAME PROVIDER "SIM OPTIONS" CMD [ARGS...]: runs in the foreground,
# output in $RUNDIR/NAME.out, exit status in $rc; 124 means it hung.
sim_run() {
	local name=$1 prov=$2 opts=$3
	shift 3
	e2e_log "$name: $(sim_prefix "$prov" "$opts") $*"
	# shellcheck disable=SC2046
	timeout -k 5 "$E2E_TIMEOUT" $(sim_prefix "$prov" "$opts") "$@" \
		>"$RUNDIR/$name.out" 2>&1
	rc=$?
	[ "$rc" -ne 124 ] || e2e_log "$name: timed out after ${E2E_TIMEOUT}s"
	return 0
}

# sim_start NAME PROVIDER "SIM OPTIONS" CMD [ARGS...]: starts in the
# background; its pid is in $bg_pid.
sim_start() {
	local name=$1 prov=$2 opts=$3
	shift 3
	e2e_log "$name (background): $(sim_prefix "$prov" "$opts") $*"
	# shellcheck disable=SC2046
	timeout -k 5 "$E2E_TIMEOUT" $(sim_prefix "$prov" "$opts") "$@" \
		>"$RUNDIR/$name.out" 2>&1 &
	bg_pid=$!
	E2E_PIDS="$E2E_PIDS $bg_pid"
}

# sim_wait PID: waits for a background process; its exit status in $rc.
sim_wait() {
	wait "$1"
	rc=$?
}

# wait_listen PORT PID: until something listens on PORT, or PID exited.
wait_listen() {
	local i=0
	while [ "$i" -lt 300 ]; do
		ss -Hltn "sport = :$1" 2>/dev/null | grep -q . && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# run_pair SERVER_PROVIDER CLIENT_PROVIDER "SIM OPTIONS" PORT
#          "SERVER CMD" "CLIENT CMD"
# Both commands are word-split (no spaces inside an argument). Exit statuses
# end up in $server_rc and $client_rc, output in server.out / client.out.
run_pair() {
	local sprov=$1 cprov=$2 opts=$3 port=$4 scmd=$5 ccmd=$6 spid
	# shellcheck disable=SC2086
	sim_start server "$sprov" "$opts" $scmd
	spid=$bg_pid
	if ! wait_listen "$port" "$spid"; then
		sim_wait "$spid"
		server_rc=$rc
		client_rc=-1
		e2e_log "server never listened on port $port (exit $server_rc)"
		return 0
	fi
	# shellcheck disable=SC2086
	sim_run client "$cprov" "$opts" $ccmd
	client_rc=$rc
	sim_wait "$spid"
	server_rc=$rc
	e2e_log "server exit $server_rc, client exit $client_rc"
}

# expect_rc NAME GOT WANT
expect_rc() {
	[ "$2" = 124 ] && e2e_fail "$1 hung (killed after ${E2E_TIMEOUT}s)"
	[ "$2" = "$3" ] || e2e_fail "$1 exited with $2, want $3"
}

# expect_death NAME RC DEATH: NAME ended as DEATH (kill: SIGKILL, crash:
# SIGSEGV, exit: exit(0)); timeout(1) gives 128 + the signal. In the ASan
# tree the sanitizer takes the SIGSEGV, reports it and exits 1.
expect_death() {
	case $3 in
	kill | fork) expect_rc "$1" "$2" 137 ;;
	exit) expect_rc "$1" "$2" 0 ;;
	crash)
		if [ "${E2E_SANITIZE:-0}" = 1 ] && [ "$2" = 1 ]; then
			expect_out "$1" "AddressSanitizer: SEGV"
		else
			expect_rc "$1" "$2" 139
		fi ;;
	*) e2e_fail "unknown death '$3'" ;;
	esac
}

# expect_out NAME PATTERN [WHAT]: NAME.out has a line matching the ERE.
expect_out() {
	grep -Eq -- "$2" "$RUNDIR/$1.out" ||
		e2e_fail "$1: no line matching '$2'${3:+ ($3)}"
}

# rping SIDE (server or client) exited as rping does after a clean run.
# Each side reads events on a thread while its main thread, once
# disconnected, destroys the event channel: when that thread comes back to
# read after the close, it fails with EBADF and exits 255 (rping's race, on
# any kernel; the sim's fast commands make it likelier). That exit, after
# the disconnect, is not a failure of the connection; what the side
# printed before it is still checked by the caller.
rping_rc() {
	local side=$1 rc
	eval "rc=\$${side}_rc"
	if [ "$rc" = 255 ] &&
	   tail -n 1 "$RUNDIR/$side.out" |
	   grep -q '^rdma_get_cm_event: Bad file descriptor$'; then
		expect_out "$side" "$side DISCONNECT EVENT"
		e2e_log "rping $side: its event thread lost the race to exit"
		return 0
	fi
	expect_rc "rping $side" "$rc" 0
}

# expect_no_out NAME PATTERN: no line matching the ERE.
expect_no_out() {
	if grep -Eq -- "$2" "$RUNDIR/$1.out"; then
		e2e_fail "$1: unexpected line matching '$2'"
	fi
}

# Maps the names used in test names to the launcher's --provider values.
provider_of() {
	case $1 in
	upstream) echo vmw_pvrdma ;;
	pvrdma) echo pvrdma ;;
	*) echo "$1" ;;
	esac
}

# ---- rdma_cm pairs ----
# rdma_cm servers listen on no TCP port. A server is up when its CM agent
# answers for its address (an abstract socket "@pvrdma-sim-cm:RUNDIR/GID"),
# and listens a moment later: a client can come too early and be rejected
# for want of a listener (IB CM reason 8; "Connection refused" from
# librdmacm's synchronous calls), as on real hosts. perftest -R has the
# same race between its own two connections, and version 4.5-0.17 cannot
# retry it. A refused client is not a result: the pair is started again.
CM_REFUSED='REJECTED.*[^0-9]8([^0-9]|$)|UNREACHABLE.*[^0-9-]1([^0-9]|$)|Connection refused'

# After the rping server (pid $1) was fuzzed: it must have lived through
# it, and an rping client of 20 pings, run by the rest of the arguments
# (the command that runs it, sim_run or mh_run, and rping's), connects to
# it; both end well.
rping_after_fuzz() {
	local spid=$1
	shift
	kill -0 "$spid" 2>/dev/null || e2e_fail "the server died under fuzzing"
	"$@"
	client_rc=$rc
	sim_wait "$spid"
	server_rc=$rc
	rping_rc server
	rping_rc client
	expect_out client "ping data: rdma-ping-19: " "20 pings"
}

# Kills an rping client while it pings, and checks that the rping server
# (pid $1) is told: DISCONNECTED, before its time limit. The rest is the
# command that starts the client (sim_start or mh_start), run again while
# the server refuses it for not listening yet.
rping_client_killed() {
	local spid=$1 cpid i=0
	shift
	while :; do
		sleep 0.2
		"$@"
		cpid=$bg_pid
		rping_pings "$cpid"
		case $? in
		0) break ;;
		2) e2e_fail "the client never pinged" ;;
		esac
		grep -Eq -- "$CM_REFUSED" "$RUNDIR/client.out" ||
			e2e_fail "the client ended before it was killed"
	done
	# The client's own process (timeout(1) leads its group).
	pkill -KILL -g "$cpid" -x rping || e2e_fail "no rping client to kill"
	e2e_log "client killed while it pinged"
	i=0
	until grep -q "server DISCONNECT EVENT" "$RUNDIR/server.out"; do
		i=$((i + 1))
		[ "$i" -lt 300 ] || e2e_fail "the server waited for its killed client"
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	expect_out server "server DISCONNECT EVENT"
	# Told, the server disconnects and joins its CQ thread, which ends
	# on the event of a flushed completion: every event its CQ's arms
	# owe must come, that of a CQE the client wrote as it was killed
	# too. The server must end by itself.
	i=0
	while kill -0 "$spid" 2>/dev/null && [ "$i" -lt 200 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	if kill -0 "$spid" 2>/dev/null; then
		kill -KILL "-$spid" 2>/dev/null
		sim_wait "$spid"
		e2e_fail "the server, told, had not ended 20 s later"
	fi
	sim_wait "$spid"
	server_rc=$rc
	rping_rc server
}

# gid_hex_of_ipv4 A.B.C.D: the IPv4-mapped GID in 32 hex digits.
gid_hex_of_ipv4() {
	local IFS=.
	# shellcheck disable=SC2086
	set -- $1
	printf '00000000000000000000ffff%02x%02x%02x%02x' "$1" "$2" "$3" "$4"
}

# wait_cm_agent IPV4 PID: until a CM agent of RUNDIR answers for IPV4, or
# PID exited.
wait_cm_agent() {
	local name i=0
	name="@pvrdma-sim-cm:$RUNDIR/$(gid_hex_of_ipv4 "$1")"
	while [ "$i" -lt 600 ]; do
		grep -qF -- "$name" /proc/net/unix && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# run_cm_pair SERVER_PROVIDER CLIENT_PROVIDER SERVER_IPV4 CLIENT_IPV4
#             "SERVER CMD" "CLIENT CMD" ["SERVER SIM OPTS" "CLIENT SIM OPTS"]
# As run_pair, for programs that connect through rdma_cm; each process
# gets its address with --ipv4. cm_server_serves_forever=1: the server is
# stopped (SIGTERM) once the client has finished.
run_cm_pair() {
	local sprov=$1 cprov=$2 sip=$3 cip=$4 scmd=$5 ccmd=$6 spid tries=0
	local sopts="--ipv4 $3 ${7:-}" copts="--ipv4 $4 ${8:-}"
	while :; do
		# shellcheck disable=SC2086
		sim_start server "$sprov" "$sopts" $scmd
		spid=$bg_pid
		if ! wait_cm_agent "$sip" "$spid"; then
			sim_wait "$spid"
			server_rc=$rc
			client_rc=-1
			e2e_log "server never opened rdma_cm (exit $server_rc)"
			return 0
		fi
		# shellcheck disable=SC2086
		sim_run client "$cprov" "$copts" $ccmd
		client_rc=$rc
		if [ "$client_rc" -eq 0 ] || [ "$tries" -ge 10 ] ||
		   ! grep -Eq -- "$CM_REFUSED" "$RUNDIR/client.out"; then
			break
		fi
		tries=$((tries + 1))
		e2e_log "client refused: no listener yet; starting the pair again"
		kill -TERM "-$spid" 2>/dev/null
		sim_wait "$spid"
		mv "$RUNDIR/client.out" "$RUNDIR/client.refused$tries.out"
		mv "$RUNDIR/server.out" "$RUNDIR/server.refused$tries.out"
	done
	# A server that serves until stopped (rcopy) is stopped once the
	# client is done, as its user would.
	[ "${cm_server_serves_forever:-0}" = 1 ] && kill -TERM "$spid" 2>/dev/null
	sim_wait "$spid"
	server_rc=$rc
	e2e_log "server exit $server_rc, client exit $client_rc"
}
