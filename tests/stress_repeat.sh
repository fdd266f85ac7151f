#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The long form of the stress test: the two-process, 4-thread SEND/WRITE/
# READ stream of tests/e2e/stress.c, 200000 messages each way, repeated
# RUNS times in a row for each provider pairing, each run under the hang
# guard (a hang fails the run). ctest runs the same test once per pairing.
#
#   tests/stress_repeat.sh [BUILD_DIR [RUNS [MESSAGES]]]
#   defaults: build, 20, 200000
# Build the release tree first (scripts/build.sh build).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd) || exit 1
runs=${2:-20}
msgs=${3:-200000}
sim=$build/bin/pvrdma-sim
[ -x "$sim" ] || { echo "no pvrdma-sim in $build/bin: build it first"; exit 1; }

export E2E_SIM="$sim" E2E_BIN="$build/tests/e2e" E2E_SANITIZE=0
export E2E_TIMEOUT=${E2E_TIMEOUT:-120}
port=24000
failed=0
for pair in "pvrdma pvrdma" "upstream upstream" "pvrdma upstream"; do
	start=$(date +%s)
	# shellcheck disable=SC2086
	if E2E_PORT=$port sh "$top/tests/e2e/stress.sh" $pair "$msgs" "$runs" \
		>"${TMPDIR:-/tmp}/stress_repeat.$$.log" 2>&1; then
		echo "PASS $pair: $runs runs of $msgs messages each way in" \
		     "$(($(date +%s) - start)) s"
		grep "^\[e2e\] run " "${TMPDIR:-/tmp}/stress_repeat.$$.log"
	else
		failed=1
		echo "FAIL $pair:"
		cat "${TMPDIR:-/tmp}/stress_repeat.$$.log"
	fi
	port=$((port + 100))
done
rm -f "${TMPDIR:-/tmp}/stress_repeat.$$.log"
exit $failed
