#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Checks a capture of RoCE v2 traffic with scapy's RoCE layer, an
implementation independent of pvrdma-sim's: every datagram to UDP port 4791
must decode as a BTH of a known RC or UD opcode and carry the ICRC that
scapy computes for it. Prints the count of each opcode; exits 1 on any
packet that fails, 2 if scapy is missing, 3 if the capture has no RoCE
packet. Responses carry the responder's MSN (AETH): on each flow they
must never go back, and a flow of more than one response must count
messages (an MSN left 0 fails). A flow is one connection's: a CM REQ or
REP naming a QP (rdma_cm connecting it again, as a test harness starts a
refused pair of programs again, their QPs numbered as before) begins a
new flow of the responses to that QP. With --self-test, also checks that a
packet with one byte changed is caught (the check can fail)."""
import sys

try:
    from scapy.all import rdpcap, IP, UDP, raw
    from scapy.contrib.roce import BTH, _bth_opcodes
except ImportError:
    sys.exit(2)


def icrc_ok(pkt):
    q = IP(raw(pkt[IP]))
    wire = q[BTH].icrc
    return int.from_bytes(q[BTH].compute_icrc(None), "big") == wire


# Opcodes with an AETH after the BTH: READ response first, last, only;
# ACK; atomic ACK.
AETH_OPS = (0x0d, 0x0f, 0x10, 0x11, 0x12)


# A CM MAD on QP 1 (BTH, DETH, then the MAD): its attribute ID, and
# where REQ and REP carry their sender's QPN (IBA 12.6.5, 12.6.8).
MAD_AT = 12 + 8
CM_REQ, CM_REP = 0x0010, 0x0013
QPN_IN = {CM_REQ: 24 + 32, CM_REP: 24 + 12}


def connecting(p):
    """(address, QPN) of the QP a CM REQ or REP connects, or None."""
    if p[BTH].dqpn != 1:
        return None
    mad = raw(p[UDP].payload)[MAD_AT:]
    if len(mad) < 64:
        return None
    at = QPN_IN.get(int.from_bytes(mad[16:18], "big"))
    if at is None:
        return None
    return p[IP].src, int.from_bytes(mad[at:at + 3], "big")


def msn_of(p, conns):
    """(flow, MSN) of an RC response, or None; the flow names the
    connection of its QP (conns: (address, QPN) -> how many times a REQ
    or REP connected it)."""
    if p[BTH].opcode not in AETH_OPS:
        return None
    ib = raw(p[UDP].payload)
    if len(ib) < 16:
        return None
    flow = (p[IP].src, p[IP].dst, p[BTH].dqpn)
    n = conns.get((p[IP].dst, p[BTH].dqpn), 0)
    return flow + ((n,) if n > 1 else ()), int.from_bytes(ib[13:16], "big")


def msn_check(msns):
    """Every flow's MSNs never go back (modulo 2^24); one that had more
    than a response counted some message. Returns the count of faults."""
    bad = 0
    for flow, seq in msns.items():
        for a, b in zip(seq, seq[1:]):
            if (b - a) & 0xffffff >= 0x800000:
                print("MSN went back on", flow, a, "->", b)
                bad += 1
                break
        if len(seq) > 1 and not any(seq):
            print("MSN always 0 on", flow, "over", len(seq), "responses")
            bad += 1
        print("MSN on", flow, ":", len(seq), "responses, last", seq[-1])
    return bad


def main():
    path = sys.argv[1]
    self_test = "--self-test" in sys.argv
    count, bad, ops, msns, conns = 0, 0, {}, {}, {}
    first = None
    for p in rdpcap(path):
        if IP not in p or UDP not in p or p[UDP].dport != 4791:
            continue
        count += 1
        if BTH not in p or p[BTH].opcode not in _bth_opcodes:
            print("undecodable:", raw(p[UDP].payload).hex())
            bad += 1
            continue
        name = _bth_opcodes[p[BTH].opcode]
        if not icrc_ok(p):
            print("bad ICRC:", name, "psn", p[BTH].psn)
            bad += 1
        ops[name] = ops.get(name, 0) + 1
        c = connecting(p)
        if c:
            conns[c] = conns.get(c, 0) + 1
        m = msn_of(p, conns)
        if m:
            msns.setdefault(m[0], []).append(m[1])
        first = first or p
    for name in sorted(ops):
        print("%-40s %d" % (name, ops[name]))
    bad += msn_check(msns)
    print("%d RoCE v2 packets, %d bad" % (count, bad))
    if self_test and first is not None:
        b = bytearray(raw(first[IP]))
        b[20 + 8 + 9] ^= 0x01          # a bit of the PSN
        if icrc_ok(IP(bytes(b))):
            print("self-test: a changed PSN passed the ICRC check")
            return 1
    if not count:
        return 3
    return 1 if bad else 0


sys.exit(main())
