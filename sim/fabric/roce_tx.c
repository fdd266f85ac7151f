// SPDX-License-Identifier: BSD-2-Clause
/*
 * Sending on the RoCE v2 wire (roce.h): the packets of a message, built
 * whole in the port's send buffer, leave a batch at a time. A batch is a
 * run of consecutive packets whose datagrams have one length (the last
 * may be shorter), up to ROCE_GSO_SEGS of them: its payloads are read
 * from the application's memory with one process_vm_readv (memory taken
 * away behind the sim's back is an EFAULT, never a fault), each packet's
 * ICRC is computed over it in the buffer, and one sendmsg with
 * UDP_SEGMENT hands the batch to the kernel, which cuts it into the
 * packets (generic segmentation offload). A kernel that has no
 * UDP_SEGMENT gets them one sendmsg each.
 *
 * Every datagram leaves with don't-fragment set from a socket that is
 * not connected, so the kernel gives the IPv4 identification 0 to a
 * datagram, and to the packets it cuts from a batch 0, 1, 2...: each
 * packet's ICRC is computed with the identification it will carry.
 */
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>

#include <rdma/vmw_pvrdma-abi.h>

#include "link.h"
#include "roce_icrc.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT	103
#endif

/*
 * The UDP source port of a QP's packets, requests and responses alike:
 * flow entropy for the network's ECMP hashing, derived from the QP number
 * as rxe derives it (the 14-bit golden-ratio hash, above 0xc000).
 */
static uint16_t qp_sport(uint32_t qpn)
{
	return (uint16_t)(0xc000 + (((qpn & 0xffffff) * 0x61c88647u) >> 18));
}

int roce_sport_socket(uint32_t ipv4, uint16_t sport, uint16_t *bound)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(sport),
				 .sin_addr.s_addr = ipv4 };
	socklen_t len = sizeof(a);
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
		a.sin_port = 0;	/* taken: any port, if the caller takes one */
		if (!bound || sim_libc.bind(fd, (struct sockaddr *)&a,
					    sizeof(a)))
			goto err;
	}
	if (bound) {
		if (sim_libc.getsockname(fd, (struct sockaddr *)&a, &len))
			goto err;
		*bound = ntohs(a.sin_port);
	}
	return fd;
err:
	sim_fd_close(fd);
	return -1;
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
		fd = roce_sport_socket(port->adapter.ipv4, want, NULL);
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

/* One cmsg of v's size bytes (an int, or UDP_SEGMENT's 16 bits). */
static size_t put_cmsg(struct msghdr *m, struct cmsghdr **c, int level,
		       int type, const void *v, size_t size)
{
	if (!*c)
		return 0;
	(*c)->cmsg_level = level;
	(*c)->cmsg_type = type;
	(*c)->cmsg_len = CMSG_LEN(size);
	memcpy(CMSG_DATA(*c), v, size);
	*c = CMSG_NXTHDR(m, *c);
	return CMSG_SPACE(size);
}

/* sendmsg of n bytes, cut into datagrams of seg bytes by the kernel when
 * seg is not 0, with the IPv4 header's TOS and TTL the address vector
 * asks for (the ICRC masks both, so they change nothing it covers). */
static ssize_t send_ip(int fd, const void *b, size_t n, uint16_t seg,
		       const struct sockaddr_in *to, const struct fab_hdr *h)
{
	union {
		char buf[3 * CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec v = { .iov_base = (void *)b, .iov_len = n };
	struct msghdr m = { .msg_name = (void *)to, .msg_namelen = sizeof(*to),
			    .msg_iov = &v, .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	size_t len = 0;
	ssize_t r;
	int tos = h->tclass, ttl = h->hop_limit;

	memset(&u, 0, sizeof(u));
	c = CMSG_FIRSTHDR(&m);
	if (tos)
		len += put_cmsg(&m, &c, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
	if (ttl)
		len += put_cmsg(&m, &c, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl));
	if (seg)
		len += put_cmsg(&m, &c, SOL_UDP, UDP_SEGMENT, &seg,
				sizeof(seg));
	m.msg_controllen = len;
	if (!len)
		m.msg_control = NULL;
	do {
		r = sim_libc.sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (r < 0 && errno == EINTR);
	return r;
}

/* Where a message's packets go, and from which socket. */
struct link_flow {
	struct roce_flow4 f;
	struct sockaddr_in to;
	int fd;
};

/* A batch being built in the port's send buffer. */
struct tx_batch {
	uint32_t first;			/* its first packet's index */
	uint32_t count;			/* packets */
	uint32_t dgram;			/* the first one's datagram length */
	size_t used;			/* bytes of the buffer */
	uint64_t off;			/* payload: message bytes off.. */
	uint64_t bytes;			/* ..off + bytes */
	size_t at[ROCE_GSO_SEGS];	/* each packet's place */
	size_t iblen[ROCE_GSO_SEGS];	/* and its length before the ICRC */
	struct iovec dst[ROCE_GSO_SEGS]; /* where its payload goes */
};

/* Packets first.. of the message that make one batch (at least one). */
static void batch_plan(struct fab_port *port, const struct fab_hdr *h,
		       uint32_t first, uint32_t end, struct tx_batch *b)
{
	uint8_t *buf = port->roce_buf + ROCE_RX_LEN;
	uint32_t n, count, len;
	struct roce_pkt p;
	uint64_t off;
	size_t hl, dl;

	memset(b, 0, offsetof(struct tx_batch, at));
	b->first = first;
	for (n = first; n < end; n++) {
		roce_map_tx(h, n, &count, &p, &off, &len);
		hl = roce_hdr_len(p.opcode);
		dl = hl + len + p.pad + ROCE_ICRC_LEN;
		if (b->count && (dl > b->dgram || b->count == ROCE_GSO_SEGS ||
				 b->used + dl > ROCE_TX_LEN ||
				 port->roce_no_gso))
			break;
		if (!b->count) {
			b->dgram = (uint32_t)dl;
			b->off = off;
		}
		roce_encode(&p, buf + b->used);
		memset(buf + b->used + hl + len, 0, p.pad);
		b->at[b->count] = b->used;
		b->iblen[b->count] = hl + len + p.pad;
		b->dst[b->count].iov_base = buf + b->used + hl;
		b->dst[b->count].iov_len = len;
		b->used += dl;
		b->bytes += len;
		b->count++;
		/* a shorter datagram ends a batch */
		if (dl < b->dgram)
			break;
	}
}

/* The message's bytes off..off+len as pieces of iov. */
static int iov_range(const struct iovec *iov, int iovcnt, uint64_t off,
		     uint64_t len, struct iovec *part)
{
	int np = 0, i;

	for (i = 0; i < iovcnt && np < (int)SIM_MAX_IOV && len; i++) {
		size_t l = iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		part[np].iov_base = (uint8_t *)iov[i].iov_base + off;
		part[np].iov_len = l - off < len ? l - off : len;
		len -= part[np].iov_len;
		off = 0;
		np++;
	}
	return np;
}

static void batch_icrc(struct fab_port *port, struct link_flow *lf,
		       struct tx_batch *b, bool gso)
{
	uint8_t *buf = port->roce_buf + ROCE_RX_LEN;
	uint32_t k;

	for (k = 0; k < b->count; k++) {
		uint8_t *pk = buf + b->at[k];

		lf->f.ip_id = gso ? (uint16_t)k : 0;
		roce_icrc_put(pk + b->iblen[k],
			      roce_icrc(&lf->f, pk, b->iblen[k]));
	}
}

/* Sends the batch: one sendmsg, or one a packet. False if the kernel
 * refused to cut it (no UDP_SEGMENT): the caller sends it again. */
static bool batch_send(struct fab_port *port, struct fab_link *link,
		       const struct fab_hdr *h, struct link_flow *lf,
		       struct tx_batch *b)
{
	uint8_t *buf = port->roce_buf + ROCE_RX_LEN;
	bool gso = b->count > 1 && !port->roce_no_gso;
	uint32_t k;
	ssize_t r;

	batch_icrc(port, lf, b, gso);
	if (gso) {
		r = send_ip(lf->fd, buf, b->used, (uint16_t)b->dgram,
			    &lf->to, h);
		if (r < 0 && (errno == EINVAL || errno == ENOPROTOOPT ||
			      errno == EIO || errno == EOPNOTSUPP)) {
			port->roce_no_gso = true;
			return false;
		}
		/* A batch the socket cannot take now is lost, as on a
		 * congested wire: the requester's timer resends. */
		if (r == (ssize_t)b->used) {
			link->tx_bytes += b->used;
			port->roce_counts.tx_packets += b->count;
		}
		return true;
	}
	for (k = 0; k < b->count; k++) {
		size_t n = b->iblen[k] + ROCE_ICRC_LEN;

		r = send_ip(lf->fd, buf + b->at[k], n, 0, &lf->to, h);
		if (r == (ssize_t)n) {
			link->tx_bytes += n;
			port->roce_counts.tx_packets++;
		}
	}
	return true;
}

bool roce_send(struct fab_port *port, struct fab_link *link,
	       const struct fab_hdr *h, const struct iovec *iov, int iovcnt)
{
	struct iovec part[SIM_MAX_IOV];
	struct link_flow lf = {
		.f = { .saddr = port->adapter.ipv4, .daddr = link->roce_addr,
		       .dport = ROCE_UDP_PORT, .frag = ROCE_IP_DF },
		.to = { .sin_family = AF_INET,
			.sin_port = htons(ROCE_UDP_PORT),
			.sin_addr.s_addr = link->roce_addr } };
	uint32_t i = 0, end = UINT32_MAX, count = 1, len;
	struct tx_batch b;
	struct roce_pkt p;
	uint64_t off;
	int np;

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
	if (end > count)
		end = count;
	lf.fd = sport_of(port, h->src_qpn, &lf.f.sport);
	while (i < end) {
		batch_plan(port, h, i, end, &b);
		np = iov_range(iov, iovcnt, b.off, b.bytes, part);
		if (b.bytes && !sim_app_readv(b.dst, (int)b.count, part, np,
					      b.bytes)) {
			errno = EFAULT;
			return false;
		}
		if (!batch_send(port, link, h, &lf, &b))
			continue;	/* planned again, one a packet */
		i += b.count;
	}
	return true;
}
