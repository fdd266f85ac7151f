/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A context, PD and CQ whose command fd is invalid, for the control verbs'
 * checks: any of them that reached the kernel would fail with EBADF
 * instead of the errno a test expects.
 */
#ifndef PVRDMA_TEST_FAKE_CTX_H
#define PVRDMA_TEST_FAKE_CTX_H

#include <stdlib.h>

#include "pvrdma.h"

struct fake_ctx {
	struct pvrdma_device dev;
	struct pvrdma_context ctx;
	struct pvrdma_pd pd;
	struct pvrdma_cq cq;
};

static inline struct fake_ctx *fake_ctx_new(void)
{
	struct fake_ctx *f = pvrdma_calloc_aligned(_Alignof(struct fake_ctx),
						   sizeof(*f));

	f->dev.page_size = 4096;
	f->ctx.vctx.context.device = &f->dev.vdev.device;
	f->ctx.vctx.context.cmd_fd = -1;
	f->ctx.limits = (struct pvrdma_limits) {
		.max_qp_wr = 1024, .max_sge = 16, .max_cqe = 4096,
		.max_srq = 64, .max_srq_wr = 1024, .max_srq_sge = 16,
		 .max_qp_rd_atom = 4,
		.max_qp_init_rd_atom = 4, .max_pkeys = 1, .phys_port_cnt = 1,
	};
	f->pd.ibv_pd.context = &f->ctx.vctx.context;
	f->cq.ibv_cq.context = &f->ctx.vctx.context;
	return f;
}

#endif /* PVRDMA_TEST_FAKE_CTX_H */
