// SPDX-License-Identifier: BSD-2-Clause
/*
 * The packets of RDMA WRITEs placed a run at a time. On the RoCE wire a
 * 64 KiB WRITE is 64 packets, each a copy into the application's memory
 * (a guarded one, common/fault_guard.h: a bad page stops it with the
 * bytes before it placed). The fabric reads datagrams a run at a time
 * (UDP GRO) and keeps them until its rx_end; the packets of such a run
 * that go to registered memory are taken here and placed with one copy,
 * their ranges merged where they follow each other.
 *
 * Nothing may show a packet before its bytes are in place: the engine
 * copies before it handles any packet that cannot join (engine_rx()),
 * before any CQE (dev_cqe_write()), before any ACK, NAK or response
 * leaves (resp.c), and at the end of the run. A copy that faults fails
 * its packet as a copy made at once would have (a remote access NAK, the
 * QP in error), with the ACK and MSN of the QP as they were before it:
 * nothing after it is acknowledged, and the packets of the QP after it
 * are dropped, as a QP in error drops them.
 */
#include <string.h>

#include "engine.h"

bool dev_place_joins(const struct fab_hdr *h)
{
	if (h->type != FAB_REQ || !(h->flags & FAB_F_SEG))
		return false;
	/* a WRITE with immediate completes at its last packet */
	return h->opcode == PVRDMA_WR_RDMA_WRITE ||
	       (h->opcode == PVRDMA_WR_RDMA_WRITE_WITH_IMM &&
		!(h->flags & FAB_F_LAST));
}

int dev_place_defer(struct eqp *e, struct fab_link *from,
		    const struct fab_hdr *h, struct fab_rx *rx,
		    const struct local_iov *ri)
{
	struct place_batch *b = &e->eng->place;
	struct place_entry *p;
	const uint8_t *src;

	/* a packet copied now comes after those taken: they go first */
	if (!rx->lasts || b->flushing || !h->len || !dev_place_joins(h) ||
	    ri->n <= 0 || ri->n > (int)PLACE_MAX_PIECES ||
	    h->len > rx->left)
		return dev_place_settle(e) ? 0 : -1;
	if ((b->n == PLACE_MAX_ENTRIES ||
	     b->npieces + (unsigned int)ri->n > PLACE_MAX_PIECES) &&
	    !dev_place_settle(e))
		return -1;
	src = fab_rx_take(rx, h->len);
	if (!src)
		return dev_place_settle(e) ? 0 : -1;
	p = &b->ent[b->n++];
	*p = (struct place_entry){
		.e = e, .from = from, .src = src, .len = h->len,
		.psn = h->psn, .src_qpn = h->src_qpn, .msn = e->resp.msn,
		.ack_queued = qlink_linked(&e->ack),
		.ack_psn = e->resp.ack_psn, .ack_link = e->resp.ack_link,
		.ack_bytes = e->resp.ack_bytes,
		.piece = (uint16_t)b->npieces, .npieces = (uint16_t)ri->n,
	};
	memcpy(&b->piece[b->npieces], ri->iov, sizeof(*ri->iov) * ri->n);
	b->npieces += ri->n;
	return 1;
}

/* Appends [base, base + len) to v, into its last piece where it follows
 * it. */
static void iov_append(struct iovec *v, int *n, void *base, size_t len)
{
	if (*n && (uint8_t *)v[*n - 1].iov_base + v[*n - 1].iov_len ==
		  (uint8_t *)base) {
		v[*n - 1].iov_len += len;
		return;
	}
	v[*n].iov_base = base;
	v[*n].iov_len = len;
	(*n)++;
}

/* Copies the live entries from first on; the index of the one whose
 * copy faulted, or b->n when all are in place. */
static unsigned int copy_from(struct place_batch *b, unsigned int first)
{
	struct iovec *local = b->local, *remote = b->remote;
	int nl = 0, nr = 0, k;
	unsigned int i;
	size_t done, off = 0;

	for (i = first; i < b->n; i++) {
		struct place_entry *p = &b->ent[i];

		if (p->dead)
			continue;
		iov_append(local, &nl, (void *)p->src, p->len);
		for (k = 0; k < p->npieces; k++)
			iov_append(remote, &nr, b->piece[p->piece + k].iov_base,
				   b->piece[p->piece + k].iov_len);
	}
	done = sim_app_scatter(remote, nr, local, nl);
	for (i = first; i < b->n; i++) {
		if (b->ent[i].dead)
			continue;
		if (done < off + b->ent[i].len)
			return i;
		off += b->ent[i].len;
	}
	return b->n;
}

/* The packet of p failed as a copy made at once fails it: the queued
 * ACK and the MSN back to what they were before it, then its NAK. */
static void place_fail(struct engine *eng, const struct place_entry *p)
{
	struct eqp *e = p->e;
	struct fab_hdr h = { .psn = p->psn, .src_qpn = p->src_qpn };

	e->resp.seg_busy = false;
	e->resp.msn = p->msn;
	if (p->ack_queued) {
		e->resp.ack_link = p->ack_link;
		e->resp.ack_psn = p->ack_psn;
		e->resp.ack_bytes = p->ack_bytes;
		qlist_push(&eng->acks, &e->ack);
	} else {
		qlink_del(&e->ack);
	}
	dev_resp_fail(e, p->from, &h, FAB_NAK_REM_ACCESS);
}

void dev_place_flush(struct engine *eng)
{
	struct place_batch *b = &eng->place;
	unsigned int i, j, at = 0;
	bool failed = false;

	if (!b->n || b->flushing)
		return;
	b->flushing = true;
	while ((at = copy_from(b, at)) < b->n) {
		/* its QP's later packets are not placed: dropped */
		for (j = at + 1; j < b->n; j++)
			if (b->ent[j].e == b->ent[at].e)
				b->ent[j].dead = true;
		b->ent[at].dead = true;
		b->ent[at].src = NULL;	/* the one that failed */
		failed = true;
		at++;
	}
	/* the QPs fail once every other packet is in place */
	for (i = 0; failed && i < b->n; i++) {
		struct place_entry *p = &b->ent[i];

		if (!p->dead)
			continue;
		/* counted when taken; a packet not placed is not */
		stat_add(&eng->dev->stats.bytes_rx, -(unsigned long)p->len);
		if (!p->src)
			place_fail(eng, p);
	}
	b->n = 0;
	b->npieces = 0;
	b->flushing = false;
}

bool dev_place_settle(struct eqp *e)
{
	bool was_err = e->qp->attr.state == IBV_QPS_ERR;

	dev_place_flush(e->eng);
	return was_err || e->qp->attr.state != IBV_QPS_ERR;
}

void engine_rx_end(void *owner)
{
	struct engine *eng = engine_of(owner);

	if (eng)
		dev_place_flush(eng);
}
