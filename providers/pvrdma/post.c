// SPDX-License-Identifier: BSD-2-Clause
/*
 * The fast path: post_send, post_recv, post_srq_recv.
 *
 * No syscall, no allocation, no division. Per call: take the queue's
 * spinlock (none under a thread domain), check and encode WRs into free
 * slots (inline data copied into the slot's bounce buffer), then publish
 * the new producer index once with a release store and ring ONE doorbell
 * for the whole list. A bad WR stops the list: the good prefix before it is
 * posted (and rung), *bad_wr names the bad one, and nothing of it or after
 * it reaches the ring.
 */
#include <errno.h>

#include "pvrdma.h"

static inline void *wq_slot(const struct pvrdma_wq *wq, uint32_t idx)
{
	return wq->wqes +
	       ((size_t)pvrdma_ring_slot(idx, wq->wqe_cnt) << wq->wqe_shift);
}

/* Publishes [start, tail) and tells the device. Lock held. */
static inline void wq_publish(struct pvrdma_wq *wq, uint32_t start,
			      uint32_t tail)
{
	pvrdma_ring_store_release(&wq->ring->prod_tail, tail);
	pvrdma_ring_doorbell(wq->doorbell, wq->doorbell_value);
	pvrdma_stat_add(&wq->stats.posts, 1);	/* = doorbells */
	pvrdma_stat_add(&wq->stats.wqes,
			pvrdma_ring_used(tail, start, wq->wqe_cnt));
}

void pvrdma_wq_publish(struct pvrdma_wq *wq, uint32_t start, uint32_t tail)
{
	wq_publish(wq, start, tail);
}

int pvrdma_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr)
{
	struct pvrdma_qp *qp = to_pqp(ibqp);
	struct pvrdma_wq *sq = &qp->sq;
	uint32_t tail, head, start;
	int ret = 0;

	/* Before RTS the device would only flush; refuse up front. */
	switch (ibqp->state) {
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		*bad_wr = wr;
		return EINVAL;
	default:
		break;
	}

	pvrdma_wq_lock(sq);
	tail = pvrdma_ring_load_own(&sq->ring->prod_tail);
	head = pvrdma_ring_load_acquire(&sq->ring->cons_head);
	if (!pvrdma_ring_idx_valid(tail, sq->wqe_cnt) ||
	    !pvrdma_ring_idx_valid(head, sq->wqe_cnt)) {
		ret = EIO;		/* ring state corrupted */
		*bad_wr = wr;
		goto out;
	}
	start = tail;

	for (; wr; wr = wr->next) {
		ret = pvrdma_check_send_wr(qp, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
		if (pvrdma_ring_full(tail, head, sq->wqe_cnt)) {
			/* the device may have made room meanwhile */
			head = pvrdma_ring_load_acquire(&sq->ring->cons_head);
			if (pvrdma_ring_full(tail, head, sq->wqe_cnt)) {
				ret = ENOMEM;
				*bad_wr = wr;
				break;
			}
		}
		pvrdma_encode_send_wqe(wq_slot(sq, tail), ibqp->qp_type, wr);
		if (wr->send_flags & IBV_SEND_INLINE) {
			uint32_t slot = pvrdma_ring_slot(tail, sq->wqe_cnt);
			struct pvrdma_sq_wqe_hdr *hdr = wq_slot(sq, tail);

			/* no slots: max_inline_data 0, the WR is empty */
			if (qp->inl.slots)
				pvrdma_encode_inline(hdr,
						     pvrdma_inline_slot(qp, slot),
						     qp->inl.lkey, wr->sg_list,
						     wr->num_sge);
			else
				hdr->num_sge = 0;
			pvrdma_stat_add(&sq->stats.inline_wqes, 1);
		}
		tail = pvrdma_ring_next(tail, sq->wqe_cnt);
	}

	if (tail != start)
		wq_publish(sq, start, tail);
out:
	pvrdma_wq_unlock(sq);
	return ret;
}

/* Shared by a QP's own RQ and an SRQ. */
int pvrdma_wq_post_recv(struct pvrdma_wq *rq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	uint32_t tail, head, start;
	int ret = 0;

	pvrdma_wq_lock(rq);
	tail = pvrdma_ring_load_own(&rq->ring->prod_tail);
	head = pvrdma_ring_load_acquire(&rq->ring->cons_head);
	if (!pvrdma_ring_idx_valid(tail, rq->wqe_cnt) ||
	    !pvrdma_ring_idx_valid(head, rq->wqe_cnt)) {
		ret = EIO;
		*bad_wr = wr;
		goto out;
	}
	start = tail;

	for (; wr; wr = wr->next) {
		ret = pvrdma_check_recv_wr(rq, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
		if (pvrdma_ring_full(tail, head, rq->wqe_cnt)) {
			head = pvrdma_ring_load_acquire(&rq->ring->cons_head);
			if (pvrdma_ring_full(tail, head, rq->wqe_cnt)) {
				ret = ENOMEM;
				*bad_wr = wr;
				break;
			}
		}
		pvrdma_encode_recv_wqe(wq_slot(rq, tail), wr);
		tail = pvrdma_ring_next(tail, rq->wqe_cnt);
	}

	if (tail != start)
		wq_publish(rq, start, tail);
out:
	pvrdma_wq_unlock(rq);
	return ret;
}

int pvrdma_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr)
{
	struct pvrdma_qp *qp = to_pqp(ibqp);

	/* Receives go to the SRQ; in RESET the device ignores the ring. */
	if (qp->srq || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	return pvrdma_wq_post_recv(&qp->rq, wr, bad_wr);
}

int pvrdma_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr)
{
	return pvrdma_wq_post_recv(&to_psrq(ibsrq)->rq, wr, bad_wr);
}

/* Back to empty (after modify to RESET). */
void pvrdma_wq_reset(struct pvrdma_wq *wq)
{
	pvrdma_wq_lock(wq);
	wq->ring->cons_head = 0;
	pvrdma_ring_store_release(&wq->ring->prod_tail, 0);
	pvrdma_wq_unlock(wq);
}
