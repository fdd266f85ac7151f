#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# sysfs at its real paths under pvrdma-sim: coreutils, a shell's globbing,
# Python's os.listdir/os.scandir/glob, realpath and a forked child and
# grandchild see the adapter under /sys, and the host's sysfs around it.
#
#   sysfs_paths.sh PROVIDER
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

prov=$(provider_of "$1")
e2e_setup
# The system's Python itself (a version manager's shim would run a dozen
# processes under the sim first).
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3

bdf=0000:0b:00.1
pci=/sys/devices/pci0000:00/0000:00:15.0/$bdf
ib=/sys/class/infiniband/vmw_pvrdma0

# expect_text NAME WANT: NAME.out is exactly WANT (one line each).
expect_text() {
	got=$(cat "$RUNDIR/$1.out")
	[ "$got" = "$2" ] || e2e_fail "$1: got '$got', want '$2'"
}

sim_run ls_class "$prov" "" ls /sys/class
expect_rc "ls /sys/class" "$rc" 0
expect_out ls_class '^infiniband$' "the sim's class"
expect_out ls_class '^infiniband_verbs$'
expect_out ls_class '^net$' "the host's classes stay"

sim_run ls_ib "$prov" "" ls /sys/class/infiniband
expect_rc "ls /sys/class/infiniband" "$rc" 0
expect_text ls_ib vmw_pvrdma0

sim_run ls_net "$prov" "" ls /sys/class/net
expect_out ls_net '^lo$' "the host's loopback stays"
expect_out ls_net '^pvrdma0$' "the adapter's netdev"

sim_run link_ib "$prov" "" readlink $ib
expect_text link_ib "../../devices/pci0000:00/0000:00:15.0/$bdf/infiniband/vmw_pvrdma0"

sim_run cat_attrs "$prov" "" cat $ib/ports/1/state $ib/device/vendor \
	$ib/device/device $ib/device/subsystem_vendor \
	$ib/device/subsystem_device $ib/device/class \
	$ib/ports/1/gid_attrs/ndevs/0 $ib/ports/1/gid_attrs/types/0
expect_rc "cat of the adapter's attributes" "$rc" 0
expect_text cat_attrs "$(printf '%s\n' '4: ACTIVE' 0x15ad 0x0820 0x15ad \
	0x0820 0x020700 pvrdma0 'RoCE v2')"

sim_run pci_dir "$prov" "" ls /sys/bus/pci/devices/$bdf/
for f in vendor device subsystem_vendor subsystem_device class numa_node \
	 local_cpus local_cpulist driver net infiniband infiniband_verbs; do
	expect_out pci_dir "^$f\$" "/sys/bus/pci/devices/$bdf/$f"
done

sim_run driver "$prov" "" readlink -f /sys/bus/pci/devices/$bdf/driver
expect_text driver /sys/bus/pci/drivers/vmw_pvrdma

sim_run netdev "$prov" "" ls $ib/device/net/
expect_text netdev pvrdma0
sim_run netdev_dev "$prov" "" readlink -f /sys/class/net/pvrdma0/device
expect_text netdev_dev "$pci"

sim_run uverbs "$prov" "" cat /sys/class/infiniband_verbs/uverbs0/ibdev
expect_text uverbs vmw_pvrdma0

sim_run find "$prov" "" find $pci/infiniband -name state
expect_rc "find" "$rc" 0
expect_text find "$pci/infiniband/vmw_pvrdma0/ports/1/state"

sim_run glob "$prov" "" sh -c 'echo /sys/class/infiniband/*/ports/*/state'
expect_text glob "$ib/ports/1/state"

sim_run cd "$prov" "" sh -c "cd $ib/ports/1 && cat state && /bin/pwd"
expect_text cd "$(printf '%s\n' '4: ACTIVE' "$pci/infiniband/vmw_pvrdma0/ports/1")"

# Python: os.listdir and os.scandir, glob, realpath; then a forked child
# and its own forked child list the same tree.
sim_run python "$prov" "" $py -c '
import glob, os, sys
def view():
    return (sorted(os.listdir("/sys/class/infiniband")),
            "infiniband" in os.listdir("/sys/class"),
            sorted(e.name for e in os.scandir("/sys/class/net")
                   if e.name.startswith("pvrdma")),
            glob.glob("/sys/class/infiniband/*/device/net/*"),
            os.path.realpath("/sys/class/infiniband/vmw_pvrdma0/device"),
            open("/sys/class/infiniband/vmw_pvrdma0/node_type").read())
print("parent", view())
pid = os.fork()
if pid == 0:
    gpid = os.fork()
    if gpid == 0:
        print("grandchild", view(), flush=True)
        os._exit(0)
    os.waitpid(gpid, 0)
    print("child", view(), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
'
expect_rc python "$rc" 0
want="(['vmw_pvrdma0'], True, ['pvrdma0'], ['$ib/device/net/pvrdma0'], '$pci', '1: CA\\n')"
for who in parent child grandchild; do
	line=$(grep "^$who " "$RUNDIR/python.out")
	[ "$line" = "$who $want" ] ||
		e2e_fail "python $who sees '$line', want '$who $want'"
done

# An exec'd child and grandchild of a shell.
sim_run exec_children "$prov" "" sh -c \
	'ls /sys/class/infiniband; sh -c "cat /sys/class/net/pvrdma0/operstate"'
expect_text exec_children "$(printf '%s\n' vmw_pvrdma0 up)"

# libibverbs on the same tree.
sim_run devices "$prov" "" ibv_devices
expect_out devices '^[[:space:]]*vmw_pvrdma0[[:space:]]+[0-9a-f]{16}'

# infiniband-diags read the same tree (libibumad).
command -v ibstat >/dev/null || e2e_fail "no ibstat (infiniband-diags)"
sim_run ibstat "$prov" "" ibstat
expect_rc ibstat "$rc" 0
expect_out ibstat "^CA 'vmw_pvrdma0'\$"
expect_out ibstat '^[[:space:]]+CA type: VMW_PVRDMA-'
expect_out ibstat '^[[:space:]]+State: Active$'
expect_out ibstat '^[[:space:]]+Physical state: LinkUp$'
expect_out ibstat '^[[:space:]]+Rate: 40$'
expect_out ibstat '^[[:space:]]+Link layer: Ethernet$'
sim_run ibstatus "$prov" "" ibstatus
expect_rc ibstatus "$rc" 0
expect_out ibstatus "^Infiniband device 'vmw_pvrdma0' port 1 status:"
expect_out ibstatus '^[[:space:]]+default gid:[[:space:]]+fe80:0000:0000:0000:'
expect_out ibstatus '^[[:space:]]+state:[[:space:]]+4: ACTIVE'
expect_out ibstatus '^[[:space:]]+rate:[[:space:]]+40 Gb/sec \(4X QDR\)'

e2e_pass "the adapter at its real sysfs paths, the host's sysfs around it"
