/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Work queue elements as the device reads them from the user rings.
 *
 * The rings live in memory the application can rewrite at any time, so the
 * device decodes each WQE once into a private copy and validates the copy:
 * what it executes is exactly what it checked.
 */
#ifndef PVRDMA_SIM_WQE_H
#define PVRDMA_SIM_WQE_H

#include <stdint.h>

#include "device.h"
#include "fabric.h"

/* Largest message an RC QP carries (IB: 2^31 bytes). */
#define SIM_MAX_MSG_SIZE	FAB_MAX_MSG_SIZE

/* The send flags the device understands (the provider passes IBV_SEND_*
 * through unchanged). IBV_SEND_INLINE has no form in the device ABI. */
#define SIM_SEND_FLAGS_KNOWN	(IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | \
				 IBV_SEND_FENCE | IBV_SEND_IP_CSUM)

struct sim_send_wr {
	uint64_t wr_id;
	uint32_t opcode;		/* enum pvrdma_wr_opcode */
	uint32_t send_flags;		/* IBV_SEND_* */
	uint32_t imm_data;		/* network order, as posted */
	uint32_t num_sge;
	uint64_t total_len;		/* sum of the SGE lengths */
	uint64_t remote_addr;		/* RDMA and atomics */
	uint32_t rkey;
	uint64_t compare_add;
	uint64_t swap;
	uint32_t remote_qpn;		/* UD */
	uint32_t remote_qkey;
	struct pvrdma_av av;
	struct pvrdma_sge sge[SIM_MAX_SGE];
};

struct sim_recv_wr {
	uint64_t wr_id;
	uint32_t num_sge;
	uint64_t total_len;
	struct pvrdma_sge sge[SIM_MAX_SGE];
};

/* SGEs a WQE of this ring may carry: the granted maximum, bounded by what
 * fits in one ring element. */
uint32_t sim_wqe_max_sge(const struct sim_ring *ring, size_t hdr_size);

/* Decodes the send WQE at elem for a QP of type: PVRDMA_WC_SUCCESS, or the
 * status it completes with (LOC_LEN_ERR: SGE count or length;
 * LOC_QP_OP_ERR: opcode or flag); wr as far as decoded (wr_id always). */
enum pvrdma_wc_status sim_wqe_decode_send(const struct sim_ring *sq,
					  const void *elem,
					  enum ibv_qp_type type,
					  struct sim_send_wr *wr);

/* Decode the receive WQE at elem (RQ or SRQ ring). LOC_LEN_ERR for a bad
 * SGE count. */
enum pvrdma_wc_status sim_wqe_decode_recv(const struct sim_ring *rq,
					  const void *elem,
					  struct sim_recv_wr *wr);

/* The completion opcode (enum pvrdma_wc_opcode) of a send opcode. */
uint32_t sim_wqe_wc_opcode(uint32_t wr_opcode);

/* True for the opcodes that need a response carrying data. */
bool sim_wqe_is_read_or_atomic(uint32_t wr_opcode);

#endif /* PVRDMA_SIM_WQE_H */
