#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# ucx_info -d under pvrdma-sim: UCX opens rc_verbs and ud_verbs on the
# adapter with its default queue sizes (4096 receive WQEs on UD, 4095 on
# the rc_verbs SRQ), which the adapter's limits must allow.
#
#   ucx_info.sh PROVIDER
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

prov=$(provider_of "$1")
e2e_setup

command -v ucx_info >/dev/null || e2e_fail "no ucx_info (apt install ucx-utils)"
for v in $(env | sed -n 's/^\(UCX_[A-Z_]*\)=.*/\1/p'); do
	unset "$v"
done
sim_run ucx_info "$prov" "" ucx_info -d
expect_rc ucx_info "$rc" 0
# Each transport's "Transport:" line is followed by its "Device:" line.
for tl in rc_verbs ud_verbs; do
	grep -A1 -E "Transport: $tl\$" "$RUNDIR/ucx_info.out" |
		grep -qE 'Device: vmw_pvrdma0:1$' ||
		e2e_fail "ucx_info lists no $tl on vmw_pvrdma0:1"
done
expect_no_out ucx_info "Invalid argument|failed to create"
e2e_pass "ucx_info -d: rc_verbs and ud_verbs on vmw_pvrdma0:1, $prov"
