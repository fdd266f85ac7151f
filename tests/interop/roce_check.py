#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Checks the RoCE v2 packets of a capture (pcap, Ethernet or Linux cooked):
every UDP datagram to port 4791 must hold a whole base transport header and
an invariant CRC that matches its contents, computed as IBA annex A17 defines
it for IPv4: CRC-32 over 64 one-bits, the IPv4 header with TOS, TTL and
checksum set to ones, the UDP header with its checksum set to ones, the BTH
with its reserved byte (and FECN/BECN) set to ones, and the rest up to the
ICRC. Exits 1 on any bad packet, or when fewer than --min were seen.

    roce_check.py [--min N] [--verbose] FILE.pcap
"""
import argparse
import struct
import sys
import zlib

ROCE_PORT = 4791
BTH_LEN = 12
ICRC_LEN = 4

# The BTH opcodes the tests expect to meet (IBA 9.2, RC and UD).
OPCODES = {
    0x00: "RC SEND First", 0x01: "RC SEND Middle", 0x02: "RC SEND Last",
    0x03: "RC SEND Last Imm", 0x04: "RC SEND Only", 0x05: "RC SEND Only Imm",
    0x06: "RC WRITE First", 0x07: "RC WRITE Middle", 0x08: "RC WRITE Last",
    0x09: "RC WRITE Last Imm", 0x0a: "RC WRITE Only", 0x0b: "RC WRITE Only Imm",
    0x0c: "RC READ Request", 0x0d: "RC READ Response First",
    0x0e: "RC READ Response Middle", 0x0f: "RC READ Response Last",
    0x10: "RC READ Response Only", 0x11: "RC Acknowledge",
    0x12: "RC Atomic Acknowledge", 0x13: "RC CmpSwap", 0x14: "RC FetchAdd",
    0x16: "RC SEND Last Inv", 0x17: "RC SEND Only Inv",
    0x64: "UD SEND Only", 0x65: "UD SEND Only Imm",
}


def pcap_packets(path):
    """Yields (number, link type, frame) of a classic pcap file."""
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            raise ValueError("not a pcap file (too short)")
        magic = struct.unpack("<I", head[:4])[0]
        if magic in (0xa1b2c3d4, 0xa1b23c4d):
            endian = "<"
        elif magic in (0xd4c3b2a1, 0x4d3cb2a1):
            endian = ">"
        else:
            raise ValueError("not a pcap file (magic %08x)" % magic)
        linktype = struct.unpack(endian + "I", head[20:24])[0]
        n = 0
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            incl = struct.unpack(endian + "IIII", rec)[2]
            n += 1
            yield n, linktype, f.read(incl)


def ipv4_of(linktype, frame):
    """The IPv4 packet in the frame, or None."""
    if linktype == 1:       # Ethernet, maybe one VLAN tag
        off, etype = 14, frame[12:14]
        if etype == b"\x81\x00":
            off, etype = 18, frame[16:18]
    elif linktype == 113:   # Linux cooked (any interface)
        off, etype = 16, frame[14:16]
    else:
        return None
    return frame[off:] if etype == b"\x08\x00" else None


def icrc_of(ip, ihl, udp_len):
    """The ICRC the packet should carry."""
    hdr = bytearray(ip[:ihl + 8 + BTH_LEN])
    hdr[1] = 0xff                   # TOS (DSCP, ECN)
    hdr[8] = 0xff                   # TTL
    hdr[10:12] = b"\xff\xff"        # header checksum
    hdr[ihl + 6:ihl + 8] = b"\xff\xff"  # UDP checksum
    hdr[ihl + 8 + 4] = 0xff         # BTH: FECN, BECN, reserved
    rest = ip[ihl + 8 + BTH_LEN:ihl + udp_len - ICRC_LEN]
    return zlib.crc32(b"\xff" * 8 + bytes(hdr) + rest) & 0xffffffff


def check(path, verbose):
    seen, bad, ops = 0, 0, {}
    for n, linktype, frame in pcap_packets(path):
        ip = ipv4_of(linktype, frame)
        if ip is None or len(ip) < 20 or ip[9] != 17:
            continue
        ihl = (ip[0] & 0x0f) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        if len(ip) < total or len(ip) < ihl + 8:
            print("packet %d: truncated capture" % n)
            bad += 1
            continue
        dport = struct.unpack(">H", ip[ihl + 2:ihl + 4])[0]
        if dport != ROCE_PORT:
            continue
        seen += 1
        udp_len = struct.unpack(">H", ip[ihl + 4:ihl + 6])[0]
        if udp_len < 8 + BTH_LEN + ICRC_LEN or ihl + udp_len > total:
            print("packet %d: UDP length %d holds no BTH and ICRC" % (n, udp_len))
            bad += 1
            continue
        bth = ip[ihl + 8:ihl + 8 + BTH_LEN]
        op = bth[0]
        qpn = struct.unpack(">I", bth[4:8])[0] & 0xffffff
        psn = struct.unpack(">I", bth[8:12])[0] & 0xffffff
        got = struct.unpack("<I", ip[ihl + udp_len - ICRC_LEN:ihl + udp_len])[0]
        want = icrc_of(ip, ihl, udp_len)
        name = OPCODES.get(op, "opcode 0x%02x" % op)
        ops[name] = ops.get(name, 0) + 1
        if got != want:
            print("packet %d: %s QPN 0x%06x PSN %d: ICRC %08x, expected %08x"
                  % (n, name, qpn, psn, got, want))
            bad += 1
        elif verbose:
            print("packet %d: %s QPN 0x%06x PSN %d ICRC ok" % (n, name, qpn, psn))
    return seen, bad, ops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--min", type=int, default=1)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("pcap")
    a = ap.parse_args()
    try:
        seen, bad, ops = check(a.pcap, a.verbose)
    except (OSError, ValueError) as e:
        print("%s: %s" % (a.pcap, e))
        return 1
    for name in sorted(ops):
        print("  %6d %s" % (ops[name], name))
    print("RoCE v2: %d packets, %d bad ICRC or malformed" % (seen, bad))
    if seen < a.min:
        print("fewer than %d RoCE v2 packets" % a.min)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
