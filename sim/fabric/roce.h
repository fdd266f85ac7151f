/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The RoCE v2 wire (--wire roce): a port whose address is a real
 * interface's sends and receives RoCE v2 datagrams on an unprivileged UDP
 * socket bound to that address, port 4791, and reaches any GID that maps
 * an IPv4 address of another host through it. roce.c has the socket and
 * the links, roce_map.c turns the fabric's packets into RoCE packets and
 * back. Private to the fabric: fabric.c, fabric_tx.c and fabric_rx.c call
 * these.
 */
#ifndef PVRDMA_SIM_FABRIC_ROCE_H
#define PVRDMA_SIM_FABRIC_ROCE_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "fabric.h"
#include "roce_hdr.h"
#include "roce_icrc.h"

struct fab_port;
struct fab_link;

/* The largest datagram taken: headers, 4096 bytes of payload, pad, ICRC. */
#define ROCE_MAX_DATAGRAM	(ROCE_MAX_HDR_LEN + 4096 + 8)
/* UDP source ports a port sends from (one per QP's flow): more share
 * 4791. */
#define ROCE_SPORTS		64
/* Packets one sendmsg hands the kernel to cut (UDP_SEGMENT), and the
 * bytes of their datagrams at most (one UDP datagram's payload). */
#define ROCE_GSO_SEGS		64
#define ROCE_TX_LEN		65000
/* Pieces one sendmsg takes at most (the kernel's UIO_MAXIOV). */
#define ROCE_TX_IOV		1024
/* The receive buffer: a datagram, or the run of datagrams the kernel
 * coalesced (UDP_GRO), which is one UDP datagram's payload at most. */
#define ROCE_RX_LEN		(65536 + 64)
/* Bytes a requester keeps in flight to a RoCE peer (roce.c's
 * window_of()). */
#define ROCE_WINDOW_MIN		(256u << 10)
#define ROCE_WINDOW_MAX		(1024u << 10)
/* Peers a port keeps a link for; more are not reached. */
#define ROCE_MAX_LINKS		256


/* Opens the port's UDP socket when the wire is RoCE and its address is a
 * real interface's; false if it cannot (logged). */
bool roce_open(struct fab_port *port);
void roce_close(struct fab_port *port);
/* In a fork()ed child: closes its copies of the sockets only. */
void roce_forget(struct fab_port *port);
/* The link to the RoCE peer at the address gid maps; NULL if gid maps no
 * address of another host or the port speaks no RoCE. */
struct fab_link *roce_resolve(struct fab_port *port, const uint8_t gid[16]);
/* roce_tx.c: sends the fabric packet h as RoCE packets (payload gathered
 * from iov, which may be the application's: errno EFAULT if
 * unreadable). */
bool roce_send(struct fab_port *port, struct fab_link *link,
	       const struct fab_hdr *h, const struct iovec *iov, int iovcnt);
/* A UDP socket at ipv4:sport that is only sent from (don't-fragment, no
 * receive buffer), or -1. With bound, a port taken by another socket
 * gives way to any port, the one bound stored there; sport 0 asks for
 * any port. */
int roce_sport_socket(uint32_t ipv4, uint16_t sport, uint16_t *bound);
/* Reads the datagrams that arrived and hands each valid one to the
 * port's receive callback; returns how many. */
int roce_rx(struct fab_port *port);

/* roce.c, the steps of receiving: the flow of a datagram from src (its
 * identification unknown: 0 and don't-fragment, as a check first takes
 * them); */
struct roce_flow4 roce_rx_flow(const struct fab_port *port,
			       const struct sockaddr_in *src);
/* packets from src placed as the device expected, to it at once
 * (fab_rx_placed_fn); false if the port keeps no link for src (dropped,
 * counted); */
bool roce_rx_deliver_placed(struct fab_port *port,
			    const struct sockaddr_in *src, uint32_t dqpn,
			    uint32_t psn, uint32_t count, uint64_t bytes,
			    bool ends, bool asked);
/* the datagrams of n bytes at pk, each seg long but the last, to the
 * device; how many it took; */
int roce_rx_run(struct fab_port *port, const struct sockaddr_in *src,
		const struct fab_hdr *meta, const uint8_t *pk, size_t n,
		size_t seg);
/* the TTL and TOS of a read (into h), and the length of each datagram
 * when the kernel coalesced a run (UDP_GRO; else 0). */
uint16_t roce_rx_cmsgs(struct msghdr *msg, struct fab_hdr *h);
/* roce_ahead.c: the next run read straight to its place, if it is a
 * WRITE's the device expects: 1 (*count packets delivered, *taken
 * datagrams read), 0 when nothing is there to read, -1 when the run is
 * not one (nothing was read: read it as usual). */
int roce_rx_ahead(struct fab_port *port, int *count, int *taken);
/* Packet psn of a WRITE that goes on, taken as usual by QP dqpn: the
 * next read may guess the one after it comes next (roce_ahead.c). */
void roce_rx_ahead_after(struct fab_port *port, uint32_t dqpn, uint32_t psn);

/* roce_gsi.c: whether p (checked, from saddr) is for QP 1; if so it
 * went to the GSI handler or was dropped. */
bool roce_gsi_rx(struct fab_port *port, uint32_t saddr,
		 const struct roce_pkt *p);
/* roce_gsi.c: a GMP whole (headers, the MAD, its ICRC), from QP 1 of
 * saddr:sport to QP 1 at daddr, in b; returns its length. */
#define ROCE_GSI_DATAGRAM_LEN	(ROCE_BTH_LEN + ROCE_DETH_LEN + 256 + \
				 ROCE_ICRC_LEN)
size_t roce_gsi_datagram(uint32_t saddr, uint16_t sport, uint32_t daddr,
			 uint32_t psn, const uint8_t *mad,
			 uint8_t b[ROCE_GSI_DATAGRAM_LEN]);

/* roce_map.c: one fabric packet as the RoCE packets it makes. n is the
 * packet's index, *count how many the message makes; p gets the headers,
 * *off and *len the payload bytes of this packet. */
bool roce_map_tx(const struct fab_hdr *h, uint32_t n, uint32_t *count,
		 struct roce_pkt *p, uint64_t *off, uint32_t *len);
/* The same for packet n when p, *off, *len and *count are what it gave
 * for packet n - 1: a middle packet of a long message costs a step,
 * not a mapping (a batch maps up to 64 a send). */
bool roce_map_tx_next(const struct fab_hdr *h, uint32_t n, uint32_t *count,
		      struct roce_pkt *p, uint64_t *off, uint32_t *len);
/* The fabric packet a received RoCE packet stands for; false for one the
 * device has no use for (dropped). */
bool roce_map_rx(const struct roce_pkt *p, struct fab_hdr *h);

#endif /* PVRDMA_SIM_FABRIC_ROCE_H */
