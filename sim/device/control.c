// SPDX-License-Identifier: BSD-2-Clause
/*
 * The device side of the control path (dev->lock held): QP create,
 * modify and destroy, CQ destroy, SRQ modify, as the driver issues them
 * through struct sim_device_ops. See engine.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "direct.h"
#include "publish.h"
#include "engine.h"

int engine_qp_create(struct sim_qp *qp)
{
	struct sim_dev *dev = qp->uctx->dev;
	struct engine *eng = engine_of(dev);
	struct eqp *e;
	int ret;

	if (!eng)
		return EINVAL;
	ret = engine_start(dev);
	if (ret)
		return ret;
	e = calloc(1, sizeof(*e));
	if (!e)
		return ENOMEM;
	e->qp = qp;
	e->eng = eng;
	e->req.out_cap = qp->sq.nelems ? qp->sq.nelems : 1;
	e->req.out = calloc(e->req.out_cap, sizeof(*e->req.out));
	if (!e->req.out) {
		free(e);
		return ENOMEM;
	}
	qlist_push(&eng->all, &e->all);
	qp->engine = e;
	pub_qp(qp);
	return 0;
}

/* Forgets the transport state: nothing outstanding, nothing expected. */
static void eqp_reset(struct eqp *e)
{
	e->req.out_head = e->req.out_count = e->req.out_sent = 0;
	e->req.rd_inflight = 0;
	e->req.deadline = e->req.rnr_until = 0;
	e->direct.rnr_since = 0;
	e->direct.misses = e->direct.fabric_run = 0;
	e->req.link = e->req.ud_link = NULL;
	e->need_resolve = false;
	e->resp.nak_sent = false;
	e->resp.seg_busy = false;
	memset(e->resp.atomics, 0, sizeof(e->resp.atomics));
	e->resp.atomic_next = 0;
	memset(e->resp.reads, 0, sizeof(e->resp.reads));
	e->resp.read_next = 0;
	qlink_del(&e->ack);
	qlink_del(&e->wait);
}

void engine_qp_modified(struct sim_qp *qp, enum ibv_qp_state old_state)
{
	struct eqp *e = qp->engine;
	enum ibv_qp_state s = qp->attr.state;

	if (e)
		pub_qp(qp);	/* access flags too */
	if (!e || s == old_state)
		return;
	switch (s) {
	case IBV_QPS_RESET:
		eqp_reset(e);
		break;
	case IBV_QPS_INIT:
		break;
	case IBV_QPS_RTR:
		e->resp.epsn = qp->attr.rq_psn & PSN_MASK;
		e->resp.msn = 0;
		e->resp.nak_sent = false;
		e->need_resolve = true;
		break;
	case IBV_QPS_RTS:
		if (old_state == IBV_QPS_RTR) {
			e->req.next_psn = qp->attr.sq_psn & PSN_MASK;
			e->req.win_base = e->req.next_psn;
			e->req.retries_left = qp->attr.retry_cnt;
			e->req.rnr_left = qp->attr.rnr_retry;
			e->need_resolve = true;
		}
		dev_kick(e);	/* the ring may hold WQEs already */
		break;
	case IBV_QPS_SQD:
		qp->attr.sq_draining = 1;
		dev_kick(e);
		break;
	case IBV_QPS_ERR:
		qp->attr.state = old_state;	/* let qp_to_error see it */
		dev_qp_to_error(e);
		break;
	default:
		break;
	}
}

void engine_qp_destroy(struct sim_qp *qp)
{
	struct eqp *e = qp->engine;

	if (!e)
		return;
	in_place_settle(e);
	pub_qp_withdraw(qp);
	qlink_del(&e->all);
	qlink_del(&e->kick);
	qlink_del(&e->ack);
	qlink_del(&e->wait);
	qp->engine = NULL;
	free(e->req.out);
	free(e);
}

void engine_cq_destroy(struct sim_cq *cq)
{
	/* CQEs are written only through live QPs, which hold a reference on
	 * their CQs: only the solicited shadow is left in the device. */
	free(cq->cqe_solicited);
	cq->cqe_solicited = NULL;
}

void engine_srq_modified(struct sim_srq *srq)
{
	pub_srq(srq);
	dev_srq_limit_check(srq);
}

void engine_cq_armed(struct sim_cq *cq)
{
	pub_cq(cq);
}

/* The engine as the kernel's device (device.h). */
const struct sim_device_ops sim_engine_ops = {
	.qp_create = engine_qp_create,
	.qp_modified = engine_qp_modified,
	.qp_destroy = engine_qp_destroy,
	.cq_destroy = engine_cq_destroy,
	.srq_modified = engine_srq_modified,
	.cq_armed = engine_cq_armed,
	.cq_events_sync = direct_cq_events_sync,
};
