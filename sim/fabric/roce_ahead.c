// SPDX-License-Identifier: BSD-2-Clause
/*
 * A WRITE's packets read straight to their place. A 64 KiB WRITE comes
 * as runs of datagrams the kernel coalesced (UDP_GRO), all of one QP,
 * one length, in PSN order, and the responder knows where each goes
 * before it arrives: the WRITE's first packet named the range, and each
 * next packet's payload follows the last. So when the next datagram's
 * BTH (read with MSG_PEEK) is a middle packet of the WRITE a QP is in,
 * at the PSN it expects, the device gives the places of the packets it
 * expects (fab_rx_ahead_fn) and one recvmsg scatters the run: each
 * packet's BTH and ICRC into small slots here, its payload into the
 * registered memory, as the kernel's single copy. No other copy is made.
 * A packet's ICRC and the next one's BTH share a slot, one piece of the
 * read: two pieces a packet rather than three, each of which costs the
 * kernel's copy about as much as a hundred bytes.
 *
 * Each packet is then checked as any is: its headers must be the ones
 * expected and its ICRC, checked over the bytes in place, good; else it
 * and the rest of the run are gathered back from where they fell into
 * the receive buffer and taken as usual. The packets before it go to
 * the device as one (fab_rx_placed_fn): one PSN step, one ACK queued,
 * one look-up of the QP and the link for the run rather than for each
 * of its packets, and nothing copied.
 * Bytes of a packet that was not the one expected, or a bad one, only
 * ever fall inside the range of the WRITE in progress, at PSNs not
 * acknowledged yet, which the requester's resends write again before
 * the WRITE can complete: a WRITE's target holds no defined content
 * until its completion, as on any RDMA device.
 *
 * Once a packet of a WRITE that goes on was taken, the next datagram is
 * most likely the packet after it: the next read is planned on that
 * guess without the look, one system call fewer a run. A datagram that
 * belies it is a run that is not as expected, gathered back as above.
 *
 * A read that cannot write the memory (taken away behind the sim's back)
 * fails with EFAULT and the kernel drops the run: the requester sends it
 * again, and that PSN is then read as usual, so the device fails the
 * packet as a copy fails it (a remote access NAK).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fault_guard.h"
#include "link.h"
#include "roce_crc32.h"
#include "roce_icrc.h"

/* Packets of one read: a coalesced run holds at most 64. */
#define AHEAD_PACKETS	64
/* Pieces of registered memory they may fall in. */
#define AHEAD_PIECES	256
/* The read's iovecs: a slot a packet and the last one's, the payloads'
 * pieces cut at packet boundaries, the rest of the run. */
#define AHEAD_IOV	(AHEAD_PACKETS * 2 + 1 + AHEAD_PIECES + 1)
/* A packet's bytes that are not payload: BTH, pad, ICRC. */
#define AHEAD_OVERHEAD	(ROCE_BTH_LEN + 3 + ROCE_ICRC_LEN)
/* The slot between packets i - 1 and i: the ICRC of i - 1 (only the last
 * packet of a message has a pad), then the BTH of i. */
#define AHEAD_SEAM	(ROCE_ICRC_LEN + ROCE_BTH_LEN)

struct roce_ahead {
	uint8_t seam[AHEAD_PACKETS + 1][AHEAD_SEAM];
	uint32_t dgram[AHEAD_PACKETS];	/* each one's datagram length */
	uint8_t pad[AHEAD_PACKETS];
	uint16_t first_iov[AHEAD_PACKETS]; /* its payload: v[first_iov..] */
	uint16_t n_iov[AHEAD_PACKETS];
	/* the registers from zero of the payloads read */
	struct sim_fold32_run fold[AHEAD_PACKETS];
	struct iovec where[AHEAD_PIECES];
	struct iovec v[AHEAD_IOV];
	struct iovec part[AHEAD_IOV];	/* gather()'s */
	/* the read being taken: its QP, first PSN, packets, and whether
	 * the last ends the message */
	uint32_t qpn, psn, k;
	bool ends;
	/* it placed every packet it read and the WRITE goes on: the next
	 * read may guess that its first packet is next_psn's */
	bool goes_on;
	uint32_t next_psn;
	/* the last read that faulted: that QP's packet is read as usual
	 * once, so that the device sees the fault */
	bool faulted;
	uint32_t fault_qpn, fault_psn;
	uint8_t rest[ROCE_RX_LEN];	/* what follows the packets expected */
};

/* Packet i's BTH, and its pad and ICRC. */
static uint8_t *bth_of(struct roce_ahead *a, uint32_t i)
{
	return a->seam[i] + ROCE_ICRC_LEN;
}

static uint8_t *tail_of(struct roce_ahead *a, uint32_t i)
{
	return a->seam[i + 1];
}

/* The read's iovecs for k packets whose payloads, bytes in all, lie in
 * a->where[0..npieces); the last ends the message when ends. */
static int plan(struct roce_ahead *a, uint32_t k, uint64_t bytes,
		uint32_t mtu, bool ends, int npieces)
{
	int nv = 0, w = 0;
	size_t woff = 0;
	uint32_t i;

	for (i = 0; i < k; i++) {
		uint64_t pay = bytes - (uint64_t)i * mtu < mtu ?
			       bytes - (uint64_t)i * mtu : mtu;
		uint64_t left = pay;

		a->pad[i] = ends && i == k - 1 ? (uint8_t)(-pay & 3) : 0;
		a->dgram[i] = (uint32_t)(ROCE_BTH_LEN + pay + a->pad[i] +
					 ROCE_ICRC_LEN);
		if (!i)
			a->v[nv++] = (struct iovec){ bth_of(a, 0),
						     ROCE_BTH_LEN };
		a->first_iov[i] = (uint16_t)nv;
		while (left) {
			size_t l;

			if (w >= npieces || nv >= AHEAD_IOV - 2)
				return -1;
			l = a->where[w].iov_len - woff;
			if (l > left)
				l = (size_t)left;
			a->v[nv++] = (struct iovec){
				(uint8_t *)a->where[w].iov_base + woff, l };
			left -= l;
			woff += l;
			if (woff == a->where[w].iov_len) {
				w++;
				woff = 0;
			}
		}
		a->n_iov[i] = (uint16_t)(nv - a->first_iov[i]);
		/* and the next one's BTH, where one follows */
		a->v[nv++] = (struct iovec){ tail_of(a, i),
					     i + 1 < k ? AHEAD_SEAM :
					     a->pad[i] + ROCE_ICRC_LEN };
	}
	a->v[nv++] = (struct iovec){ a->rest, sizeof(a->rest) };
	return nv;
}

/* The read's bytes from skip on, want of them, back in a line in the
 * port's receive buffer, where the usual path takes them. */
static bool gather(struct fab_port *port, struct roce_ahead *a, int nv,
		   size_t skip, size_t want)
{
	struct iovec dst = { port->roce_buf, want };
	int np = 0, i;

	if (want > ROCE_RX_LEN)
		return false;
	for (i = 0; i < nv && want; i++) {
		size_t l = a->v[i].iov_len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		l -= skip;
		if (l > want)
			l = want;
		a->part[np++] = (struct iovec){
			(uint8_t *)a->v[i].iov_base + skip, l };
		want -= l;
		skip = 0;
	}
	return sim_app_copy_out(&dst, 1, a->part, np) == dst.iov_len;
}

/* Whether packet i of the read, len bytes, is the one expected: its BTH
 * the one planned (opcode, pad, QP, PSN), in the port's partition (a
 * packet that is not goes the usual way, counted there); its AckReq in
 * *asked. */
static bool as_expected(struct roce_ahead *a, uint32_t i, size_t len,
			bool *asked)
{
	uint8_t want = a->ends && i == a->k - 1 ? ROCE_WRITE_LAST :
						  ROCE_WRITE_MIDDLE;

	return i < a->k && len == a->dgram[i] &&
	       roce_bth_is(bth_of(a, i), want, a->pad[i], ROCE_DEFAULT_PKEY,
			   a->qpn, (a->psn + i) & 0xffffff, asked);
}

/* The registers from zero of the payloads of the packets of a read of n
 * bytes, each seg long but the last, where they lie (under one fault
 * guard: the application may have taken the memory away since the
 * read): how many, in order, before one faulted. */
static uint32_t payloads_crc0(struct roce_ahead *a, size_t n, size_t seg)
{
	uint32_t i, count = (uint32_t)((n + seg - 1) / seg);

	if (count > a->k)
		count = a->k;
	for (i = 0; i < count; i++)
		a->fold[i] = (struct sim_fold32_run){
			.src = &a->v[a->first_iov[i]], .n = a->n_iov[i] };
	return (uint32_t)sim_app_fold32_runs(roce_crc32_update, a->fold,
					     (int)count);
}

/*
 * The packets of a read of n bytes, each seg long but the last: those
 * that are the ones expected, checked in place, to the device as one
 * (fab_rx_placed_fn); from the first that is not, the rest gathered
 * and taken as usual, which counts and drops it if it is bad.
 *
 * Not inlined: inside roce_rx_ahead() gcc 12 builds each packet's header
 * and payload descriptor with rep string instructions, whose start-up
 * alone cost the device thread about 5 % of its time at a million
 * packets a second; on its own the loop gets vector moves.
 */
static __attribute__((noinline)) void
ahead_take(struct fab_port *port, struct roce_ahead *a,
	   const struct sockaddr_in *src, const struct fab_hdr *meta, int nv,
	   size_t n, size_t seg, int *count)
{
	struct roce_flow4 f = roce_rx_flow(port, src);
	struct roce_icrc_check_run run = { .run.iblen = 0 };
	uint32_t i, folded = payloads_crc0(a, n, seg);
	uint64_t bytes = 0;
	size_t off, len;
	bool asked = false, ends, ack;

	for (off = 0, i = 0; off < n; off += len, i++) {
		const uint8_t *bth = bth_of(a, i);
		size_t iblen;

		len = n - off < seg ? n - off : seg;
		iblen = len - ROCE_ICRC_LEN;
		if (i >= folded || !as_expected(a, i, len, &ack))
			break;
		if (!roce_icrc_run_fits(&run.run, bth, iblen))
			roce_icrc_run_init_check(&run, &f, bth, iblen);
		if (!roce_icrc_run_check(&run, &f, bth,
					 roce_icrc_get(tail_of(a, i) + a->pad[i]),
					 roce_crc32_update(a->fold[i].acc,
							   tail_of(a, i),
							   a->pad[i])))
			break;
		bytes += iblen - ROCE_BTH_LEN - a->pad[i];
		asked |= ack;
	}
	ends = a->ends && i == a->k;
	port->roce_write_open = !ends;
	a->goes_on = off >= n && !ends;
	a->next_psn = (a->psn + i) & 0xffffff;
	if (i) {
		if (roce_rx_deliver_placed(port, src, a->qpn, a->psn, i, bytes,
					   ends, asked))
			*count += (int)i;
		else
			a->goes_on = false;
	}
	if (off < n) {
		if (gather(port, a, nv, off, n))
			*count += roce_rx_run(port, src, meta, port->roce_buf,
					      n - off, seg);
		else
			port->roce_counts.rx_malformed++;
	}
}

void roce_rx_ahead_after(struct fab_port *port, uint32_t dqpn, uint32_t psn)
{
	struct roce_ahead *a = port->roce_ahead;

	if (!a)
		return;	/* the first look makes it */
	a->goes_on = true;
	a->qpn = dqpn;
	a->next_psn = (psn + 1) & 0xffffff;
}

/* The bytes QP dqpn expects from PSN psn on, their places in a->where
 * (0: none, or not at a path MTU a read can take). */
static uint64_t expected(struct fab_port *port, struct roce_ahead *a,
			 uint32_t dqpn, uint32_t psn, int *npieces,
			 uint32_t *mtu, bool *ends)
{
	uint64_t bytes;

	*npieces = AHEAD_PIECES;
	bytes = port->adapter.ahead(port->adapter.owner, dqpn, psn,
				    AHEAD_PACKETS, a->where, npieces, mtu,
				    ends);
	return *mtu < 256 || *mtu > 4096 ? 0 : bytes;
}

/* The QP and PSN of the next datagram, a WRITE's middle packet, from a
 * look at its BTH (MSG_PEEK): 1, or 0 when the socket is empty, -1 when
 * it is not such a packet. */
static int look(struct fab_port *port, uint32_t *dqpn, uint32_t *psn)
{
	/* a middle packet's BTH, and as many bytes more as roce_decode()
	 * wants of any datagram (an ICRC's) */
	uint8_t head[ROCE_BTH_LEN + ROCE_ICRC_LEN];
	struct sockaddr_in src;
	socklen_t sl = sizeof(src);
	struct roce_pkt p;
	ssize_t n;

	n = sim_libc.recvfrom(port->roce_fd, head, sizeof(head),
			      MSG_PEEK | MSG_DONTWAIT,
			      (struct sockaddr *)&src, &sl);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
	if (n < (ssize_t)sizeof(head) || sl < sizeof(src) ||
	    src.sin_family != AF_INET ||
	    roce_decode(&p, head, sizeof(head)) != ROCE_OK ||
	    p.opcode != ROCE_WRITE_MIDDLE)
		return -1;
	*dqpn = p.dqpn;
	*psn = p.psn;
	return 1;
}

int roce_rx_ahead(struct fab_port *port, int *count, int *taken)
{
	union {
		struct cmsghdr align;
		uint8_t b[CMSG_SPACE(sizeof(int)) * 3 + 16];
	} ctl;
	struct roce_ahead *a = port->roce_ahead;
	struct sockaddr_in src;
	struct msghdr msg;
	struct fab_hdr meta;
	uint32_t dqpn = 0, psn = 0, mtu = 0, k;
	uint64_t bytes = 0;
	size_t seg;
	bool ends = false;
	int nv, npieces, r;
	ssize_t n;

	/* no look (a system call) where no WRITE is coming in packets */
	if (!port->adapter.ahead || !port->adapter.placed ||
	    !port->roce_write_open)
		return -1;
	/* the guess (see the top), which stands while the socket is
	 * empty; where the device expects no such packet, or the guess is
	 * the packet whose read faulted (read as usual next), the look */
	if (a && a->goes_on &&
	    !(a->faulted && a->fault_qpn == a->qpn &&
	      a->fault_psn == a->next_psn)) {
		dqpn = a->qpn;
		psn = a->next_psn;
		bytes = expected(port, a, dqpn, psn, &npieces, &mtu, &ends);
		a->goes_on = bytes != 0;
	}
	if (!bytes) {
		r = look(port, &dqpn, &psn);
		if (r <= 0)
			return r;
		if (a && a->faulted && a->fault_qpn == dqpn &&
		    a->fault_psn == psn) {
			a->faulted = false;
			return -1;
		}
		if (!a) {
			a = port->roce_ahead = calloc(1, sizeof(*a));
			if (!a)
				return -1;
		}
		bytes = expected(port, a, dqpn, psn, &npieces, &mtu, &ends);
		if (!bytes)
			return -1;
	}
	/* as many as one read of the receive buffer's length holds */
	k = (uint32_t)((bytes + mtu - 1) / mtu);
	if (k > ROCE_RX_LEN / (mtu + AHEAD_OVERHEAD)) {
		k = ROCE_RX_LEN / (mtu + AHEAD_OVERHEAD);
		bytes = (uint64_t)k * mtu;
		ends = false;
	}
	nv = plan(a, k, bytes, mtu, ends, npieces);
	if (nv < 0)
		return -1;
	a->qpn = dqpn;
	a->psn = psn;
	a->k = k;
	a->ends = ends;

	memset(&msg, 0, sizeof(msg));
	msg.msg_name = &src;
	msg.msg_namelen = sizeof(src);
	msg.msg_iov = a->v;
	msg.msg_iovlen = (size_t)nv;
	msg.msg_control = ctl.b;
	msg.msg_controllen = sizeof(ctl.b);
	n = sim_libc.recvmsg(port->roce_fd, &msg, MSG_DONTWAIT);
	if (n < 0 && errno == EFAULT) {
		/* the kernel dropped the run: its resend is read as usual */
		a->goes_on = false;
		a->faulted = true;
		a->fault_qpn = dqpn;
		a->fault_psn = psn;
		port->roce_counts.rx_malformed++;
		(*taken)++;
		return 1;
	}
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
	/* an empty datagram too: a read on the guess takes what comes */
	if ((msg.msg_flags & MSG_TRUNC) || !n ||
	    msg.msg_namelen < sizeof(src) || src.sin_family != AF_INET) {
		a->goes_on = false;
		port->roce_counts.rx_malformed++;
		(*taken)++;
		return 1;
	}
	memset(&meta, 0, sizeof(meta));
	seg = roce_rx_cmsgs(&msg, &meta);
	if (!seg)
		seg = (size_t)n;
	*taken += (int)(((size_t)n + seg - 1) / seg);

	ahead_take(port, a, &src, &meta, nv, (size_t)n, seg, count);
	return 1;
}
