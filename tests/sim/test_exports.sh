#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The preload library exports exactly the names of its version script (the
# libc and libibverbs entry points it answers): any other name would meet
# the application's own, and a name of the list that is missing is an
# entry point the sim no longer answers.
#
# With FABRIC and DEVICE (the two layers' static libraries) it also
# checks the seam between them: the fabric calls nothing the device
# defines, and defines no name of a device object.
#
#   test_exports.sh NM LIBRARY MAP [FABRIC DEVICE]
set -eu
nm=$1
lib=$2
map=$3
fabric=${4:-}
device=${5:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The names between "global:" and "local:", comments dropped.
sed -e 's,/\*.*\*/,,' -e 's,^[[:space:]]*\*.*,,' "$map" |
	awk '/global:/ { on = 1; next } /local:/ { on = 0 } on' |
	tr -d ' \t' | grep -v '^$' > "$tmp/entries"
if grep -v '^[A-Za-z_][A-Za-z0-9_]*;$' "$tmp/entries"; then
	echo "FAIL: $map: entries above are not one plain name each"
	exit 1
fi
tr -d ';' < "$tmp/entries" | sort > "$tmp/allowed"

"$nm" -D --defined-only "$lib" | awk '{ print $NF }' | sort -u \
	> "$tmp/exported"
if [ ! -s "$tmp/exported" ]; then
	echo "FAIL: $lib exports nothing"
	exit 1
fi

status=0
extra=$(comm -23 "$tmp/exported" "$tmp/allowed")
if [ -n "$extra" ]; then
	echo "FAIL: $lib exports names outside $map:"
	echo "$extra"
	status=1
fi
missing=$(comm -13 "$tmp/exported" "$tmp/allowed")
if [ -n "$missing" ]; then
	echo "FAIL: $lib does not export these names of $map:"
	echo "$missing"
	status=1
fi
[ "$status" -eq 0 ] &&
	echo "PASS: $(wc -l < "$tmp/exported") names exported, all of $map"

if [ -n "$fabric" ]; then
	"$nm" --defined-only "$device" 2>/dev/null |
		awk 'NF == 3 && $2 ~ /[TDBR]/ { print $3 }' | sort -u \
		> "$tmp/device"
	"$nm" --defined-only "$fabric" 2>/dev/null |
		awk 'NF == 3 && $2 ~ /[TDBR]/ { print $3 }' | sort -u \
		> "$tmp/fabric"
	"$nm" --undefined-only "$fabric" 2>/dev/null | awk '{ print $NF }' |
		sort -u > "$tmp/fabric_needs"
	up=$(comm -12 "$tmp/fabric_needs" "$tmp/device")
	if [ -n "$up" ]; then
		echo "FAIL: the fabric calls into the device:"
		echo "$up"
		status=1
	fi
	# Names of device objects among the fabric's (as in check_deps.sh).
	named=$(tr '_' ' ' < "$tmp/fabric" | paste -d' ' "$tmp/fabric" - |
		awk '{ for (i = 2; i <= NF; i++)
			if (tolower($i) ~ /^(cqs?|cqn|cqes?|srqs?|srqn|mrs?|wqes?|pdn?|eqp|engine)$/) {
				print $1; break } }')
	if [ -n "$named" ]; then
		echo "FAIL: the fabric defines names of device objects:"
		echo "$named"
		status=1
	fi
	[ "$status" -eq 0 ] &&
		echo "PASS: the fabric's $(wc -l < "$tmp/fabric") names need" \
		     "none of the device's and name none of its objects"
fi
exit "$status"
