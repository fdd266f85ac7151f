#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Sends random and mutated RoCE v2 datagrams at an adapter's UDP port 4791.

    roce_fuzz.py SRC_ADDR DST_ADDR COUNT SEED QPN...

A third are random bytes, a third well-formed headers of every RC and UD
opcode with random fields (destination QPN one of QPN... or random, PSNs,
rkeys, addresses, lengths, pad counts) and a right ICRC, so that they reach
the adapter's queue pairs; the rest are such packets truncated, grown, with
a byte flipped or a wrong ICRC. Bounded: COUNT datagrams, to DST_ADDR only.
"""
import random
import socket
import struct
import sys
import zlib

IP_MTU_DISCOVER, IP_PMTUDISC_DO = 10, 2
# opcode: extended header bytes after the BTH
EXT = {0x00: 0, 0x01: 0, 0x02: 0, 0x03: 4, 0x04: 0, 0x05: 4, 0x06: 16,
       0x07: 0, 0x08: 0, 0x09: 4, 0x0a: 16, 0x0b: 20, 0x0c: 16, 0x0d: 4,
       0x0e: 0, 0x0f: 4, 0x10: 4, 0x11: 4, 0x12: 12, 0x13: 28, 0x14: 28,
       0x16: 4, 0x17: 4, 0x64: 8, 0x65: 12}


def icrc(src, dst, sport, ib):
    """The ICRC of ib (BTH to pad) sent from src:sport to dst:4791 by a
    socket with don't-fragment set (IPv4 identification 0)."""
    udp_len = 8 + len(ib) + 4
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0xff, 20 + udp_len, 0, 0x4000,
                     0xff, 17, 0xffff, socket.inet_aton(src),
                     socket.inet_aton(dst))
    udp = struct.pack("!HHHH", sport, 4791, udp_len, 0xffff)
    bth = bytearray(ib[:12])
    bth[4] = 0xff
    crc = zlib.crc32(b"\xff" * 8 + ip + udp + bytes(bth) + ib[12:])
    return struct.pack("<I", crc)


def well_formed(rnd, qpns):
    op = rnd.choice(list(EXT))
    pay = 0
    if op in (0x00, 0x01, 0x06, 0x07, 0x0d, 0x0e):
        pay = rnd.choice([256, 512, 1024, 2048, 4096, rnd.randrange(4097)])
    elif op not in (0x0c, 0x11, 0x12, 0x13, 0x14):
        pay = rnd.randrange(0, 4097)
    pad = (-pay) & 3
    qpn = rnd.choice(qpns + [rnd.randrange(1 << 24), 0, 1, 0xffffff])
    psn = rnd.randrange(1 << 24) if rnd.random() < 0.5 else rnd.randrange(64)
    # now and then another partition's (dropped), or the default one's
    # limited member (taken)
    pkey = 0xffff if rnd.random() < 0.8 else \
        rnd.choice([0x8001, 0x1234, 0x0000, 0x7fff])
    bth = struct.pack("!BBHII", op, rnd.randrange(256) & 0xc0 | pad << 4,
                      pkey, qpn, rnd.randrange(2) << 31 | psn)
    ext = bytes(rnd.randrange(256) for _ in range(EXT[op]))
    if op in (0x13, 0x14) and rnd.random() < 0.5:   # aligned addresses
        ext = struct.pack("!Q", rnd.randrange(1 << 40) & ~7) + ext[8:]
    return bth + ext + bytes(rnd.randrange(256) for _ in range(pay + pad))


def main():
    src, dst, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
        int(sys.argv[4])
    qpns = [int(q, 0) for q in sys.argv[5:]] or [0x100]
    rnd = random.Random(seed)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
    s.bind((src, 0))
    sport = s.getsockname()[1]
    sent = 0
    for i in range(count):
        kind = i % 3
        if kind == 0:
            d = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1200)))
        else:
            ib = well_formed(rnd, qpns)
            d = ib + icrc(src, dst, sport, ib)
            if kind == 2:
                m = rnd.randrange(4)
                if m == 0:
                    d = d[:rnd.randrange(len(d))]
                elif m == 1:
                    d = bytearray(d)
                    d[rnd.randrange(len(d))] ^= 1 << rnd.randrange(8)
                    d = bytes(d)
                elif m == 2:
                    d = d[:-4] + b"\0\0\0\0"
                else:
                    ib = ib + bytes(rnd.randrange(256) for _ in range(4))
                    d = ib + icrc(src, dst, sport, ib)
        try:
            s.sendto(d, (dst, 4791))
            sent += 1
        except OSError:
            pass
    print("sent %d datagrams" % sent)


main()
