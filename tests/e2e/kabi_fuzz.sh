#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The kernel-ABI fuzzers under pvrdma-sim: COUNT commands of random and
# broken input from SEED, then traffic in the same process. FUZZER is
# kabi_fuzz (uverbs, the default; then traffic on the same device) or
# kabi_fuzz_cm (rdma_cm; then librdmacm traffic).
#
#   kabi_fuzz.sh PROVIDER SEED COUNT [FUZZER]
#
# A longer run by hand (the release tree, a few minutes):
#   E2E_SIM=build/bin/pvrdma-sim E2E_BIN=build/tests/e2e E2E_TIMEOUT=900 \
#       sh tests/e2e/kabi_fuzz.sh pvrdma 7 3000000
E2E_TIMEOUT=${E2E_TIMEOUT:-180}
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

prov=$(provider_of "$1")
seed=$2
count=$3
fuzzer=${4:-kabi_fuzz}
e2e_setup

case $fuzzer in
kabi_fuzz)
	sim_run "$fuzzer" "$prov" "" "$E2E_BIN/kabi_fuzz" --seed "$seed" \
		--count "$count"
	;;
kabi_fuzz_cm)
	port=$(e2e_port)
	ip=127.1.0.1
	sim_run "$fuzzer" "$prov" "--ipv4 $ip" "$E2E_BIN/kabi_fuzz_cm" \
		--addr $ip --port "$port" --seed "$seed" --count "$count"
	;;
*)
	e2e_fail "no fuzzer $fuzzer"
	;;
esac
expect_rc "$fuzzer" "$rc" 0
expect_out "$fuzzer" "traffic after the fuzzing: passed"
expect_no_out "$fuzzer" "^FAIL"
e2e_pass "$fuzzer seed $seed, $count commands: $prov"
