#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# ibv_devices and ibv_devinfo -v on pvrdma-sim, checked field by field
# against what a VMware PVRDMA adapter reports.
#
#   devinfo.sh PROVIDER VARIANT
#     default    one adapter, --hw-version 18 --roce 1 --mtu 1024
#     roce2      --roce 2 --mtu 4096: RoCE v2 GIDs
#     hw13       --hw-version 13 --mtu 2048: no SRQs
#     adapters2  --adapters 2: two adapters, distinct identities
#     adapters10 --adapters 10: ten, as vSphere 7.0.2 and later allow
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

prov=$(provider_of "$1")
variant=$2
e2e_setup

hw=18 roce=1 mtu=1024 adapters=1
case $variant in
default) ;;
roce2) roce=2 mtu=4096 ;;
hw13) hw=13 mtu=2048 ;;
adapters2) adapters=2 ;;
adapters10) adapters=10 ;;
*) e2e_fail "unknown variant $variant" ;;
esac
case $mtu in
256) mtu_enum=1 ;; 512) mtu_enum=2 ;; 1024) mtu_enum=3 ;;
2048) mtu_enum=4 ;; 4096) mtu_enum=5 ;;
esac
opts="--adapters $adapters --hw-version $hw --roce $roce --mtu $mtu"

# field OUT NAME: the value of the first "NAME: value" line of OUT.
field() {
	sed -n "s/^[[:space:]]*$2:[[:space:]]*//p" "$RUNDIR/$1.out" | head -n 1
}

# expect_field OUT NAME ERE: the value matches the whole ERE.
expect_field() {
	v=$(field "$1" "$2")
	printf '%s\n' "$v" | grep -Eqx -- "$3" ||
		e2e_fail "$1: $2 is '$v', want '$3'"
}

sim_run devices "$prov" "$opts" ibv_devices
expect_rc ibv_devices "$rc" 0
guid_re='[0-9a-f]{16}'
expect_out devices "^[[:space:]]*vmw_pvrdma0[[:space:]]+$guid_re[[:space:]]*$" \
	"adapter 0 listed with its node GUID"

if [ "$adapters" -gt 1 ]; then
	last=$((adapters - 1))
	expect_out devices "^[[:space:]]*vmw_pvrdma$last[[:space:]]+$guid_re[[:space:]]*$" \
		"adapter $last listed"
	n=$(grep -Ec "^[[:space:]]*vmw_pvrdma[0-9]+[[:space:]]" "$RUNDIR/devices.out")
	[ "$n" = "$adapters" ] ||
		e2e_fail "ibv_devices lists $n adapters, want $adapters"
	n=$(awk '$1 ~ /^vmw_pvrdma/ { print $2 }' "$RUNDIR/devices.out" |
		sort -u | wc -l)
	[ "$n" = "$adapters" ] ||
		e2e_fail "$adapters adapters with $n distinct node GUIDs"

	for i in 0 "$last"; do
		sim_run "devinfo$i" "$prov" "$opts" ibv_devinfo -v -d "vmw_pvrdma$i"
		expect_rc "ibv_devinfo -d vmw_pvrdma$i" "$rc" 0
		expect_out "devinfo$i" "^hca_id:[[:space:]]+vmw_pvrdma$i$"
	done
	gid0=$(grep -E 'GID\[ *0\]' "$RUNDIR/devinfo0.out")
	gid1=$(grep -E 'GID\[ *0\]' "$RUNDIR/devinfo$last.out")
	[ -n "$gid0" ] || e2e_fail "adapter 0 has no GID 0"
	[ "${gid0#*:}" != "${gid1#*:}" ] ||
		e2e_fail "both adapters have the same GID 0 ($gid0)"
	e2e_pass "$adapters adapters with distinct identities"
fi

n=$(grep -Ec "^[[:space:]]*vmw_pvrdma[0-9]+[[:space:]]" "$RUNDIR/devices.out")
[ "$n" = 1 ] || e2e_fail "ibv_devices lists $n adapters, want 1"

sim_run devinfo "$prov" "$opts" ibv_devinfo -v
expect_rc "ibv_devinfo -v" "$rc" 0
o=devinfo
expect_out $o "^hca_id:[[:space:]]+vmw_pvrdma0$"
expect_field $o transport 'InfiniBand \(0\)'
expect_field $o fw_ver '[0-9]+\.[0-9]+\.[0-9]{3}'
expect_field $o node_guid '[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}'
[ "$(field $o node_guid)" != 0000:0000:0000:0000 ] || e2e_fail "node_guid is zero"
expect_field $o sys_image_guid '[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}'
expect_field $o vendor_id '0x15ad'
expect_field $o vendor_part_id '2080'
expect_field $o hw_ver '0x[0-9A-F]+'
expect_field $o phys_port_cnt '1'
expect_field $o max_qp '32768'
expect_field $o max_qp_wr '8192'
expect_field $o max_sge '16'
expect_field $o max_cq '4096'
expect_field $o max_cqe '16384'
expect_field $o max_mr '65536'
expect_field $o max_pd '4096'
expect_field $o atomic_cap 'ATOMIC_HCA \(1\)'
if [ "$hw" = 13 ]; then
	expect_field $o max_srq '0'
	# ibv_devinfo prints the SRQ sizes only for a device with SRQs.
	expect_no_out $o '^[[:space:]]*max_srq_wr:'
else
	expect_field $o max_srq '4096'
	expect_field $o max_srq_wr '32768'
	expect_field $o max_srq_sge '16'
fi
expect_field $o state 'PORT_ACTIVE \(4\)'
expect_field $o max_mtu '4096 \(5\)'
expect_field $o active_mtu "$mtu \\($mtu_enum\\)"
expect_field $o link_layer 'Ethernet'

# GID 0: the link-local GID from the MAC; GID 1: the IPv4-mapped GID of the
# port's (loopback) address. All of the type --roce asks for: a vmw_pvrdma
# port is either RoCE v1 or RoCE v2, and its GID table follows.
hex4='[0-9a-f]{4}'
if [ "$roce" = 2 ]; then
	# ibv_devinfo prints RoCE v2 GIDs in inet_ntop form.
	expect_out $o "GID\\[ *0\\]:[[:space:]]+fe80::[0-9a-f:]+, RoCE v2$" \
		"GID 0 is a link-local RoCE v2 GID"
	expect_out $o "GID\\[ *1\\]:[[:space:]]+::ffff:127\\.[0-9.]+, RoCE v2$" \
		"GID 1 is an IPv4-mapped RoCE v2 GID"
	expect_no_out $o 'RoCE v1'
else
	expect_out $o "GID\\[ *0\\]:[[:space:]]+fe80:0000:0000:0000:$hex4:$hex4:$hex4:$hex4, RoCE v1$" \
		"GID 0 is a link-local RoCE v1 GID"
	expect_out $o "GID\\[ *1\\]:[[:space:]]+0000:0000:0000:0000:0000:ffff:7f[0-9a-f]{2}:$hex4, RoCE v1$" \
		"GID 1 is an IPv4-mapped RoCE v1 GID"
	expect_no_out $o 'RoCE v2'
fi
e2e_pass "ibv_devinfo ($variant) matches a PVRDMA adapter"
