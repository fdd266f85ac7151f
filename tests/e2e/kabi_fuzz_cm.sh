#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# rdma_cm's kernel-ABI fuzzer under pvrdma-sim: COUNT commands of random
# and broken rdma_cm input from SEED, then librdmacm traffic in the same
# process.
#
#   kabi_fuzz_cm.sh PROVIDER SEED COUNT
E2E_TIMEOUT=${E2E_TIMEOUT:-180}
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

prov=$(provider_of "$1")
seed=$2
count=$3
e2e_setup
port=$(e2e_port)
ip=127.1.0.1

sim_run kabi_fuzz_cm "$prov" "--ipv4 $ip" "$E2E_BIN/kabi_fuzz_cm" \
	--addr $ip --port "$port" --seed "$seed" --count "$count"
expect_rc kabi_fuzz_cm "$rc" 0
expect_out kabi_fuzz_cm "traffic after the fuzzing: passed"
expect_no_out kabi_fuzz_cm "^FAIL"
e2e_pass "kabi_fuzz_cm seed $seed, $count commands: $prov"
