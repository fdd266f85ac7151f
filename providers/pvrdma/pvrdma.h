/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpvrdma: objects of the provider and the contracts between its files.
 * The device ABI as the provider uses it is pvrdma-abi.h; what pvrdmadv
 * reports and how libpvrdma.so.1 reaches the provider is dv_internal.h.
 *
 *   main.c     device match, context (UAR, device limits)
 *   td.c       thread domains, parent domains (custom allocators)
 *   dv.c       pvrdmadv: counters and device facts (what libpvrdma.so.1
 *              reaches through the device, dv_internal.h)
 *   dv_lib.c   libpvrdma.so.1, the pvrdmadv library applications link
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

#include <infiniband/driver.h>
#include <ccan/container_of.h>
#include <ccan/list.h>
#include <util/mmio.h>
#include <util/udma_barrier.h>

#include "pvrdma-abi.h"
#include "dv_internal.h"
#include "ring.h"
#include "lock.h"




struct pvrdma_device {
	struct verbs_device vdev;
	size_t page_size;
	/* what libpvrdma.so.1 calls once is_pvrdma_dev() said the device
	 * is ours (dv_internal.h) */
	const struct pvrdma_dv_ops *dv;
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



struct pvrdma_qp;

struct pvrdma_context {
	struct verbs_context vctx;
	void *uar;			/* the doorbell page */
	size_t uar_size;
	struct pvrdma_limits limits;
	struct pvrdma_port_info *ports;	/* [phys_port_cnt], port n at n-1 */

	/* CQE.qp -> QP. Readers (poll) do not lock: a slot is cleared, and
	 * the QP's CQEs removed under its CQs' locks, before it is freed. */
	struct pvrdma_qp **qp_table;	/* __atomic_* access */
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
	struct list_head qps, cqs, srqs;
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
	uint32_t *doorbell;	/* register in the UAR */
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
	struct pvrdma_qp **qp_table;	/* __atomic_* access */
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
	uint32_t *doorbell;
	/* 0, PVRDMA_DB_CQ_ARM_SOL or PVRDMA_DB_CQ_ARM: what the device was
	 * last asked, until an event of this CQ is consumed */
	uint32_t armed;
	/* prod_tail and counters.found_polls just before that ARM doorbell:
	 * while both hold, the device has written no CQE since (cq.c) */
	uint32_t arm_tail;
	uint64_t arm_found_polls;
	struct pvrdma_context *ctx;
	struct pvrdma_buf buf;
	struct list_node node;	/* ctx->cqs */

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
	struct list_node node;	/* ctx->srqs */
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
	struct list_node node;	/* ctx->qps */
	uint64_t send_ops_flags;	/* what the ibv_wr_* builders allow */
	struct pvrdma_wr_batch batch;
	uint8_t scratch[256];		/* where a failed batch writes */
};

struct pvrdma_ah {
	struct ibv_ah ibv_ah;
	struct pvrdma_av av;
};


static inline struct pvrdma_device *to_pdev(struct ibv_device *d)
{
	return container_of(d, struct pvrdma_device, vdev.device);
}

static inline struct pvrdma_context *to_pctx(struct ibv_context *c)
{
	return container_of(c, struct pvrdma_context, vctx.context);
}

static inline struct pvrdma_pd *to_ppd(struct ibv_pd *pd)
{
	return container_of(pd, struct pvrdma_pd, ibv_pd);
}

static inline struct pvrdma_cq *to_pcq(struct ibv_cq *cq)
{
	return container_of(cq, struct pvrdma_cq, ibv_cq);
}

static inline struct pvrdma_qp *to_pqp(struct ibv_qp *qp)
{
	return container_of(qp, struct pvrdma_qp, ibv_qp);
}

static inline struct pvrdma_qp *qpx_to_pqp(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct pvrdma_qp, vqp.qp_ex);
}

static inline struct pvrdma_cq *cqx_to_pcq(struct ibv_cq_ex *cqx)
{
	return container_of(cqx, struct pvrdma_cq, ibv_cq_ex);
}

static inline struct pvrdma_td *to_ptd(struct ibv_td *td)
{
	return container_of(td, struct pvrdma_td, ibv_td);
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


static inline struct pvrdma_srq *to_psrq(struct ibv_srq *srq)
{
	return container_of(srq, struct pvrdma_srq, ibv_srq);
}

static inline struct pvrdma_ah *to_pah(struct ibv_ah *ah)
{
	return container_of(ah, struct pvrdma_ah, ibv_ah);
}

/* A doorbell is one 32-bit store to the UAR (the hypervisor traps it),
 * after the ring index the caller published (and the WQEs or CQE slots it
 * covers) can be seen by the device. */
static inline void pvrdma_ring_doorbell(uint32_t *reg, uint32_t val)
{
	udma_to_device_barrier();
	mmio_write32_le(reg, htole32(val));
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
