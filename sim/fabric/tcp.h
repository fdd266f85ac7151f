/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fabric between hosts: adapters whose ports have an IPv4 address
 * outside 127/8 reach adapters on other hosts over TCP. tcp.c's opening
 * comment has the design; fabric.c calls these hooks.
 */
#ifndef PVRDMA_SIM_FABRIC_TCP_H
#define PVRDMA_SIM_FABRIC_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabric.h"

/* Version of the frames on a link, carried in the HELLO's opcode. 2: an
 * ACK's opcode tells a partial ACK (enum fab_ack), which a version-1 peer
 * would take for the ACK of the whole message. */
#define FAB_VERSION		2

/* Longest link name ("tcp:255.255.255.255:65535" and a socket path). */
#define FAB_TCP_NAME_MAX	32

/* ipv4 (network order) is an address of another host's adapter: not
 * 0.0.0.0/8, 127/8, multicast or reserved. */
bool fab_tcp_addr(uint32_t ipv4);
/* The IPv4 address a GID carries (::ffff:a.b.c.d) if it is one reached
 * over TCP; false for every other GID. */
bool fab_tcp_gid_addr(const uint8_t gid[16], uint32_t *ipv4);
/* "tcp:A.B.C.D:PORT": how a TCP port names itself in its HELLO. */
void fab_tcp_name(uint32_t ipv4, uint16_t port, char *buf, size_t len);

/* A non-blocking listening socket, owned by the sim, at ipv4 and the
 * first of port, port + 2, ... (`slots` of them) that no other process
 * holds, whose index goes to *slot; -1 with a log line when the address
 * is not this host's or every port is taken. */
int fab_tcp_listen_slot(uint32_t ipv4, uint16_t port, unsigned int slots,
			unsigned int *slot);
/* A non-blocking connect from src to dst:port, owned by the sim; the
 * connection completes (or fails) later. -1 if it cannot start. */
int fab_tcp_connect(uint32_t src, uint32_t dst, uint16_t port);
/* Socket options of an accepted or connected link. */
void fab_tcp_tune(int fd);
/*
 * A peer that vanished (a half-open connection) is found and the
 * connection closed: by keepalive probes once it has been idle
 * FAB_TCP_KEEPIDLE_S, or when bytes sent stay unacknowledged
 * FAB_TCP_USER_TIMEOUT_MS (which also bounds the probes).
 */
#define FAB_TCP_KEEPIDLE_S		10
#define FAB_TCP_KEEPINTVL_S		5
#define FAB_TCP_KEEPCNT			3
#define FAB_TCP_USER_TIMEOUT_MS		30000
void fab_tcp_keepalive(int fd);
/* Whether the HELLO name of an accepted connection is the address it came
 * from: a peer names only itself. */
bool fab_tcp_hello_matches(int fd, const char *name);
/* The peer of a connection as text, for log lines. */
void fab_tcp_peer_text(int fd, char *buf, size_t len);

/* Checks a frame header read from a link: magic, type, lengths and the
 * ranges of QPNs and PSNs. NULL when valid, else why not. */
const char *fab_hdr_check(const struct fab_hdr *h);
/* The same for a frame from a link to another host (tcp) or of this
 * host: a NOTIFY (a same-host completion event) never comes from
 * another host, and one from there could raise any completion event. */
const char *fab_hdr_check_link(const struct fab_hdr *h, bool tcp);

#endif /* PVRDMA_SIM_FABRIC_TCP_H */
