#!/bin/sh
# pvrdmadv_consumer.sh ROOT LAUNCHER WORK: builds pvrdmadv_consumer.c the way
# an application would, against the pvrdmadv.h, libpvrdma.so and
# libpvrdma.pc installed under ROOT ("/" for the machine itself), and runs
# it on a pvrdma-sim adapter started by LAUNCHER: with libpvrdma every
# pvrdmadv call succeeds, with the upstream vmw_pvrdma provider each one
# answers EOPNOTSUPP. The program must take libpvrdma.so.1 from ROOT.
set -eu
root=$1
launcher=$2
work=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

need_tools pkg-config:pkgconf cc:gcc

ma=$(multiarch)
libdir=${root%/}/usr/lib/$ma
rm -rf "$work"
mkdir -p "$work"

if [ "$root" = / ]; then
	flags=$(pkg-config --cflags --libs libpvrdma) ||
		fail "pkg-config does not know libpvrdma"
else
	# The .pc file holds the real paths (/usr/...); pkg-config prefixes
	# them with the sysroot. libibverbs.pc comes from the machine.
	flags=$(PKG_CONFIG_SYSROOT_DIR="$root" \
		PKG_CONFIG_PATH="$libdir/pkgconfig" \
		pkg-config --cflags --libs libpvrdma) ||
		fail "pkg-config does not find libpvrdma.pc under $root"
	case " $flags " in
	*" -I$root/usr/include "*) ;;
	*) fail "pkg-config --cflags gives no -I$root/usr/include: $flags" ;;
	esac
fi
echo "pkg-config --cflags --libs libpvrdma: $flags"
case " $flags " in
*" -lpvrdma "*) ;;
*) fail "pkg-config --libs gives no -lpvrdma: $flags" ;;
esac
case " $flags " in
*" -libverbs "*) ;;
*) fail "pkg-config --libs gives no -libverbs: $flags" ;;
esac

# shellcheck disable=SC2086 # $flags is a list of options
cc -Wall -Wextra -Werror -o "$work/pvrdmadv_consumer" \
	"$here/pvrdmadv_consumer.c" $flags >"$work/cc.log" 2>&1 ||
	{ cat "$work/cc.log" >&2; fail "building against the installed API"; }
objdump -p "$work/pvrdmadv_consumer" | grep -q 'NEEDED.*libpvrdma\.so\.1' ||
	fail "the program is not linked with libpvrdma.so.1"

want_lib=$(readlink -f "$libdir/libpvrdma.so.1") ||
	fail "no $libdir/libpvrdma.so.1"
for provider in pvrdma vmw_pvrdma; do
	if [ "$root" = / ]; then
		out=$(env -u LD_PRELOAD -u LD_LIBRARY_PATH \
			"$launcher" --rundir "$work/run" --provider $provider \
			-- "$work/pvrdmadv_consumer" $provider) ||
			fail "--provider $provider: $out"
	else
		out=$(env -u LD_PRELOAD LD_LIBRARY_PATH="$libdir" \
			"$launcher" --rundir "$work/run" --provider $provider \
			-- "$work/pvrdmadv_consumer" $provider) ||
			fail "--provider $provider: $out"
	fi
	echo "pvrdma-sim --provider $provider: $out"
	got_lib=$(readlink -f "${out%% *}")
	[ "$got_lib" = "$want_lib" ] ||
		fail "--provider $provider: libpvrdma.so.1 came from $got_lib, not $want_lib"
done
echo "pvrdmadv consumer OK"
