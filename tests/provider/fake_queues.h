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
	wq->ring = ring;
	wq->wqes = *mem;
	wq->wqe_cnt = cnt;
	wq->wqe_shift = pvrdma_log2(wqe_size);
	wq->max_sge = max_sge;
	wq->doorbell = db;
	wq->doorbell_value = db_value;
	pvrdma_lock_init(&wq->lock, false);
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
	return f;
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

#endif /* PVRDMA_TEST_FAKE_QUEUES_H */
