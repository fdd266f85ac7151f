#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Open MPI's rsh agent for multihost.sh: the shipped pvrdma-sim-rsh, set
# up to reach the other "host", a network namespace, as ssh would reach a
# second machine: "HOST COMMAND..." runs COMMAND (Open MPI's daemon) there
# under a pvrdma-sim of its own, its adapter at HOST. Set by multihost.sh:
# MH_REMOTE_NS, MH_SIM, MH_PROVIDER, MH_RUNDIR, MH_PRELOAD (the ASan
# runtime or empty), MH_WIRE (the wire between the hosts, or empty).
# The namespace is not named after HOST: %h goes where it does no harm.
export PVRDMA_SIM_RSH="ip netns exec $MH_REMOTE_NS env HOSTNAME=%h"
export PVRDMA_SIM_RSH_RUNDIR="$MH_RUNDIR"
export PVRDMA_SIM_RSH_SIM="$MH_SIM"
export PVRDMA_SIM_OPTS="--provider $MH_PROVIDER${MH_WIRE:+ --wire $MH_WIRE}"
# The agent keeps what LD_PRELOAD holds besides the sim's library.
export LD_PRELOAD="$MH_PRELOAD"
exec "$(dirname "$MH_SIM")/pvrdma-sim-rsh" "$@"
