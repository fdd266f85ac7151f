// SPDX-License-Identifier: BSD-2-Clause
/*
 * Inline sends without an inline WQE format.
 *
 * The PVRDMA device ABI has no inline WQE: every byte is fetched through
 * an SGE. So a QP that asks for max_inline_data > 0 gets a bounce area,
 * one slot per SQ WQE, registered once (LOCAL_WRITE) in the QP's PD at
 * creation. Posting an inline WR copies its data into the slot that
 * belongs to the WQE's ring slot and points one SGE at it: the user's
 * buffer can be reused as soon as the post returns and needs no lkey.
 *
 * A slot is reused when its WQE slot is, i.e. after max_send_wr later
 * posts; an application that keeps at most max_send_wr WRs outstanding (as
 * verbs requires) has seen the completion of the previous user by then.
 *
 * Cost: one memcpy per inline post, and slot size (max_inline_data rounded
 * up to a power of two, at least 64) times the SQ depth of memory, pinned.
 */
#include <errno.h>
#include <string.h>

#include <infiniband/pvrdmadv.h>

#include "pvrdma.h"

#define PVRDMA_INLINE_MIN_SLOT 64

int pvrdma_inline_init(struct pvrdma_qp *qp, struct ibv_pd *pd,
		       uint32_t max_inline)
{
	struct pvrdma_pd *ppd = to_ppd(pd);
	size_t page = to_pdev(pd->context->device)->page_size;
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct pvrdma_buf buf;
	uint32_t slot;
	size_t size;
	int ret;

	qp->max_inline_data = 0;
	if (!max_inline)
		return 0;
	slot = (uint32_t)roundup_pow_of_two(max_inline);
	if (slot < PVRDMA_INLINE_MIN_SLOT)
		slot = PVRDMA_INLINE_MIN_SLOT;
	size = align((size_t)slot * qp->sq.wqe_cnt, page);
	ret = pvrdma_buf_alloc(&buf, ppd, size, page,
			       PVRDMADV_RES_TYPE_INLINE);
	if (ret)
		return ret;
	ret = ibv_cmd_reg_mr(&pvrdma_pd_protection(pd)->ibv_pd, buf.addr,
			     size, (uintptr_t)buf.addr,
			     IBV_ACCESS_LOCAL_WRITE, &qp->inl.mr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		pvrdma_buf_free(&buf);
		return ret;
	}
	qp->inl.slots = buf.addr;
	qp->inl.size = size;
	qp->inl.slot_shift = (uint32_t)ilog32_nz(slot) - 1;
	qp->inl.lkey = qp->inl.mr.ibv_mr.lkey;
	qp->inl_buf = buf;
	qp->max_inline_data = max_inline;
	return 0;
}

void pvrdma_inline_fini(struct pvrdma_qp *qp)
{
	if (!qp->inl.slots)
		return;
	ibv_cmd_dereg_mr(&qp->inl.mr);
	pvrdma_buf_free(&qp->inl_buf);
	qp->inl.slots = NULL;
}
