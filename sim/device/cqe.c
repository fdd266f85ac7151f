// SPDX-License-Identifier: BSD-2-Clause
/*
 * Completions: CQEs written into the user CQ ring, then the completion
 * event; and the error state: a QP in error flushes its work requests
 * with error completions. See engine.h.
 */
#include <stdlib.h>
#include <string.h>

#include "publish.h"
#include "engine.h"

uint8_t dev_network_type(struct sim_dev *dev, uint8_t gid_type,
		     const uint8_t gid[16])
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (gid_type != GID_TYPE_ROCE_V2)
		return PVRDMA_NETWORK_ROCE_V1;
	return memcmp(gid, v4mapped, 12) ? PVRDMA_NETWORK_IPV6 :
					   PVRDMA_NETWORK_IPV4;
}

/* The sl of a UD receive completion on RoCE carries the packet's type, as
 * the ConnectX adapters under vSphere report it (bit 3: RoCE v2; bits 2-0:
 * 0 GRH, 1 IPv6, 2 IPv4): UCX's ud_verbs takes the GRH's address family
 * from it, and drops every IPv4 datagram of a device that reports 0. */
uint8_t dev_roce_packet_type(uint8_t network_type)
{
	switch (network_type) {
	case PVRDMA_NETWORK_IPV4:
		return 0x8 | 0x2;
	case PVRDMA_NETWORK_IPV6:
		return 0x8 | 0x1;
	default:
		return 0;
	}
}

/* The CQE into the ring, then its event (see dev_cqe_write()). */
static void cqe_produce(struct sim_qp *qp, struct sim_cq *cq,
			const struct pvrdma_cqe *src, bool solicited)
{
	struct sim_dev *dev = qp->uctx->dev;
	struct sim_ring ring;
	void *slot;

	if (cq->overflowed)
		return;
	ring = cq->ring;
	if (sim_ring_reserve(&ring, &slot) != SIM_RING_READY) {
		cq->overflowed = true;
		pub_cq_pull(cq);
		pub_cq(cq);	/* requesters write no more */
		sim_device_upcalls.async_event(cq->uctx, cq->user_handle,
					       IBV_EVENT_CQ_ERR,
					       &cq->async_events_reported);
		if (qp->engine)
			dev_qp_to_error(qp->engine);
		return;
	}
	memcpy(slot, src, sizeof(*src));
	if (src->status != PVRDMA_WC_SUCCESS) {
		stat_add(&dev->stats.error_cqes, 1);
		solicited = true;
	}
	/* What a late solicited arm needs to know of the pending CQEs. */
	if (!cq->cqe_solicited)
		cq->cqe_solicited = calloc(ring.nelems, 1);
	if (cq->cqe_solicited)
		cq->cqe_solicited[((uint8_t *)slot - ring.elems) /
				  ring.elem_size] = solicited;
	sim_ring_produce(&ring);	/* release: the CQE is complete */
	stat_add(&dev->stats.cqes, 1);
	pub_cq_pull(cq);		/* a requester may have taken it */
	sim_device_upcalls.comp_event(cq, solicited);
	if (cq->shared)
		pub_cq(cq);
}

/*
 * Writes one CQE for qp into cq. A full CQ is not overwritten: the CQ is in
 * error (CQ_ERR, once) and the QP goes to the error state.
 */
void dev_cqe_write(struct sim_qp *qp, struct sim_cq *cq,
	       const struct pvrdma_cqe *src, bool solicited)
{
	struct sim_dev *dev = qp->uctx->dev;
	struct engine *eng = engine_of(dev);

	if (!cq)
		return;
	/* what a CQE shows must be in place (place.c) */
	if (eng)
		dev_place_flush(eng);
	/* Same-host requesters write CQEs into a published CQ too
	 * (direct_send.c): one producer at a time. */
	if (cq->shared) {
		pub_lock(dev);
		cqe_produce(qp, cq, src, solicited);
		pub_unlock(dev);
		return;
	}
	cqe_produce(qp, cq, src, solicited);
}

void dev_cqe_init(struct pvrdma_cqe *c, struct sim_qp *qp, uint64_t wr_id,
	      uint32_t opcode, uint32_t status)
{
	memset(c, 0, sizeof(*c));
	c->wr_id = wr_id;
	c->qp = qp->qp_handle;
	c->opcode = opcode;
	c->status = status;
	c->port_num = qp->attr.port_num ? qp->attr.port_num : 1;
}

void dev_complete_send(struct eqp *e, const struct sim_send_wr *wr,
		   uint32_t status)
{
	struct sim_qp *qp = e->qp;
	struct pvrdma_cqe c;

	if (status == PVRDMA_WC_SUCCESS &&
	    !(wr->send_flags & IBV_SEND_SIGNALED) && !qp->sq_sig_all)
		return;
	dev_cqe_init(&c, qp, wr->wr_id, sim_wqe_wc_opcode(wr->opcode), status);
	if (status == PVRDMA_WC_SUCCESS)
		c.byte_len = wr->total_len;
	dev_cqe_write(qp, qp->send_cq, &c, false);
}

void dev_complete_recv_error(struct eqp *e, uint64_t wr_id,
			 uint32_t status)
{
	struct pvrdma_cqe c;

	dev_cqe_init(&c, e->qp, wr_id, PVRDMA_WC_RECV, status);
	dev_cqe_write(e->qp, e->qp->recv_cq, &c, true);
}

struct out_wqe *dev_out_at(struct eqp *e, uint32_t i)
{
	return &e->req.out[(e->req.out_head + i) % e->req.out_cap];
}

/* The oldest WQE in flight retires: only now does its slot go back to the
 * producer, since a resend reads its buffers again and a provider may
 * reuse what a slot points at (inline bounce buffers) once cons_head
 * passed it. */
void dev_out_pop(struct eqp *e)
{
	if (e->req.out_sent) {
		e->req.out_sent--;
		if (sim_wqe_is_read_or_atomic(dev_out_at(e, 0)->wr.opcode))
			e->req.rd_inflight--;
	}
	sim_ring_consume(&e->qp->sq);
	e->req.out_head = (e->req.out_head + 1) % e->req.out_cap;
	e->req.out_count--;
}

/* Everything in flight is to be sent again (timeout, NAK, RNR). */
void dev_out_unsend(struct eqp *e)
{
	e->req.out_sent = 0;
	e->req.rd_inflight = 0;
	e->req.ask_owed = true;	/* the resend's end asks for its ACK */
}

/* Every WQE still queued completes with WR_FLUSH_ERR, in order. */
void dev_qp_flush(struct eqp *e)
{
	struct sim_qp *qp = e->qp;
	struct sim_send_wr swr;
	struct sim_recv_wr rwr;
	uint32_t n;
	void *elem;

	in_place_settle(e);
	while (e->req.out_count) {
		swr = dev_out_at(e, 0)->wr;
		dev_out_pop(e);	/* slot back before the CQE shows it done */
		dev_complete_send(e, &swr, PVRDMA_WC_WR_FLUSH_ERR);
	}
	e->req.deadline = 0;
	/* A ring holds at most nelems WQEs: more means the indices are
	 * being rewritten under us (the ring-state page shared with a CQ's
	 * buffer, say), and the device stops rather than spin. */
	if (qp->sq.state && qp->sq.nelems) {
		for (n = 0; n < qp->sq.nelems &&
			    sim_ring_peek(&qp->sq, &elem) == SIM_RING_READY;
		     n++) {
			sim_wqe_decode_send(&qp->sq, elem, qp->type, &swr);
			sim_ring_consume(&qp->sq);
			stat_add(&qp->uctx->dev->stats.send_wqes, 1);
			dev_complete_send(e, &swr, PVRDMA_WC_WR_FLUSH_ERR);
		}
	}
	if (!qp->srq && qp->rq.state && qp->rq.nelems) {
		for (n = 0; n < qp->rq.nelems &&
			    sim_ring_peek(&qp->rq, &elem) == SIM_RING_READY;
		     n++) {
			sim_wqe_decode_recv(&qp->rq, elem, &rwr);
			sim_ring_consume(&qp->rq);
			stat_add(&qp->uctx->dev->stats.recv_wqes, 1);
			dev_complete_recv_error(e, rwr.wr_id,
					    PVRDMA_WC_WR_FLUSH_ERR);
		}
	}
}

/* The device moves a QP to the error state after a completion error (no
 * async event: the error CQE tells the application). */
void dev_qp_to_error(struct eqp *e)
{
	struct sim_qp *qp = e->qp;

	if (qp->attr.state == IBV_QPS_ERR)
		return;
	qp->attr.state = IBV_QPS_ERR;
	pub_qp(qp);	/* same-host requesters */
	dev_qp_flush(e);
	if (qp->srq)
		sim_device_upcalls.async_event(qp->uctx, qp->user_handle,
					       IBV_EVENT_QP_LAST_WQE_REACHED,
					       &qp->async_events_reported);
}

/* A ring the driver corrupted: catastrophic for the QP. */
void dev_qp_fatal(struct eqp *e)
{
	struct sim_qp *qp = e->qp;

	if (qp->attr.state == IBV_QPS_ERR)
		return;
	sim_device_upcalls.async_event(qp->uctx, qp->user_handle,
				       IBV_EVENT_QP_FATAL,
				       &qp->async_events_reported);
	dev_qp_to_error(e);
}
