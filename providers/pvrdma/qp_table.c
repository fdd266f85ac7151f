// SPDX-License-Identifier: BSD-2-Clause
/*
 * The QP table: CQE.qp (the device's qp_handle) -> QP, for poll_cq.
 * Lookups take no lock (acquire loads); adds and removals are serialised
 * by a mutex. A QP leaves the table before its CQEs are removed from its
 * CQs under their locks, so a poller never sees a freed QP.
 */
#include <errno.h>

#include "pvrdma.h"

static uint32_t qp_slot(const struct pvrdma_context *ctx, uint64_t handle)
{
	return (uint32_t)handle & ctx->qp_table_mask;
}

struct pvrdma_qp *pvrdma_qp_lookup(struct pvrdma_context *ctx,
				   uint64_t cqe_qp)
{
	return __atomic_load_n(&ctx->qp_table[qp_slot(ctx, cqe_qp)],
			       __ATOMIC_ACQUIRE);
}

int pvrdma_qp_table_add(struct pvrdma_context *ctx, struct pvrdma_qp *qp)
{
	uint32_t slot = qp_slot(ctx, qp->qp_handle);
	int ret = 0;

	pthread_mutex_lock(&ctx->qp_table_lock);
	/* handles are below qp_tab_size, so a taken slot means the kernel
	 * broke that promise: refuse rather than misroute completions */
	if (qp->qp_handle > ctx->qp_table_mask || ctx->qp_table[slot])
		ret = EEXIST;
	else
		__atomic_store_n(&ctx->qp_table[slot], qp, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ctx->qp_table_lock);
	return ret;
}

void pvrdma_qp_table_del(struct pvrdma_context *ctx, struct pvrdma_qp *qp)
{
	uint32_t slot = qp_slot(ctx, qp->qp_handle);

	pthread_mutex_lock(&ctx->qp_table_lock);
	if (ctx->qp_table[slot] == qp)
		__atomic_store_n(&ctx->qp_table[slot], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ctx->qp_table_lock);
}
