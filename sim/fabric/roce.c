// SPDX-License-Identifier: BSD-2-Clause
/*
 * The RoCE v2 wire (roce.h): one UDP socket per port at its address and
 * port 4791, unprivileged; a link per peer address, which is only that
 * address (UDP keeps no connection, nor order: the device's PSNs,
 * ACK timer and retries make RC reliable over it, as on any RoCE
 * network). Sending is roce_tx.c's.
 *
 * Datagrams are read a run at a time where the kernel coalesced them
 * (UDP_GRO: one read, datagrams of one length but the last). What
 * arrives is checked before the device sees any of it: the headers
 * decode (roce_decode), the ICRC is right for the addresses and ports it
 * came by (roce_icrc_check), and it maps to a packet the device speaks
 * (roce_map_rx). Everything else is dropped and counted. The payloads
 * of a run stay in the buffer until the device's rx_end: it may place
 * many packets with one copy (fab_rx_take).
 */
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>

#include <rdma/vmw_pvrdma-abi.h>

#include "link.h"
#include "roce_icrc.h"

#ifndef UDP_GRO
#define UDP_GRO		104
#endif

/* A quarter of what the socket holds (the kernel reports twice the
 * bytes asked for: its overhead), between 256 KiB, what the default
 * net.core.rmem_max lets an unprivileged socket hold, and 1 MiB. */
static uint32_t window_of(int fd)
{
	int got = 0;
	socklen_t len = sizeof(got);
	uint32_t w;

	if (sim_libc.getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len) ||
	    got <= 0)
		got = 0;
	w = (uint32_t)got / 4;
	return w < ROCE_WINDOW_MIN ? ROCE_WINDOW_MIN :
	       w > ROCE_WINDOW_MAX ? ROCE_WINDOW_MAX : w;
}

bool roce_open(struct fab_port *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(ROCE_UDP_PORT),
				 .sin_addr.s_addr = port->adapter.ipv4 };
	int fd, one = 1, v = IP_PMTUDISC_DO, buf = FAB_SOCK_BUF;
	char addr[INET_ADDRSTRLEN];

	/* received, then sent (the device answers while it reads) */
	port->roce_buf = malloc(ROCE_RX_LEN + ROCE_TX_LEN);
	port->roce_tx_iov = calloc(ROCE_TX_IOV, sizeof(struct iovec));
	if (!port->roce_buf || !port->roce_tx_iov)
		goto fail;
	fd = sim_fd_own(sim_libc.socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK |
					SOCK_CLOEXEC, 0));
	if (fd < 0)
		goto fail;
	sim_libc.setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof(v));
	sim_libc.setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one));
	sim_libc.setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
	/* runs of datagrams of a flow in one read, where the kernel can */
	sim_libc.setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one));
	/* past net.core.rmem_max where the process may (CAP_NET_ADMIN):
	 * the requesters' windows (device/packets.c) are sized for it */
	if (sim_libc.setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf,
				sizeof(buf)))
		sim_libc.setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf,
				    sizeof(buf));
	sim_libc.setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	port->roce_window = window_of(fd);
	if (sim_libc.bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		inet_ntop(AF_INET, &a.sin_addr, addr, sizeof(addr));
		fprintf(stderr, "pvrdma-sim: %s: RoCE v2 at %s:%u: %s\n",
			port->adapter.name, addr, ROCE_UDP_PORT,
			strerror(errno));
		sim_fd_close(fd);
		goto fail;
	}
	port->roce_fd = fd;
	return true;
fail:
	free(port->roce_buf);
	port->roce_buf = NULL;
	free(port->roce_tx_iov);
	port->roce_tx_iov = NULL;
	return false;
}

void roce_forget(struct fab_port *port)
{
	unsigned int i;

	if (port->roce_fd >= 0)
		fab_sys_close(port->roce_fd);
	port->roce_fd = -1;
	for (i = 0; i < ROCE_SPORTS; i++)
		if (port->roce_sport[i].port) {
			fab_sys_close(port->roce_sport[i].fd);
			port->roce_sport[i].port = 0;
		}
}

void roce_close(struct fab_port *port)
{
	struct fab_link *l, *n;

	roce_forget(port);
	for (l = port->roce_links; l; l = n) {
		n = l->next;
		if (!l->exposed)
			free(l);
	}
	port->roce_links = NULL;
	free(port->roce_buf);
	port->roce_buf = NULL;
	free(port->roce_ahead);
	port->roce_ahead = NULL;
	free(port->roce_tx_iov);
	port->roce_tx_iov = NULL;
}

/* The link of the peer at addr (network order), made on first use. The
 * device holds link pointers, so none is freed while the port lives: a
 * port keeps at most ROCE_MAX_LINKS, and a new address past that is not
 * reached (NULL: its packets are dropped), so that datagrams from forged
 * addresses cannot take the sim's memory. */
static struct fab_link *link_of(struct fab_port *port, uint32_t addr)
{
	struct fab_link *l, **pp;

	for (pp = &port->roce_links; (l = *pp); pp = &l->next) {
		if (l->roce_addr != addr)
			continue;
		*pp = l->next;		/* most recent first */
		l->next = port->roce_links;
		port->roce_links = l;
		return l;
	}
	if (port->roce_nlinks >= ROCE_MAX_LINKS)
		return NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->kind = LINK_ROCE;
	l->port = port;
	l->fd = -1;
	l->roce_addr = addr;
	l->next = port->roce_links;
	port->roce_links = l;
	port->roce_nlinks++;
	return l;
}

struct fab_link *roce_resolve(struct fab_port *port, const uint8_t gid[16])
{
	uint32_t addr;

	if (port->roce_fd < 0 || !fab_tcp_gid_addr(gid, &addr))
		return NULL;
	return link_of(port, addr);
}

/* The GID a RoCE v2 peer at addr has: its IPv4-mapped address. */
static void mapped_gid(uint8_t gid[16], uint32_t addr)
{
	memset(gid, 0, 10);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, &addr, 4);
}

/* The TTL and TOS the datagrams came with, and the length of each when
 * the kernel coalesced a run of them (UDP_GRO; else 0). */
uint16_t roce_rx_cmsgs(struct msghdr *msg, struct fab_hdr *h)
{
	struct cmsghdr *c;
	uint16_t seg = 0;
	int v;

	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			seg = (uint16_t)v;
		}
		if (c->cmsg_level != IPPROTO_IP)
			continue;
		if (c->cmsg_type == IP_TTL)
			h->hop_limit = (uint8_t)*(int *)CMSG_DATA(c);
		else if (c->cmsg_type == IP_TOS)
			h->tclass = *(uint8_t *)CMSG_DATA(c);
	}
	return seg;
}

/* A datagram's headers decoded and its partition checked (counted if
 * not). */
static bool rx_headers(struct fab_port *port, const uint8_t *pk, size_t len,
		       struct roce_pkt *p)
{
	struct fab_wire_counts *st = &port->roce_counts;

	if (len > ROCE_MAX_DATAGRAM || roce_decode(p, pk, len) != ROCE_OK) {
		st->rx_malformed++;
		return false;
	}
	/* a packet of another partition is not for this port (rxe drops
	 * it too, before its ICRC) */
	if (!roce_pkey_match(p->pkey, ROCE_DEFAULT_PKEY)) {
		st->rx_bad_pkey++;
		return false;
	}
	return true;
}

struct roce_flow4 roce_rx_flow(const struct fab_port *port,
			      const struct sockaddr_in *src)
{
	return (struct roce_flow4){ .saddr = src->sin_addr.s_addr,
				    .daddr = port->adapter.ipv4,
				    .sport = ntohs(src->sin_port),
				    .dport = ROCE_UDP_PORT,
				    .frag = ROCE_IP_DF };
}

/* Its ICRC checked, then what it is for the device in h; false: dropped,
 * counted. The packet's iblen bytes lie at pk, its ICRC after them. */
static bool rx_checked(struct fab_port *port, const struct sockaddr_in *src,
		       const struct roce_pkt *p, const uint8_t *pk,
		       size_t iblen, struct fab_hdr *h)
{
	struct fab_wire_counts *st = &port->roce_counts;
	struct roce_flow4 f = roce_rx_flow(port, src);

	if (!roce_icrc_check(&f, pk, iblen + ROCE_ICRC_LEN)) {
		st->rx_bad_icrc++;
		return false;
	}
	if (roce_gsi_rx(port, src->sin_addr.s_addr, p))
		return false;	/* QP 1's: the kernel's CM (roce_gsi.c) */
	h->magic = FAB_MAGIC;
	if (!roce_map_rx(p, h)) {
		st->rx_malformed++;
		return false;
	}
	if (h->type == FAB_UD_SEND)
		h->read_len = FAB_UD_IPV4_SEEN | (uint32_t)f.frag << 16 |
			      f.ip_id;
	h->gid_type = SIM_GID_TYPE_ROCE_V2;
	mapped_gid(h->src_gid, src->sin_addr.s_addr);
	mapped_gid(h->dst_gid, port->adapter.ipv4);
	st->rx_packets++;
	return true;
}

/* One datagram of len bytes at pk, from src. */
static bool rx_one(struct fab_port *port, const struct sockaddr_in *src,
		   const uint8_t *pk, size_t len, struct fab_hdr *h)
{
	struct roce_pkt p;

	/* decoded: at least the BTH's bytes and the ICRC's */
	return rx_headers(port, pk, len, &p) &&
	       rx_checked(port, src, &p, pk, len - ROCE_ICRC_LEN, h);
}

/* The link of the peer packets came from, which the device answers on;
 * NULL if the port keeps none for it (they are dropped, counted). */
static struct fab_link *rx_from(struct fab_port *port,
				const struct sockaddr_in *src,
				uint32_t packets)
{
	struct fab_link *from = link_of(port, src->sin_addr.s_addr);

	if (!from) {
		port->roce_counts.rx_malformed += packets;
		return NULL;
	}
	from->exposed = true;
	return from;
}

static bool rx_deliver(struct fab_port *port, const struct sockaddr_in *src,
		       const struct fab_hdr *h, struct fab_rx *rx)
{
	struct fab_link *from = rx_from(port, src, 1);

	if (!from)
		return false;
	port->adapter.rx(port->adapter.owner, from, h, rx);
	return true;
}

bool roce_rx_deliver_placed(struct fab_port *port,
			    const struct sockaddr_in *src, uint32_t dqpn,
			    uint32_t psn, uint32_t count, uint64_t bytes,
			    bool ends, bool asked)
{
	struct fab_link *from = rx_from(port, src, count);

	if (!from)
		return false;
	port->roce_counts.rx_packets += count;
	port->roce_counts.rx_placed += count;
	port->adapter.placed(port->adapter.owner, from, dqpn, psn, count,
			     bytes, ends, asked);
	return true;
}

int roce_rx_run(struct fab_port *port, const struct sockaddr_in *src,
		const struct fab_hdr *meta, const uint8_t *pk, size_t n,
		size_t seg)
{
	struct fab_hdr h;
	struct fab_rx rx;
	size_t len;
	int count = 0;

	for (; n; pk += len, n -= len) {
		len = n < seg ? n : seg;
		h = *meta;
		if (!rx_one(port, src, pk, len, &h))
			continue;
		rx = (struct fab_rx){ .port = port,
				      .mem = pk + roce_hdr_len(pk[0]),
				      .left = h.len, .lasts = true };
		if (rx_deliver(port, src, &h, &rx))
			count++;
		port->roce_write_open = pk[0] == ROCE_WRITE_FIRST ||
					pk[0] == ROCE_WRITE_MIDDLE;
		if (port->roce_write_open)
			roce_rx_ahead_after(port, h.dst_qpn, h.psn);
	}
	/* the buffer is read into again: copies deferred are made now */
	if (count && port->adapter.rx_end)
		port->adapter.rx_end(port->adapter.owner);
	return count;
}


const uint8_t *fab_rx_take(struct fab_rx *rx, uint64_t len)
{
	const uint8_t *p = rx->mem;

	if (!rx->lasts || rx->link || rx->failed || rx->fault ||
	    len > rx->left)
		return NULL;
	rx->mem += len;
	rx->left -= len;
	return p;
}

/* Reads what arrived, up to FAB_BURST datagrams a round. */
int roce_rx(struct fab_port *port)
{
	union {
		struct cmsghdr align;
		uint8_t b[CMSG_SPACE(sizeof(int)) * 3 + 16];
	} ctl;
	struct sockaddr_in src;
	struct iovec v = { .iov_base = port->roce_buf,
			   .iov_len = ROCE_RX_LEN };
	struct msghdr msg;
	struct fab_hdr meta;
	int count = 0, taken = 0;
	uint16_t seg;
	ssize_t n;

	while (port->roce_fd >= 0 && taken < FAB_BURST) {
		/* a run of a WRITE, read to its place (roce_ahead.c) */
		int ahead = roce_rx_ahead(port, &count, &taken);

		if (!ahead)
			break;		/* nothing to read */
		if (ahead > 0)
			continue;
		memset(&msg, 0, sizeof(msg));
		msg.msg_name = &src;
		msg.msg_namelen = sizeof(src);
		msg.msg_iov = &v;
		msg.msg_iovlen = 1;
		msg.msg_control = ctl.b;
		msg.msg_controllen = sizeof(ctl.b);
		n = sim_libc.recvmsg(port->roce_fd, &msg, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		memset(&meta, 0, sizeof(meta));
		seg = roce_rx_cmsgs(&msg, &meta);
		taken += seg ? (int)((n + seg - 1) / seg) : 1;
		if ((msg.msg_flags & MSG_TRUNC) || !n ||
		    msg.msg_namelen < sizeof(src) ||
		    src.sin_family != AF_INET) {
			port->roce_counts.rx_malformed++;
			continue;
		}
		count += roce_rx_run(port, &src, &meta, port->roce_buf,
				     (size_t)n, seg ? seg : (size_t)n);
	}
	return count;
}

bool fabric_link_segments(const struct fab_link *link)
{
	return link && link->kind == LINK_ROCE;
}

uint32_t fabric_link_window(const struct fab_link *link)
{
	return fabric_link_segments(link) ? link->port->roce_window : 0;
}

bool fabric_wire_counts(const struct fab_port *port,
			struct fab_wire_counts *c)
{
	if (!port || port->roce_fd < 0)
		return false;
	*c = port->roce_counts;
	return true;
}
