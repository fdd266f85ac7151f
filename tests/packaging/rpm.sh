#!/bin/sh
# rpm.sh SRC WORK VERSION: builds the RPMs from redhat/libpvrdma.spec and a
# tarball of the tree, checks their file lists and dependencies against the
# layout, and runs their scriptlets against a scratch copy of the
# libibverbs driver directory.
set -eu
src=$1
work=$2
version=$3
. "$(dirname "$0")/lib.sh"

need_tools rpmbuild:rpm rpmspec:rpm rpm2cpio:rpm cpio:cpio \
	pkg-config:pkgconf
spec=$src/redhat/libpvrdma.spec
spec_version=$(rpmspec -q --srpm --qf '%{VERSION}' "$spec" 2>/dev/null ||
	sed -n 's/^Version:[[:space:]]*//p' "$spec")
[ "$spec_version" = "$version" ] ||
	fail "libpvrdma.spec is at $spec_version, the project at $version"

rm -rf "$work"
top=$work/rpmbuild
mkdir -p "$top/SOURCES"
copy_tree "$src" "$work/libpvrdma-$version"
tar -C "$work" -czf "$top/SOURCES/libpvrdma-$version.tar.gz" \
	"libpvrdma-$version"

# --nodeps: the BuildRequires name Fedora/RHEL packages, which the rpm
# database of a Debian machine does not hold; the Debian equivalents are
# installed. --nocheck: the suites already run in this tree.
rpmbuild -bb --nodeps --nocheck --define "_topdir $top" "$spec" \
	>"$work/build.log" 2>&1 ||
	{ show_log "$work/build.log"; fail "rpmbuild"; }
echo "rpmbuild OK (log: $work/build.log)"
# A distribution's compiler flags, never -Werror (PVRDMA_WERROR).
grep -q -- '-Werror\( \|$\)' "$work/build.log" &&
	fail "rpmbuild compiled with -Werror"

arch=$(rpm --eval '%{_arch}')
libdir=$(rpm --eval '%{_libdir}')
rpmdir=$top/RPMS/$arch
provider_rpm=$(ls "$rpmdir"/libpvrdma-"$version"-*."$arch".rpm)
sim_rpm=$(ls "$rpmdir"/pvrdma-sim-"$version"-*."$arch".rpm)
devel_rpm=$(ls "$rpmdir"/libpvrdma-devel-"$version"-*."$arch".rpm)

# Files as the spec lists them: man pages without the compression suffix
# (brp-compress picks it per distribution, %files matches it with a glob),
# without the build-id links rpmbuild adds by itself, and with the license
# directory under the package name alone (older rpm appends the version).
rpm_files()
{
	rpm -qp --qf '[%{FILENAMES} %{FILEMODES:perms}\n]' "$1" |
		awk '$2 !~ /^d/ && $1 !~ "^/usr/lib/[.]build-id/" { print $1 }' |
		sed -E -e 's@(/man/man[0-9]/[^/]+)\.(gz|bz2|xz|zst)$@\1@' \
		       -e 's@^(/usr/share/licenses/[^/]+)-[0-9][^/]*/@\1/@'
}

cat >"$work/provider.expected" <<EOT
/etc/libibverbs.d/pvrdma.driver
$libdir/libibverbs/libpvrdma-rdmav34.so
$libdir/libpvrdma.so.1
$libdir/libpvrdma.so.1.0.0
/usr/share/man/man7/pvrdma.7
/usr/share/licenses/libpvrdma/COPYING
EOT
rpm_files "$provider_rpm" >"$work/provider.actual"
same_list "libpvrdma rpm" "$work/provider.expected" "$work/provider.actual"

cat >"$work/sim.expected" <<EOT
/usr/bin/pvrdma-sim
/usr/bin/pvrdma-sim-rsh
$libdir/pvrdma-sim/libpvrdma-sim.so
/usr/share/man/man1/pvrdma-sim-rsh.1
/usr/share/man/man1/pvrdma-sim.1
/usr/share/licenses/pvrdma-sim/COPYING
EOT
rpm_files "$sim_rpm" >"$work/sim.actual"
same_list "pvrdma-sim rpm" "$work/sim.expected" "$work/sim.actual"

cat >"$work/devel.expected" <<EOT
/usr/include/infiniband/pvrdmadv.h
$libdir/libpvrdma.so
$libdir/pkgconfig/libpvrdma.pc
/usr/share/man/man3/pvrdmadv.3
EOT
rpm_files "$devel_rpm" >"$work/devel.actual"
same_list "libpvrdma-devel rpm" "$work/devel.expected" "$work/devel.actual"

# The .pc file of the RPM names the RPM's library directory.
rpm2cpio "$devel_rpm" | (mkdir -p "$work/devel" && cd "$work/devel" &&
	cpio -idm --quiet ".$libdir/pkgconfig/libpvrdma.pc") ||
	fail "cannot extract libpvrdma.pc"
pc_libdir=$(pkg-config --variable=libdir \
	"$work/devel$libdir/pkgconfig/libpvrdma.pc")
[ "$pc_libdir" = "$libdir" ] ||
	fail "libpvrdma.pc of the RPM: libdir $pc_libdir, not $libdir"

rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' "$provider_rpm" |
	grep -qx '/etc/libibverbs.d/pvrdma.driver cn' ||
	fail "pvrdma.driver is not %config(noreplace)"

requires=$(rpm -qp --requires "$provider_rpm")
echo "$requires" | grep -q 'libibverbs.so.1(IBVERBS_PRIVATE_34)(64bit)' ||
	fail "no requirement on libibverbs' private ABI 34:
$requires"
echo "$requires" | grep -q '^libibverbs.* >= 39' ||
	fail "no requirement on libibverbs >= 39"

# libpvrdma.so.1 is found by its SONAME and its version node; the devel
# package pulls in the library of the same build and, through libpvrdma.pc,
# the libibverbs headers pvrdmadv.h includes.
provides=$(rpm -qp --provides "$provider_rpm")
for cap in 'libpvrdma.so.1()(64bit)' 'libpvrdma.so.1(PVRDMA_1.0)(64bit)'; do
	echo "$provides" | grep -qxF "$cap" ||
		fail "libpvrdma does not provide $cap:
$provides"
done
rpm -qp --provides "$devel_rpm" | grep -q '^pkgconfig(libpvrdma) = ' ||
	fail "libpvrdma-devel does not provide pkgconfig(libpvrdma)"
devel_requires=$(rpm -qp --requires "$devel_rpm")
echo "$devel_requires" | grep -qx "libpvrdma(x86-64) = $version-[^ ]*" ||
	fail "libpvrdma-devel does not require libpvrdma(x86-64) = $version:
$devel_requires"
echo "$devel_requires" | grep -qx 'pkgconfig(libibverbs)' ||
	fail "libpvrdma-devel does not require pkgconfig(libibverbs):
$devel_requires"

# The linker cache: %post and %postun run %ldconfig where the distribution
# defines it (glibc without file triggers), and nothing where it does not.
post_prog=$(rpmspec -q --define 'ldconfig /sbin/ldconfig' \
	--qf '%{NAME} %{POSTINPROG}\n' "$spec" | sed -n 's/^libpvrdma //p')
[ "$post_prog" = /sbin/ldconfig ] ||
	fail "with %ldconfig, %post of libpvrdma runs '$post_prog'"
rpmspec -q --define 'ldconfig /sbin/ldconfig' --qf '%{NAME}\n%{POSTUN}\n' \
	"$spec" | sed -n '/^libpvrdma$/,/^libpvrdma-devel$/p' |
	grep -qx /sbin/ldconfig ||
	fail "with %ldconfig, %postun of libpvrdma does not run it"
[ -z "$(rpm -qp --qf '%{POSTINPROG}' "$provider_rpm" | sed '/^(none)$/d')" ] ||
	fail "without %ldconfig, libpvrdma has a %post"

# --- scriptlets ------------------------------------------------------------
# The scriptlets name /etc/libibverbs.d; run them on a scratch copy.
fake=$work/etc/libibverbs.d
mkdir -p "$fake"
printf 'driver vmw_pvrdma\n' >"$fake/vmw_pvrdma.driver"
cp "$fake/vmw_pvrdma.driver" "$work/vmw_pvrdma.driver.orig"
printf 'driver mlx5\n' >"$fake/mlx5.driver"

[ "$(rpm -qp --qf '[%{TRIGGERNAME} %{TRIGGERTYPE}\n]' "$provider_rpm")" = \
	"libibverbs in" ] || fail "no %triggerin on libibverbs"
rpm -qp --qf '[%{TRIGGERSCRIPTS}\n]' "$provider_rpm" |
	sed "s|/etc/libibverbs.d|$fake|g" >"$work/trigger.sh"
rpm -qp --qf '%{POSTUN}\n' "$provider_rpm" |
	sed "s|/etc/libibverbs.d|$fake|g" >"$work/postun.sh"

sh "$work/trigger.sh" || fail "%triggerin failed"
sh "$work/trigger.sh" || fail "%triggerin failed when run again"
if grep -q '^[[:space:]]*driver' "$fake/vmw_pvrdma.driver"; then
	fail "%triggerin left vmw_pvrdma enabled: $(cat "$fake/vmw_pvrdma.driver")"
fi
grep -qx 'driver mlx5' "$fake/mlx5.driver" || fail "another driver file changed"
sh "$work/postun.sh" 1 || fail "%postun (upgrade) failed"
if grep -q '^[[:space:]]*driver' "$fake/vmw_pvrdma.driver"; then
	fail "an upgrade re-enabled vmw_pvrdma"
fi
sh "$work/postun.sh" 0 || fail "%postun (erase) failed"
cmp "$fake/vmw_pvrdma.driver" "$work/vmw_pvrdma.driver.orig" ||
	fail "erasing did not restore vmw_pvrdma.driver: $(cat "$fake/vmw_pvrdma.driver")"
echo "rpm OK"
