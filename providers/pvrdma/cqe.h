/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CQE -> ibv_wc, inlined into poll_cq and the extended poll (cqe.c wraps
 * it for the unit tests).
 *
 * The device's enums are not the verbs enums everywhere, so each field
 * has an explicit mapping, but where the two coincide the mapping is the
 * identity, checked at compile time and applied with no table: status
 * (identity up to GENERAL_ERR; anything else is reported as
 * GENERAL_ERR), and opcode 0..BIND_MW and RECV/RECV_RDMA_WITH_IMM. wc_flags bits 2 and 3 are swapped: a 16-entry
 * table. Values the device should never produce map to the closest
 * error rather than to whatever number happens to match.
 */
#ifndef PVRDMA_CQE_H
#define PVRDMA_CQE_H

#include <stddef.h>

#include "pvrdma.h"

_Static_assert(sizeof(struct pvrdma_cqe) == 64, "CQE ABI");

#define PVRDMA_SAME_STATUS(s) ((int)PVRDMA_WC_##s == (int)IBV_WC_##s)
_Static_assert(PVRDMA_SAME_STATUS(SUCCESS) &&
	       PVRDMA_SAME_STATUS(LOC_LEN_ERR) &&
	       PVRDMA_SAME_STATUS(LOC_QP_OP_ERR) &&
	       PVRDMA_SAME_STATUS(LOC_EEC_OP_ERR) &&
	       PVRDMA_SAME_STATUS(LOC_PROT_ERR) &&
	       PVRDMA_SAME_STATUS(WR_FLUSH_ERR) &&
	       PVRDMA_SAME_STATUS(MW_BIND_ERR) &&
	       PVRDMA_SAME_STATUS(BAD_RESP_ERR) &&
	       PVRDMA_SAME_STATUS(LOC_ACCESS_ERR) &&
	       PVRDMA_SAME_STATUS(REM_INV_REQ_ERR) &&
	       PVRDMA_SAME_STATUS(REM_ACCESS_ERR) &&
	       PVRDMA_SAME_STATUS(REM_OP_ERR) &&
	       PVRDMA_SAME_STATUS(RETRY_EXC_ERR) &&
	       PVRDMA_SAME_STATUS(RNR_RETRY_EXC_ERR) &&
	       PVRDMA_SAME_STATUS(LOC_RDD_VIOL_ERR) &&
	       PVRDMA_SAME_STATUS(REM_INV_RD_REQ_ERR) &&
	       PVRDMA_SAME_STATUS(REM_ABORT_ERR) &&
	       PVRDMA_SAME_STATUS(INV_EECN_ERR) &&
	       PVRDMA_SAME_STATUS(INV_EEC_STATE_ERR) &&
	       PVRDMA_SAME_STATUS(FATAL_ERR) &&
	       PVRDMA_SAME_STATUS(RESP_TIMEOUT_ERR) &&
	       PVRDMA_SAME_STATUS(GENERAL_ERR),
	       "CQE status is the verbs status up to GENERAL_ERR");
#undef PVRDMA_SAME_STATUS

_Static_assert((int)PVRDMA_WC_GRH == (int)IBV_WC_GRH &&
	       (int)PVRDMA_WC_WITH_IMM == (int)IBV_WC_WITH_IMM,
	       "wc_flags bits 0 and 1 coincide");

#define PVRDMA_SAME_OPCODE(o) ((int)PVRDMA_WC_##o == (int)IBV_WC_##o)
_Static_assert(PVRDMA_SAME_OPCODE(SEND) && PVRDMA_SAME_OPCODE(RDMA_WRITE) &&
	       PVRDMA_SAME_OPCODE(RDMA_READ) && PVRDMA_SAME_OPCODE(COMP_SWAP) &&
	       PVRDMA_SAME_OPCODE(FETCH_ADD) && PVRDMA_SAME_OPCODE(BIND_MW) &&
	       PVRDMA_SAME_OPCODE(RECV) &&
	       PVRDMA_SAME_OPCODE(RECV_RDMA_WITH_IMM) &&
	       PVRDMA_WC_BIND_MW == 5 && PVRDMA_WC_RECV_RDMA_WITH_IMM ==
	       PVRDMA_WC_RECV + 1,
	       "CQE opcodes 0..BIND_MW, RECV, RECV_RDMA_WITH_IMM are verbs'");
#undef PVRDMA_SAME_OPCODE

/* [wc_flags & 15]: GRH, WITH_IMM, WITH_INVALIDATE, IP_CSUM_OK; the
 * higher device flags (SMAC, VLAN, network type) have no ibv_wc flag */
extern const uint8_t pvrdma_wc_flags_map[16];

static inline enum ibv_wc_opcode pvrdma_wc_opcode(uint32_t op)
{
	if (__builtin_expect(op <= PVRDMA_WC_BIND_MW ||
			     op - PVRDMA_WC_RECV <= 1, 1))
		return (enum ibv_wc_opcode)op;
	/* in line, not a call: a call would make poll_cq save registers */
	if (op == PVRDMA_WC_LSO)
		return IBV_WC_TSO;
	if (op == PVRDMA_WC_LOCAL_INV)
		return IBV_WC_LOCAL_INV;
	/* masked atomics, fast-reg: kernel-only, never from a user QP;
	 * keep the receive/send side visible */
	return (op & PVRDMA_WC_RECV) ? IBV_WC_RECV : IBV_WC_SEND;
}

/* The word moves below: fields that sit next to each other in both. */
_Static_assert(offsetof(struct pvrdma_cqe, imm_data) ==
	       offsetof(struct pvrdma_cqe, byte_len) + 4 &&
	       offsetof(struct ibv_wc, imm_data) ==
	       offsetof(struct ibv_wc, byte_len) + 4 &&
	       offsetof(struct pvrdma_cqe, slid) ==
	       offsetof(struct pvrdma_cqe, pkey_index) + 2 &&
	       offsetof(struct ibv_wc, slid) ==
	       offsetof(struct ibv_wc, pkey_index) + 2 &&
	       offsetof(struct pvrdma_cqe, dlid_path_bits) ==
	       offsetof(struct pvrdma_cqe, sl) + 1 &&
	       offsetof(struct ibv_wc, dlid_path_bits) ==
	       offsetof(struct ibv_wc, sl) + 1,
	       "CQE and ibv_wc field pairs");

typedef uint64_t __attribute__((may_alias, aligned(1))) pvrdma_u64_any;
typedef uint32_t __attribute__((may_alias, aligned(1))) pvrdma_u32_any;
typedef uint16_t __attribute__((may_alias, aligned(1))) pvrdma_u16_any;

#define PVRDMA_MOVE(type, dst, dfield, src, sfield)			\
	(*(type *)((char *)(dst) + offsetof(struct ibv_wc, dfield)) =	\
	 *(const type *)((const char *)(src) +				\
			 offsetof(struct pvrdma_cqe, sfield)))

/*
 * Pairs of fields adjacent in both layouts move as one word (byte_len +
 * imm_data, pkey_index + slid, sl + dlid_path_bits): 13 fields in 10
 * moves.
 */
static inline void pvrdma_cqe_decode(const struct pvrdma_cqe *cqe,
				     uint32_t qp_num, struct ibv_wc *wc)
{
	uint32_t status = cqe->status;

	wc->wr_id = cqe->wr_id;
	wc->status = (enum ibv_wc_status)(status <= PVRDMA_WC_GENERAL_ERR ?
					  status : IBV_WC_GENERAL_ERR);
	wc->opcode = pvrdma_wc_opcode(cqe->opcode);
	wc->vendor_err = cqe->vendor_err;
	/* imm_data is big-endian on both sides */
	PVRDMA_MOVE(pvrdma_u64_any, wc, byte_len, cqe, byte_len);
	wc->qp_num = qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = pvrdma_wc_flags_map[cqe->wc_flags & 15];
	PVRDMA_MOVE(pvrdma_u32_any, wc, pkey_index, cqe, pkey_index);
	PVRDMA_MOVE(pvrdma_u16_any, wc, sl, cqe, sl);
}

/*
 * The common CQE, decoded with no mapping at all: a successful completion
 * (status SUCCESS, 0) whose opcode is an identity (0..BIND_MW, RECV,
 * RECV_RDMA_WITH_IMM), with no wc_flags but GRH and WITH_IMM (the only
 * ones whose bits coincide; the device's SMAC, VLAN and network-type flags
 * have no ibv_wc flag and are dropped). Status and opcode are read as one
 * word, so one compare checks both. Returns false, having written part of
 * wc, for any other CQE (errors included): the caller decodes that one
 * with pvrdma_cqe_decode.
 */
_Static_assert(offsetof(struct pvrdma_cqe, status) ==
	       offsetof(struct pvrdma_cqe, opcode) + 4 &&
	       offsetof(struct ibv_wc, opcode) ==
	       offsetof(struct ibv_wc, status) + 4,
	       "status and opcode are a word in both (in swapped order)");
_Static_assert(PVRDMA_WC_SUCCESS == 0 && IBV_WC_SUCCESS == 0,
	       "success is 0 on both sides");

static inline bool pvrdma_cqe_decode_plain(const struct pvrdma_cqe *cqe,
					   uint32_t qp_num, struct ibv_wc *wc)
{
	/* opcode | status << 32: <= BIND_MW or RECV/RECV_RDMA_WITH_IMM
	 * only with status 0 */
	uint64_t op_status = *(const pvrdma_u64_any *)&cqe->opcode;
	uint32_t flags = cqe->wc_flags;

	if (__builtin_expect(op_status > PVRDMA_WC_BIND_MW, 0) &&
	    op_status - PVRDMA_WC_RECV > PVRDMA_WC_RECV_RDMA_WITH_IMM -
					 PVRDMA_WC_RECV)
		return false;
	if (flags & (PVRDMA_WC_WITH_INVALIDATE | PVRDMA_WC_IP_CSUM_OK))
		return false;
	wc->wr_id = cqe->wr_id;
	/* status (0) in the low word, opcode in the high one */
	*(pvrdma_u64_any *)&wc->status = op_status << 32;
	wc->vendor_err = cqe->vendor_err;
	PVRDMA_MOVE(pvrdma_u64_any, wc, byte_len, cqe, byte_len);
	wc->qp_num = qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = flags & (PVRDMA_WC_GRH | PVRDMA_WC_WITH_IMM);
	PVRDMA_MOVE(pvrdma_u32_any, wc, pkey_index, cqe, pkey_index);
	PVRDMA_MOVE(pvrdma_u16_any, wc, sl, cqe, sl);
	return true;
}

#undef PVRDMA_MOVE

#endif /* PVRDMA_CQE_H */
