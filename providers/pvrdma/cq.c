// SPDX-License-Identifier: BSD-2-Clause
/*
 * Completion queues. Buffer: one ring-state page (its rx ring: the device
 * produces, we consume) followed by the 64-byte CQEs.
 *
 * Empty polls and the POLL doorbell: the device writes CQEs on its own;
 * the POLL doorbell is only a hint that the guest is waiting. Upstream
 * rings it on every empty poll, which costs one VM exit per spin of a
 * busy-polling loop. We ring it once every PVRDMA_CQ_POLL_DOORBELL
 * consecutive empty polls (default 64; 0 = never): a spinning application
 * still nudges the device now and then, at 1/N of the exits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pvrdma.h"

struct pvrdma_create_cq_cmd {
	struct ibv_create_cq ibv_cmd;
	struct pvrdma_create_cq drv;
};

struct pvrdma_create_cq_cmd_resp {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct pvrdma_create_cq_resp drv;
};

_Static_assert(offsetof(struct pvrdma_create_cq_cmd, drv) ==
	       8 + sizeof(struct ib_uverbs_create_cq), "create_cq udata");
_Static_assert(offsetof(struct pvrdma_create_cq_cmd_resp, drv) ==
	       sizeof(struct ib_uverbs_create_cq_resp), "create_cq resp");

struct ibv_cq *pvrdma_create_cq(struct ibv_context *context, int cqe,
				struct ibv_comp_channel *channel,
				int comp_vector)
{
	struct pvrdma_context *ctx = to_pctx(context);
	size_t page = to_pdev(context->device)->page_size;
	struct pvrdma_create_cq_cmd cmd = {};
	struct pvrdma_create_cq_cmd_resp resp = {};
	struct pvrdma_cq *cq;
	uint32_t cnt;
	int ret;

	if (cqe < 1 || (uint32_t)cqe > ctx->limits.max_cqe) {
		errno = EINVAL;
		return NULL;
	}
	cnt = pvrdma_roundup_pow2((uint32_t)cqe);
	if (cnt > ctx->limits.max_cqe) {
		errno = EINVAL;
		return NULL;
	}

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;	/* errno = ENOMEM */
	ret = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		goto err_free;

	cq->cqe_cnt = cnt;
	cq->buf_size = page + pvrdma_align((size_t)cnt * sizeof(*cq->cqes),
					   page);
	cq->buf = pvrdma_alloc_ring_buf(cq->buf_size);
	if (!cq->buf) {
		ret = errno;
		goto err_lock;
	}
	cq->ring = &((struct pvrdma_ring_state *)cq->buf)->rx;
	cq->cqes = (struct pvrdma_cqe *)((uint8_t *)cq->buf + page);
	cq->ctx = ctx;
	cq->doorbell = (volatile uint32_t *)((uint8_t *)ctx->uar +
					     PVRDMA_UAR_CQ_OFFSET);
	cq->empty_polls_left = ctx->cq_poll_db_interval;

	cmd.drv.buf_addr = (uintptr_t)cq->buf;
	cmd.drv.buf_size = (uint32_t)cq->buf_size;
	ret = ibv_cmd_create_cq(context, (int)cnt, channel, comp_vector,
				&cq->ibv_cq, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_buf;
	cq->cqn = resp.drv.cqn;
	return &cq->ibv_cq;

err_buf:
	pvrdma_free_ring_buf(cq->buf, cq->buf_size);
err_lock:
	pthread_spin_destroy(&cq->lock);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

int pvrdma_destroy_cq(struct ibv_cq *ibcq)
{
	struct pvrdma_cq *cq = to_pcq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;	/* e.g. EBUSY: QPs still use it */
	pvrdma_free_ring_buf(cq->buf, cq->buf_size);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

static void empty_poll(struct pvrdma_cq *cq)
{
	if (!cq->ctx->cq_poll_db_interval)
		return;
	if (--cq->empty_polls_left)
		return;
	cq->empty_polls_left = cq->ctx->cq_poll_db_interval;
	pvrdma_ring_doorbell(cq->doorbell, cq->cqn | PVRDMA_DB_CQ_POLL);
}

int pvrdma_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct pvrdma_cq *cq = to_pcq(ibcq);
	uint32_t head, tail, n = cq->cqe_cnt;
	int polled = 0;

	if (num_entries < 0)
		return -EINVAL;

	pthread_spin_lock(&cq->lock);
	head = pvrdma_ring_load_own(&cq->ring->cons_head);
	/* acquire: CQE contents are read only after this load */
	tail = pvrdma_ring_load_acquire(&cq->ring->prod_tail);
	if (!pvrdma_ring_idx_valid(head, n) ||
	    !pvrdma_ring_idx_valid(tail, n)) {
		pthread_spin_unlock(&cq->lock);
		return -EIO;
	}

	while (polled < num_entries && head != tail) {
		const struct pvrdma_cqe *cqe =
			&cq->cqes[pvrdma_ring_slot(head, n)];
		struct pvrdma_qp *qp = pvrdma_qp_lookup(cq->ctx, cqe->qp);

		head = pvrdma_ring_next(head, n);
		/* a CQE of no live QP of ours (cannot happen unless the
		 * device misbehaves): drop it rather than wedge the CQ */
		if (!qp)
			continue;
		pvrdma_cqe_to_wc(cqe, qp->ibv_qp.qp_num, &wc[polled++]);
	}
	/* release: the device may reuse the slots once it sees this */
	pvrdma_ring_store_release(&cq->ring->cons_head, head);

	if (polled)
		cq->empty_polls_left = cq->ctx->cq_poll_db_interval;
	else
		empty_poll(cq);
	pthread_spin_unlock(&cq->lock);
	return polled;
}

int pvrdma_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct pvrdma_cq *cq = to_pcq(ibcq);

	pvrdma_ring_doorbell(cq->doorbell, cq->cqn |
			     (solicited_only ? PVRDMA_DB_CQ_ARM_SOL :
					       PVRDMA_DB_CQ_ARM));
	return 0;
}

static bool cqe_of(const struct pvrdma_cqe *cqe, uint32_t qp_handle)
{
	return (cqe->qp & ((1u << PVRDMA_QP_HANDLE_BITS) - 1)) ==
	       (qp_handle & ((1u << PVRDMA_QP_HANDLE_BITS) - 1));
}

/*
 * Removes the CQEs of one QP (destroyed or reset), keeping the order of
 * the others. The device owns prod_tail, so the survivors are packed
 * towards the tail and cons_head moves forward past the freed slots.
 * Only [head, tail) as seen now is touched; the device may append beyond.
 * CQ lock held.
 */
void pvrdma_cq_remove_qp_locked(struct pvrdma_cq *cq, uint32_t qp_handle)
{
	uint32_t n = cq->cqe_cnt;
	uint32_t head = pvrdma_ring_load_own(&cq->ring->cons_head);
	uint32_t tail = pvrdma_ring_load_acquire(&cq->ring->prod_tail);
	uint32_t used, dst, src, i, dropped = 0;

	if (!pvrdma_ring_idx_valid(head, n) || !pvrdma_ring_idx_valid(tail, n))
		return;
	used = pvrdma_ring_used(tail, head, n);
	dst = tail;
	src = tail;
	for (i = 0; i < used; i++) {
		const struct pvrdma_cqe *c;

		src = pvrdma_ring_prev(src, n);
		c = &cq->cqes[pvrdma_ring_slot(src, n)];
		if (cqe_of(c, qp_handle)) {
			dropped++;
			continue;
		}
		dst = pvrdma_ring_prev(dst, n);
		if (dst != src)
			cq->cqes[pvrdma_ring_slot(dst, n)] = *c;
	}
	if (dropped)
		pvrdma_ring_store_release(&cq->ring->cons_head,
					  pvrdma_ring_add(head, dropped, n));
}

void pvrdma_cq_remove_qp(struct pvrdma_cq *cq, uint32_t qp_handle)
{
	pthread_spin_lock(&cq->lock);
	pvrdma_cq_remove_qp_locked(cq, qp_handle);
	pthread_spin_unlock(&cq->lock);
}
