// SPDX-License-Identifier: BSD-2-Clause
/* Decoding and validation of send and receive WQEs. */
#include <string.h>

#include "wqe.h"

uint32_t sim_wqe_max_sge(const struct sim_ring *ring, size_t hdr_size)
{
	uint32_t fit = 0;

	if (ring->elem_size > hdr_size)
		fit = (ring->elem_size - hdr_size) / sizeof(struct pvrdma_sge);
	if (ring->max_sge && ring->max_sge < fit)
		fit = ring->max_sge;
	return fit < SIM_MAX_SGE ? fit : SIM_MAX_SGE;
}

static bool opcode_valid(uint32_t opcode, enum ibv_qp_type type)
{
	switch (opcode) {
	case PVRDMA_WR_SEND:
	case PVRDMA_WR_SEND_WITH_IMM:
		return type == IBV_QPT_RC || type == IBV_QPT_UD;
	case PVRDMA_WR_RDMA_WRITE:
	case PVRDMA_WR_RDMA_WRITE_WITH_IMM:
	case PVRDMA_WR_RDMA_READ:
	case PVRDMA_WR_ATOMIC_CMP_AND_SWP:
	case PVRDMA_WR_ATOMIC_FETCH_AND_ADD:
		return type == IBV_QPT_RC;
	default:
		return false;
	}
}

bool sim_wqe_is_read_or_atomic(uint32_t wr_opcode)
{
	return wr_opcode == PVRDMA_WR_RDMA_READ ||
	       wr_opcode == PVRDMA_WR_ATOMIC_CMP_AND_SWP ||
	       wr_opcode == PVRDMA_WR_ATOMIC_FETCH_AND_ADD;
}

uint32_t sim_wqe_wc_opcode(uint32_t wr_opcode)
{
	switch (wr_opcode) {
	case PVRDMA_WR_RDMA_WRITE:
	case PVRDMA_WR_RDMA_WRITE_WITH_IMM:
		return PVRDMA_WC_RDMA_WRITE;
	case PVRDMA_WR_RDMA_READ:
		return PVRDMA_WC_RDMA_READ;
	case PVRDMA_WR_ATOMIC_CMP_AND_SWP:
		return PVRDMA_WC_COMP_SWAP;
	case PVRDMA_WR_ATOMIC_FETCH_AND_ADD:
		return PVRDMA_WC_FETCH_ADD;
	default:
		return PVRDMA_WC_SEND;
	}
}

/* Copies num_sge SGEs and sums their lengths. */
static void copy_sges(struct pvrdma_sge *dst, const void *src, uint32_t n,
		      uint64_t *total)
{
	uint32_t i;

	memcpy(dst, src, n * sizeof(*dst));
	*total = 0;
	for (i = 0; i < n; i++)
		*total += dst[i].length;
}

enum pvrdma_wc_status sim_wqe_decode_send(const struct sim_ring *sq,
					  const void *elem,
					  enum ibv_qp_type type,
					  struct sim_send_wr *wr)
{
	struct pvrdma_sq_wqe_hdr hdr;

	/* One snapshot: the application may rewrite the ring under us. */
	memcpy(&hdr, elem, sizeof(hdr));
	memset(wr, 0, offsetof(struct sim_send_wr, sge));
	wr->wr_id = hdr.wr_id;
	wr->opcode = hdr.opcode;
	wr->send_flags = hdr.send_flags;
	wr->num_sge = hdr.num_sge;

	if (!opcode_valid(hdr.opcode, type))
		return PVRDMA_WC_LOC_QP_OP_ERR;
	if (hdr.send_flags & ~SIM_SEND_FLAGS_KNOWN)
		return PVRDMA_WC_LOC_QP_OP_ERR;
	if (hdr.num_sge > sim_wqe_max_sge(sq, sizeof(hdr)))
		return PVRDMA_WC_LOC_LEN_ERR;

	copy_sges(wr->sge, (const uint8_t *)elem + sizeof(hdr), hdr.num_sge,
		  &wr->total_len);
	if (wr->total_len > SIM_MAX_MSG_SIZE)
		return PVRDMA_WC_LOC_LEN_ERR;

	if (hdr.opcode == PVRDMA_WR_SEND_WITH_IMM ||
	    hdr.opcode == PVRDMA_WR_RDMA_WRITE_WITH_IMM)
		wr->imm_data = hdr.ex.imm_data;

	if (type == IBV_QPT_UD) {
		wr->remote_qpn = hdr.wr.ud.remote_qpn & 0xffffff;
		wr->remote_qkey = hdr.wr.ud.remote_qkey;
		wr->av = hdr.wr.ud.av;
		return PVRDMA_WC_SUCCESS;
	}

	switch (hdr.opcode) {
	case PVRDMA_WR_RDMA_WRITE:
	case PVRDMA_WR_RDMA_WRITE_WITH_IMM:
	case PVRDMA_WR_RDMA_READ:
		wr->remote_addr = hdr.wr.rdma.remote_addr;
		wr->rkey = hdr.wr.rdma.rkey;
		break;
	case PVRDMA_WR_ATOMIC_CMP_AND_SWP:
	case PVRDMA_WR_ATOMIC_FETCH_AND_ADD:
		wr->remote_addr = hdr.wr.atomic.remote_addr;
		wr->rkey = hdr.wr.atomic.rkey;
		wr->compare_add = hdr.wr.atomic.compare_add;
		wr->swap = hdr.wr.atomic.swap;
		/* The original value comes back into exactly 8 bytes. */
		if (wr->total_len != sizeof(uint64_t))
			return PVRDMA_WC_LOC_LEN_ERR;
		break;
	default:
		break;
	}
	return PVRDMA_WC_SUCCESS;
}

enum pvrdma_wc_status sim_wqe_decode_recv(const struct sim_ring *rq,
					  const void *elem,
					  struct sim_recv_wr *wr)
{
	struct pvrdma_rq_wqe_hdr hdr;

	memcpy(&hdr, elem, sizeof(hdr));
	wr->wr_id = hdr.wr_id;
	wr->num_sge = hdr.num_sge;
	wr->total_len = 0;
	if (hdr.num_sge > sim_wqe_max_sge(rq, sizeof(hdr)))
		return PVRDMA_WC_LOC_LEN_ERR;
	copy_sges(wr->sge, (const uint8_t *)elem + sizeof(hdr), hdr.num_sge,
		  &wr->total_len);
	return PVRDMA_WC_SUCCESS;
}
