// SPDX-License-Identifier: BSD-2-Clause
/*
 * CQE -> ibv_wc. The device's enums are not the verbs enums (opcodes from
 * LSO on and most wc_flags differ), so every field goes through an
 * explicit mapping; values the device should never produce map to the
 * closest error rather than to whatever number happens to match.
 */
#include <string.h>

#include "pvrdma.h"

_Static_assert(sizeof(struct pvrdma_cqe) == 64, "CQE ABI");

static enum ibv_wc_status status_from_pvrdma(uint32_t status)
{
	static const uint8_t map[] = {
		[PVRDMA_WC_SUCCESS] = IBV_WC_SUCCESS,
		[PVRDMA_WC_LOC_LEN_ERR] = IBV_WC_LOC_LEN_ERR,
		[PVRDMA_WC_LOC_QP_OP_ERR] = IBV_WC_LOC_QP_OP_ERR,
		[PVRDMA_WC_LOC_EEC_OP_ERR] = IBV_WC_LOC_EEC_OP_ERR,
		[PVRDMA_WC_LOC_PROT_ERR] = IBV_WC_LOC_PROT_ERR,
		[PVRDMA_WC_WR_FLUSH_ERR] = IBV_WC_WR_FLUSH_ERR,
		[PVRDMA_WC_MW_BIND_ERR] = IBV_WC_MW_BIND_ERR,
		[PVRDMA_WC_BAD_RESP_ERR] = IBV_WC_BAD_RESP_ERR,
		[PVRDMA_WC_LOC_ACCESS_ERR] = IBV_WC_LOC_ACCESS_ERR,
		[PVRDMA_WC_REM_INV_REQ_ERR] = IBV_WC_REM_INV_REQ_ERR,
		[PVRDMA_WC_REM_ACCESS_ERR] = IBV_WC_REM_ACCESS_ERR,
		[PVRDMA_WC_REM_OP_ERR] = IBV_WC_REM_OP_ERR,
		[PVRDMA_WC_RETRY_EXC_ERR] = IBV_WC_RETRY_EXC_ERR,
		[PVRDMA_WC_RNR_RETRY_EXC_ERR] = IBV_WC_RNR_RETRY_EXC_ERR,
		[PVRDMA_WC_LOC_RDD_VIOL_ERR] = IBV_WC_LOC_RDD_VIOL_ERR,
		[PVRDMA_WC_REM_INV_RD_REQ_ERR] = IBV_WC_REM_INV_RD_REQ_ERR,
		[PVRDMA_WC_REM_ABORT_ERR] = IBV_WC_REM_ABORT_ERR,
		[PVRDMA_WC_INV_EECN_ERR] = IBV_WC_INV_EECN_ERR,
		[PVRDMA_WC_INV_EEC_STATE_ERR] = IBV_WC_INV_EEC_STATE_ERR,
		[PVRDMA_WC_FATAL_ERR] = IBV_WC_FATAL_ERR,
		[PVRDMA_WC_RESP_TIMEOUT_ERR] = IBV_WC_RESP_TIMEOUT_ERR,
		[PVRDMA_WC_GENERAL_ERR] = IBV_WC_GENERAL_ERR,
	};

	if (status >= sizeof(map))
		return IBV_WC_GENERAL_ERR;
	return (enum ibv_wc_status)map[status];
}

static enum ibv_wc_opcode opcode_from_pvrdma(uint32_t op)
{
	switch (op) {
	case PVRDMA_WC_SEND:		return IBV_WC_SEND;
	case PVRDMA_WC_RDMA_WRITE:	return IBV_WC_RDMA_WRITE;
	case PVRDMA_WC_RDMA_READ:	return IBV_WC_RDMA_READ;
	case PVRDMA_WC_COMP_SWAP:	return IBV_WC_COMP_SWAP;
	case PVRDMA_WC_FETCH_ADD:	return IBV_WC_FETCH_ADD;
	case PVRDMA_WC_BIND_MW:		return IBV_WC_BIND_MW;
	case PVRDMA_WC_LSO:		return IBV_WC_TSO;
	case PVRDMA_WC_LOCAL_INV:	return IBV_WC_LOCAL_INV;
	case PVRDMA_WC_RECV:		return IBV_WC_RECV;
	case PVRDMA_WC_RECV_RDMA_WITH_IMM: return IBV_WC_RECV_RDMA_WITH_IMM;
	default:
		/* masked atomics, fast-reg: kernel-only, never from a user QP;
		 * keep the receive/send side visible */
		return (op & PVRDMA_WC_RECV) ? IBV_WC_RECV : IBV_WC_SEND;
	}
}

static unsigned int wc_flags_from_pvrdma(uint32_t f)
{
	unsigned int out = 0;

	if (f & PVRDMA_WC_GRH)
		out |= IBV_WC_GRH;
	if (f & PVRDMA_WC_WITH_IMM)
		out |= IBV_WC_WITH_IMM;
	if (f & PVRDMA_WC_WITH_INVALIDATE)
		out |= IBV_WC_WITH_INV;
	if (f & PVRDMA_WC_IP_CSUM_OK)
		out |= IBV_WC_IP_CSUM_OK;
	/* SMAC/VLAN/network type have no ibv_wc flag */
	return out;
}

void pvrdma_cqe_to_wc(const struct pvrdma_cqe *cqe, uint32_t qp_num,
		      struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = status_from_pvrdma(cqe->status);
	wc->opcode = opcode_from_pvrdma(cqe->opcode);
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = cqe->imm_data;		/* big-endian on both sides */
	wc->qp_num = qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = wc_flags_from_pvrdma(cqe->wc_flags);
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
}
