// SPDX-License-Identifier: BSD-2-Clause
/*
 * Work requests -> WQEs. The checks and the encoders are pure functions of
 * their inputs so they can be tested byte by byte. post.c runs the inline
 * forms of wqe.h and comes here only for what the fast check refused.
 */
#include <errno.h>
#include <string.h>

#include "wqe.h"

const uint8_t pvrdma_wr_opcode_to_dev[] = {
	[IBV_WR_RDMA_WRITE] = PVRDMA_WR_RDMA_WRITE,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = PVRDMA_WR_RDMA_WRITE_WITH_IMM,
	[IBV_WR_SEND] = PVRDMA_WR_SEND,
	[IBV_WR_SEND_WITH_IMM] = PVRDMA_WR_SEND_WITH_IMM,
	[IBV_WR_RDMA_READ] = PVRDMA_WR_RDMA_READ,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = PVRDMA_WR_ATOMIC_CMP_AND_SWP,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = PVRDMA_WR_ATOMIC_FETCH_AND_ADD,
};

int pvrdma_check_wr_opcode(const struct pvrdma_qp *qp, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return 0;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		/* UD has no remote memory access */
		return qp->ibv_qp.qp_type == IBV_QPT_RC ? 0 : EINVAL;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (qp->ibv_qp.qp_type != IBV_QPT_RC)
			return EINVAL;
		return qp->atomic_cap == IBV_ATOMIC_NONE ? EINVAL : 0;
	default:
		return EINVAL;
	}
}

/* What pvrdma_send_wr_plain lets through without a look: the opcodes
 * pvrdma_check_wr_opcode accepts for the QP. */
uint32_t pvrdma_send_opcodes(enum ibv_qp_type type,
			     enum ibv_atomic_cap atomic_cap)
{
	switch (type) {
	case IBV_QPT_RC:
		return PVRDMA_WR_SEND_OPS | PVRDMA_WR_RDMA_OPS |
		       (atomic_cap == IBV_ATOMIC_NONE ? 0 :
							PVRDMA_WR_ATOMIC_OPS);
	case IBV_QPT_UD:
		return PVRDMA_WR_SEND_OPS;
	default:
		return 0;
	}
}

/* Returns 0 or the errno post_send reports for this WR. */
int pvrdma_check_send_wr(const struct pvrdma_qp *qp,
			 const struct ibv_send_wr *wr)
{
	int ret;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;
	if (wr->num_sge && !wr->sg_list)
		return EINVAL;
	ret = pvrdma_check_wr_opcode(qp, wr->opcode);
	if (ret)
		return ret;
	if (wr->send_flags & ~PVRDMA_SEND_FLAGS_OK)
		return EINVAL;
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint64_t len = 0;
		int i;

		/* data moves to the remote side: never for reads/atomics */
		if (wr->opcode == IBV_WR_RDMA_READ ||
		    wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
			return EINVAL;
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > qp->max_inline_data)
			return EINVAL;
	}
	if (qp->ibv_qp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	return 0;
}

void pvrdma_encode_send_wqe(void *wqe, enum ibv_qp_type type,
			    const struct ibv_send_wr *wr)
{
	pvrdma_encode_send(wqe, wr, type == IBV_QPT_UD,
			   wr->send_flags & ~(unsigned int)IBV_SEND_INLINE);
}

int pvrdma_check_recv_wr(const struct pvrdma_wq *rq,
			 const struct ibv_recv_wr *wr)
{
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge)
		return EINVAL;
	if (wr->num_sge && !wr->sg_list)
		return EINVAL;
	return 0;
}

void pvrdma_encode_recv_wqe(void *wqe, const struct ibv_recv_wr *wr)
{
	pvrdma_encode_recv(wqe, wr);
}

/*
 * Makes a WQE carry a copy of the data of sg[0..n) in slot (registered
 * with lkey): one SGE on the copy, none for a zero-length send. Returns the
 * number of bytes copied. The caller checked the total against the slot.
 */
uint32_t pvrdma_encode_inline(struct pvrdma_sq_wqe_hdr *hdr, uint8_t *slot,
			      uint32_t lkey, const struct ibv_sge *sg, int n)
{
	struct pvrdma_sge *sge = (struct pvrdma_sge *)(hdr + 1);
	uint32_t len = 0;
	int i;

	for (i = 0; i < n; i++) {
		memcpy(slot + len, (const void *)(uintptr_t)sg[i].addr,
		       sg[i].length);
		len += sg[i].length;
	}
	hdr->num_sge = len ? 1 : 0;
	sge->addr = (uintptr_t)slot;
	sge->length = len;
	sge->lkey = lkey;
	return len;
}
