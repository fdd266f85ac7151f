// SPDX-License-Identifier: BSD-2-Clause
/*
 * Shared receive queues. Buffer (device ABI): one ring-state page (its rx
 * ring is the SRQ), then the receive WQEs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ccan/minmax.h>
#include <infiniband/pvrdmadv.h>

#include "pvrdma.h"

struct ibv_srq *pvrdma_create_srq(struct ibv_pd *pd,
				  struct ibv_srq_init_attr *attr)
{
	struct pvrdma_context *ctx = to_pctx(pd->context);
	size_t page = to_pdev(pd->context->device)->page_size;
	struct pvrdma_cmd_create_srq cmd = {};
	struct pvrdma_cmd_create_srq_resp resp = {};
	struct ibv_srq_init_attr kattr;
	struct pvrdma_srq *srq;
	uint32_t cnt, sge, wqe;
	int ret;

	/* A device without SRQs (HW v13) says so whatever the sizes asked:
	 * every limit it reports for them is 0, which would read EINVAL. */
	if (!ctx->limits.max_srq) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr || attr->attr.max_wr > ctx->limits.max_srq_wr ||
	    attr->attr.max_sge > ctx->limits.max_srq_sge ||
	    attr->attr.srq_limit > attr->attr.max_wr) {
		errno = EINVAL;
		return NULL;
	}
	cnt = (uint32_t)roundup_pow_of_two(
		max_t(uint32_t, attr->attr.max_wr, 1));
	sge = attr->attr.max_sge ? attr->attr.max_sge : 1;
	wqe = pvrdma_rq_wqe_size(sge);
	if (cnt > ctx->limits.max_srq_wr) {
		errno = EINVAL;
		return NULL;
	}

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	ret = pvrdma_buf_alloc(&srq->buf, to_ppd(pd),
			       page + align((size_t)cnt * wqe, page),
			       page, PVRDMADV_RES_TYPE_SRQ);
	if (ret)
		goto err_free;
	pvrdma_wq_init(&srq->rq,
		       &((struct pvrdma_ring_state *)srq->buf.addr)->rx,
		       (uint8_t *)srq->buf.addr + page, cnt, wqe, sge,
		       pvrdma_pd_td(pd) != NULL);

	cmd.drv_payload.buf_addr = (uintptr_t)srq->buf.addr;
	cmd.drv_payload.buf_size = (uint32_t)srq->buf.size;
	kattr = *attr;
	kattr.attr.max_wr = cnt;
	kattr.attr.max_sge = sge;
	ret = ibv_cmd_create_srq(pd, &srq->ibv_srq, &kattr, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_lock;
	srq->srqn = resp.drv_payload.srqn;
	srq->rq.doorbell = (uint32_t *)((uint8_t *)ctx->uar +
						 PVRDMA_UAR_SRQ_OFFSET);
	srq->rq.doorbell_value = (srq->srqn & PVRDMA_UAR_HANDLE_MASK) |
				 PVRDMA_DB_SRQ_RECV;
	pvrdma_track_srq(ctx, srq);
	attr->attr.max_wr = cnt;
	attr->attr.max_sge = sge;
	return &srq->ibv_srq;

err_lock:
	pvrdma_lock_destroy(&srq->rq.lock);
	pvrdma_buf_free(&srq->buf);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

int pvrdma_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		      int attr_mask)
{
	struct pvrdma_srq *srq = to_psrq(ibsrq);
	struct ibv_modify_srq cmd;

	/* the ring lives in our buffer: it cannot be resized under us */
	if (attr_mask & ~IBV_SRQ_LIMIT)
		return EINVAL;
	if ((attr_mask & IBV_SRQ_LIMIT) && attr->srq_limit > srq->rq.wqe_cnt)
		return EINVAL;
	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int pvrdma_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int pvrdma_destroy_srq(struct ibv_srq *ibsrq)
{
	struct pvrdma_srq *srq = to_psrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;	/* EBUSY while QPs use it */
	pvrdma_untrack_srq(to_pctx(ibsrq->context), srq);
	pvrdma_lock_destroy(&srq->rq.lock);
	pvrdma_buf_free(&srq->buf);
	free(srq);
	return 0;
}
