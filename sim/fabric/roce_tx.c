// SPDX-License-Identifier: BSD-2-Clause
/*
 * Sending on the RoCE v2 wire (roce.h): the packets of a message leave a
 * batch at a time. A batch is a run of consecutive packets whose
 * datagrams have one length (the last may be shorter), up to
 * ROCE_GSO_SEGS of them: each packet's headers, pad and ICRC are built in
 * the port's send buffer, its payload stays where the application has it,
 * and one sendmsg with UDP_SEGMENT gathers them all (the only copy of the
 * payload is the socket's) and hands the batch to the kernel, which cuts
 * it into the packets (generic segmentation offload). A kernel that has
 * no UDP_SEGMENT gets them one sendmsg each. The ICRC is computed over
 * the application's bytes in place, under the fault guard; memory taken
 * away behind the sim's back fails the send (EFAULT), there or in the
 * socket's copy, never with a signal.
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

#include "fault_guard.h"
#include "link.h"
#include "roce_crc32.h"
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

/* sendmsg of the bytes of v[0..nv), cut into datagrams of seg bytes by
 * the kernel when seg is not 0, with the IPv4 header's TOS and TTL the
 * address vector asks for (the ICRC masks both, so they change nothing
 * it covers). */
static ssize_t send_ip(int fd, struct iovec *v, size_t nv, uint16_t seg,
		       const struct sockaddr_in *to, const struct fab_hdr *h)
{
	union {
		char buf[3 * CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = { .msg_name = (void *)to, .msg_namelen = sizeof(*to),
			    .msg_iov = v, .msg_iovlen = nv,
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

/*
 * A batch being planned: each packet's headers, then its pad and ICRC,
 * in the port's send buffer; its payload where the message's iovecs have
 * it. port->roce_tx_iov gathers the packets in order: headers, payload
 * pieces, pad and ICRC. A packet's pad and ICRC lie just before the next
 * one's headers in the buffer, and a batch the kernel cuts takes them as
 * one piece: two pieces a packet rather than three, where each piece
 * costs the socket's copy about as much as a hundred bytes.
 */
struct tx_batch {
	uint32_t first;			/* its first packet's index */
	uint32_t count;			/* packets */
	uint32_t dgram;			/* the first one's datagram length */
	size_t wire;			/* bytes of its datagrams */
	size_t used;			/* bytes of the buffer */
	unsigned int nv;		/* pieces of port->roce_tx_iov */
	size_t at[ROCE_GSO_SEGS];	/* each packet's headers' place */
	uint16_t hl[ROCE_GSO_SEGS];	/* their length */
	uint16_t pad[ROCE_GSO_SEGS];
	uint32_t len[ROCE_GSO_SEGS];	/* its payload's */
	uint16_t v0[ROCE_GSO_SEGS];	/* its payload's first piece */
	uint16_t nv_of[ROCE_GSO_SEGS];	/* and how many */
};

/* The message's bytes off..off+len as at most max pieces of iov; how
 * many, or -1 when iov does not hold them all. */
static int iov_range(const struct iovec *iov, int iovcnt, uint64_t off,
		     uint64_t len, struct iovec *part, int max)
{
	int np = 0, i;

	for (i = 0; i < iovcnt && len; i++) {
		size_t l = iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		if (np == max)
			return -1;
		part[np].iov_base = (uint8_t *)iov[i].iov_base + off;
		part[np].iov_len = l - off < len ? l - off : len;
		len -= part[np].iov_len;
		off = 0;
		np++;
	}
	return len ? -1 : np;
}

/* Packets first.. of the message that make one batch (at least one);
 * false if the message's iovecs do not hold a packet's payload. */
static bool batch_plan(struct fab_port *port, const struct fab_hdr *h,
		       const struct iovec *iov, int iovcnt, uint32_t first,
		       uint32_t end, struct tx_batch *b)
{
	uint8_t *buf = port->roce_buf + ROCE_RX_LEN;
	struct iovec *v = port->roce_tx_iov;
	uint32_t n, count, len;
	struct roce_pkt p;
	uint64_t off;
	size_t hl, dl;
	int np;

	memset(b, 0, offsetof(struct tx_batch, at));
	b->first = first;
	for (n = first; n < end; n++) {
		/* from the one before, in this batch */
		if (b->count) {
			uint8_t op = p.opcode;

			roce_map_tx_next(h, n, &count, &p, &off, &len);
			if (p.opcode != op)
				hl = roce_hdr_len(p.opcode);
		} else {
			roce_map_tx(h, n, &count, &p, &off, &len);
			hl = roce_hdr_len(p.opcode);
		}
		dl = hl + len + p.pad + ROCE_ICRC_LEN;
		if (b->count && (dl > b->dgram || b->count == ROCE_GSO_SEGS ||
				 b->wire + dl > ROCE_TX_LEN ||
				 b->nv + 2 + SIM_MAX_IOV > ROCE_TX_IOV ||
				 port->roce_no_gso))
			break;
		if (!b->count)
			b->dgram = (uint32_t)dl;
		roce_encode(&p, buf + b->used);
		/* the last packet's pad and ICRC piece goes on over these
		 * headers when the kernel cuts the batch (else each packet
		 * is sent alone, its own pieces) */
		if (b->count && !port->roce_no_gso) {
			v[b->nv - 1].iov_len += hl;
		} else {
			v[b->nv].iov_base = buf + b->used;
			v[b->nv].iov_len = hl;
			b->nv++;
		}
		np = iov_range(iov, iovcnt, off, len, &v[b->nv], SIM_MAX_IOV);
		if (np < 0)
			return false;
		b->at[b->count] = b->used;
		b->hl[b->count] = (uint16_t)hl;
		b->pad[b->count] = p.pad;
		b->len[b->count] = len;
		b->v0[b->count] = (uint16_t)b->nv;
		b->nv_of[b->count] = (uint16_t)np;
		/* pad and ICRC follow the headers in the buffer */
		memset(buf + b->used + hl, 0, p.pad);
		v[b->nv + np].iov_base = buf + b->used + hl;
		v[b->nv + np].iov_len = p.pad + ROCE_ICRC_LEN;
		b->nv += (unsigned int)np + 1;
		b->used += hl + p.pad + ROCE_ICRC_LEN;
		b->wire += dl;
		b->count++;
		/* a shorter datagram ends a batch */
		if (dl < b->dgram)
			break;
	}
	return true;
}

/*
 * Each packet's ICRC, over its headers and pad in the buffer and its
 * payload where the application has it, read under the fault guard
 * (common/fault_guard.h): false when a page of it faulted. The socket
 * copies the payload again when it is sent: a buffer the application
 * changes meanwhile (a send in flight whose memory is written, which the
 * verbs leave undefined) leaves with an ICRC that no longer matches, the
 * receiver drops it as a damaged packet, and an RC requester's retry
 * sends it again, its bytes read anew (a UD datagram is lost). Before,
 * the payload was copied first and the packet kept whatever mix of old
 * and new bytes the copy saw, with a right ICRC.
 */
static bool batch_icrc(struct fab_port *port, struct link_flow *lf,
		       struct tx_batch *b, bool gso)
{
	static const uint8_t zeros[4];
	uint8_t *buf = port->roce_buf + ROCE_RX_LEN;
	struct iovec *v = port->roce_tx_iov;
	struct roce_icrc_run run = { .iblen = 0 };
	struct sim_fold32_run fold[ROCE_GSO_SEGS];
	uint32_t k, crc;

	for (k = 0; k < b->count; k++) {
		uint8_t *pk = buf + b->at[k];
		size_t hl = b->hl[k], iblen = hl + b->len[k] + b->pad[k];
		uint16_t id = gso ? (uint16_t)k : 0;

		/* the middle packets of a batch are of one run */
		if (roce_icrc_run_fits(&run, pk, iblen)) {
			crc = roce_icrc_run_start(&run, id, pk);
		} else {
			lf->f.ip_id = id;
			roce_icrc_run_init(&run, &lf->f, pk, iblen);
			crc = run.start;
		}
		fold[k] = (struct sim_fold32_run){
			.acc = roce_crc32_update(crc, pk + ROCE_BTH_LEN,
						 hl - ROCE_BTH_LEN),
			.src = &v[b->v0[k]], .n = b->nv_of[k] };
	}
	/* the payloads, under one fault guard */
	if (sim_app_fold32_runs(roce_crc32_update, fold, (int)b->count) !=
	    (int)b->count)
		return false;
	for (k = 0; k < b->count; k++) {
		crc = roce_crc32_update(fold[k].acc, zeros, b->pad[k]);
		roce_icrc_put(buf + b->at[k] + b->hl[k] + b->pad[k],
			      roce_icrc_end(crc));
	}
	return true;
}

/* The kernel has no UDP_SEGMENT, or not for this socket. */
static bool gso_refused(int err)
{
	return err == EINVAL || err == ENOPROTOOPT || err == EIO ||
	       err == EOPNOTSUPP;
}

/*
 * Sends the batch: one sendmsg, or one a packet. TX_REPLAN if the kernel
 * refused to cut it (no UDP_SEGMENT): the caller plans it again, a packet
 * a batch. TX_FAULT if a page of the payload faulted, under the guard or
 * in the socket's copy (EFAULT, where nothing is sent): the send fails.
 */
enum tx_result { TX_SENT, TX_REPLAN, TX_FAULT };

static enum tx_result batch_send(struct fab_port *port,
				 struct fab_link *link,
				 const struct fab_hdr *h, struct link_flow *lf,
				 struct tx_batch *b)
{
	struct iovec *v = port->roce_tx_iov;
	bool gso = b->count > 1 && !port->roce_no_gso;
	uint32_t k;
	ssize_t r;

	if (!batch_icrc(port, lf, b, gso))
		return TX_FAULT;
	if (gso) {
		r = send_ip(lf->fd, v, b->nv, (uint16_t)b->dgram, &lf->to, h);
		if (r < 0 && gso_refused(errno)) {
			port->roce_no_gso = true;
			return TX_REPLAN;
		}
		if (r < 0 && errno == EFAULT)
			return TX_FAULT;
		/* A batch the socket cannot take now is lost, as on a
		 * congested wire: the requester's timer resends. */
		if (r == (ssize_t)b->wire) {
			link->tx_bytes += b->wire;
			port->roce_counts.tx_packets += b->count;
		}
		return TX_SENT;
	}
	for (k = 0; k < b->count; k++) {
		size_t n = b->hl[k] + b->len[k] + b->pad[k] + ROCE_ICRC_LEN;

		/* alone: its headers, payload, pad and ICRC pieces */
		r = send_ip(lf->fd, &v[b->v0[k] - 1], b->nv_of[k] + 2U, 0,
			    &lf->to, h);
		if (r < 0 && errno == EFAULT)
			return TX_FAULT;
		if (r == (ssize_t)n) {
			link->tx_bytes += n;
			port->roce_counts.tx_packets++;
		}
	}
	return TX_SENT;
}

bool roce_send(struct fab_port *port, struct fab_link *link,
	       const struct fab_hdr *h, const struct iovec *iov, int iovcnt)
{
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
		if (!batch_plan(port, h, iov, iovcnt, i, end, &b)) {
			errno = EFAULT;
			return false;
		}
		switch (batch_send(port, link, h, &lf, &b)) {
		case TX_REPLAN:
			continue;	/* planned again, one a packet */
		case TX_FAULT:
			errno = EFAULT;
			return false;
		case TX_SENT:
			break;
		}
		i += b.count;
	}
	return true;
}
