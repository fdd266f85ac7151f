#!/bin/sh
# deb.sh SRC WORK PROBE VERSION: builds the Debian packages from a scratch
# copy of the tree, checks their contents, metadata and lintian, installs
# them and shows that libibverbs, left to itself, gives a pvrdma-sim adapter
# to libpvrdma while ibverbs-provider-pvrdma is installed and to the
# upstream vmw_pvrdma provider again once it is removed, and that a program
# built with the installed libpvrdma-dev (pkg-config) calls pvrdmadv.
set -eu
src=$1
work=$2
probe=$3
version=$4
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "installing the .deb needs root"
need_tools dpkg-buildpackage:dpkg-dev dh:debhelper lintian:lintian \
	fakeroot:fakeroot objdump:binutils
dpkg-query -W -f='${Status}\n' ibverbs-providers 2>/dev/null |
	grep -q "ok installed" || fail "ibverbs-providers is not installed"

ma=$(multiarch)
arch=$(dpkg --print-architecture)
provider=ibverbs-provider-pvrdma
lib=libpvrdma1
dev=libpvrdma-dev
upstream_driver=/etc/libibverbs.d/vmw_pvrdma.driver
parked_driver=/etc/ibverbs-provider-pvrdma/vmw_pvrdma.driver

changelog_version=$(dpkg-parsechangelog -l "$src/debian/changelog" -SVersion)
[ "$changelog_version" = "$version" ] ||
	fail "debian/changelog is at $changelog_version, the project at $version"

# --- build -----------------------------------------------------------------
rm -rf "$work"
copy_tree "$src" "$work/src"
(cd "$work/src" &&
	DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
	dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 ||
	{ show_log "$work/build.log"; fail "dpkg-buildpackage"; }
echo "dpkg-buildpackage OK (log: $work/build.log)"
# Debian's compiler flags (dpkg-buildflags), never -Werror (PVRDMA_WERROR).
grep -q -- '-fstack-protector-strong.* -c ' "$work/build.log" ||
	fail "dpkg-buildpackage compiled without Debian's CFLAGS"
grep -q -- '-Werror\( \|$\)' "$work/build.log" &&
	fail "dpkg-buildpackage compiled with -Werror"

provider_deb=$work/${provider}_${version}_$arch.deb
sim_deb=$work/pvrdma-sim_${version}_$arch.deb
lib_deb=$work/${lib}_${version}_$arch.deb
dev_deb=$work/${dev}_${version}_$arch.deb
for deb in "$provider_deb" "$sim_deb" "$lib_deb" "$dev_deb"; do
	[ -f "$deb" ] || fail "no $deb"
done

# --- contents --------------------------------------------------------------
deb_files()
{
	dpkg-deb -c "$1" | awk '$1 !~ /^d/ { print $6 }' | sed 's|^\./||'
}

cat >"$work/provider.expected" <<EOT
etc/libibverbs.d/pvrdma.driver
usr/lib/$ma/libibverbs/libpvrdma-rdmav34.so
usr/share/doc/$provider/changelog.gz
usr/share/doc/$provider/copyright
usr/share/man/man7/pvrdma.7.gz
EOT
deb_files "$provider_deb" >"$work/provider.actual"
same_list "$provider" "$work/provider.expected" "$work/provider.actual"

cat >"$work/sim.expected" <<EOT
usr/bin/pvrdma-sim
usr/bin/pvrdma-sim-rsh
usr/lib/$ma/pvrdma-sim/libpvrdma-sim.so
usr/share/doc/pvrdma-sim/changelog.gz
usr/share/doc/pvrdma-sim/copyright
usr/share/man/man1/pvrdma-sim-rsh.1.gz
usr/share/man/man1/pvrdma-sim.1.gz
EOT
deb_files "$sim_deb" >"$work/sim.actual"
same_list "pvrdma-sim" "$work/sim.expected" "$work/sim.actual"

cat >"$work/lib.expected" <<EOT
usr/lib/$ma/libpvrdma.so.1
usr/lib/$ma/libpvrdma.so.1.0.0
usr/share/doc/$lib/changelog.gz
usr/share/doc/$lib/copyright
EOT
deb_files "$lib_deb" >"$work/lib.actual"
same_list "$lib" "$work/lib.expected" "$work/lib.actual"

cat >"$work/dev.expected" <<EOT
usr/include/infiniband/pvrdmadv.h
usr/lib/$ma/libpvrdma.so
usr/lib/$ma/pkgconfig/libpvrdma.pc
usr/share/doc/$dev/changelog.gz
usr/share/doc/$dev/copyright
usr/share/man/man3/pvrdmadv.3.gz
EOT
deb_files "$dev_deb" >"$work/dev.actual"
same_list "$dev" "$work/dev.expected" "$work/dev.actual"

# --- metadata --------------------------------------------------------------
depends=$(dpkg-deb -f "$provider_deb" Depends)
echo "$provider Depends: $depends"
echo "$depends" | grep -q 'libibverbs1 (>= 39)' ||
	fail "$provider does not depend on libibverbs1 (>= 39)"
dpkg-deb -I "$provider_deb" conffiles | grep -qx /etc/libibverbs.d/pvrdma.driver ||
	fail "pvrdma.driver is not a conffile"
for script in preinst postrm; do
	dpkg-deb -I "$provider_deb" $script | grep -q dpkg-divert ||
		fail "$provider $script does not handle the diversion"
done

# libpvrdma1: programs built against it depend on it through its symbols
# file, which lists the pvrdmadv API, the version node included; libpvrdma1
# and libpvrdma-dev are co-installable for several architectures.
dpkg-deb -I "$lib_deb" shlibs | grep -qx "libpvrdma 1 $lib (>= $version)" ||
	fail "$lib has no shlibs line for libpvrdma.so.1"
dpkg-deb -I "$lib_deb" symbols >"$work/lib.symbols" ||
	fail "$lib has no symbols file"
for sym in PVRDMA_1.0 pvrdmadv_is_supported pvrdmadv_query_counters \
	   pvrdmadv_query_device; do
	grep -q "^ $sym@PVRDMA_1.0 " "$work/lib.symbols" ||
		fail "$lib symbols file lacks $sym@PVRDMA_1.0"
done
for deb in "$provider_deb" "$lib_deb" "$dev_deb"; do
	[ "$(dpkg-deb -f "$deb" Multi-Arch)" = same ] ||
		fail "$(dpkg-deb -f "$deb" Package) is not Multi-Arch: same"
done
dpkg-deb -f "$dev_deb" Depends | grep -q "$lib (= $version)" ||
	fail "$dev does not depend on $lib (= $version)"
dpkg-deb -f "$dev_deb" Depends | grep -q 'libibverbs-dev' ||
	fail "$dev does not depend on libibverbs-dev (pvrdmadv.h includes verbs.h)"
if dpkg-deb -f "$lib_deb" Depends | grep -q libibverbs; then
	fail "$lib depends on libibverbs, which libpvrdma.so.1 does not link"
fi

# The provider is bound to libibverbs' private ABI 34 by symbol version:
# with another ABI the dynamic loader refuses it instead of crashing.
dpkg-deb -x "$provider_deb" "$work/x"
so=$work/x/usr/lib/$ma/libibverbs/libpvrdma-rdmav34.so
objdump -T "$so" | grep -q 'IBVERBS_PRIVATE_34' ||
	fail "libpvrdma-rdmav34.so uses no IBVERBS_PRIVATE_34 symbol"
objdump -p "$so" | grep -q 'NEEDED.*libibverbs\.so\.1' ||
	fail "libpvrdma-rdmav34.so is not linked with libibverbs.so.1"

# --- lintian ---------------------------------------------------------------
changes=$(ls "$work"/libpvrdma_"${version}"_*.changes)
lintian --fail-on error,warning \
	"$changes" >"$work/lintian.log" 2>&1 ||
	{ cat "$work/lintian.log" >&2; fail "lintian reports errors or warnings"; }
cat "$work/lintian.log"
echo "lintian: no errors, no warnings"

# --- install, choose, remove -----------------------------------------------
cleanup()
{
	dpkg -P "$dev" "$lib" "$provider" pvrdma-sim >/dev/null 2>&1 || true
}
trap cleanup EXIT

# The simulation preloaded by hand, as pvrdma-sim(1) shows: the launcher
# would load libpvrdma itself when it finds it, and here libibverbs must
# choose on its own.
simlib=/usr/lib/$ma/pvrdma-sim/libpvrdma-sim.so
probe_under_sim()
{
	env -u RDMAV_DRIVERS -u IBV_DRIVERS -u PVRDMA_SIM_PROVIDER "$@" \
		PVRDMA_SIM_RUNDIR="$work/run" LD_PRELOAD="$simlib" "$probe"
}

# The installed launcher finds the installed simulation and providers.
probe_under_launcher()
{
	env -u RDMAV_DRIVERS -u IBV_DRIVERS -u LD_PRELOAD \
		/usr/bin/pvrdma-sim --rundir "$work/run" "$@" -- "$probe"
}

dpkg -i "$provider_deb" "$sim_deb" "$lib_deb" "$dev_deb" \
	>"$work/dpkg.log" 2>&1 ||
	{ cat "$work/dpkg.log" >&2; fail "dpkg -i"; }
# Installing over itself is an upgrade: the diversion must survive it.
dpkg -i "$provider_deb" >>"$work/dpkg.log" 2>&1 ||
	{ cat "$work/dpkg.log" >&2; fail "dpkg -i (reinstall)"; }

[ "$(dpkg-divert --listpackage "$upstream_driver")" = "$provider" ] ||
	fail "$upstream_driver is not diverted by $provider"
[ ! -e "$upstream_driver" ] || fail "$upstream_driver is still in place"
[ -f "$parked_driver" ] || fail "no diverted copy at $parked_driver"

out=$(probe_under_sim) || fail "probe under pvrdma-sim: $out"
echo "installed: $out"
[ "$out" = "vmw_pvrdma0 libpvrdma-rdmav34.so" ] ||
	fail "libibverbs did not choose libpvrdma: '$out'"

out=$(probe_under_sim RDMAV_DRIVERS=vmw_pvrdma) ||
	fail "probe under pvrdma-sim: $out"
echo "installed, RDMAV_DRIVERS=vmw_pvrdma: $out"
[ "$out" = "vmw_pvrdma0 libvmw_pvrdma-rdmav34.so" ] ||
	fail "RDMAV_DRIVERS=vmw_pvrdma did not select upstream: '$out'"

for p in pvrdma:libpvrdma-rdmav34.so vmw_pvrdma:libvmw_pvrdma-rdmav34.so; do
	out=$(probe_under_launcher --provider "${p%%:*}") ||
		fail "pvrdma-sim --provider ${p%%:*}: $out"
	echo "pvrdma-sim --provider ${p%%:*}: $out"
	[ "$out" = "vmw_pvrdma0 ${p#*:}" ] ||
		fail "pvrdma-sim --provider ${p%%:*} gave '$out'"
done

# An application of the pvrdmadv API, built with the installed
# libpvrdma-dev and run by the installed launcher.
sh "$(dirname "$0")/pvrdmadv_consumer.sh" / /usr/bin/pvrdma-sim \
	"$work/consumer" || fail "pvrdmadv application on the installed packages"

dpkg -r "$provider" >>"$work/dpkg.log" 2>&1 ||
	{ cat "$work/dpkg.log" >&2; fail "dpkg -r"; }
[ -z "$(dpkg-divert --listpackage "$upstream_driver")" ] ||
	fail "the diversion outlived the package"
[ -f "$upstream_driver" ] || fail "$upstream_driver was not restored"
[ ! -e "${parked_driver%/*}" ] || fail "${parked_driver%/*} left behind"

out=$(probe_under_sim) || fail "probe under pvrdma-sim: $out"
echo "removed: $out"
[ "$out" = "vmw_pvrdma0 libvmw_pvrdma-rdmav34.so" ] ||
	fail "upstream vmw_pvrdma is not back: '$out'"

dpkg -P "$dev" "$lib" "$provider" pvrdma-sim >>"$work/dpkg.log" 2>&1 ||
	fail "dpkg -P"
echo "deb OK"
