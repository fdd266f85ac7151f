// SPDX-License-Identifier: BSD-2-Clause
/*
 * The target's side of the same-host single copy (direct.c is the
 * requester's): what the adapter publishes of its MRs and QPs in its
 * shared segment, as the views (view.h, view.c) a same-host
 * requester checks a one-sided operation against. The segment holds plain
 * views by adapter index; the device decides here what of its objects a
 * requester may reach. Each call runs with dev->lock held (the segment's
 * lock is taken after it).
 *
 * For a SEND executed by a same-host requester (direct_send.c) an RC QP
 * publishes its receive side: its RQ ring or its SRQ's, its receive CQ's
 * ring (each where the target keeps the ring's memory file, pin.c), the
 * CQ's arm and the SRQ's limit. From then on the device takes receives
 * from those rings and writes CQEs into that CQ only under the segment
 * lock (pub_lock()), so that it and the requesters consume and
 * produce the rings one at a time.
 */
#include <assert.h>

#include "direct.h"
#include "publish.h"
#include "engine.h"
#include "view.h"

static_assert(SIM_MAX_MR <= VIEW_MR_KEYS, "the segment holds every key");

void sim_dev_shared_open(struct sim_dev *dev)
{
	view_own(dev->index);
}

void sim_mr_publish(struct sim_dev *dev, const struct sim_mr *mr)
{
	struct view_mr v = {
		.addr = mr->addr,
		.iova = mr->iova,
		.length = mr->length,
		.access = mr->access,
		.pdn = mr->pd->pdn,
	};

	/* Only memory reached as the application's own pages is published:
	 * pages an MR keeps for itself (pinning) are the device's. */
	if (mr->shadow || mr->pin_lost)
		return;
	view_mr_publish(dev->index, mr->rkey, &v);
}

void sim_mr_withdraw(struct sim_dev *dev, const struct sim_mr *mr)
{
	view_mr_withdraw(dev->index, mr->rkey);
	/* READ responses and request tails the links send from it. */
	engine_copy_in_place(dev);
}

void pub_lock(struct sim_dev *dev)
{
	struct engine *eng = engine_of(dev);

	/* Nested under dev->lock (a receive, then its CQE): the segment
	 * mutex is taken once. */
	if (eng && !eng->own_depth++)
		eng->own_locked = view_own_lock(dev->index);
}

void pub_unlock(struct sim_dev *dev)
{
	struct engine *eng = engine_of(dev);

	if (eng && !--eng->own_depth && eng->own_locked) {
		eng->own_locked = false;
		view_own_unlock(dev->index);
	}
}

/* Where ring r is in the memory file of pin; false if it has none. */
static bool ring_view(const struct sim_ring *r, const struct sim_pin *pin,
		      struct view_ring *v)
{
	const uint8_t *state = (const uint8_t *)r->state;

	if (pin->fd < 0 || !pin->base || !r->state || !r->nelems ||
	    state < pin->base || state + sizeof(*r->state) >
	    pin->base + pin->len || r->elems < pin->base ||
	    r->elems + (size_t)r->nelems * r->elem_size >
	    pin->base + pin->len)
		return false;
	v->id = pin->id;
	v->ino = pin->ino;
	v->fd = pin->fd;
	v->map_len = pin->len;
	v->state_off = state - pin->base;
	v->elems_off = r->elems - pin->base;
	v->nelems = r->nelems;
	v->elem_size = r->elem_size;
	v->max_sge = r->max_sge;
	return true;
}

void pub_cq(struct sim_cq *cq)
{
	struct view_cq v = {
		.armed = (uint8_t)cq->armed,
		.overflowed = cq->overflowed,
	};

	if (!cq->shared)
		return;
	direct_cq_chan_view(cq, &v);
	view_cq_publish(cq->uctx->dev->index, cq->cqn, &v);
}

void pub_cq_pull(struct sim_cq *cq)
{
	int armed;

	if (!cq->shared)
		return;
	armed = view_cq_arm_of(cq->uctx->dev->index, cq->cqn);
	if (armed >= 0)
		cq->armed = armed;
}

void pub_cq_notified(struct sim_cq *cq)
{
	struct sim_dev *dev = cq->uctx->dev;

	pub_lock(dev);
	cq->armed = SIM_CQ_ARM_NEXT;	/* the arm the requester took */
	sim_device_upcalls.comp_event(cq, true);
	pub_cq_pull(cq);
	pub_unlock(dev);
}

bool pub_raises_recover(struct sim_dev *dev)
{
	uint32_t cqns[16];
	unsigned int i, n;
	struct sim_cq *cq;

	n = view_raises_reap(dev->index, cqns, 16);
	for (i = 0; i < n; i++) {
		cq = sim_table_get(&dev->cqs, cqns[i]);
		if (cq && cq->shared)
			pub_cq_notified(cq);
	}
	return view_raises_held(dev->index);
}

void pub_srq(const struct sim_srq *srq)
{
	view_srq_publish(srq->uctx->dev->index, srq->srqn, srq->limit);
}

/* The RC QP's receive side, if requesters can reach all of it. */
static bool recv_view(const struct sim_qp *qp, struct view_recv *v)
{
	struct sim_cq *cq = qp->recv_cq;
	const struct sim_srq *srq = qp->srq;

	if (qp->type != IBV_QPT_RC || !cq)
		return false;
	if (srq ? !ring_view(&srq->ring, &srq->ring_pin, &v->rq) :
		  !ring_view(&qp->rq, &qp->ring_pin, &v->rq))
		return false;
	if (!ring_view(&cq->ring, &cq->ring_pin, &v->cq))
		return false;
	v->cqn = cq->cqn;
	v->srq = srq != NULL;
	v->srqn = srq ? srq->srqn : 0;
	v->qp_handle = qp->qp_handle;
	v->port_num = qp->attr.port_num ? qp->attr.port_num : 1;
	/* The CQ and the SRQ first: a requester that finds the QP finds
	 * them. From here on the CQ's arms are mirrored. */
	if (!cq->shared) {
		cq->shared = true;
		pub_cq(cq);
	}
	if (srq)
		pub_srq(srq);
	return true;
}

void pub_qp(const struct sim_qp *qp)
{
	struct view_qp v = {
		.pdn = qp->pd ? qp->pd->pdn : 0,
		.access = qp->attr.qp_access_flags,
		.state = (uint8_t)qp->attr.state,
		.type = (uint8_t)qp->type,
		.min_rnr_timer = (uint8_t)(qp->attr.min_rnr_timer & 31),
	};
	struct view_recv r = { 0 };
	unsigned int adapter = qp->uctx->dev->index;

	view_qp_publish(adapter, qp->qpn, &v);
	view_recv_publish(adapter, qp->qpn,
			    recv_view(qp, &r) ? &r : NULL);
	/* A SEND's data lands without the lock: before the receives are
	 * flushed, none may still be on its way to them. */
	if (!sim_qp_state_takes_requests((enum ibv_qp_state)v.state))
		view_own_fence(adapter);
}

void pub_qp_withdraw(const struct sim_qp *qp)
{
	view_qp_withdraw(qp->uctx->dev->index, qp->qpn);
	view_own_fence(qp->uctx->dev->index);
}
