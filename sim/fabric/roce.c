// SPDX-License-Identifier: BSD-2-Clause
/*
 * The RoCE v2 wire (roce.h): one UDP socket per port at its address and
 * port 4791, unprivileged; a link per peer address, which is only that
 * address (UDP keeps no connection, nor order: the device's PSNs,
 * ACK timer and retries make RC reliable over it, as on any RoCE
 * network). Each packet is built whole in one buffer, its payload read
 * from the application's memory with sim_app_read() (memory taken away
 * behind the sim's back is an EFAULT, never a fault), and leaves with
 * don't-fragment set, so the kernel gives it the IPv4 identification 0
 * its ICRC was computed with.
 *
 * What arrives is checked before the device sees any of it: the headers
 * decode (roce_decode), the ICRC is right for the addresses and ports it
 * came by (roce_icrc_check), and it maps to a packet the device speaks
 * (roce_map_rx). Everything else is dropped and counted.
 */
#include <netinet/in.h>
#include <netinet/ip.h>

#include <rdma/vmw_pvrdma-abi.h>

#include "link.h"
#include "roce_icrc.h"

/* A datagram longer than the longest taken shows as one (MSG_TRUNC). */
#define ROCE_BUF_LEN	(ROCE_MAX_DATAGRAM + 64)

bool roce_open(struct fab_port *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(ROCE_UDP_PORT),
				 .sin_addr.s_addr = port->adapter.ipv4 };
	int fd, one = 1, v = IP_PMTUDISC_DO, buf = FAB_SOCK_BUF;
	char addr[INET_ADDRSTRLEN];

	/* received, then sent (the device answers while it reads) */
	port->roce_buf = malloc(2 * ROCE_BUF_LEN);
	if (!port->roce_buf)
		return false;
	fd = sim_fd_own(sim_libc.socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK |
					SOCK_CLOEXEC, 0));
	if (fd < 0)
		goto fail;
	sim_libc.setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof(v));
	sim_libc.setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one));
	sim_libc.setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
	/* past net.core.rmem_max where the process may (CAP_NET_ADMIN):
	 * the requesters' windows (device/packets.c) are sized for it */
	if (sim_libc.setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf,
				sizeof(buf)))
		sim_libc.setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf,
				    sizeof(buf));
	sim_libc.setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
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

/*
 * The UDP source port of a QP's packets, requests and responses alike:
 * flow entropy for the network's ECMP hashing, derived from the QP number
 * as rxe derives it (the 14-bit golden-ratio hash, above 0xc000).
 */
static uint16_t qp_sport(uint32_t qpn)
{
	return (uint16_t)(0xc000 + (((qpn & 0xffffff) * 0x61c88647u) >> 18));
}

static int sport_socket(struct fab_port *port, uint16_t sport)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(sport),
				 .sin_addr.s_addr = port->adapter.ipv4 };
	int fd, v = IP_PMTUDISC_DO, buf = FAB_SOCK_BUF, zero = 0;

	fd = sim_fd_own(sim_libc.socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK |
					SOCK_CLOEXEC, 0));
	if (fd < 0)
		return -1;
	sim_libc.setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof(v));
	sim_libc.setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	/* only sent from: what reaches its port is not read */
	sim_libc.setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &zero, sizeof(zero));
	if (sim_libc.bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		sim_fd_close(fd);
		return -1;
	}
	return fd;
}

/* The socket to send qpn's packets from, and its port: its own flow's
 * when it can have one, else the port's socket at 4791. */
static int sport_of(struct fab_port *port, uint32_t qpn, uint16_t *sport)
{
	uint16_t want = qp_sport(qpn);
	unsigned int i, h = want % ROCE_SPORTS;
	int fd;

	for (i = 0; i < ROCE_SPORTS; i++) {
		unsigned int k = (h + i) % ROCE_SPORTS;

		if (port->roce_sport[k].port == want) {
			*sport = want;
			return port->roce_sport[k].fd;
		}
		if (port->roce_sport[k].port)
			continue;
		fd = sport_socket(port, want);
		if (fd < 0)
			break;
		port->roce_sport[k].port = want;
		port->roce_sport[k].fd = fd;
		*sport = want;
		return fd;
	}
	*sport = ROCE_UDP_PORT;
	return port->roce_fd;
}

/* sendto, with the IPv4 header's TOS and TTL the address vector asks
 * for (the ICRC masks both, so they change nothing it covers). */
static ssize_t send_ip(int fd, const void *b, size_t n,
		       const struct sockaddr_in *to, const struct fab_hdr *h)
{
	union {
		char buf[2 * CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec v = { .iov_base = (void *)b, .iov_len = n };
	struct msghdr m = { .msg_name = (void *)to, .msg_namelen = sizeof(*to),
			    .msg_iov = &v, .msg_iovlen = 1 };
	struct cmsghdr *c;
	size_t len = 0;
	ssize_t r;

	memset(&u, 0, sizeof(u));
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	c = CMSG_FIRSTHDR(&m);
	if (h->tclass) {
		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_TOS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		*(int *)CMSG_DATA(c) = h->tclass;
		len += CMSG_SPACE(sizeof(int));
		c = CMSG_NXTHDR(&m, c);
	}
	if (h->hop_limit) {
		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_TTL;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		*(int *)CMSG_DATA(c) = h->hop_limit;
		len += CMSG_SPACE(sizeof(int));
	}
	m.msg_controllen = len;
	if (!len)
		m.msg_control = NULL;
	do {
		r = sim_libc.sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (r < 0 && errno == EINTR);
	return r;
}

static bool send_one(struct fab_port *port, struct fab_link *link,
		     const struct fab_hdr *h, const struct roce_pkt *p,
		     const struct iovec *iov, int iovcnt, uint64_t off,
		     uint32_t len)
{
	uint8_t *b = port->roce_buf + ROCE_BUF_LEN;
	struct roce_flow4 f = { .saddr = port->adapter.ipv4,
				.daddr = link->roce_addr,
				.dport = ROCE_UDP_PORT, .frag = ROCE_IP_DF };
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(ROCE_UDP_PORT),
				  .sin_addr.s_addr = link->roce_addr };
	struct iovec part[SIM_MAX_IOV];
	size_t hl = roce_encode(p, b), n;
	int np = 0, i, fd = sport_of(port, h->src_qpn, &f.sport);
	ssize_t r;

	/* the payload is bytes off..off+len of iov */
	for (i = 0; i < iovcnt && np < (int)SIM_MAX_IOV; i++) {
		size_t l = iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		part[np].iov_base = (uint8_t *)iov[i].iov_base + off;
		part[np].iov_len = l - off;
		off = 0;
		np++;
	}
	if (len && !sim_app_read(b + hl, part, np, len)) {
		errno = EFAULT;
		return false;
	}
	n = hl + len;
	memset(b + n, 0, p->pad);
	n += p->pad;
	roce_icrc_put(b + n, roce_icrc(&f, b, n));
	n += ROCE_ICRC_LEN;
	r = send_ip(fd, b, n, &to, h);
	/* A datagram the socket cannot take now is lost, as on a
	 * congested wire: the requester's timer resends. */
	if (r == (ssize_t)n) {
		link->tx_bytes += n;
		port->roce_counts.tx_packets++;
	}
	return true;
}

bool roce_send(struct fab_port *port, struct fab_link *link,
	       const struct fab_hdr *h, const struct iovec *iov, int iovcnt)
{
	struct roce_pkt p;
	uint32_t i = 0, end = UINT32_MAX, count = 1, len;
	uint64_t off;

	/* a SEND's or WRITE's packets the requester's window lets go now */
	if (h->type == FAB_REQ && h->opcode != PVRDMA_WR_RDMA_READ &&
	    h->opcode != PVRDMA_WR_ATOMIC_CMP_AND_SWP &&
	    h->opcode != PVRDMA_WR_ATOMIC_FETCH_AND_ADD && h->atomic_b) {
		i = (uint32_t)h->atomic_a;
		end = i + (uint32_t)h->atomic_b;
	}
	/* how many packets the message makes */
	if (!roce_map_tx(h, 0, &count, &p, &off, &len))
		return true;	/* nothing the wire carries */
	for (; i < count && i < end; i++) {
		roce_map_tx(h, i, &count, &p, &off, &len);
		if (!send_one(port, link, h, &p, iov, iovcnt, off, len))
			return false;
	}
	return true;
}

/* The GID a RoCE v2 peer at addr has: its IPv4-mapped address. */
static void mapped_gid(uint8_t gid[16], uint32_t addr)
{
	memset(gid, 0, 10);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, &addr, 4);
}

static void ttl_tos(struct msghdr *msg, struct fab_hdr *h)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != IPPROTO_IP)
			continue;
		if (c->cmsg_type == IP_TTL)
			h->hop_limit = (uint8_t)*(int *)CMSG_DATA(c);
		else if (c->cmsg_type == IP_TOS)
			h->tclass = *(uint8_t *)CMSG_DATA(c);
	}
}

/* One datagram of len bytes in port->roce_buf, from src. */
static bool rx_one(struct fab_port *port, const struct sockaddr_in *src,
		   size_t len, struct fab_hdr *h)
{
	struct fab_wire_counts *st = &port->roce_counts;
	struct roce_flow4 f = { .saddr = src->sin_addr.s_addr,
				.daddr = port->adapter.ipv4,
				.sport = ntohs(src->sin_port),
				.dport = ROCE_UDP_PORT };
	struct roce_pkt p;

	if (roce_decode(&p, port->roce_buf, len) != ROCE_OK) {
		st->rx_malformed++;
		return false;
	}
	if (!roce_icrc_check(&f, port->roce_buf, len)) {
		st->rx_bad_icrc++;
		return false;
	}
	if (roce_gsi_rx(port, src->sin_addr.s_addr, &p))
		return false;	/* QP 1's: the kernel's CM (roce_gsi.c) */
	h->magic = FAB_MAGIC;
	if (!roce_map_rx(&p, h)) {
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

int roce_rx(struct fab_port *port)
{
	union {
		struct cmsghdr align;
		uint8_t b[CMSG_SPACE(sizeof(int)) * 2 + 16];
	} ctl;
	struct sockaddr_in src;
	struct iovec v = { .iov_base = port->roce_buf,
			   .iov_len = ROCE_BUF_LEN };
	struct msghdr msg;
	struct fab_hdr h;
	struct fab_rx rx;
	struct fab_link *from;
	int count = 0, i;
	ssize_t n;

	for (i = 0; port->roce_fd >= 0 && i < FAB_BURST; i++) {
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
		if ((msg.msg_flags & MSG_TRUNC) || n > ROCE_MAX_DATAGRAM ||
		    msg.msg_namelen < sizeof(src) ||
		    src.sin_family != AF_INET) {
			port->roce_counts.rx_malformed++;
			continue;
		}
		memset(&h, 0, sizeof(h));
		if (!rx_one(port, &src, (size_t)n, &h))
			continue;
		ttl_tos(&msg, &h);
		from = link_of(port, src.sin_addr.s_addr);
		if (!from) {
			port->roce_counts.rx_malformed++;
			continue;
		}
		from->exposed = true;
		rx = (struct fab_rx){ .port = port, .mem = port->roce_buf +
					roce_hdr_len(port->roce_buf[0]),
				      .left = h.len };
		port->adapter.rx(port->adapter.owner, from, &h, &rx);
		count++;
	}
	return count;
}

bool fabric_link_segments(const struct fab_link *link)
{
	return link && link->kind == LINK_ROCE;
}

bool fabric_wire_counts(const struct fab_port *port,
			struct fab_wire_counts *c)
{
	if (!port || port->roce_fd < 0)
		return false;
	*c = port->roce_counts;
	return true;
}
