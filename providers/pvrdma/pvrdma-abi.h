/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpvrdma: the device ABI as the provider uses it. The uverbs commands
 * with their vmw_pvrdma udata (DECLARE_DRV_CMD over the kernel's
 * <rdma/vmw_pvrdma-abi.h>), the doorbell bits spelled as unsigned values,
 * and the sizes the device derives from what the kernel is told.
 */
#ifndef PVRDMA_ABI_H
#define PVRDMA_ABI_H

#include <stdint.h>

#include <infiniband/kern-abi.h>
#include <rdma/vmw_pvrdma-abi.h>
#include <kernel-abi/vmw_pvrdma-abi.h>
#include <util/util.h>

DECLARE_DRV_CMD(pvrdma_cmd_alloc_ucontext, IB_USER_VERBS_CMD_GET_CONTEXT,
		empty, pvrdma_alloc_ucontext_resp);
DECLARE_DRV_CMD(pvrdma_cmd_alloc_pd, IB_USER_VERBS_CMD_ALLOC_PD,
		empty, pvrdma_alloc_pd_resp);
DECLARE_DRV_CMD(pvrdma_cmd_create_cq, IB_USER_VERBS_CMD_CREATE_CQ,
		pvrdma_create_cq, pvrdma_create_cq_resp);
DECLARE_DRV_CMD(pvrdma_cmd_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		pvrdma_create_qp, pvrdma_create_qp_resp);
DECLARE_DRV_CMD(pvrdma_cmd_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		pvrdma_create_srq, pvrdma_create_srq_resp);

#define PVRDMA_PCI_VENDOR_VMWARE	0x15ad
#define PVRDMA_PCI_DEVICE_PVRDMA	0x0820

/* The device and the kernel driver only look at the low 16 bits of a
 * CQE's qp field, so handles are resolved through a table of that size
 * at most. */
#define PVRDMA_QP_HANDLE_BITS		16

/*
 * Doorbell bits as unsigned values: the ABI header spells bit 31 as
 * (1 << 31), which overflows int (UBSan rejects it at run time).
 */
#define PVRDMA_DB_QP_SEND	(1u << 30)
#define PVRDMA_DB_QP_RECV	(1u << 31)
#define PVRDMA_DB_CQ_ARM_SOL	(1u << 29)
#define PVRDMA_DB_CQ_ARM	(1u << 30)
#define PVRDMA_DB_CQ_POLL	(1u << 31)
#define PVRDMA_DB_SRQ_RECV	(1u << 30)
_Static_assert((uint32_t)PVRDMA_UAR_QP_SEND == PVRDMA_DB_QP_SEND &&
	       (uint32_t)PVRDMA_UAR_QP_RECV == PVRDMA_DB_QP_RECV &&
	       (uint32_t)PVRDMA_UAR_CQ_ARM_SOL == PVRDMA_DB_CQ_ARM_SOL &&
	       (uint32_t)PVRDMA_UAR_CQ_ARM == PVRDMA_DB_CQ_ARM &&
	       (uint32_t)PVRDMA_UAR_CQ_POLL == PVRDMA_DB_CQ_POLL &&
	       (uint32_t)PVRDMA_UAR_SRQ_RECV == PVRDMA_DB_SRQ_RECV,
	       "doorbell bits of <rdma/vmw_pvrdma-abi.h>");

/* Sizes the device derives from the counts (facts of the ABI). */
static inline uint32_t pvrdma_sq_wqe_size(uint32_t max_sge)
{
	return (uint32_t)roundup_pow_of_two(sizeof(struct pvrdma_sq_wqe_hdr) +
					    max_sge * sizeof(struct pvrdma_sge));
}

static inline uint32_t pvrdma_rq_wqe_size(uint32_t max_sge)
{
	return (uint32_t)roundup_pow_of_two(sizeof(struct pvrdma_rq_wqe_hdr) +
					    max_sge * sizeof(struct pvrdma_sge));
}

#endif /* PVRDMA_ABI_H */
