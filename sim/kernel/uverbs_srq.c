// SPDX-License-Identifier: BSD-2-Clause
/*
 * Shared receive queues (devices from HWv14 on): uverbs CREATE_SRQ,
 * MODIFY_SRQ, QUERY_SRQ, DESTROY_SRQ and pvrdma_srq.c's checks. The user
 * buffer holds one page of ring state (the "rx" ring at offset 8) and then
 * the receive WQEs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uverbs_internal.h"

int uverbs_create_srq(struct uverbs_call *c)
{
	struct ib_uverbs_create_srq cmd;
	struct ib_uverbs_create_srq_resp resp = { 0 };
	struct pvrdma_create_srq ucmd;
	struct pvrdma_create_srq_resp uresp = { 0 };
	struct sim_dev *dev = c->f->dev;
	struct sim_pin_range ring;
	struct sim_pd *pd;
	struct sim_srq *srq;
	uint32_t n, sz, next = SIM_FIRST_SRQN;
	uint8_t *buf;
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	pd = uobj_get(c->f, UOBJ_PD, cmd.pd_handle);
	if (!pd)
		return -EINVAL;
	/* pvrdma_create_srq */
	if (cmd.max_wr > sim_dev_max_srq_wr(dev) ||
	    cmd.max_sge > SIM_MAX_SRQ_SGE)
		return -EINVAL;
	ret = udata_in(c, &ucmd, sizeof(ucmd));
	if (ret)
		return ret;
	ret = uverbs_user_range_ok(ucmd.buf_addr, ucmd.buf_size);
	if (ret)
		return ret;
	if (((uint64_t)ucmd.buf_size + SIM_PAGE_SIZE - 1) / SIM_PAGE_SIZE >
	    SIM_PAGE_DIR_MAX_PAGES)
		return -EINVAL;
	/* The device: the limit must be below the queue's size, the buffer
	 * must hold the state page and the WQEs. */
	if (cmd.srq_limit > cmd.max_wr)
		return -EINVAL;
	n = sim_roundup_pow2(cmd.max_wr ? cmd.max_wr : 1);
	sz = sim_roundup_pow2((uint32_t)(sizeof(struct pvrdma_rq_wqe_hdr) +
					 sizeof(struct pvrdma_sge) *
					 (cmd.max_sge ? cmd.max_sge : 1)));
	if ((uint64_t)ucmd.buf_size < SIM_PAGE_SIZE + (uint64_t)n * sz)
		return -EINVAL;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return -ENOMEM;
	ring = (struct sim_pin_range){
		.addr = ucmd.buf_addr & ~(uint64_t)(SIM_PAGE_SIZE - 1),
		.len = SIM_PAGE_SIZE + (uint64_t)n * sz,
	};
	ret = sim_pin_rings(&srq->ring_pin, &ring, 1);
	if (ret)
		goto err_free;
	ret = -sim_table_alloc(&dev->srqs, SIM_FIRST_SRQN,
			       SIM_FIRST_SRQN + SIM_MAX_SRQ - 1, &next, srq,
			       &srq->srqn);
	if (ret)
		goto err_free;
	ret = uobj_add(c->f, UOBJ_SRQ, srq, &srq->handle);
	if (ret)
		goto err_dev;
	buf = srq->ring_pin.base;
	srq->user_handle = cmd.user_handle;
	srq->pd = pd;
	srq->uctx = c->f->uctx;
	srq->ring.state = (struct pvrdma_ring *)(buf + 8);	/* rx */
	srq->ring.elems = buf + SIM_PAGE_SIZE;
	srq->ring.nelems = n;
	srq->ring.elem_size = sz;
	srq->ring.max_sge = cmd.max_sge ? cmd.max_sge : 1;
	srq->max_wr = cmd.max_wr;
	srq->max_sge = cmd.max_sge;
	srq->limit = cmd.srq_limit;

	resp.srq_handle = srq->handle;
	resp.max_wr = cmd.max_wr;
	resp.max_sge = cmd.max_sge;
	resp.srqn = 0;		/* only XRC SRQs report their number here */
	uresp.srqn = srq->srqn;
	/* The driver's udata copy comes first (EINVAL when it faults), then
	 * uverbs' response (EFAULT); either failure destroys the SRQ. */
	ret = udata_out(c, &uresp, sizeof(uresp)) ? -EINVAL : 0;
	if (!ret)
		ret = uverbs_response(c, &resp, sizeof(resp));
	if (ret)
		goto err_uobj;
	pd->refs++;
	return 0;

err_uobj:
	uobj_del(c->f, srq->handle);
err_dev:
	sim_table_del(&dev->srqs, srq->srqn);
err_free:
	sim_unpin(&srq->ring_pin);
	free(srq);
	return ret;
}

int uverbs_modify_srq(struct uverbs_call *c)
{
	struct ib_uverbs_modify_srq cmd;
	struct sim_srq *srq;
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	srq = uobj_get(c->f, UOBJ_SRQ, cmd.srq_handle);
	if (!srq)
		return -EINVAL;
	/* pvrdma_modify_srq: only the limit can be set, and it must be;
	 * a new max_wr alongside is ignored (no resizing). */
	if (!(cmd.attr_mask & IBV_SRQ_LIMIT))
		return -EINVAL;
	if (cmd.srq_limit > srq->max_wr)
		return -EINVAL;
	srq->limit = cmd.srq_limit;
	sim_device->srq_modified(srq);
	return 0;
}

/* QUERY_SRQ's response (zeroed by the caller). */
void uverbs_srq_query(const void *obj, void *response)
{
	struct ib_uverbs_query_srq_resp *resp = response;
	const struct sim_srq *srq = obj;

	resp->max_wr = srq->max_wr;
	resp->max_sge = srq->max_sge;
	resp->srq_limit = srq->limit;
}

void uverbs_srq_free(struct sim_file *f, void *obj)
{
	struct sim_srq *srq = obj;

	sim_table_del(&f->dev->srqs, srq->srqn);
	srq->pd->refs--;
	sim_unpin(&srq->ring_pin);
	free(srq);
}

/* DESTROY_SRQ's response: the async events the application got. */
void uverbs_srq_report(struct sim_file *f, void *obj, void *response)
{
	struct ib_uverbs_destroy_srq_resp *resp = response;
	struct sim_srq *srq = obj;

	srq->async_events_reported -=
		sim_event_async_reclaim(f, srq->user_handle);
	resp->events_reported = srq->async_events_reported;
}
