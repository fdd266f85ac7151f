// SPDX-License-Identifier: BSD-2-Clause
/*
 * Extended CQs (ibv_create_cq_ex): ibv_start_poll / ibv_next_poll /
 * ibv_end_poll and the read_* accessors.
 *
 * start_poll takes the CQ lock (none under a thread domain) and keeps it
 * until end_poll; it returns ENOENT on an empty CQ, and then holds nothing
 * (the caller must not call end_poll). Each step decodes the current CQE
 * with the same mapping as ibv_poll_cq, so the accessors return exactly
 * what an ibv_wc would hold. The consumer index is published once, at
 * end_poll.
 *
 * The device supplies: opcode, status, vendor_err, byte_len, imm_data,
 * qp_num, src_qp, wc_flags, pkey_index, slid, sl, dlid_path_bits. It has
 * no completion timestamps, flow tags, CVLANs or tag matching: asking for
 * them fails with EOPNOTSUPP.
 */
#include <errno.h>

#include "cqe.h"

#define PVRDMA_WC_EX_SUPPORTED (IBV_WC_EX_WITH_BYTE_LEN | \
				IBV_WC_EX_WITH_IMM | \
				IBV_WC_EX_WITH_QP_NUM | \
				IBV_WC_EX_WITH_SRC_QP | \
				IBV_WC_EX_WITH_SLID | \
				IBV_WC_EX_WITH_SL | \
				IBV_WC_EX_WITH_DLID_PATH_BITS)

int pvrdma_cq_ex_check(const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					  IBV_CQ_INIT_ATTR_MASK_PD))
		return EOPNOTSUPP;
	if (attr->wc_flags & ~(uint64_t)PVRDMA_WC_EX_SUPPORTED)
		return EOPNOTSUPP;
	/* IGNORE_OVERRUN: the device always reports overruns */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && attr->flags)
		return EOPNOTSUPP;
	return 0;
}

/* Decodes the next CQE of a live QP in [ex_head, ex_tail); ENOENT when
 * there is none. CQ lock held. */
static int cq_ex_step(struct pvrdma_cq *cq)
{
	uint32_t n = cq->cqe_cnt;

	while (cq->ex_head != cq->ex_tail) {
		const struct pvrdma_cqe *cqe =
			&cq->cqes[pvrdma_ring_slot(cq->ex_head, n)];
		struct pvrdma_qp *qp = pvrdma_qp_lookup(cq->ctx, cqe->qp);

		cq->ex_head = pvrdma_ring_next(cq->ex_head, n);
		if (!qp)
			continue;	/* as poll_cq: not a CQE of ours */
		pvrdma_cqe_decode(cqe, qp->ibv_qp.qp_num, &cq->ex_wc);
		cq->ibv_cq_ex.wr_id = cq->ex_wc.wr_id;
		cq->ibv_cq_ex.status = cq->ex_wc.status;
		pvrdma_stat_add(&cq->counters.cqes, 1);
		return 0;
	}
	return ENOENT;
}

static int cq_ex_start_poll(struct ibv_cq_ex *cqx,
			    struct ibv_poll_cq_attr *attr)
{
	struct pvrdma_cq *cq = cqx_to_pcq(cqx);
	uint32_t n = cq->cqe_cnt;
	int ret;

	if (attr && attr->comp_mask)
		return EINVAL;
	pvrdma_cq_lock(cq);
	cq->ex_head = pvrdma_ring_load_own(&cq->ring->cons_head);
	cq->ex_tail = pvrdma_ring_load_acquire(&cq->ring->prod_tail);
	if (!pvrdma_ring_idx_valid(cq->ex_head, n) ||
	    !pvrdma_ring_idx_valid(cq->ex_tail, n)) {
		pvrdma_cq_unlock(cq);
		return EIO;
	}
	ret = cq_ex_step(cq);
	if (ret) {
		/* publish what was skipped, then let go: no end_poll follows */
		pvrdma_ring_store_release(&cq->ring->cons_head, cq->ex_head);
		pvrdma_cq_empty_poll(cq);
		pvrdma_cq_unlock(cq);
		return ret;
	}
	pvrdma_stat_add(&cq->counters.found_polls, 1);
	return 0;
}

static int cq_ex_next_poll(struct ibv_cq_ex *cqx)
{
	return cq_ex_step(cqx_to_pcq(cqx));
}

static void cq_ex_end_poll(struct ibv_cq_ex *cqx)
{
	struct pvrdma_cq *cq = cqx_to_pcq(cqx);

	pvrdma_ring_store_release(&cq->ring->cons_head, cq->ex_head);
	pvrdma_cq_unlock(cq);
}

static enum ibv_wc_opcode cq_ex_read_opcode(struct ibv_cq_ex *cqx)
{
	return cqx_to_pcq(cqx)->ex_wc.opcode;
}

static uint32_t cq_ex_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return cqx_to_pcq(cqx)->ex_wc.vendor_err;
}

static uint32_t cq_ex_read_byte_len(struct ibv_cq_ex *cqx)
{
	return cqx_to_pcq(cqx)->ex_wc.byte_len;
}

static __be32 cq_ex_read_imm_data(struct ibv_cq_ex *cqx)
{
	return cqx_to_pcq(cqx)->ex_wc.imm_data;
}

static uint32_t cq_ex_read_qp_num(struct ibv_cq_ex *cqx)
{
	return cqx_to_pcq(cqx)->ex_wc.qp_num;
}

static uint32_t cq_ex_read_src_qp(struct ibv_cq_ex *cqx)
{
	return cqx_to_pcq(cqx)->ex_wc.src_qp;
}

static unsigned int cq_ex_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return cqx_to_pcq(cqx)->ex_wc.wc_flags;
}

static uint32_t cq_ex_read_slid(struct ibv_cq_ex *cqx)
{
	return cqx_to_pcq(cqx)->ex_wc.slid;
}

static uint8_t cq_ex_read_sl(struct ibv_cq_ex *cqx)
{
	return cqx_to_pcq(cqx)->ex_wc.sl;
}

static uint8_t cq_ex_read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return cqx_to_pcq(cqx)->ex_wc.dlid_path_bits;
}

void pvrdma_cq_ex_init_ops(struct pvrdma_cq *cq, uint64_t wc_flags)
{
	struct ibv_cq_ex *cqx = &cq->ibv_cq_ex;

	cqx->start_poll = cq_ex_start_poll;
	cqx->next_poll = cq_ex_next_poll;
	cqx->end_poll = cq_ex_end_poll;
	/* always there, whatever wc_flags asked */
	cqx->read_opcode = cq_ex_read_opcode;
	cqx->read_vendor_err = cq_ex_read_vendor_err;
	cqx->read_wc_flags = cq_ex_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cqx->read_byte_len = cq_ex_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		cqx->read_imm_data = cq_ex_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cqx->read_qp_num = cq_ex_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cqx->read_src_qp = cq_ex_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		cqx->read_slid = cq_ex_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		cqx->read_sl = cq_ex_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cqx->read_dlid_path_bits = cq_ex_read_dlid_path_bits;
}
