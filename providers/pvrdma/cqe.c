// SPDX-License-Identifier: BSD-2-Clause
/*
 * CQE -> ibv_wc: the tables of cqe.h and the plain-function form of the
 * decoder (for the unit tests and whoever needs no inlining).
 */
#include "cqe.h"

#define PVRDMA_WC_FLAGS(f)						\
	(((f) & PVRDMA_WC_GRH ? IBV_WC_GRH : 0) |			\
	 ((f) & PVRDMA_WC_WITH_IMM ? IBV_WC_WITH_IMM : 0) |		\
	 ((f) & PVRDMA_WC_WITH_INVALIDATE ? IBV_WC_WITH_INV : 0) |	\
	 ((f) & PVRDMA_WC_IP_CSUM_OK ? IBV_WC_IP_CSUM_OK : 0))

const uint8_t pvrdma_wc_flags_map[16] = {
	PVRDMA_WC_FLAGS(0), PVRDMA_WC_FLAGS(1), PVRDMA_WC_FLAGS(2),
	PVRDMA_WC_FLAGS(3), PVRDMA_WC_FLAGS(4), PVRDMA_WC_FLAGS(5),
	PVRDMA_WC_FLAGS(6), PVRDMA_WC_FLAGS(7), PVRDMA_WC_FLAGS(8),
	PVRDMA_WC_FLAGS(9), PVRDMA_WC_FLAGS(10), PVRDMA_WC_FLAGS(11),
	PVRDMA_WC_FLAGS(12), PVRDMA_WC_FLAGS(13), PVRDMA_WC_FLAGS(14),
	PVRDMA_WC_FLAGS(15),
};
_Static_assert(PVRDMA_WC_GRH == 1 && PVRDMA_WC_WITH_IMM == 2 &&
	       PVRDMA_WC_WITH_INVALIDATE == 4 && PVRDMA_WC_IP_CSUM_OK == 8,
	       "the four device flags with an ibv_wc flag are bits 0-3");

void pvrdma_cqe_to_wc(const struct pvrdma_cqe *cqe, uint32_t qp_num,
		      struct ibv_wc *wc)
{
	pvrdma_cqe_decode(cqe, qp_num, wc);
}
