#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# One of our e2e verbs programs alone under pvrdma-sim.
#
#   verbs_single.sh PROVIDER "SIM OPTIONS"|none PROGRAM [ARGS...]
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

prov=$(provider_of "$1")
opts=$2
[ "$opts" = none ] && opts=""
prog=$3
shift 3
e2e_setup

sim_run "$prog" "$prov" "$opts" "$E2E_BIN/$prog" "$@"
expect_rc "$prog" "$rc" 0
expect_out "$prog" "passed"
expect_no_out "$prog" "^FAIL"
e2e_pass "$prog $*: $prov"
