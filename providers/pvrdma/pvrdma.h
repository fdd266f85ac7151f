/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpvrdma: objects of the provider and the contracts between its files.
 *
 *   main.c     device match, context (UAR, device limits)
 *   qp_table.c CQE.qp -> QP
 *   buf.c      ring buffers shared with the device
 *   verbs.c    query_device/port, PD, MR
 *   ah.c       address handles built in userspace (struct pvrdma_av)
 *   cq.c       CQ create/destroy/arm, poll, removal of a QP's CQEs
 *   cqe.c      CQE -> ibv_wc decoding (pure)
 *   qp.c       QP create/modify/query/destroy
 *   srq.c      SRQ create/modify/query/destroy
 *   wqe.c      WR -> WQE encoding and checks (pure)
 *   post.c     post_send, post_recv, post_srq_recv (the fast path)
 *   ring.h     index arithmetic of the shared rings
 */
#ifndef PVRDMA_PROVIDER_H
#define PVRDMA_PROVIDER_H

#include <pthread.h>
#include <stdint.h>

#include <infiniband/pvrdma_verbs_provider.h>
#include <rdma/vmw_pvrdma-abi.h>

#include "ring.h"

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
};

struct pvrdma_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
};

/*
 * A queue the provider produces into and the device consumes from (SQ, RQ,
 * SRQ). The doorbell register is reached through a pointer so the fast
 * path can run against ordinary memory in tests.
 */
struct pvrdma_wq {
	pthread_spinlock_t lock;
	struct pvrdma_ring *ring;	/* in the shared ring-state page */
	uint8_t *wqes;			/* first WQE */
	uint32_t wqe_cnt;		/* power of two */
	uint32_t wqe_shift;		/* log2(WQE size) */
	uint32_t max_sge;
	volatile uint32_t *doorbell;	/* register in the UAR */
	uint32_t doorbell_value;	/* handle | kind bit, precomputed */
};

struct pvrdma_cq {
	struct ibv_cq ibv_cq;
	pthread_spinlock_t lock;
	struct pvrdma_ring *ring;	/* rx: device produces, we consume */
	struct pvrdma_cqe *cqes;
	uint32_t cqe_cnt;		/* power of two */
	uint32_t cqn;
	volatile uint32_t *doorbell;
	uint32_t empty_polls_left;	/* countdown to a POLL doorbell */
	struct pvrdma_context *ctx;
	void *buf;
	size_t buf_size;
};

struct pvrdma_srq {
	struct ibv_srq ibv_srq;
	struct pvrdma_wq rq;
	uint32_t srqn;
	void *buf;
	size_t buf_size;
};

struct pvrdma_qp {
	struct ibv_qp ibv_qp;
	struct pvrdma_wq sq;
	struct pvrdma_wq rq;		/* unused when srq is set */
	struct pvrdma_srq *srq;
	uint32_t qp_handle;		/* doorbells and CQE.qp */
	uint32_t max_inline_data;
	enum ibv_atomic_cap atomic_cap;
	void *sbuf;			/* ring-state page + SQ WQEs */
	size_t sbuf_size;
	void *rbuf;			/* RQ WQEs; NULL with an SRQ */
	size_t rbuf_size;
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
struct pvrdma_qp *pvrdma_qp_lookup(struct pvrdma_context *ctx,
				   uint64_t cqe_qp);
int pvrdma_qp_table_add(struct pvrdma_context *ctx, struct pvrdma_qp *qp);
void pvrdma_qp_table_del(struct pvrdma_context *ctx, struct pvrdma_qp *qp);
uint32_t pvrdma_cq_poll_db_interval_from_env(void);

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
int pvrdma_req_notify_cq(struct ibv_cq *cq, int solicited_only);
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
void pvrdma_wq_reset(struct pvrdma_wq *wq);

#endif /* PVRDMA_PROVIDER_H */
