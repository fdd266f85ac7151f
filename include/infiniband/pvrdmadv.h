/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pvrdmadv: what libpvrdma, the VMware PVRDMA verbs provider, can tell an
 * application beyond the verbs API: fast-path counters (doorbells, each
 * one a VM exit on ESXi, posts, polls) and device facts that verbs cannot
 * express. Link with -lpvrdma (libpvrdma.so.1). See pvrdmadv(3).
 *
 * Structures are extensible: every call takes the size of the caller's
 * structure, fills what fits, and zeroes nothing beyond it. Fields are
 * only ever appended.
 */
#ifndef INFINIBAND_PVRDMADV_H
#define INFINIBAND_PVRDMADV_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* resource_type passed to a parent domain's alloc()/free() callbacks:
 * the ring buffers libpvrdma shares with the device, and the inline
 * bounce slots. (RDMA_DRIVER_VMW_PVRDMA << 32 | n.) */
#define PVRDMADV_RES_TYPE_QP_SQ		((uint64_t)10 << 32 | 1)
#define PVRDMADV_RES_TYPE_QP_RQ		((uint64_t)10 << 32 | 2)
#define PVRDMADV_RES_TYPE_CQ		((uint64_t)10 << 32 | 3)
#define PVRDMADV_RES_TYPE_SRQ		((uint64_t)10 << 32 | 4)
#define PVRDMADV_RES_TYPE_INLINE	((uint64_t)10 << 32 | 5)

/* Totals of one context since it was opened (live and destroyed
 * objects). */
struct pvrdmadv_counters {
	uint64_t comp_mask;		/* reserved, 0 */
	/* doorbells rung, by kind */
	uint64_t db_qp_send;
	uint64_t db_qp_recv;
	uint64_t db_srq_recv;
	uint64_t db_cq_arm;
	uint64_t db_cq_arm_sol;
	uint64_t db_cq_poll;
	/* posting: calls that put WQEs on a ring, and WQEs */
	uint64_t post_send;
	uint64_t post_recv;		/* QP receive queues and SRQs */
	uint64_t send_wqes;
	uint64_t recv_wqes;
	uint64_t inline_wqes;		/* sends whose data was copied */
	/* polling: ibv_poll_cq and ibv_start_poll calls, the ones that found
	 * nothing, and completions returned */
	uint64_t polls;
	uint64_t empty_polls;
	uint64_t cqes;
	/* CQ arms that needed no doorbell (the CQ was still armed) */
	uint64_t arms_skipped;
	/* spinlocks taken on the fast path (0 for objects of a thread
	 * domain, which take none) */
	uint64_t lock_acquisitions;
};

enum pvrdmadv_device_flags {
	/* The device has SRQs: hardware version 14 or later. */
	PVRDMADV_DEVICE_FLAG_SRQ = 1 << 0,
	/* A GID of type RoCE v2 is configured: hardware version 14 or
	 * later. */
	PVRDMADV_DEVICE_FLAG_ROCE_V2 = 1 << 1,
	/* A QP of this context got a device handle different from its QPN:
	 * the device and driver use QP namespaces. Unset means not seen
	 * (yet), not absent. */
	PVRDMADV_DEVICE_FLAG_QP_NAMESPACES = 1 << 2,
};

enum pvrdmadv_device_attr_mask {
	PVRDMADV_DEVICE_ATTR_MIN_HW_VERSION = 1 << 0,
	PVRDMADV_DEVICE_ATTR_MAX_INLINE = 1 << 1,
	PVRDMADV_DEVICE_ATTR_CQ_POLL_DB = 1 << 2,
};

struct pvrdmadv_device_attr {
	uint64_t comp_mask;		/* out: which fields below are valid */
	uint64_t flags;			/* enum pvrdmadv_device_flags */
	/* Lowest hardware version consistent with what the device reports
	 * (13 or 14): an inference, the device does not say. */
	uint32_t min_hw_version;
	/* Largest cap.max_inline_data a QP can be given (bounce slots) */
	uint32_t max_inline_data;
	/* Empty polls between two CQ POLL doorbells; 0: never */
	uint32_t cq_poll_doorbell_interval;
	uint32_t reserved;
};

/*
 * Returns 0, or EOPNOTSUPP when ctx is not driven by libpvrdma (e.g. the
 * upstream vmw_pvrdma provider), EINVAL for a NULL pointer.
 */
int pvrdmadv_query_counters(struct ibv_context *ctx,
			    struct pvrdmadv_counters *out, size_t outlen);
int pvrdmadv_query_device(struct ibv_context *ctx,
			  struct pvrdmadv_device_attr *out, size_t outlen);
/* 1 when ctx is driven by libpvrdma, else 0. */
int pvrdmadv_is_supported(struct ibv_context *ctx);

#ifdef __cplusplus
}
#endif

#endif /* INFINIBAND_PVRDMADV_H */
