/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * In-memory stand-ins for what the kernel and the device would set up, so
 * the provider's fast path runs in a unit test: rings in ordinary memory,
 * doorbell registers that are plain variables.
 */
#ifndef PVRDMA_TEST_FAKE_QUEUES_H
#define PVRDMA_TEST_FAKE_QUEUES_H

#include <stdlib.h>
#include <string.h>

#include "pvrdma.h"

#define FAKE_FILL 0xa5		/* untouched WQE bytes */

struct fake_qp {
	struct pvrdma_qp qp;
	struct pvrdma_ring_state rs;
	uint32_t doorbell;		/* the "UAR" register */
	uint8_t *sq_mem, *rq_mem;
	size_t sq_bytes, rq_bytes;
};

static inline void fake_wq(struct pvrdma_wq *wq, struct pvrdma_ring *ring,
			   uint8_t **mem, size_t *bytes, uint32_t cnt,
			   uint32_t wqe_size, uint32_t max_sge,
			   uint32_t *db, uint32_t db_value)
{
	*bytes = (size_t)cnt * wqe_size;
	*mem = aligned_alloc(64, *bytes);
	memset(*mem, FAKE_FILL, *bytes);
	pvrdma_wq_init(wq, ring, *mem, cnt, wqe_size, max_sge, false);
	wq->doorbell = db;
	wq->doorbell_value = db_value;
}

static inline struct fake_qp *fake_qp_new(enum ibv_qp_type type,
					  uint32_t cnt, uint32_t max_sge)
{
	struct fake_qp *f = calloc(1, sizeof(*f));
	const uint32_t handle = 0x42;

	f->qp.ibv_qp.qp_type = type;
	f->qp.ibv_qp.state = IBV_QPS_RTS;
	f->qp.ibv_qp.qp_num = 0x1234;
	f->qp.qp_handle = handle;
	f->qp.atomic_cap = IBV_ATOMIC_HCA;
	fake_wq(&f->qp.sq, &f->rs.tx, &f->sq_mem, &f->sq_bytes, cnt,
		pvrdma_sq_wqe_size(max_sge), max_sge, &f->doorbell,
		handle | PVRDMA_DB_QP_SEND);
	fake_wq(&f->qp.rq, &f->rs.rx, &f->rq_mem, &f->rq_bytes, cnt,
		pvrdma_rq_wqe_size(max_sge), max_sge, &f->doorbell,
		handle | PVRDMA_DB_QP_RECV);
	pvrdma_qp_init_fast(&f->qp);
	return f;
}

/*
 * Moves the SQ on by n WQEs the device has consumed, the way a real one
 * gets there (the producer index is the provider's own: it cannot be
 * set from outside).
 */
static inline void fake_sq_advance(struct fake_qp *f, int n)
{
	struct ibv_sge sge = { .addr = 0x1000, .length = 1, .lkey = 1 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	int i;

	for (i = 0; i < n; i++) {
		if (pvrdma_post_send(&f->qp.ibv_qp, &wr, &bad))
			abort();
		f->rs.tx.cons_head = f->rs.tx.prod_tail;
	}
	f->doorbell = 0;
}

/* Makes the queues of f work as under a thread domain: no lock. */
static inline void fake_qp_single_thread(struct fake_qp *f)
{
	f->qp.sq.lock.single_thread = true;
	f->qp.rq.lock.single_thread = true;
	pvrdma_qp_init_fast(&f->qp);
}

static inline struct pvrdma_wq_stats fake_wq_stats(const struct pvrdma_wq *wq)
{
	struct pvrdma_wq_stats s;

	pvrdma_wq_read_stats(wq, &s);
	return s;
}

static inline struct pvrdma_cq_stats fake_cq_stats(const struct pvrdma_cq *cq)
{
	struct pvrdma_cq_stats s;

	pvrdma_cq_read_stats(cq, &s);
	return s;
}

static inline void fake_qp_free(struct fake_qp *f)
{
	pvrdma_lock_destroy(&f->qp.sq.lock);
	pvrdma_lock_destroy(&f->qp.rq.lock);
	free(f->sq_mem);
	free(f->rq_mem);
	free(f);
}

static inline uint8_t *fake_sq_wqe(struct fake_qp *f, uint32_t slot)
{
	return f->sq_mem + ((size_t)slot << f->qp.sq.wqe_shift);
}

static inline uint8_t *fake_rq_wqe(struct fake_qp *f, uint32_t slot)
{
	return f->rq_mem + ((size_t)slot << f->qp.rq.wqe_shift);
}

/* Is a WQE slot as it was before any post? */
static inline int fake_untouched(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != FAKE_FILL)
			return 0;
	return 1;
}

/* The header and first SGE of SQ WQE slot. */
static inline struct pvrdma_sq_wqe_hdr *sq_hdr(struct fake_qp *f, uint32_t slot)
{
	return (struct pvrdma_sq_wqe_hdr *)fake_sq_wqe(f, slot);
}

static inline struct pvrdma_sge *sq_sge(struct fake_qp *f, uint32_t slot)
{
	return (struct pvrdma_sge *)(sq_hdr(f, slot) + 1);
}

#endif /* PVRDMA_TEST_FAKE_QUEUES_H */
