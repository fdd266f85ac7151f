#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The layers of pvrdma-sim include only downward (sim/README.md):
#
#   host -> kernel -> device -> fabric -> common
#
# Reads the #include "..." lines of every file under sim/ and fails on an
# include of a header of a higher layer, on an include cycle between files
# of different layers, and on a quoted include the sim does not hold (the
# sim never includes provider code).
#
#   check_deps.sh SIM_DIR
set -eu
sim=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# file -> layer, for every source and header
for layer in common fabric device kernel host; do
	for f in "$sim/$layer"/*.[ch]; do
		[ -e "$f" ] && echo "$layer/${f##*/} $layer"
	done
done > "$tmp/files"

# edges: including file, included name
quoted='s/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p'
while read -r file layer; do
	sed -n "$quoted" "$sim/$file" | while read -r inc; do
		echo "$file $inc"
	done
done < "$tmp/files" > "$tmp/includes"

awk -v files="$tmp/files" '
BEGIN {
	rank["common"] = 0; rank["fabric"] = 1; rank["device"] = 2
	rank["kernel"] = 3; rank["host"] = 4
	while ((getline line < files) > 0) {
		split(line, a, " ")
		layer[a[1]] = a[2]
		n = split(a[1], p, "/")
		base = p[n]
		if (base in where && where[base] != a[1]) {
			printf "FAIL: %s and %s: one name, two headers\n",
			       where[base], a[1]
			bad = 1
		}
		where[base] = a[1]
	}
}
{
	from = $1; inc = $2
	split(from, p, "/")
	if ((p[1] "/" inc) in layer)		# its own folder first
		to = p[1] "/" inc
	else if (inc in where)
		to = where[inc]
	else {
		printf "FAIL: %s includes \"%s\", which sim/ does not hold\n",
		       from, inc
		bad = 1
		next
	}
	if (rank[layer[to]] > rank[layer[from]]) {
		printf "FAIL: %s (%s) includes %s (%s): upward\n",
		       from, layer[from], to, layer[to]
		bad = 1
	}
	edges++
	ef[edges] = from; et[edges] = to
	out[from] = out[from] " " to
}
function dfs(v,    n, i, w, lst) {
	state[v] = 1
	stack[++sp] = v
	n = split(out[v], lst, " ")
	for (i = 1; i <= n; i++) {
		w = lst[i]
		if (state[w] == 1)
			cycle(w)
		else if (!state[w])
			dfs(w)
	}
	sp--
	state[v] = 2
}
function cycle(w,    i, s, mixed) {
	s = w
	mixed = 0
	for (i = sp; i >= 1 && stack[i] != w; i--) {
		s = stack[i] " -> " s
		if (layer[stack[i]] != layer[w])
			mixed = 1
	}
	s = w " -> " s
	if (mixed) {
		printf "FAIL: include cycle across layers: %s\n", s
		bad = 1
	}
}
END {
	for (f in layer)
		if (!state[f])
			dfs(f)
	if (bad)
		exit 1
	printf "PASS: %d includes between %d files, none upward\n",
	       edges, length(layer)
}' "$tmp/includes"

# The fabric knows nothing of the device (sim/fabric/README.md): no file of
# sim/fabric includes a header of sim/device, nor names, in code or
# comment, a device object or the device's own names. The words are
# matched as whole words and as the parts of identifiers between
# underscores, in any case; what the wire itself carries (QPN, PSN, rkey,
# opcodes) is the fabric's to name.
device_words='cq cqs cqn cqe cqes srq srqs srqn mr mrs wqe wqes pd pdn
eqp engine'
device_names='sim_dev sim_devs sim_qp sim_cq sim_srq sim_mr sim_pd
sim_ucontext sim_device sim_device_ops sim_device_upcalls'
for f in "$sim"/device/*.h; do
	device_headers="${device_headers:-} ${f##*/}"
done
fail=0
for f in "$sim"/fabric/*.[ch]; do
	rel="fabric/${f##*/}"
	for h in $device_headers; do
		if grep -q "^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<]$h[\">]" "$f"; then
			echo "FAIL: $rel includes $h, a device header"
			fail=1
		fi
	done
	for w in $device_words; do
		hits=$(tr -c 'A-Za-z0-9\n' ' ' < "$f" | tr 'A-Z' 'a-z' |
		       grep -nw -- "$w" | cut -d: -f1 | tr '\n' ' ')
		if [ -n "$hits" ]; then
			echo "FAIL: $rel names the device's \"$w\" (lines $hits)"
			fail=1
		fi
	done
	for n in $device_names; do
		hits=$(tr -c 'A-Za-z0-9_\n' ' ' < "$f" |
		       grep -nw -- "$n" | cut -d: -f1 | tr '\n' ' ')
		if [ -n "$hits" ]; then
			echo "FAIL: $rel names the device's $n (lines $hits)"
			fail=1
		fi
	done
done
[ "$fail" -eq 0 ] || exit 1
echo "PASS: sim/fabric includes no device header and names no device word"
