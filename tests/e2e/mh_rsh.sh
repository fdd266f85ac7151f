#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Open MPI's rsh agent for multihost.sh: "HOST COMMAND..." runs COMMAND
# (Open MPI's daemon) on the other "host", a network namespace, under a
# pvrdma-sim of its own there, its adapter at HOST, as ssh would run it on
# a real second machine. Set by multihost.sh: MH_REMOTE_NS, MH_SIM,
# MH_PROVIDER, MH_RUNDIR, MH_PRELOAD (the ASan runtime or empty), MH_WIRE
# (the wire between the hosts, or empty).
host=$1
shift
exec ip netns exec "$MH_REMOTE_NS" env -u LD_PRELOAD \
	${MH_PRELOAD:+LD_PRELOAD=$MH_PRELOAD} \
	"$MH_SIM" --provider "$MH_PROVIDER" --rundir "$MH_RUNDIR" \
	--ipv4 "$host" ${MH_WIRE:+--wire "$MH_WIRE"} -- sh -c "$*"
