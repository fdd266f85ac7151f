/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpvrdma: objects of the provider and the contracts between its files.
 *
 *   main.c     device match, context (UAR, device limits)
 *   td.c       thread domains, parent domains (custom allocators)
 *   dv.c       pvrdmadv: counters and device facts (what libpvrdma.so.1
 *              reaches through the device ops)
 *   inline.c   the per-QP bounce slots that give inline sends
 *   qp_table.c CQE.qp -> QP
 *   buf.c      ring buffers shared with the device
 *   verbs.c    query_device/port, PD, MR
 *   ah.c       address handles built in userspace (struct pvrdma_av)
 *   cq.c       CQ create/destroy/arm, poll, removal of a QP's CQEs
 *   cq_ex.c    ibv_create_cq_ex: start/next/end_poll and read_* accessors
 *   cqe.c      CQE -> ibv_wc decoding (pure)
 *   qp.c       QP create/modify/query/destroy
 *   qp_ex.c    ibv_create_qp_ex: the ibv_wr_* builders
 *   srq.c      SRQ create/modify/query/destroy
 *   wqe.c      WR -> WQE encoding and checks (pure)
 *   post.c     post_send, post_recv, post_srq_recv (the fast path)
 *   ring.h     index arithmetic of the shared rings
 */
#ifndef PVRDMA_PROVIDER_H
#define PVRDMA_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/pvrdma_verbs_provider.h>
#include <rdma/vmw_pvrdma-abi.h>

#include "ring.h"
#include "lock.h"

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

struct pvrdma_device {
	struct verbs_device vdev;
	size_t page_size;
};

/* What create/modify calls are checked against: queried once. */
struct pvrdma_limits {
	uint32_t max_qp_wr;
	uint32_t max_sge;
	uint32_t max_cqe;
	uint32_t max_srq;		/* 0: the device has no SRQs */
	uint32_t max_srq_wr;
	uint32_t max_srq_sge;
	uint32_t max_qp_rd_atom;
	uint32_t max_qp_init_rd_atom;
	uint16_t max_pkeys;
	uint8_t phys_port_cnt;
	enum ibv_atomic_cap atomic_cap;
};

/* What create_ah needs of a port: queried once, it does not change. */
struct pvrdma_port_info {
	enum ibv_port_state state;
	uint8_t link_layer;
	uint32_t port_cap_flags;
	int gid_tbl_len;
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

/* Intrusive list of a context's live QPs, CQs and SRQs. */
struct pvrdma_list {
	struct pvrdma_list *next, *prev;
};

struct pvrdma_qp;

struct pvrdma_context {
	struct verbs_context vctx;
	void *uar;			/* the doorbell page */
	size_t uar_size;
	struct pvrdma_limits limits;
	struct pvrdma_port_info *ports;	/* [phys_port_cnt], port n at n-1 */

	/* CQE.qp -> QP. Readers (poll) do not lock: a slot is cleared, and
	 * the QP's CQEs removed under its CQs' locks, before it is freed. */
	struct pvrdma_qp *_Atomic *qp_table;
	uint32_t qp_table_mask;
	pthread_mutex_t qp_table_lock;	/* writers */

	/* 0: never ring a POLL doorbell; N: on every Nth consecutive empty
	 * poll of a CQ (PVRDMA_CQ_POLL_DOORBELL). */
	uint32_t cq_poll_db_interval;
	/* Skip ARM doorbells of a CQ still armed (PVRDMA_CQ_ARM_DEDUP). */
	bool cq_arm_dedup;
	/* Largest inline payload a QP may ask for (PVRDMA_MAX_INLINE). */
	uint32_t max_inline_data;

	/* For pvrdmadv: the objects whose counters are summed. */
	pthread_mutex_t objects_lock;
	struct pvrdma_list qps, cqs, srqs;
	struct pvrdma_retired_stats retired;
	bool seen_qp_handle_ne_qpn;	/* namespaces at work */
};

struct pvrdma_td {
	struct ibv_td ibv_td;
	int refs;			/* parent domains using it (atomic) */
};

/*
 * A protection domain, or a parent domain: then protection is the PD it
 * wraps (whose handle and pdn it carries, so commands and AHs need no
 * special case), td the thread domain if any, and alloc/free the
 * application's allocator of ring buffers.
 */
struct pvrdma_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
	struct pvrdma_pd *protection;	/* NULL: an ordinary PD */
	struct pvrdma_td *td;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
	/* What still needs this PD (atomic): for a PD, the parent domains
	 * wrapping it (they carry its handle); for a parent domain, the
	 * buffers its free() must give back. Dealloc is EBUSY until 0. */
	int refs;
};

/* Memory shared with the device, and who must give it back. */
struct pvrdma_buf {
	void *addr;
	size_t size;
	struct pvrdma_pd *custom;	/* parent domain whose free() owns it */
	uint64_t resource_type;
};

/*
 * A queue the provider produces into and the device consumes from (SQ, RQ,
 * SRQ). The doorbell register is reached through a pointer so the fast
 * path can run against ordinary memory in tests.
 *
 * Only we write prod_tail, so the fast path never reads it back: prod is
 * our free-running producer count (prod_tail = prod & idx_mask), which
 * also says how many WQEs were ever posted. cons_head, the device's, is
 * read only when prod reaches room_end, the point where the ring was full
 * the last time we looked; in between the device can only have made more
 * room, never less.
 */
struct pvrdma_wq {
	struct pvrdma_lock lock;
	uint32_t wqe_cnt;		/* power of two */
	uint32_t wqe_shift;		/* log2(WQE size) */
	uint32_t max_sge;
	uint32_t idx_mask;		/* 2 * wqe_cnt - 1: index space */
	uint64_t prod;			/* see above */
	uint64_t room_end;		/* prod that would overrun the ring */
	uint64_t reset_skipped;		/* prod counted by resets, no WQE */
	uint8_t *wqes;			/* first WQE */
	struct pvrdma_ring *ring;	/* in the shared ring-state page */
	volatile uint32_t *doorbell;	/* register in the UAR */
	uint32_t doorbell_value;	/* handle | kind bit, precomputed */
	struct pvrdma_wq_counters counters;
};

/*
 * Layout for poll_cq: it reads one cache line of the CQ (the hot block;
 * the CQ is allocated line-aligned, pvrdma_calloc_aligned) and writes the
 * counters, the next line; poll sits in front of the verbs object, in the
 * line libibverbs reads anyway (ibv_poll_cq loads cq->context).
 */
struct pvrdma_cq {
	/* poll_cq for this CQ's lock kind: pvrdma_cq_init_fast. It takes
	 * the verbs object, as the caller has it: no pointer adjustment. */
	int (*poll)(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
	union {
		struct ibv_cq ibv_cq;
		struct ibv_cq_ex ibv_cq_ex;	/* created by create_cq_ex */
	};

	/* What every poll reads. */
	struct pvrdma_lock lock __attribute__((aligned(64)));
	struct pvrdma_ring *ring;	/* rx: device produces, we consume */
	struct pvrdma_cqe *cqes;
	/* the context's QP table (fixed for the context's life) at hand */
	struct pvrdma_qp *_Atomic *qp_table;
	uint32_t cqe_cnt;		/* power of two */
	uint32_t idx_mask;		/* 2 * cqe_cnt - 1 */
	uint32_t qp_table_mask;
	/* The run of empty polls (cq.c, empty_run_event): counters.found_polls
	 * when it began, and the counters.empty_polls of the poll that rings
	 * POLL next (0: none). */
	uint64_t run_mark;
	uint64_t db_at;
	/* What every poll writes. */
	struct pvrdma_cq_counters counters;

	uint64_t run_start;		/* counters.empty_polls before the run */
	uint32_t cqn;
	volatile uint32_t *doorbell;
	/* 0, PVRDMA_DB_CQ_ARM_SOL or PVRDMA_DB_CQ_ARM: what the device was
	 * last asked, until an event of this CQ is consumed */
	uint32_t armed;
	/* prod_tail and counters.found_polls just before that ARM doorbell:
	 * while both hold, the device has written no CQE since (cq.c) */
	uint32_t arm_tail;
	uint64_t arm_found_polls;
	struct pvrdma_context *ctx;
	struct pvrdma_buf buf;
	struct pvrdma_list node;	/* ctx->cqs */

	/* Extended polling (between start_poll and end_poll). */
	uint32_t ex_head;		/* next CQE to read */
	uint32_t ex_tail;		/* device's index at start_poll */
	struct ibv_wc ex_wc;		/* the current completion, decoded */
};

struct pvrdma_srq {
	struct ibv_srq ibv_srq;
	struct pvrdma_wq rq;
	uint32_t srqn;
	struct pvrdma_buf buf;
	struct pvrdma_list node;	/* ctx->srqs */
};

/*
 * The inline bounce area of a QP: one slot per SQ WQE, registered in the
 * QP's PD, so an inline WR becomes an ordinary SGE on a copy of the data.
 */
struct pvrdma_inline {
	uint8_t *slots;			/* slot i belongs to SQ WQE slot i */
	uint32_t slot_shift;		/* log2(slot size) */
	uint32_t lkey;
	struct verbs_mr mr;
	size_t size;
};

/* State of an ibv_wr_start ... ibv_wr_complete/abort batch. */
struct pvrdma_wr_batch {
	uint64_t prod;			/* producer count of the WQE being
					 * built (struct pvrdma_wq) */
	uint32_t wqes;			/* built so far */
	int err;			/* first error: the batch fails */
	struct pvrdma_sq_wqe_hdr *cur;	/* WQE being built */
	uint32_t cur_slot;
	bool need_ud_addr;
};

struct pvrdma_qp {
	union {
		struct ibv_qp ibv_qp;
		struct verbs_qp vqp;	/* comp_mask: VERBS_QP_EX */
	};
	struct pvrdma_wq sq;
	struct pvrdma_wq rq;		/* unused when srq is set */
	struct pvrdma_srq *srq;
	uint32_t qp_handle;		/* doorbells and CQE.qp */
	uint32_t send_opcodes;		/* bit per ibv_wr_opcode it may post */
	/* post_send for this QP's type and lock (pvrdma_qp_init_fast) */
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	uint32_t max_inline_data;
	enum ibv_atomic_cap atomic_cap;
	struct pvrdma_inline inl;	/* max_inline_data > 0 only */
	struct pvrdma_buf inl_buf;
	struct pvrdma_buf sbuf;		/* ring-state page + SQ WQEs */
	struct pvrdma_buf rbuf;		/* RQ WQEs; none with an SRQ */
	struct pvrdma_list node;	/* ctx->qps */
	uint64_t send_ops_flags;	/* what the ibv_wr_* builders allow */
	struct pvrdma_wr_batch batch;
	uint8_t scratch[256];		/* where a failed batch writes */
};

struct pvrdma_ah {
	struct ibv_ah ibv_ah;
	struct pvrdma_av av;
};

#define pvrdma_container(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

static inline struct pvrdma_device *to_pdev(struct ibv_device *d)
{
	return pvrdma_container(d, struct pvrdma_device, vdev.device);
}

static inline struct pvrdma_context *to_pctx(struct ibv_context *c)
{
	return pvrdma_container(c, struct pvrdma_context, vctx.context);
}

static inline struct pvrdma_pd *to_ppd(struct ibv_pd *pd)
{
	return pvrdma_container(pd, struct pvrdma_pd, ibv_pd);
}

static inline struct pvrdma_cq *to_pcq(struct ibv_cq *cq)
{
	return pvrdma_container(cq, struct pvrdma_cq, ibv_cq);
}

static inline struct pvrdma_qp *to_pqp(struct ibv_qp *qp)
{
	return pvrdma_container(qp, struct pvrdma_qp, ibv_qp);
}

static inline struct pvrdma_qp *qpx_to_pqp(struct ibv_qp_ex *qpx)
{
	return pvrdma_container(qpx, struct pvrdma_qp, vqp.qp_ex);
}

static inline struct pvrdma_cq *cqx_to_pcq(struct ibv_cq_ex *cqx)
{
	return pvrdma_container(cqx, struct pvrdma_cq, ibv_cq_ex);
}

static inline struct pvrdma_td *to_ptd(struct ibv_td *td)
{
	return pvrdma_container(td, struct pvrdma_td, ibv_td);
}

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

static inline void pvrdma_wq_lock(struct pvrdma_wq *wq)
{
	pvrdma_lock(&wq->lock);
}

static inline void pvrdma_wq_unlock(struct pvrdma_wq *wq)
{
	pvrdma_unlock(&wq->lock);
}

/* Leaves a critical section that rang no doorbell. */
static inline void pvrdma_wq_unlock_idle(struct pvrdma_wq *wq)
{
	pvrdma_stat_add(&wq->counters.idle_sections, 1);
	pvrdma_unlock(&wq->lock);
}

static inline void pvrdma_cq_lock(struct pvrdma_cq *cq)
{
	pvrdma_lock(&cq->lock);
}

static inline void pvrdma_cq_unlock(struct pvrdma_cq *cq)
{
	pvrdma_unlock(&cq->lock);
}

static inline void pvrdma_list_init(struct pvrdma_list *l)
{
	l->next = l->prev = l;
}

static inline void pvrdma_list_add(struct pvrdma_list *head,
				   struct pvrdma_list *n)
{
	n->next = head->next;
	n->prev = head;
	head->next->prev = n;
	head->next = n;
}

static inline void pvrdma_list_del(struct pvrdma_list *n)
{
	if (!n->next)
		return;		/* never added */
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = NULL;
}

static inline struct pvrdma_srq *to_psrq(struct ibv_srq *srq)
{
	return pvrdma_container(srq, struct pvrdma_srq, ibv_srq);
}

static inline struct pvrdma_ah *to_pah(struct ibv_ah *ah)
{
	return pvrdma_container(ah, struct pvrdma_ah, ibv_ah);
}

/* A doorbell is one plain 32-bit store to the UAR (the hypervisor traps
 * it). The caller has published the ring index with a release store. */
static inline void pvrdma_ring_doorbell(volatile uint32_t *reg, uint32_t val)
{
	/* keep the index store before the doorbell (a compiler barrier on
	 * x86, whose stores are not reordered with each other) */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	*reg = val;
}

_Static_assert(offsetof(struct pvrdma_cq, counters) ==
	       offsetof(struct pvrdma_cq, lock) + 64,
	       "what poll_cq reads of a CQ is one cache line");

/* Zeroed memory for an object with an alignment beyond malloc's (a CQ). */
static inline void *pvrdma_calloc_aligned(size_t align, size_t size)
{
	void *p;

	if (posix_memalign(&p, align, size))
		return NULL;
	return memset(p, 0, size);
}

static inline uint32_t pvrdma_roundup_pow2(uint32_t v)
{
	return v <= 1 ? 1 : 1u << (32 - __builtin_clz(v - 1));
}

static inline uint32_t pvrdma_log2(uint32_t pow2)
{
	return (uint32_t)__builtin_ctz(pow2);
}

static inline size_t pvrdma_align(size_t v, size_t pow2)
{
	return (v + pow2 - 1) & ~(pow2 - 1);
}

/* Sizes the device derives from the counts (facts of the ABI). */
static inline uint32_t pvrdma_sq_wqe_size(uint32_t max_sge)
{
	return pvrdma_roundup_pow2(sizeof(struct pvrdma_sq_wqe_hdr) +
				   max_sge * sizeof(struct pvrdma_sge));
}

static inline uint32_t pvrdma_rq_wqe_size(uint32_t max_sge)
{
	return pvrdma_roundup_pow2(sizeof(struct pvrdma_rq_wqe_hdr) +
				   max_sge * sizeof(struct pvrdma_sge));
}

/* ---- buf.c, qp_table.c, main.c ---- */
void *pvrdma_alloc_ring_buf(size_t size);
void pvrdma_free_ring_buf(void *buf, size_t size);
int pvrdma_buf_alloc(struct pvrdma_buf *buf, struct pvrdma_pd *pd,
		     size_t size, size_t align, uint64_t resource_type);
void pvrdma_buf_free(struct pvrdma_buf *buf);
uint32_t pvrdma_max_inline_from_env(void);
struct pvrdma_qp *pvrdma_qp_lookup(struct pvrdma_context *ctx,
				   uint64_t cqe_qp);
int pvrdma_qp_table_add(struct pvrdma_context *ctx, struct pvrdma_qp *qp);
void pvrdma_qp_table_del(struct pvrdma_context *ctx, struct pvrdma_qp *qp);
uint32_t pvrdma_cq_poll_db_interval_from_env(void);

/* ---- td.c ---- */
struct ibv_td *pvrdma_alloc_td(struct ibv_context *context,
			       struct ibv_td_init_attr *attr);
int pvrdma_dealloc_td(struct ibv_td *td);
struct ibv_pd *pvrdma_alloc_parent_domain(
	struct ibv_context *context, struct ibv_parent_domain_init_attr *attr);
/* The thread domain of a PD (NULL for an ordinary PD). */
static inline struct pvrdma_td *pvrdma_pd_td(struct ibv_pd *pd)
{
	return pd ? ((struct pvrdma_pd *)pd)->td : NULL;
}

/* The PD that protects: itself, or the one a parent domain wraps. */
static inline struct pvrdma_pd *pvrdma_pd_protection(struct ibv_pd *pd)
{
	struct pvrdma_pd *p = (struct pvrdma_pd *)pd;

	return p->protection ? p->protection : p;
}

/* ---- dv.c ---- */
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
struct pvrdmadv_counters;
struct pvrdmadv_device_attr;
int pvrdma_dv_query_counters(struct ibv_context *ctx,
			     struct pvrdmadv_counters *out, size_t outlen);
int pvrdma_dv_query_device(struct ibv_context *ctx,
			   struct pvrdmadv_device_attr *out, size_t outlen);

/* ---- inline.c ---- */
int pvrdma_inline_init(struct pvrdma_qp *qp, struct ibv_pd *pd,
		       uint32_t max_inline);
void pvrdma_inline_fini(struct pvrdma_qp *qp);
/* The slot of SQ WQE slot i. */
static inline uint8_t *pvrdma_inline_slot(const struct pvrdma_qp *qp,
					  uint32_t slot)
{
	return qp->inl.slots + ((size_t)slot << qp->inl.slot_shift);
}

/* ---- verbs.c ---- */
int pvrdma_query_device_ex(struct ibv_context *context,
			   const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size);
void pvrdma_format_fw_ver(char *buf, size_t len, uint64_t raw);
int pvrdma_query_port(struct ibv_context *context, uint8_t port,
		      struct ibv_port_attr *attr);
struct ibv_pd *pvrdma_alloc_pd(struct ibv_context *context);
int pvrdma_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *pvrdma_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			     uint64_t hca_va, int access);
int pvrdma_dereg_mr(struct verbs_mr *vmr);

/* ---- ah.c ---- */
struct ibv_ah *pvrdma_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int pvrdma_destroy_ah(struct ibv_ah *ah);
bool pvrdma_gid_is_link_local(const union ibv_gid *gid);
bool pvrdma_gid_is_multicast(const union ibv_gid *gid);
bool pvrdma_gid_is_v4mapped(const union ibv_gid *gid);
int pvrdma_mac_from_gid(const union ibv_gid *gid, uint8_t mac[6]);
void pvrdma_av_init(struct pvrdma_av *av, uint32_t pdn,
		    const struct ibv_ah_attr *attr);

/* ---- cqe.c ---- */
void pvrdma_cqe_to_wc(const struct pvrdma_cqe *cqe, uint32_t qp_num,
		      struct ibv_wc *wc);

/* ---- cq.c ---- */
struct ibv_cq *pvrdma_create_cq(struct ibv_context *context, int cqe,
				struct ibv_comp_channel *channel,
				int comp_vector);
int pvrdma_destroy_cq(struct ibv_cq *cq);
int pvrdma_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
void pvrdma_cq_init_fast(struct pvrdma_cq *cq);
int pvrdma_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void pvrdma_cq_event(struct ibv_cq *cq);
/* Counts an empty poll (the back-off of POLL doorbells). A poll that
 * found completions counts found_polls, which ends a run of empty ones. */
void pvrdma_cq_empty_poll(struct pvrdma_cq *cq);
struct ibv_cq_ex *pvrdma_create_cq_ex(struct ibv_context *context,
				      struct ibv_cq_init_attr_ex *attr);
int pvrdma_cq_ex_check(const struct ibv_cq_init_attr_ex *attr);
void pvrdma_cq_ex_init_ops(struct pvrdma_cq *cq, uint64_t wc_flags);
void pvrdma_cq_remove_qp_locked(struct pvrdma_cq *cq, uint32_t qp_handle);
void pvrdma_cq_remove_qp(struct pvrdma_cq *cq, uint32_t qp_handle);

/* ---- qp.c ---- */
struct ibv_qp *pvrdma_create_qp(struct ibv_pd *pd,
				struct ibv_qp_init_attr *attr);
int pvrdma_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		     int attr_mask);
int pvrdma_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		    int attr_mask, struct ibv_qp_init_attr *init_attr);
int pvrdma_destroy_qp(struct ibv_qp *qp);
struct ibv_qp *pvrdma_create_qp_ex(struct ibv_context *context,
				   struct ibv_qp_init_attr_ex *attr);
int pvrdma_qp_ex_check_ops(const struct pvrdma_context *ctx,
			   enum ibv_qp_type type, uint64_t send_ops_flags);
void pvrdma_qp_ex_init_ops(struct pvrdma_qp *qp, uint64_t send_ops_flags);
int pvrdma_check_modify_qp(const struct pvrdma_limits *lim,
			   const struct ibv_qp_attr *attr, int attr_mask);

/* ---- srq.c ---- */
struct ibv_srq *pvrdma_create_srq(struct ibv_pd *pd,
				  struct ibv_srq_init_attr *attr);
int pvrdma_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		      int attr_mask);
int pvrdma_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int pvrdma_destroy_srq(struct ibv_srq *srq);

/* ---- wqe.c ---- */
int pvrdma_check_send_wr(const struct pvrdma_qp *qp,
			 const struct ibv_send_wr *wr);
void pvrdma_encode_send_wqe(void *wqe, enum ibv_qp_type type,
			    const struct ibv_send_wr *wr);
uint32_t pvrdma_encode_inline(struct pvrdma_sq_wqe_hdr *hdr, uint8_t *slot,
			      uint32_t lkey, const struct ibv_sge *sg, int n);
int pvrdma_check_wr_opcode(const struct pvrdma_qp *qp,
			   enum ibv_wr_opcode op);
uint32_t pvrdma_send_opcodes(enum ibv_qp_type type,
			     enum ibv_atomic_cap atomic_cap);
extern const uint8_t pvrdma_wr_opcode_to_dev[];
int pvrdma_check_recv_wr(const struct pvrdma_wq *rq,
			 const struct ibv_recv_wr *wr);
void pvrdma_encode_recv_wqe(void *wqe, const struct ibv_recv_wr *wr);

/* ---- post.c ---- */
int pvrdma_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr);
int pvrdma_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr);
int pvrdma_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
int pvrdma_wq_post_recv(struct pvrdma_wq *rq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);
void pvrdma_qp_init_fast(struct pvrdma_qp *qp);
void pvrdma_wq_init(struct pvrdma_wq *wq, struct pvrdma_ring *ring,
		    uint8_t *wqes, uint32_t cnt, uint32_t wqe_size,
		    uint32_t max_sge, bool single_thread);
void pvrdma_wq_reset(struct pvrdma_wq *wq);
int pvrdma_wq_refill(struct pvrdma_wq *wq, uint64_t prod);
void pvrdma_wq_publish(struct pvrdma_wq *wq, uint64_t prod);

#endif /* PVRDMA_PROVIDER_H */
