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
 *
 * What keeps it short (each post is counted in instructions by
 * bench/fastpath.c): the producer index is our own copy, the device's
 * consumer index is read only when the ring looked full (struct
 * pvrdma_wq), a WR is checked by one bit test per rule against
 * precomputed per-QP facts and only a refused one takes the full check,
 * and the counters are one increment per call, the rest derived.
 */
#include <errno.h>

#include "wqe.h"

static inline void *wq_slot(const struct pvrdma_wq *wq, uint64_t prod)
{
	return wq->wqes +
	       ((size_t)((uint32_t)prod & (wq->wqe_cnt - 1)) << wq->wqe_shift);
}

void pvrdma_wq_init(struct pvrdma_wq *wq, struct pvrdma_ring *ring,
		    uint8_t *wqes, uint32_t cnt, uint32_t wqe_size,
		    uint32_t max_sge, bool single_thread)
{
	wq->ring = ring;
	wq->wqes = wqes;
	wq->wqe_cnt = cnt;
	wq->wqe_shift = (uint32_t)ilog32_nz(wqe_size) - 1;
	wq->max_sge = max_sge;
	wq->idx_mask = 2 * cnt - 1;
	wq->prod = 0;
	wq->room_end = cnt;
	wq->reset_skipped = 0;
	/* before the device knows the queue: both indices start at 0 (a
	 * parent domain's allocator need not hand out zeroed memory) */
	ring->prod_tail = 0;
	ring->cons_head = 0;
	pvrdma_lock_init(&wq->lock, single_thread);
}

/*
 * prod reached room_end: reads the device's consumer index. Returns 0 when
 * there is room again (room_end moved), ENOMEM when the ring is really
 * full, EIO when the index is not one the device can have written. Lock
 * held.
 */
int pvrdma_wq_refill(struct pvrdma_wq *wq, uint64_t prod)
{
	uint32_t head = pvrdma_ring_load_acquire(&wq->ring->cons_head);
	uint32_t used = ((uint32_t)prod - head) & wq->idx_mask;

	if (!pvrdma_ring_idx_valid(head, wq->wqe_cnt) || used > wq->wqe_cnt)
		return EIO;		/* ring state corrupted */
	wq->room_end = prod - used + wq->wqe_cnt;
	return used == wq->wqe_cnt ? ENOMEM : 0;
}

/* Publishes everything up to prod and tells the device. Lock held. */
static inline void wq_publish(struct pvrdma_wq *wq, uint64_t prod)
{
	__atomic_store_n(&wq->prod, prod, __ATOMIC_RELAXED);	/* stats */
	pvrdma_ring_store_release(&wq->ring->prod_tail,
				  (uint32_t)prod & wq->idx_mask);
	pvrdma_ring_doorbell(wq->doorbell, wq->doorbell_value);
	pvrdma_stat_add(&wq->counters.posts, 1);	/* = doorbells */
}

void pvrdma_wq_publish(struct pvrdma_wq *wq, uint64_t prod)
{
	wq_publish(wq, prod);
}

/* Ends a post call: publish what was built, if anything. */
static inline void wq_finish(struct pvrdma_wq *wq, uint64_t prod)
{
	if (__builtin_expect(prod != wq->prod, 1)) {
		wq_publish(wq, prod);
		pvrdma_wq_unlock(wq);
	} else {
		pvrdma_wq_unlock_idle(wq);
	}
}

/*
 * Everything post_send does, for any WR and any state of the ring: the
 * fast path hands over here at the first WR it does not take (full ring,
 * inline data, or a WR to refuse). Lock held; the WQEs from sq->prod to
 * prod are built but not published. Publishes and unlocks.
 */
static int __attribute__((noinline))
post_send_general(struct pvrdma_qp *qp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr, uint64_t prod)
{
	struct pvrdma_wq *sq = &qp->sq;
	bool ud = qp->ibv_qp.qp_type == IBV_QPT_UD;
	int ret = 0;

	for (; wr; wr = wr->next) {
		struct pvrdma_sq_wqe_hdr *hdr;

		/* check first: a bad WR is EINVAL even on a full ring */
		ret = pvrdma_check_send_wr(qp, wr);
		if (!ret && prod == sq->room_end)
			ret = pvrdma_wq_refill(sq, prod);
		if (ret) {
			*bad_wr = wr;
			break;
		}
		hdr = wq_slot(sq, prod);
		pvrdma_encode_send(hdr, wr, ud, wr->send_flags &
				   ~(unsigned int)IBV_SEND_INLINE);
		if (wr->send_flags & IBV_SEND_INLINE) {
			/* no slots: max_inline_data 0, the WR is empty */
			if (qp->inl.slots)
				pvrdma_encode_inline(hdr, pvrdma_inline_slot(qp,
						(uint32_t)prod &
						(sq->wqe_cnt - 1)),
						qp->inl.lkey, wr->sg_list,
						wr->num_sge);
			else
				hdr->num_sge = 0;
			pvrdma_stat_add(&sq->counters.inline_wqes, 1);
		}
		prod++;
	}
	wq_finish(sq, prod);
	return ret;
}

/*
 * post_send, compiled once per QP type (ud) and lock kind (locked) so that
 * neither is tested at run time. It takes plain WRs (see
 * pvrdma_send_wr_plain) while the ring has room as far as it knows, and
 * passes anything else to post_send_general as a tail call: no call is
 * made on this path, so it needs no callee-saved registers.
 */
static inline __attribute__((always_inline)) int
post_send_fast(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
	       struct ibv_send_wr **bad_wr, bool ud, bool locked)
{
	struct pvrdma_qp *qp = to_pqp(ibqp);
	struct pvrdma_wq *sq = &qp->sq;
	uint64_t prod;

	/* Before RTS the device would only flush; refuse up front. */
	if (__builtin_expect((unsigned int)ibqp->state < IBV_QPS_RTS, 0)) {
		*bad_wr = wr;
		return EINVAL;
	}
	if (locked)
		pvrdma_spin_lock(&sq->lock);
	prod = sq->prod;
	if (__builtin_expect(!wr, 0))
		return post_send_general(qp, wr, bad_wr, prod);
	do {
		if (__builtin_expect(prod == sq->room_end ||
				     !pvrdma_send_wr_plain(qp, wr, ud), 0))
			return post_send_general(qp, wr, bad_wr, prod);
		pvrdma_encode_send(wq_slot(sq, prod), wr, ud, wr->send_flags);
		prod++;
		wr = wr->next;
	} while (wr);
	wq_publish(sq, prod);
	if (locked)
		pvrdma_spin_unlock(&sq->lock);
	return 0;
}

static int post_send_rc(struct ibv_qp *qp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad_wr)
{
	return post_send_fast(qp, wr, bad_wr, false, true);
}

static int post_send_rc_td(struct ibv_qp *qp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr)
{
	return post_send_fast(qp, wr, bad_wr, false, false);
}

static int post_send_ud(struct ibv_qp *qp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad_wr)
{
	return post_send_fast(qp, wr, bad_wr, true, true);
}

static int post_send_ud_td(struct ibv_qp *qp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr)
{
	return post_send_fast(qp, wr, bad_wr, true, false);
}

int pvrdma_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr)
{
	return to_pqp(ibqp)->post_send(ibqp, wr, bad_wr);
}

/* Shared by a QP's own RQ and an SRQ. */
static inline int wq_post_recv(struct pvrdma_wq *rq, struct ibv_recv_wr *wr,
			       struct ibv_recv_wr **bad_wr)
{
	uint64_t prod;
	int ret = 0;

	pvrdma_wq_lock(rq);
	prod = rq->prod;
	for (; wr; wr = wr->next) {
		if (__builtin_expect(!pvrdma_recv_wr_ok(rq, wr), 0)) {
			ret = pvrdma_check_recv_wr(rq, wr);
			*bad_wr = wr;
			break;
		}
		if (__builtin_expect(prod == rq->room_end, 0)) {
			ret = pvrdma_wq_refill(rq, prod);
			if (ret) {
				*bad_wr = wr;
				break;
			}
		}
		pvrdma_encode_recv(wq_slot(rq, prod), wr);
		prod++;
	}
	wq_finish(rq, prod);
	return ret;
}

int pvrdma_wq_post_recv(struct pvrdma_wq *rq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	return wq_post_recv(rq, wr, bad_wr);
}

int pvrdma_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr)
{
	struct pvrdma_qp *qp = to_pqp(ibqp);

	/* Receives go to the SRQ; in RESET the device ignores the ring. */
	if (__builtin_expect(qp->srq || ibqp->state == IBV_QPS_RESET, 0)) {
		*bad_wr = wr;
		return EINVAL;
	}
	return wq_post_recv(&qp->rq, wr, bad_wr);
}

int pvrdma_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr)
{
	return wq_post_recv(&to_psrq(ibsrq)->rq, wr, bad_wr);
}

/*
 * Back to empty (after modify to RESET). Both indices go to 0; our count
 * moves on to the next multiple of the index space, so that it keeps
 * counting WQEs (the skipped part is remembered) and prod_tail = 0.
 */
void pvrdma_wq_reset(struct pvrdma_wq *wq)
{
	uint64_t skip;

	pvrdma_wq_lock(wq);
	skip = -wq->prod & wq->idx_mask;
	__atomic_store_n(&wq->reset_skipped, wq->reset_skipped + skip,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&wq->prod, wq->prod + skip, __ATOMIC_RELAXED);
	wq->room_end = wq->prod + wq->wqe_cnt;
	wq->ring->cons_head = 0;
	pvrdma_ring_store_release(&wq->ring->prod_tail, 0);
	pvrdma_wq_unlock_idle(wq);
}

/* The per-QP facts the fast path decides on. Type, atomic capability and
 * the SQ lock are set. */
void pvrdma_qp_init_fast(struct pvrdma_qp *qp)
{
	bool ud = qp->ibv_qp.qp_type == IBV_QPT_UD;

	qp->send_opcodes = pvrdma_send_opcodes(qp->ibv_qp.qp_type,
					       qp->atomic_cap);
	if (qp->sq.lock.single_thread)
		qp->post_send = ud ? post_send_ud_td : post_send_rc_td;
	else
		qp->post_send = ud ? post_send_ud : post_send_rc;
}
