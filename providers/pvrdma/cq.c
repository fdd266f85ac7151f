// SPDX-License-Identifier: BSD-2-Clause
/*
 * Completion queues. Buffer: one ring-state page (its rx ring: the device
 * produces, we consume) followed by the 64-byte CQEs.
 *
 * Doorbell economy (each doorbell is a trapped store: a VM exit on ESXi):
 *
 * POLL doorbells. The device writes CQEs on its own; POLL only asks it to
 * look at the physical HCA now. Upstream rings it on every poll call, one
 * VM exit per spin of a busy-polling loop (measured on pvrdma-sim: ~890
 * per message in ib_write_lat). We ring it only after a run of
 * PVRDMA_CQ_POLL_DOORBELL consecutive empty polls (N, default 4096, some
 * microseconds of spinning; 0 = never), then once every N/2 more until a
 * poll finds a completion: a short wait costs no exit at all, a long one
 * one exit per N/2 polls of a thread that has nothing else to do. We keep
 * this nudge because the ABI defines POLL for a backend that may defer
 * moving completions, and the kernel driver rings it on every poll: on a
 * device that relied on it a waiter must not stall forever. And it lets a
 * backend that shares the host's cores with the poller do its work on the
 * polling thread, instead of on another that the spinning one keeps from
 * a core: on pvrdma-sim (2 cores), 64 KiB ib_write_bw across two hosts
 * ran 22% faster with one every 2048 polls of a long wait than with the
 * doubling back-off it had before (4 alternating runs each).
 *
 * ARM doorbells. An armed CQ stays armed until the device raises its
 * event, which it does when it writes a CQE the arm covers; the
 * application may read that event much later (ibv_get_cq_event, our
 * cq_event hook), or never. So a request for notification needs no
 * doorbell only while the CQ is armed with at least the same scope and
 * the device has written no CQE since that ARM was rung: then it cannot
 * have raised the event. "No CQE since" is the device's prod_tail as it
 * was just before the ARM doorbell, and no poll found a CQE since (a
 * prod_tail back at the same index after 2 * cqe_cnt writes took polls).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/pvrdmadv.h>

#include "cqe.h"

/* Shared by create_cq and create_cq_ex. pd: a parent domain or NULL. */
static struct pvrdma_cq *cq_create(struct ibv_context *context, int cqe,
				   struct ibv_comp_channel *channel,
				   int comp_vector, struct ibv_pd *pd)
{
	struct pvrdma_context *ctx = to_pctx(context);
	size_t page = to_pdev(context->device)->page_size;
	struct pvrdma_cmd_create_cq cmd = {};
	struct pvrdma_cmd_create_cq_resp resp = {};
	struct pvrdma_cq *cq;
	uint32_t cnt;
	int ret;

	if (cqe < 1 || (uint32_t)cqe > ctx->limits.max_cqe) {
		errno = EINVAL;
		return NULL;
	}
	cnt = (uint32_t)roundup_pow_of_two((uint32_t)cqe);
	if (cnt > ctx->limits.max_cqe) {
		errno = EINVAL;
		return NULL;
	}

	cq = pvrdma_calloc_aligned(_Alignof(struct pvrdma_cq), sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = pvrdma_lock_init(&cq->lock, pvrdma_pd_td(pd) != NULL);
	if (ret)
		goto err_free;

	cq->cqe_cnt = cnt;
	cq->idx_mask = 2 * cnt - 1;
	ret = pvrdma_buf_alloc(&cq->buf, pd ? to_ppd(pd) : NULL,
			       page + align((size_t)cnt *
						   sizeof(*cq->cqes), page),
			       page, PVRDMADV_RES_TYPE_CQ);
	if (ret)
		goto err_lock;
	cq->ring = &((struct pvrdma_ring_state *)cq->buf.addr)->rx;
	cq->cqes = (struct pvrdma_cqe *)((uint8_t *)cq->buf.addr + page);
	cq->ctx = ctx;
	cq->doorbell = (uint32_t *)((uint8_t *)ctx->uar +
					     PVRDMA_UAR_CQ_OFFSET);
	pvrdma_cq_init_fast(cq);

	cmd.drv_payload.buf_addr = (uintptr_t)cq->buf.addr;
	cmd.drv_payload.buf_size = (uint32_t)cq->buf.size;
	ret = ibv_cmd_create_cq(context, (int)cnt, channel, comp_vector,
				&cq->ibv_cq, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_buf;
	cq->cqn = resp.drv_payload.cqn;
	pvrdma_track_cq(ctx, cq);
	return cq;

err_buf:
	pvrdma_buf_free(&cq->buf);
err_lock:
	pvrdma_lock_destroy(&cq->lock);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

struct ibv_cq *pvrdma_create_cq(struct ibv_context *context, int cqe,
				struct ibv_comp_channel *channel,
				int comp_vector)
{
	struct pvrdma_cq *cq = cq_create(context, cqe, channel, comp_vector,
					 NULL);

	return cq ? &cq->ibv_cq : NULL;
}

struct ibv_cq_ex *pvrdma_create_cq_ex(struct ibv_context *context,
				      struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_pd *pd = NULL;
	struct pvrdma_cq *cq;
	int ret;

	if (!attr) {
		errno = EINVAL;
		return NULL;
	}
	ret = pvrdma_cq_ex_check(attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		pd = attr->parent_domain;
		/* only a parent domain of this context is meaningful here */
		if (!pd || pd->context != context || !to_ppd(pd)->protection) {
			errno = EINVAL;
			return NULL;
		}
	}
	if (attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	cq = cq_create(context, (int)attr->cqe, attr->channel,
		       (int)attr->comp_vector, pd);
	if (!cq)
		return NULL;
	pvrdma_cq_ex_init_ops(cq, attr->wc_flags);
	return &cq->ibv_cq_ex;
}

int pvrdma_destroy_cq(struct ibv_cq *ibcq)
{
	struct pvrdma_cq *cq = to_pcq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;	/* e.g. EBUSY: QPs still use it */
	pvrdma_untrack_cq(cq->ctx, cq);
	pvrdma_buf_free(&cq->buf);
	pvrdma_lock_destroy(&cq->lock);
	free(cq);
	return 0;
}

/*
 * A run of empty polls is told apart by the counters alone, so that a
 * poll that finds completions resets nothing: the run began at the first
 * empty poll after found_polls last moved (run_mark), and the poll whose
 * empty_polls count is db_at rings POLL. The empty path only compares;
 * what happens at the first poll of a run and at a doorbell is here, out
 * of line. empty: counters.empty_polls, this poll counted. Lock held.
 */
static void empty_run_event(struct pvrdma_cq *cq, uint64_t empty)
{
	uint64_t found = pvrdma_stat_read(&cq->counters.found_polls);
	uint32_t interval = cq->ctx->cq_poll_db_interval;

	if (found != cq->run_mark) {	/* first empty poll of a run */
		cq->run_mark = found;
		cq->run_start = empty - 1;
		cq->db_at = interval ? cq->run_start + interval : 0;
	}
	if (empty != cq->db_at || !cq->db_at)
		return;
	/* the next one N/2 polls on (64 bits: cannot wrap in practice) */
	cq->db_at = empty + (interval > 1 ? interval / 2 : 1);
	pvrdma_ring_doorbell(cq->doorbell, cq->cqn | PVRDMA_DB_CQ_POLL);
	pvrdma_stat_add(&cq->counters.db_poll, 1);
}

/* Counts an empty poll; true if it begins a run or rings POLL
 * (empty_run_event's business). Lock held. */
static inline __attribute__((always_inline)) bool
empty_poll_count(struct pvrdma_cq *cq, uint64_t *empty)
{
	*empty = pvrdma_stat_read(&cq->counters.empty_polls) + 1;
	__atomic_store_n(&cq->counters.empty_polls, *empty, __ATOMIC_RELAXED);
	return pvrdma_stat_read(&cq->counters.found_polls) != cq->run_mark ||
	       *empty == cq->db_at;
}

/* An empty poll. CQ lock held. */
void pvrdma_cq_empty_poll(struct pvrdma_cq *cq)
{
	uint64_t empty;

	if (empty_poll_count(cq, &empty))
		empty_run_event(cq, empty);
}

/* The ends of poll_cq that are not the common case, as tail calls from it
 * (so that it calls nothing and saves no registers). Like cq->poll they
 * take the verbs object, the pointer poll_cq was given, so handing over
 * needs no pointer arithmetic. Lock held; they let go of it. */
static int __attribute__((noinline)) poll_empty_event(struct ibv_cq *ibcq,
						      uint64_t empty)
{
	struct pvrdma_cq *cq = to_pcq(ibcq);

	empty_run_event(cq, empty);
	pvrdma_cq_unlock(cq);
	return 0;
}

/*
 * poll_cq for any CQE: mapped fields, CQEs of no QP (dropped), indices
 * that cannot be (EIO). The fast path hands over here, as a tail call,
 * when a CQE is not a plain one; it has changed nothing shared yet, so
 * this starts over from cons_head. Lock held; lets go of it.
 */
static int __attribute__((noinline))
poll_cq_general(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct pvrdma_cq *cq = to_pcq(ibcq);
	uint32_t n = cq->cqe_cnt;
	uint32_t head = pvrdma_ring_load_own(&cq->ring->cons_head);
	uint32_t tail = pvrdma_ring_load_acquire(&cq->ring->prod_tail);
	int polled = 0;

	if (!pvrdma_ring_idx_valid(head, n) ||
	    !pvrdma_ring_idx_valid(tail, n)) {
		pvrdma_cq_unlock(cq);
		return -EIO;	/* not indices the device can have written */
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
		pvrdma_cqe_decode(cqe, qp->ibv_qp.qp_num, &wc[polled++]);
	}
	/* release: the device may reuse the slots once it sees this */
	pvrdma_ring_store_release(&cq->ring->cons_head, head);
	if (polled) {
		pvrdma_stat_add(&cq->counters.found_polls, 1);
		pvrdma_stat_add(&cq->counters.cqes, (uint64_t)polled);
	} else {
		pvrdma_cq_empty_poll(cq);	/* only CQEs of no QP */
	}
	pvrdma_cq_unlock(cq);
	return polled;
}

/*
 * The QP of a CQE, by one masked index into the context's table, and the
 * CQE decoded into wc if it is a plain one (pvrdma_cqe_decode_plain).
 * False, having written part of wc, for a CQE of no QP or any other kind:
 * the caller hands the whole poll to poll_cq_general.
 */
static inline __attribute__((always_inline)) bool
poll_plain(const struct pvrdma_cq *cq, const struct pvrdma_cqe *cqe,
	   struct ibv_wc *wc)
{
	struct pvrdma_qp *qp = __atomic_load_n(
		&cq->qp_table[(uint32_t)cqe->qp & cq->qp_table_mask],
		__ATOMIC_ACQUIRE);

	return qp && pvrdma_cqe_decode_plain(cqe, qp->ibv_qp.qp_num, wc);
}

/* A poll found n CQEs, published up to new_head. Lock held; lets go. */
static inline __attribute__((always_inline)) int
poll_found(struct pvrdma_cq *cq, uint32_t new_head, uint32_t n, bool locked)
{
	/* release: the device may reuse the slots once it sees this */
	pvrdma_ring_store_release(&cq->ring->cons_head, new_head);
	pvrdma_stat_add(&cq->counters.found_polls, 1);
	pvrdma_stat_add(&cq->counters.cqes, n);
	if (locked)
		pvrdma_spin_unlock(&cq->lock);
	return (int)n;
}

/*
 * A poll with room for more than one CQE: one pass over as many as there
 * are and fit, then ONE release store of cons_head. A pass that would
 * wrap around the end of the array (once per lap of the ring) goes to
 * poll_cq_general, so the cursor needs no wrap test. The loop keeps only
 * its cursors live; the rest is read again from the CQ afterwards
 * (cons_head is ours: nobody else writes it). Lock held; lets go of it.
 */
static inline __attribute__((always_inline)) int
poll_batch(struct pvrdma_cq *cq, int num_entries, struct ibv_wc *wc,
	   uint32_t head, uint32_t tail, bool locked)
{
	const struct pvrdma_cqe *cqe;
	struct ibv_wc *out, *end;
	uint32_t n, slot;

	n = (tail - head) & cq->idx_mask;
	if (n > (uint32_t)num_entries)
		n = (uint32_t)num_entries;
	slot = head & (cq->cqe_cnt - 1);
	if (__builtin_expect(n > cq->cqe_cnt - slot, 0))
		return poll_cq_general(&cq->ibv_cq, num_entries, wc);

	cqe = &cq->cqes[slot];
	out = wc;
	end = wc + n;
	do {
		if (__builtin_expect(!poll_plain(cq, cqe, out), 0))
			return poll_cq_general(&cq->ibv_cq, num_entries, wc);
		cqe++;
	} while (++out != end);
	n = (uint32_t)(end - wc);
	head = pvrdma_ring_load_own(&cq->ring->cons_head);
	return poll_found(cq, (head + n) & cq->idx_mask, n, locked);
}

static int __attribute__((noinline))
poll_batch_locked(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc,
		  uint32_t head, uint32_t tail)
{
	return poll_batch(to_pcq(ibcq), num_entries, wc, head, tail, true);
}

static int __attribute__((noinline))
poll_batch_td(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc,
	      uint32_t head, uint32_t tail)
{
	return poll_batch(to_pcq(ibcq), num_entries, wc, head, tail, false);
}

/*
 * One acquire load of the device's index decides an empty poll, which
 * then costs a few instructions. A poll with room for one CQE (the
 * common busy-polling call) is a straight line in here: one CQE cannot
 * wrap around the array. Neither saves a register: bigger polls and
 * anything unusual are tail calls. Compiled once per lock kind (locked).
 */
static inline __attribute__((always_inline)) int
poll_cq_fast(struct pvrdma_cq *cq, int num_entries, struct ibv_wc *wc,
	     bool locked)
{
	uint32_t head, tail;
	uint64_t empty;

	/* room for none: nothing to look at (and the CQ is left as it is) */
	if (__builtin_expect(num_entries <= 0, 0))
		return num_entries ? -EINVAL : 0;

	if (locked)
		pvrdma_spin_lock(&cq->lock);
	head = pvrdma_ring_load_own(&cq->ring->cons_head);
	/* acquire: CQE contents are read only after this load */
	tail = pvrdma_ring_load_acquire(&cq->ring->prod_tail);
	if (__builtin_expect(head != tail, 1)) {
		if (__builtin_expect((head | tail) > cq->idx_mask, 0))
			return poll_cq_general(&cq->ibv_cq, num_entries, wc); /* EIO */
		if (num_entries != 1)
			return locked ? poll_batch_locked(&cq->ibv_cq,
							  num_entries, wc,
							  head, tail)
				      : poll_batch_td(&cq->ibv_cq,
						      num_entries, wc,
						      head, tail);
		if (__builtin_expect(!poll_plain(cq, &cq->cqes[head &
					(cq->cqe_cnt - 1)], wc), 0))
			return poll_cq_general(&cq->ibv_cq, num_entries, wc);
		return poll_found(cq, (head + 1) & cq->idx_mask, 1, locked);
	}
	if (__builtin_expect(empty_poll_count(cq, &empty), 0))
		return poll_empty_event(&cq->ibv_cq, empty);
	if (locked)
		pvrdma_spin_unlock(&cq->lock);
	return 0;
}

static int poll_cq_locked(struct ibv_cq *ibcq, int num_entries,
			  struct ibv_wc *wc)
{
	return poll_cq_fast(to_pcq(ibcq), num_entries, wc, true);
}

static int poll_cq_td(struct ibv_cq *ibcq, int num_entries,
		      struct ibv_wc *wc)
{
	return poll_cq_fast(to_pcq(ibcq), num_entries, wc, false);
}

int pvrdma_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	return to_pcq(ibcq)->poll(ibcq, num_entries, wc);
}

/* The per-CQ facts poll_cq decides on. Lock and context are set. */
void pvrdma_cq_init_fast(struct pvrdma_cq *cq)
{
	cq->poll = cq->lock.single_thread ? poll_cq_td : poll_cq_locked;
	cq->qp_table = cq->ctx->qp_table;
	cq->qp_table_mask = cq->ctx->qp_table_mask;
	/* no run of empty polls yet: the first one rings at interval */
	cq->run_mark = pvrdma_stat_read(&cq->counters.found_polls);
	cq->run_start = pvrdma_stat_read(&cq->counters.empty_polls);
	cq->db_at = cq->ctx->cq_poll_db_interval ?
		    cq->run_start + cq->ctx->cq_poll_db_interval : 0;
}

int pvrdma_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct pvrdma_cq *cq = to_pcq(ibcq);
	uint32_t want = solicited_only ? PVRDMA_DB_CQ_ARM_SOL :
					 PVRDMA_DB_CQ_ARM;
	uint32_t armed = __atomic_load_n(&cq->armed, __ATOMIC_ACQUIRE);
	uint32_t tail = pvrdma_ring_load_acquire(&cq->ring->prod_tail);
	uint64_t found = pvrdma_stat_read(&cq->counters.found_polls);

	/* ARM covers ARM_SOL; an event consumed since resets armed to 0 */
	if (cq->ctx->cq_arm_dedup &&
	    (armed == PVRDMA_DB_CQ_ARM || armed == want) &&
	    tail == cq->arm_tail && found == cq->arm_found_polls) {
		__atomic_add_fetch(&cq->counters.arms_skipped, 1,
				   __ATOMIC_RELAXED);
		return 0;
	}
	/* Taken before the doorbell: any CQE the device writes once armed
	 * moves them. armed is published after the doorbell, so a request
	 * that sees it finds the device armed already. */
	cq->arm_tail = tail;
	cq->arm_found_polls = found;
	pvrdma_ring_doorbell(cq->doorbell, cq->cqn | want);
	__atomic_store_n(&cq->armed, want, __ATOMIC_RELEASE);
	__atomic_add_fetch(solicited_only ? &cq->counters.db_arm_sol :
					    &cq->counters.db_arm, 1,
			   __ATOMIC_RELAXED);
	return 0;
}

/* ibv_get_cq_event read an event of this CQ: the device disarmed it. */
void pvrdma_cq_event(struct ibv_cq *ibcq)
{
	__atomic_store_n(&to_pcq(ibcq)->armed, 0, __ATOMIC_RELEASE);
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
	pvrdma_cq_lock(cq);
	pvrdma_stat_add(&cq->counters.other_sections, 1);
	pvrdma_cq_remove_qp_locked(cq, qp_handle);
	pvrdma_cq_unlock(cq);
}
