#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Decodes a capture's RoCE v2 datagrams with Wireshark's InfiniBand dissector
# (tshark, UDP port 4791) and fails if one is not decoded as a base transport
# header or is malformed. Prints the opcodes seen and a summary line.
# (Wireshark does not check the ICRC: roce_check.py does.)
# With --cm LIST (e.g. "REQ REP RTU DREQ DREP"), each IB CM message named
# must be among the MADs it decoded (class 0x07 on QP 1), NAME:N at least
# N times, !NAME never, and every CM MAD must be one its CM dissector
# knows.
#
#   tshark_check.sh FILE.pcap [--cm LIST]
set -u
pcap=$1
cm_want=""
[ "${2:-}" = --cm ] && cm_want=$3
out=$(mktemp) || exit 1
trap 'rm -f "$out" "$out.err"' EXIT
# One line per datagram: frame, BTH opcode (empty if not decoded), protocols.
# Once a CM REQ named a connection, Wireshark's RPC-over-RDMA heuristic
# takes the programs' own payload for RPC and finds it malformed: it is
# not asked (the wire's headers are what is checked).
tshark -n -r "$pcap" -d udp.port==4791,infiniband -Y 'udp.dstport == 4791' \
	--disable-protocol rpcordma \
	-T fields -E separator=/t -e frame.number -e infiniband.bth.opcode \
	-e frame.protocols >"$out" 2>"$out.err" ||
	{ cat "$out.err"; echo "tshark failed"; exit 1; }
total=$(wc -l <"$out")
undecoded=$(awk -F'\t' '$2 == ""' "$out" | wc -l)
malformed=$(grep -c '_ws.malformed\|:malformed' "$out")
awk -F'\t' '$2 != "" { n[$2]++ } END { for (o in n) printf "  %6d opcode %s\n", n[o], o }' "$out" | sort -k3
awk -F'\t' '$2 == "" { print "frame " $1 ": not decoded as InfiniBand (" $3 ")" }' "$out" | head -5
grep '_ws.malformed\|:malformed' "$out" | head -5
echo "tshark: $total RoCE v2 datagrams, $undecoded not decoded, $malformed malformed"
[ "$total" -gt 0 ] && [ "$undecoded" -eq 0 ] && [ "$malformed" -eq 0 ] ||
	exit 1
[ -n "$cm_want" ] || exit 0
# The CM MADs by attribute, as the dissector named them.
tshark -n -r "$pcap" -d udp.port==4791,infiniband \
	-Y 'infiniband.mad.mgmtclass == 0x07' -T fields \
	-e infiniband.mad.attributeid >"$out" 2>"$out.err" ||
	{ cat "$out.err"; echo "tshark failed"; exit 1; }
rc=0
for m in $cm_want; do
	min=1 max=""
	case $m in
	*:*) min=${m#*:} m=${m%%:*} ;;
	!*) min=0 max=0 m=${m#!} ;;
	esac
	case $m in
	REQ) id=0x0010 ;; MRA) id=0x0011 ;; REJ) id=0x0012 ;; REP) id=0x0013 ;;
	RTU) id=0x0014 ;; DREQ) id=0x0015 ;; DREP) id=0x0016 ;;
	SIDR_REQ) id=0x0017 ;; SIDR_REP) id=0x0018 ;;
	*) echo "unknown CM message $m"; exit 1 ;;
	esac
	n=$(grep -c "^$id\$" "$out")
	echo "  $n CM $m"
	[ "$n" -ge "$min" ] || { echo "fewer than $min CM $m on the wire"; rc=1; }
	[ -z "$max" ] || [ "$n" -le "$max" ] ||
		{ echo "more than $max CM $m on the wire"; rc=1; }
done
other=$(grep -vc '^0x001[0-8]$' "$out")
[ "$other" -eq 0 ] || { echo "$other CM MADs of unknown attributes"; rc=1; }
exit $rc
