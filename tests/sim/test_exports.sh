#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The preload library exports exactly the names of its version script (the
# libc and libibverbs entry points it answers): any other name would meet
# the application's own, and a name of the list that is missing is an
# entry point the sim no longer answers.
#
#   test_exports.sh NM LIBRARY MAP
set -eu
nm=$1
lib=$2
map=$3
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
exit "$status"
