#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The kernel-ABI fuzzer under pvrdma-sim: SEED commands of random and
# broken uverbs input, then traffic on the same device.
#
#   kabi_fuzz.sh PROVIDER SEED COUNT
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
e2e_setup

sim_run kabi_fuzz "$prov" "" "$E2E_BIN/kabi_fuzz" --seed "$seed" \
	--count "$count"
expect_rc kabi_fuzz "$rc" 0
expect_out kabi_fuzz "traffic after the fuzzing: passed"
expect_no_out kabi_fuzz "^FAIL"
e2e_pass "kabi_fuzz seed $seed, $count commands: $prov"
