#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Sends random and mutated RoCE v2 datagrams at an adapter's UDP port 4791.

    roce_fuzz.py [--gmp] SRC_ADDR DST_ADDR COUNT SEED QPN...

A quarter are random bytes (an eighth of them none), a quarter
well-formed headers of every RC and UD opcode with random fields
(destination QPN one of QPN... or random, PSNs, rkeys, addresses,
lengths, pad counts) and a right ICRC, so that they reach the adapter's
queue pairs; a quarter such packets truncated, grown,
with a byte flipped or a wrong ICRC; the rest GMPs to QP 1 with a right
ICRC that the CM must drop or answer: IB CM MADs of every attribute (and
unknown ones) with random communication IDs, REQs and SIDR REQs of random
service IDs (never a port below 32768, where the tests listen) and
address headers, wrong base or class versions, classes and methods,
truncated MADs, wrong Q_Keys. With --gmp, only those. Bounded: COUNT
datagrams, to DST_ADDR only.
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


def mad(rnd):
    """A CM MAD (256 bytes, or cut short) with random fields."""
    attr = rnd.choice(list(range(0x10, 0x19)) + [0x01, 0x19, 0x1a,
                                                 rnd.randrange(1 << 16)])
    base, cls, ver, method = 1, 0x07, 2, 0x03
    r = rnd.random()
    if r < 0.1:
        base = rnd.randrange(256)
    elif r < 0.2:
        cls = rnd.randrange(256)
    elif r < 0.3:
        ver = rnd.randrange(256)
    elif r < 0.4:
        method = rnd.randrange(256)
    hdr = struct.pack("!BBBBHHQHHI", base, cls, ver, method, 0, 0,
                      rnd.randrange(1 << 64), attr, 0, 0)
    data = bytearray(rnd.randrange(256) for _ in range(232))
    if attr in (0x10, 0x17):
        # rdma_cm's service ID of TCP or UDP and a port nothing listens on
        ps = rnd.choice([0x0106, 0x0111, 0x013f, rnd.randrange(1 << 16)])
        sid = ps << 16 | rnd.randrange(32768, 65536)
        data[8:16] = struct.pack("!Q", sid)
        pd = 140 if attr == 0x10 else 16
        if rnd.random() < 0.7:    # a plausible address header
            data[pd:pd + 2] = bytes([0, rnd.choice([0x40, 0x60, 0x50])])
    m = hdr + bytes(data)
    if rnd.random() < 0.1:
        m = m[:rnd.randrange(256)]
    return m


def gmp(rnd):
    """UD SEND_ONLY to QP 1 from QP 1, the GSI Q_Key (or not), a MAD."""
    m = mad(rnd)
    pad = (-len(m)) & 3
    qkey = 0x80010000 if rnd.random() < 0.9 else rnd.randrange(1 << 32)
    bth = struct.pack("!BBHII", 0x64, pad << 4, 0xffff, 1,
                      rnd.randrange(1 << 24))
    deth = struct.pack("!II", qkey, 1)
    return bth + deth + m + bytes(pad)


def main():
    args = sys.argv[1:]
    gmp_only = args[:1] == ["--gmp"]
    if gmp_only:
        args = args[1:]
    src, dst, count, seed = args[0], args[1], int(args[2]), int(args[3])
    qpns = [int(q, 0) for q in args[4:]] or [0x100]
    rnd = random.Random(seed)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
    s.bind((src, 0))
    sport = s.getsockname()[1]
    sent = 0
    for i in range(count):
        kind = 3 if gmp_only else i % 4
        if kind == 3:
            ib = gmp(rnd)
            d = ib + icrc(src, dst, sport, ib)
        elif kind == 0:
            # one in eight empty: a read of a WRITE's next run, planned
            # before it looks, may take one
            n = 0 if i % 32 == 0 else rnd.randrange(1200)
            d = bytes(rnd.randrange(256) for _ in range(n))
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
