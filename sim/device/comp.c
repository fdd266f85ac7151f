// SPDX-License-Identifier: BSD-2-Clause
/*
 * The completer: what comes back to the requester (ACK, NAK, read and
 * atomic responses) completes, retries or fails its requests. See
 * engine.h.
 */
#include <stdlib.h>

#include "engine.h"

/* Responses acknowledge every request before psn (implicitly) and, for an
 * ACK, psn itself. READs and atomics complete only with their data. */
static void ack_upto(struct eqp *e, uint32_t psn, bool inclusive)
{
	struct sim_send_wr wr;
	struct out_wqe *o;
	bool progress = false;

	while (e->req.out_count && e->req.out_sent) {
		o = dev_out_at(e, 0);
		/* a message of packets is done with its last (packets.c) */
		if (!psn_before(o->last_psn, psn) &&
		    !(inclusive && o->last_psn == psn))
			break;
		if (sim_wqe_is_read_or_atomic(o->wr.opcode))
			break;
		/* The SQ slot goes back before the CQE appears: an
		 * application that posts one WR per completion (perftest's
		 * tx_depth) must find the slot free. */
		wr = o->wr;
		dev_out_pop(e);
		dev_complete_send(e, &wr, PVRDMA_WC_SUCCESS);
		progress = true;
	}
	if (progress) {
		e->req.retries_left = e->qp->attr.retry_cnt;
		e->req.rnr_left = e->qp->attr.rnr_retry;
		e->req.deadline = 0;
		if (e->req.out_sent)
			dev_restart_ack_timer(e);
	}
	if (e->req.out_count && !e->req.out_sent && dev_out_at(e, 0)->local_err)
		dev_complete_local_error(e);
}

void dev_requester_fail(struct eqp *e, uint32_t status)
{
	struct out_wqe *o = dev_out_at(e, 0);
	struct sim_send_wr wr = o->wr;

	in_place_settle(e);
	dev_out_pop(e);
	dev_complete_send(e, &wr, status);
	dev_qp_to_error(e);
}

/* The response to the READ or atomic at the head of the queue. */
static void read_atomic_done(struct eqp *e, const struct fab_hdr *h,
			     struct fab_rx *rx)
{
	struct sim_qp *qp = e->qp;
	struct out_wqe *o = dev_out_at(e, 0);
	struct local_iov li;
	struct sim_send_wr wr;
	uint64_t val = h->atomic_a;

	if (dev_map_sges(qp, o->wr.sge, o->wr.num_sge, IBV_ACCESS_LOCAL_WRITE,
		     &li)) {
		dev_requester_fail(e, PVRDMA_WC_LOC_PROT_ERR);
		return;
	}
	if (h->type == FAB_READ_RESP) {
		if (!fab_rx_read(rx, li.iov, li.n)) {
			if (rx->fault)
				dev_requester_fail(e, PVRDMA_WC_LOC_PROT_ERR);
			return;		/* lost: the timer resends */
		}
		stat_add(&qp->uctx->dev->stats.bytes_rx, h->len);
	} else {
		/* the original value lands in the local SGE(s) */
		struct fab_rx mem = { .mem = (void *)&val, .left = 8 };

		if (!fab_rx_read(&mem, li.iov, li.n)) {
			dev_requester_fail(e, PVRDMA_WC_LOC_PROT_ERR);
			return;
		}
	}
	wr = o->wr;
	dev_out_pop(e);
	dev_complete_send(e, &wr, PVRDMA_WC_SUCCESS);
	e->req.retries_left = qp->attr.retry_cnt;
	e->req.rnr_left = qp->attr.rnr_retry;
	e->req.deadline = 0;
	if (e->req.out_sent)
		dev_restart_ack_timer(e);
}

static uint32_t nak_status(uint8_t code)
{
	switch (code) {
	case FAB_NAK_REM_ACCESS:
		return PVRDMA_WC_REM_ACCESS_ERR;
	case FAB_NAK_INV_REQ:
		return PVRDMA_WC_REM_INV_REQ_ERR;
	default:
		return PVRDMA_WC_REM_OP_ERR;
	}
}

void dev_requester_rx(struct eqp *e, const struct fab_hdr *h,
		  struct fab_rx *rx)
{
	struct sim_qp *qp = e->qp;

	if (qp->type != IBV_QPT_RC || !e->req.out_count)
		return;
	if (qp->attr.state != IBV_QPS_RTS && qp->attr.state != IBV_QPS_SQD)
		return;

	switch (h->type) {
	case FAB_ACK:
		if (h->opcode != FAB_ACK_PARTIAL) {
			ack_upto(e, h->psn, true);
			pkt_acked(e, (h->psn + 1) & PSN_MASK);
			/* the ACK of a packet inside the oldest message: it
			 * is arriving (packets.c) */
			if (e->req.out_count &&
			    (e->req.out_sent || dev_out_at(e, 0)->pkts_sent) &&
			    pkt_psn_in(dev_out_at(e, 0), h->psn)) {
				e->req.retries_left = e->qp->attr.retry_cnt;
				dev_restart_ack_timer(e);
			}
			break;
		}
		/* The oldest request is arriving: progress, as the ACK of
		 * a middle packet is on the wire, restarts its timer and
		 * its retry count. Also when a timeout already marked it
		 * for resending: the first copy is the one still coming. */
		ack_upto(e, h->psn, false);
		if (e->req.out_count && dev_out_at(e, 0)->psn == h->psn) {
			e->req.retries_left = e->qp->attr.retry_cnt;
			dev_restart_ack_timer(e);
		}
		break;
	case FAB_READ_RESP:
	case FAB_ATOMIC_RESP:
		ack_upto(e, h->psn, false);
		if (h->flags & FAB_F_SEG) {
			/* a READ asked for in parts answers before all are */
			if (e->req.out_count &&
			    (e->req.out_sent || dev_out_at(e, 0)->pkts_sent))
				pkt_read_response(e, h, rx);
			break;
		}
		if (e->req.out_count && e->req.out_sent &&
		    dev_out_at(e, 0)->psn == h->psn)
			read_atomic_done(e, h, rx);
		break;
	case FAB_NAK:
		ack_upto(e, h->psn, false);
		if (!e->req.out_count ||
		    !(e->req.out_sent || dev_out_at(e, 0)->pkts_sent) ||
		    !pkt_psn_in(dev_out_at(e, 0), h->psn))
			break;	/* stale */
		if (h->opcode == FAB_NAK_SEQ) {
			pkt_acked(e, h->psn);
			dev_out_unsend(e);	/* go back to psn */
			pkt_rewind(e, h->psn);
		} else if (h->opcode == FAB_NAK_RNR) {
			if (qp->attr.rnr_retry != 7 && !e->req.rnr_left--) {
				dev_requester_fail(e,
					       PVRDMA_WC_RNR_RETRY_EXC_ERR);
				return;
			}
			/* Nothing is in flight until the RNR timer resends:
			 * the ACK timer restarts with the resend. */
			dev_out_unsend(e);
			pkt_rewind(e, h->psn);
			e->req.deadline = 0;
			dev_arm_rnr_timer(e, e->eng->now +
				      1000ull * dev_rnr_timer_us[h->rkey & 31]);
		} else {
			dev_requester_fail(e, nak_status(h->opcode));
			return;
		}
		break;
	default:
		return;
	}
	dev_sq_progress(e);
}
