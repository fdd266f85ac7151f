#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The lower layers of pvrdma-sim reach libc only through the gateway
# (sim/common/libc.h): in the preload library libc's names are answered by
# the host, so a direct call would be taken for the application's, and a
# program that interposes the same name would reach into the sim's own I/O.
#
# Fails when an object of a lower layer's static library references,
# undefined, a name the preload library exports (its version script),
# unless that object is the gateway itself.
#
#   check_libc_gateway.sh NM MAP GATEWAY_OBJECT LIBRARY...
set -eu
nm=$1
map=$2
gateway=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The names between "global:" and "local:", comments dropped.
sed -e 's,/\*.*\*/,,' -e 's,^[[:space:]]*\*.*,,' "$map" |
	awk '/global:/ { on = 1; next } /local:/ { on = 0 } on' |
	tr -d ' \t;' | grep -v '^$' | sort -u > "$tmp/interposed"
[ -s "$tmp/interposed" ] || { echo "FAIL: no names in $map"; exit 1; }

status=0
for lib in "$@"; do
	[ -f "$lib" ] || { echo "FAIL: no $lib"; status=1; continue; }
	# "lib.a:object.o:  U name" for each undefined name of each object.
	"$nm" -A -u "$lib" | awk '{ print $NF, $1 }' | sort > "$tmp/undef"
	join "$tmp/interposed" "$tmp/undef" |
		awk -v gw="$gateway" '{
			n = split($2, p, ":")
			obj = p[n - 1]
			if (obj != gw)
				printf "FAIL: %s: %s calls %s past the gateway\n",
				       p[1], obj, $1
		}' > "$tmp/bad"
	if [ -s "$tmp/bad" ]; then
		cat "$tmp/bad"
		status=1
	fi
done
[ "$status" -eq 0 ] &&
	echo "PASS: $# libraries reach the $(wc -l < "$tmp/interposed")" \
	     "interposed names only through $gateway"
exit "$status"
