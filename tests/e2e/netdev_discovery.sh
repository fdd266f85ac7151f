#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# How test suites (rdma-core's among them) find a RoCE adapter's address:
# its netdev from /sys/class/infiniband/<dev>/device/net/, the netdev's
# address from `ip -j addr show <netdev>`; then an rdma_cm connection to
# that address. Also `ip link show` lists the netdev beside the host's,
# and `ethtool -i` names its driver (vmxnet3, whose netdev a PVRDMA
# function shares) and the PCI function sysfs gives as its device, while
# the host's own interface keeps the host's answer; a program's own
# SIOCETHTOOL gets the link state and settings.
#
#   netdev_discovery.sh SERVER_PROVIDER CLIENT_PROVIDER
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

sprov=$(provider_of "$1")
cprov=$(provider_of "$2")
e2e_setup
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
sip=127.1.0.1
cip=127.1.0.2

sim_run links "$sprov" "--ipv4 $sip" ip link show
expect_rc "ip link show" "$rc" 0
expect_out links '^[0-9]+: lo: ' "the host's loopback"
expect_out links '^[0-9]+: pvrdma0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu [0-9]+ .*state UP'

sim_run ethtool "$sprov" "--ipv4 $sip" sh -c \
	'ethtool -i pvrdma0 && readlink /sys/class/net/pvrdma0/device'
expect_rc "ethtool -i pvrdma0" "$rc" 0
expect_out ethtool '^driver: vmxnet3$' "the vmxnet3 driver"
expect_out ethtool '^version: [0-9.]+-k$' "an in-kernel driver's version"
bdf=$(sed -n '$s|.*/||p' "$RUNDIR/ethtool.out")
expect_out ethtool "^bus-info: $bdf\$" "the function of the netdev's sysfs device"
# The same ioctl's link state and settings, with the mask size handshake.
sim_run ethlink "$sprov" "--ipv4 $sip" sh -c \
	"$py $E2E_SRC/ethtool_ioctl.py pvrdma0 &&
	 cat /sys/class/net/pvrdma0/speed"
expect_rc "ethtool ioctls" "$rc" 0
expect_out ethlink '^link 1$' "the link up"
speed=$(tail -n 1 "$RUNDIR/ethlink.out")
expect_out ethlink "^speed $speed duplex 1 port 0\$" \
	"sysfs's speed, full duplex, twisted pair"
expect_out ethlink '^supported 5 7 12$' "vmxnet3's 1000/10000baseT_Full, TP"
ethtool -i lo >"$RUNDIR/lo_host.out" 2>&1
host_rc=$?
sim_run lo "$sprov" "--ipv4 $sip" ethtool -i lo
expect_rc "ethtool -i lo" "$rc" "$host_rc"
cmp -s "$RUNDIR/lo_host.out" "$RUNDIR/lo.out" ||
	e2e_fail "ethtool -i lo: the host's answer changed under the sim"

sim_run discover "$sprov" "--ipv4 $sip" sh -c \
	'nd=$(ls /sys/class/infiniband/vmw_pvrdma0/device/net/) &&
	 echo "netdev $nd" && ip -j addr show "$nd"'
expect_rc "netdev discovery" "$rc" 0
expect_out discover '^netdev pvrdma0$'
addr=$(sed -n '2,$p' "$RUNDIR/discover.out" | $py -c '
import json, sys
for link in json.load(sys.stdin):
    for a in link["addr_info"]:
        if a["family"] == "inet":
            print(a["local"])') ||
	e2e_fail "ip -j addr show: not the JSON of an interface"
[ "$addr" = "$sip" ] || e2e_fail "the netdev's address is '$addr', want $sip"

port=$(e2e_port)
run_cm_pair "$sprov" "$cprov" "$sip" "$cip" \
	"ib_send_bw -R -d vmw_pvrdma0 -p $port -n 100" \
	"ib_send_bw -R -d vmw_pvrdma0 -p $port -n 100 $addr"
expect_rc "ib_send_bw -R client" "$client_rc" 0
expect_rc "ib_send_bw -R server" "$server_rc" 0
e2e_pass "the address found through sysfs and ip -j carries an rdma_cm connection"
