// SPDX-License-Identifier: BSD-2-Clause
/*
 * Completion queues: uverbs CREATE_CQ/EX_CREATE_CQ/DESTROY_CQ and what
 * pvrdma_create_cq does with the user's ring buffer (one page of ring
 * state, the "rx" ring at offset 8, then the CQEs), plus the two
 * kernel-side CQ commands the application may still send.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uverbs_internal.h"

static int create_cq(struct uverbs_call *c, uint64_t user_handle,
		     uint32_t cqe, uint32_t comp_vector, int32_t comp_channel,
		     uint32_t flags, struct ib_uverbs_ex_create_cq_resp *resp)
{
	struct sim_dev *dev = c->f->dev;
	struct pvrdma_create_cq ucmd;
	struct pvrdma_create_cq_resp uresp = { 0 };
	struct uverbs_channel *chan = NULL;
	struct sim_pin_range ring;
	struct sim_cq *cq;
	uint32_t entries, next = SIM_FIRST_CQN;
	uint8_t *buf;
	int ret;

	if (comp_vector >= 1)
		return -EINVAL;
	if (comp_channel >= 0) {
		chan = uverbs_channel_find(c->f, comp_channel);
		if (!chan)
			return -EBADF;
	}
	/* pvrdma_create_cq */
	if (flags)
		return -EOPNOTSUPP;
	if (cqe < 1 || cqe > sim_dev_max_cqe(dev))
		return -EINVAL;
	entries = sim_roundup_pow2(cqe);
	if (entries > sim_dev_max_cqe(dev))
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
	/* The device lays the ring out on the pages it was given: the state
	 * page, then entries CQEs. A shorter buffer cannot hold them. */
	if ((uint64_t)ucmd.buf_size <
	    SIM_PAGE_SIZE + (uint64_t)entries * sizeof(struct pvrdma_cqe))
		return -EINVAL;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	/* The device's page directory: the state page, then the CQEs,
	 * from the first page of the buffer on. */
	ring = (struct sim_pin_range){
		.addr = ucmd.buf_addr & ~(uint64_t)(SIM_PAGE_SIZE - 1),
		.len = SIM_PAGE_SIZE +
		       (uint64_t)entries * sizeof(struct pvrdma_cqe),
	};
	ret = sim_pin_rings(&cq->ring_pin, &ring, 1);
	if (ret)
		goto err_free;
	ret = -sim_table_alloc(&dev->cqs, SIM_FIRST_CQN,
			       SIM_FIRST_CQN + SIM_MAX_CQ - 1, &next, cq,
			       &cq->cqn);
	if (ret)
		goto err_free;
	ret = uobj_add(c->f, UOBJ_CQ, cq, &cq->handle);
	if (ret)
		goto err_dev;
	buf = cq->ring_pin.base;
	cq->user_handle = user_handle;
	cq->uctx = c->f->uctx;
	cq->channel = chan ? &chan->ch : NULL;
	cq->ring.state = (struct pvrdma_ring *)(buf + 8);	/* rx */
	cq->ring.elems = buf + SIM_PAGE_SIZE;
	cq->ring.nelems = entries;
	cq->ring.elem_size = sizeof(struct pvrdma_cqe);

	memset(resp, 0, sizeof(*resp));
	resp->base.cq_handle = cq->handle;
	resp->base.cqe = entries;
	resp->response_length = c->outlen < sizeof(*resp) ?
		(uint32_t)c->outlen : (uint32_t)sizeof(*resp);
	uresp.cqn = cq->cqn;
	/* pvrdma_create_cq: a udata copy that fails destroys the CQ and
	 * answers EINVAL; the core response is uverbs' (EFAULT). */
	ret = udata_out(c, &uresp, sizeof(uresp)) ? -EINVAL : 0;
	if (!ret)
		ret = uverbs_response(c, resp, sizeof(*resp));
	if (ret)
		goto err_uobj;
	if (chan)
		chan->ch.refs++;
	return 0;

err_uobj:
	uobj_del(c->f, cq->handle);
err_dev:
	sim_table_del(&dev->cqs, cq->cqn);
err_free:
	sim_unpin(&cq->ring_pin);
	free(cq);
	return ret;
}

int uverbs_create_cq(struct uverbs_call *c)
{
	struct ib_uverbs_create_cq cmd;
	struct ib_uverbs_ex_create_cq_resp resp;
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	return create_cq(c, cmd.user_handle, cmd.cqe, cmd.comp_vector,
			 cmd.comp_channel, 0, &resp);
}

int uverbs_ex_create_cq(struct uverbs_call *c)
{
	struct ib_uverbs_ex_create_cq cmd;
	struct ib_uverbs_ex_create_cq_resp resp;
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (cmd.comp_mask || cmd.reserved)
		return -EINVAL;
	return create_cq(c, cmd.user_handle, cmd.cqe, cmd.comp_vector,
			 cmd.comp_channel, cmd.flags, &resp);
}

void uverbs_cq_free(struct sim_file *f, void *obj)
{
	struct sim_cq *cq = obj;

	sim_device->cq_destroy(cq);
	sim_table_del(&f->dev->cqs, cq->cqn);
	if (cq->channel)
		cq->channel->refs--;
	sim_unpin(&cq->ring_pin);
	free(cq);
}

/* DESTROY_CQ's response: the events the application got. Events still
 * unread are dropped with the CQ; the counts say how many the application
 * did get, which libibverbs waits to ack. */
void uverbs_cq_report(struct sim_file *f, void *obj, void *response)
{
	struct ib_uverbs_destroy_cq_resp *resp = response;
	struct sim_cq *cq = obj;

	if (sim_device->cq_events_sync)
		sim_device->cq_events_sync(cq);
	if (cq->channel) {
		struct uverbs_channel *chan = (struct uverbs_channel *)
			((char *)cq->channel -
			 offsetof(struct uverbs_channel, ch));

		cq->comp_events_reported -=
			sim_event_comp_reclaim(chan, cq->user_handle);
	}
	cq->async_events_reported -=
		sim_event_async_reclaim(f, cq->user_handle);
	resp->comp_events_reported = cq->comp_events_reported;
	resp->async_events_reported = cq->async_events_reported;
}

/*
 * POLL_CQ and REQ_NOTIFY_CQ are for CQs the kernel polls. vmw_pvrdma
 * implements both, but on a user CQ the kernel has no ring of its own:
 * arming rings the CQ doorbell (we arm the CQ as the device would), and
 * a kernel poll sees nothing, so no completion is returned.
 */
int uverbs_poll_cq(struct uverbs_call *c)
{
	struct ib_uverbs_poll_cq cmd;
	struct ib_uverbs_poll_cq_resp resp = { 0 };
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (!uobj_get(c->f, UOBJ_CQ, cmd.cq_handle))
		return -EINVAL;
	return uverbs_response(c, &resp, sizeof(resp));
}

int uverbs_req_notify_cq(struct uverbs_call *c)
{
	struct ib_uverbs_req_notify_cq cmd;
	struct sim_cq *cq;
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	cq = uobj_get(c->f, UOBJ_CQ, cmd.cq_handle);
	if (!cq)
		return -EINVAL;
	if (cmd.solicited_only) {
		if (cq->armed != SIM_CQ_ARM_NEXT)
			cq->armed = SIM_CQ_ARM_SOLICITED;
	} else {
		cq->armed = SIM_CQ_ARM_NEXT;
	}
	if (sim_device->cq_armed)
		sim_device->cq_armed(cq);
	return 0;
}
