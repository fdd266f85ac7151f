#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Decodes a capture's RoCE v2 datagrams with Wireshark's InfiniBand dissector
# (tshark, UDP port 4791) and fails if one is not decoded as a base transport
# header or is malformed. Prints the opcodes seen and a summary line.
# (Wireshark does not check the ICRC: roce_check.py does.)
#
#   tshark_check.sh FILE.pcap
set -u
pcap=$1
out=$(mktemp) || exit 1
trap 'rm -f "$out" "$out.err"' EXIT
# One line per datagram: frame, BTH opcode (empty if not decoded), protocols.
tshark -n -r "$pcap" -d udp.port==4791,infiniband -Y 'udp.dstport == 4791' \
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
[ "$total" -gt 0 ] && [ "$undecoded" -eq 0 ] && [ "$malformed" -eq 0 ]
