/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpvrdma: what the pvrdmadv API reports, and how libpvrdma.so.1 (the
 * library applications link, dv_lib.c) reaches the provider libibverbs
 * loaded.
 *
 * The fast path keeps as few counters as it can, each bumped by its one
 * writer without atomics; dv.c derives and sums the rest when pvrdmadv
 * asks. libpvrdma.so.1 recognises one of our devices by its ops, the
 * struct verbs_device_ops the provider registered (is_pvrdma_dev), and
 * calls through the table the device carries. Private to this source tree:
 * both sides are built and shipped together.
 */
#ifndef PVRDMA_DV_INTERNAL_H
#define PVRDMA_DV_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <infiniband/pvrdmadv.h>

/* The name of the provider's verbs_device_ops in its dynamic symbol table
 * (PROVIDER_DRIVER, main.c), which libpvrdma.so.1 compares with a device's
 * ops. */
#define PVRDMA_DV_OPS_SYMBOL "verbs_provider_pvrdma"

/* What libpvrdma.so.1 calls in the provider. */
struct pvrdma_dv_ops {
	int (*query_counters)(struct ibv_context *ctx,
			      struct pvrdmadv_counters *out, size_t outlen);
	int (*query_device)(struct ibv_context *ctx,
			    struct pvrdmadv_device_attr *out, size_t outlen);
};

/*
 * Fast-path statistics of one queue or CQ, as pvrdmadv reports them.
 * The fast path does not keep them like this: it bumps as few counters as
 * it can (struct pvrdma_wq_counters, pvrdma_cq_counters) and the rest is
 * derived when they are read (pvrdma_wq_read_stats, pvrdma_cq_read_stats).
 */
struct pvrdma_wq_stats {
	uint64_t posts;			/* post calls that reached the ring:
					 * one doorbell each */
	uint64_t wqes;
	uint64_t inline_wqes;
	uint64_t lock_acquisitions;
};

struct pvrdma_cq_stats {
	uint64_t polls;
	uint64_t empty_polls;
	uint64_t cqes;
	uint64_t db_poll;
	uint64_t db_arm;
	uint64_t db_arm_sol;
	uint64_t arms_skipped;		/* already armed: no doorbell */
	uint64_t lock_acquisitions;
};

/*
 * What the fast path of a queue counts. Each is written only inside the
 * queue's critical section (lock held, or the one thread of its thread
 * domain), so a plain increment does; readers use relaxed loads. WQEs are
 * not counted: the private producer index says how many were published.
 * Every critical section either posts (rings one doorbell) or is idle, so
 * lock acquisitions are posts + idle sections on a locked queue.
 */
struct pvrdma_wq_counters {
	uint64_t posts;			/* = doorbells */
	uint64_t idle_sections;		/* lock taken, nothing posted */
	uint64_t inline_wqes;
};

/* Same for a CQ: a poll is found or empty, never both; lock acquisitions
 * are polls + the other sections (removal of a QP's CQEs). */
struct pvrdma_cq_counters {
	uint64_t found_polls;		/* reached the CQEs */
	uint64_t empty_polls;
	uint64_t cqes;
	uint64_t db_poll;
	uint64_t db_arm;
	uint64_t db_arm_sol;
	uint64_t arms_skipped;
	uint64_t other_sections;
};

/* Counters of destroyed objects, folded into the context's totals. */
struct pvrdma_retired_stats {
	struct pvrdma_wq_stats sq, rq, srq;
	struct pvrdma_cq_stats cq;
};

/* One more event of the fast path: the writer is the only writer (queue
 * lock held, or the thread of its domain), so no atomic RMW is needed;
 * the relaxed store keeps readers in other threads race-free. */
static inline void pvrdma_stat_add(uint64_t *c, uint64_t n)
{
#if defined(__x86_64__)
	/* one unlocked add to memory: a single aligned store as far as a
	 * reader on another core can tell, and one instruction instead of
	 * the load/add/store that relaxed atomics compile to */
	__asm__("addq %1, %0" : "+m"(*c) : "er"(n));
#else
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
#endif
}

static inline uint64_t pvrdma_stat_read(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

struct pvrdma_context;
struct pvrdma_qp;
struct pvrdma_cq;
struct pvrdma_srq;
struct pvrdma_wq;

/* dv.c */
extern const struct pvrdma_dv_ops pvrdma_dv_ops;
void pvrdma_objects_init(struct pvrdma_context *ctx);
void pvrdma_wq_read_stats(const struct pvrdma_wq *wq,
			  struct pvrdma_wq_stats *out);
void pvrdma_cq_read_stats(const struct pvrdma_cq *cq,
			  struct pvrdma_cq_stats *out);
void pvrdma_track_qp(struct pvrdma_context *ctx, struct pvrdma_qp *qp);
void pvrdma_untrack_qp(struct pvrdma_context *ctx, struct pvrdma_qp *qp);
void pvrdma_track_cq(struct pvrdma_context *ctx, struct pvrdma_cq *cq);
void pvrdma_untrack_cq(struct pvrdma_context *ctx, struct pvrdma_cq *cq);
void pvrdma_track_srq(struct pvrdma_context *ctx, struct pvrdma_srq *srq);
void pvrdma_untrack_srq(struct pvrdma_context *ctx, struct pvrdma_srq *srq);
int pvrdma_dv_query_counters(struct ibv_context *ctx,
			     struct pvrdmadv_counters *out, size_t outlen);
int pvrdma_dv_query_device(struct ibv_context *ctx,
			   struct pvrdmadv_device_attr *out, size_t outlen);

#endif /* PVRDMA_DV_INTERNAL_H */
