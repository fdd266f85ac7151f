#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A multihost test where network namespaces half work reports itself
# skipped with the reason, and does not fail. The machine: a bare chroot,
# as a new user tries the suite in, where "ip netns add" works but
# "ip netns exec" does not, since the chroot's / is not a mount point.
#
#   multihost_chroot.sh MULTIHOST_ARGS...
#
# Makes that chroot cheaply: in a mount namespace of its own (unshare -m),
# a directory outside any mount point gets this machine's system
# directories and those of the tests and the build bound in, and a /run
# of its own; multihost.sh then runs chrooted there. Needs root, unshare(1) and chroot(8), else skipped.
E2E_SRC=$(cd "$(dirname "$0")" && pwd)
. "$E2E_SRC/lib.sh"

[ "$(id -u)" = 0 ] || e2e_skip "needs root for a chroot"
for tool in unshare chroot mount; do
	command -v "$tool" >/dev/null 2>&1 || e2e_skip "no $tool"
done
unshare -m --propagation unchanged true 2>/dev/null ||
	e2e_skip "cannot make a mount namespace"
e2e_setup

root=$RUNDIR/root
# The top-level directories that hold the tests and the build trees too.
tops=""
for p in "$E2E_SRC" "${E2E_SIM:-/}" "${E2E_BIN:-/}" "$(pwd)"; do
	t=${p#/}
	tops="$tops ${t%%/*}"
done
mkdir "$root" || e2e_fail "mkdir $root"
# Everything below runs in the new mount namespace: its mounts go with it.
# It makes / private itself (unshare would fail where that is refused: in
# a chroot already), and binds nothing if it cannot.
unshare -m --propagation unchanged sh -c '
	root=$1
	tops=$2
	shift 2
	mount --make-rprivate / || exit 90
	mkdir "$root/run" && mount -t tmpfs run "$root/run" || exit 90
	for name in bin dev etc home lib lib32 lib64 libx32 opt proc root \
		    sbin srv sys tmp usr var $tops; do
		d=/$name
		[ ! -e "$root/$name" ] || continue
		if [ -L "$d" ]; then
			ln -s "$(readlink "$d")" "$root/$name" || exit 90
		elif [ -d "$d" ]; then
			mkdir "$root/$name" &&
			mount --rbind "$d" "$root/$name" || exit 90
		fi
	done
	exec chroot "$root" sh "$0" "$@"
' "$E2E_SRC/multihost.sh" "$root" "$tops" "$@" >"$RUNDIR/chroot.out" 2>&1
rc=$?
cat "$RUNDIR/chroot.out"
# The binds were the mount namespace's alone: were one left here, removing
# the run directory would reach into the machine's own files (e2e_fail
# keeps it).
grep -qF " $root/" /proc/self/mountinfo &&
	e2e_fail "mounts of the chroot outlived its mount namespace"
[ "$rc" -ne 90 ] || e2e_skip "cannot make a chroot here"
# The probe found the machine complete: no half-working namespaces here
# (an ip(8) that runs commands in them from a chroot), nothing to show.
[ "$rc" -ne 0 ] || e2e_skip "ip netns exec works in a chroot here"
[ "$rc" -eq 77 ] ||
	e2e_fail "multihost.sh in a chroot exited $rc: not skipped"
grep -q 'SKIP: cannot run a command in a network namespace' \
	"$RUNDIR/chroot.out" ||
	e2e_fail "skipped without naming ip netns exec as the reason"
e2e_pass "in a chroot, multihost.sh $* is skipped with the reason"
