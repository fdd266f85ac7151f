#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""SIOCETHTOOL on a netdev, as a program other than ethtool asks it:
ETHTOOL_GLINK, then ETHTOOL_GLINKSETTINGS with the kernel's handshake
(a wrong mask size is answered with the right one, negated). Prints
"link N", "nwords N", "speed N duplex N port N" and the supported bits.

    ethtool_ioctl.py IFNAME
"""
import array
import fcntl
import os
import socket
import struct
import sys

SIOCETHTOOL = 0x8946
ETHTOOL_GLINK = 0x0a
ETHTOOL_GLINKSETTINGS = 0x4c
BASE = 48       # struct ethtool_link_settings without its masks


def ethtool(sock, name, data):
    buf = array.array('B', data)
    addr = buf.buffer_info()[0]
    ifr = struct.pack('16sP', name.encode(), addr).ljust(40, b'\0')
    fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifr)
    return buf.tobytes()


def main():
    name = sys.argv[1]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    out = ethtool(sock, name, struct.pack('II', ETHTOOL_GLINK, 0))
    print('link', struct.unpack_from('II', out)[1])
    out = ethtool(sock, name, struct.pack('I', ETHTOOL_GLINKSETTINGS)
                  .ljust(BASE, b'\0'))
    nwords = -struct.unpack_from('b', out, 15)[0]
    print('nwords', nwords)
    req = bytearray(struct.pack('I', ETHTOOL_GLINKSETTINGS).ljust(
        BASE + 12 * nwords, b'\0'))
    req[15] = nwords
    out = ethtool(sock, name, bytes(req))
    speed, duplex, port = struct.unpack_from('IBB', out, 4)
    print('speed', speed, 'duplex', duplex, 'port', port)
    masks = struct.unpack_from('%dI' % nwords, out, BASE)
    bits = [i for i in range(32 * nwords) if masks[i // 32] >> (i % 32) & 1]
    print('supported', ' '.join(map(str, bits)))


if __name__ == '__main__':
    main()
    sys.stdout.flush()
    # No interpreter teardown: a sanitizer's leak check preloaded with
    # the sim would report the interpreter's own allocations.
    os._exit(0)
