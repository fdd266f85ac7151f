/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A hand-built adapter for the engine tests: one device, one context, one
 * PD, two QPs (a, b) each with its own CQ and registered buffer, rings in
 * malloc'ed memory laid out as the provider lays them out. WQEs are written
 * the way the provider writes them; doorbells go through engine_doorbell().
 */
#ifndef TEST_ENGINE_HARNESS_H
#define TEST_ENGINE_HARNESS_H

#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ring.h"

#define H_SQ_N		16u
#define H_SQ_ELEM	512u
#define H_RQ_N		16u
#define H_RQ_ELEM	128u
#define H_CQ_N		64u
#define H_BUF		(64u * 1024)

#ifdef H_REAL_EVENTS
#include "uverbs_internal.h"
#else
/* The real events.c needs a live context; these record nothing. A test
 * that defines H_REAL_EVENTS gets events.c and gives its CQs a channel. */
static void h_comp_event(struct sim_cq *cq, bool solicited)
{
}

static void h_async_event(struct sim_ucontext *uctx, uint64_t element,
			  enum ibv_event_type type, uint32_t *reported)
{
	(*reported)++;
}
#endif

__attribute__((weak)) struct sim_global sim_global;

struct h_cq {
	struct sim_cq cq;
	struct pvrdma_ring_state rs;
	struct pvrdma_cqe cqes[H_CQ_N];
};

struct h_qp {
	struct sim_qp qp;
	struct pvrdma_ring_state rs;
	uint8_t *sq_elems;
	uint8_t *rq_elems;
	struct h_cq cq;
};

struct harness {
	struct sim_dev *dev;
	struct sim_ucontext uctx;
	struct sim_pd pd;
	struct h_qp a, b;
	uint8_t *buf_a, *buf_b;
	struct sim_mr mr_a, mr_b;
};

/* One adapter per test program, like one per process. */
static struct sim_dev h_dev;

/* Numbers objects from 1 up, lowest free first, as the driver model does. */
static inline int harness_table_add(struct sim_table *t, void *obj,
				    uint32_t *num)
{
	uint32_t next = 1;

	return sim_table_alloc(t, 1, 1u << 20, &next, obj, num);
}

static inline void harness_lock(struct harness *h)
{
	pthread_mutex_lock(&h->dev->lock);
}

static inline void harness_unlock(struct harness *h)
{
	pthread_mutex_unlock(&h->dev->lock);
}

static inline void harness_init(struct harness *h)
{
	static bool dev_ready;

	memset(h, 0, sizeof(*h));
	/* the device's upcalls, as the driver model installs them */
#ifdef H_REAL_EVENTS
	sim_device_upcalls.comp_event = sim_event_comp;
	sim_device_upcalls.async_event = sim_event_async;
#else
	sim_device_upcalls.comp_event = h_comp_event;
	sim_device_upcalls.async_event = h_async_event;
#endif
	if (!dev_ready) {
		sim_dev_lock_init(&h_dev);
		h_dev.index = 0;
		h_dev.cfg.mtu = IBV_MTU_1024;
		h_dev.cfg.mac[5] = 1;
		h_dev.gid[0].raw[0] = 0xfe;
		h_dev.gid[0].raw[1] = 0x80;
		h_dev.gid[0].raw[15] = 1;
		h_dev.gid_count = 1;
		dev_ready = true;
	}
	h->dev = &h_dev;
	h->uctx.dev = h->dev;
	h->uctx.async_fd_dev = -1;
	h->pd.uctx = &h->uctx;
	h->buf_a = aligned_alloc(4096, H_BUF);
	h->buf_b = aligned_alloc(4096, H_BUF);
	memset(h->buf_a, 0, H_BUF);
	memset(h->buf_b, 0, H_BUF);

	h->mr_a = (struct sim_mr){
		.pd = &h->pd, .addr = (uintptr_t)h->buf_a,
		.iova = (uintptr_t)h->buf_a, .length = H_BUF,
		.lkey = 0x1000, .rkey = 0x1001,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};
	h->mr_b = h->mr_a;
	h->mr_b.addr = h->mr_b.iova = (uintptr_t)h->buf_b;
	h->mr_b.lkey = 0x2000;
	h->mr_b.rkey = 0x2001;
	harness_lock(h);
	/* as the driver model files them: under their lkey */
	h->mr_a.handle = h->mr_a.lkey;
	sim_table_put(&h->dev->mrs, h->mr_a.handle, &h->mr_a);
	h->mr_b.handle = h->mr_b.lkey;
	sim_table_put(&h->dev->mrs, h->mr_b.handle, &h->mr_b);
	harness_unlock(h);
}

static inline void h_cq_init(struct harness *h, struct h_cq *c)
{
	uint32_t handle;

	memset(&c->rs, 0, sizeof(c->rs));
	c->cq.uctx = &h->uctx;
	c->cq.ring.state = &c->rs.rx;	/* as the driver model sets it */
	c->cq.ring.elems = (uint8_t *)c->cqes;
	c->cq.ring.nelems = H_CQ_N;
	c->cq.ring.elem_size = sizeof(struct pvrdma_cqe);
	harness_table_add(&h->dev->cqs, &c->cq, &handle);
	c->cq.cqn = handle;
}

static inline void h_qp_init(struct harness *h, struct h_qp *q,
			     enum ibv_qp_type type)
{
	struct sim_qp *qp = &q->qp;
	uint32_t handle;

	h_cq_init(h, &q->cq);
	q->sq_elems = calloc(H_SQ_N, H_SQ_ELEM);
	q->rq_elems = calloc(H_RQ_N, H_RQ_ELEM);
	qp->type = type;
	qp->uctx = &h->uctx;
	qp->pd = &h->pd;
	qp->send_cq = &q->cq.cq;
	qp->recv_cq = &q->cq.cq;
	qp->sq = (struct sim_ring){ .state = &q->rs.tx, .elems = q->sq_elems,
				    .nelems = H_SQ_N, .elem_size = H_SQ_ELEM,
				    .max_sge = 4 };
	qp->rq = (struct sim_ring){ .state = &q->rs.rx, .elems = q->rq_elems,
				    .nelems = H_RQ_N, .elem_size = H_RQ_ELEM,
				    .max_sge = 4 };
	harness_table_add(&h->dev->qp_by_qp_handle, qp, &handle);
	qp->qp_handle = handle;
	qp->qpn = handle + 0x100;	/* the wire number differs */
	sim_table_put(&h->dev->qps, qp->qpn, qp);	/* by it */
	qp->attr.state = IBV_QPS_RESET;
	assert_int_equal(engine_qp_create(qp), 0);
}

static inline void h_modify(struct harness *h, struct sim_qp *qp,
			    enum ibv_qp_state s)
{
	enum ibv_qp_state old = qp->attr.state;

	qp->attr.state = s;
	engine_qp_modified(qp, old);
}

/* Both QPs through INIT, RTR, RTS, connected to each other. */
static inline void harness_qp_pair(struct harness *h, enum ibv_qp_type type)
{
	struct h_qp *q[2] = { &h->a, &h->b };
	int i;

	harness_lock(h);
	h_qp_init(h, &h->a, type);
	h_qp_init(h, &h->b, type);
	for (i = 0; i < 2; i++) {
		struct sim_qp_attr *a = &q[i]->qp.attr;

		a->port_num = 1;
		a->qkey = 0x11110000;
		a->path_mtu = IBV_MTU_1024;
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_REMOTE_READ |
				     IBV_ACCESS_REMOTE_ATOMIC;
		a->dest_qp_num = q[!i]->qp.qpn;
		a->rq_psn = 1000 * (!i + 1);
		a->sq_psn = 1000 * (i + 1);
		a->timeout = 14;
		a->retry_cnt = 7;
		a->rnr_retry = 7;
		a->min_rnr_timer = 1;
		a->ah_attr.is_global = 1;
		a->ah_attr.grh.dgid = h->dev->gid[0];
		h_modify(h, &q[i]->qp, IBV_QPS_INIT);
		h_modify(h, &q[i]->qp, IBV_QPS_RTR);
		h_modify(h, &q[i]->qp, IBV_QPS_RTS);
	}
	harness_unlock(h);
}

static inline void harness_fini(struct harness *h)
{
	struct h_qp *q[2] = { &h->a, &h->b };
	int i;

	harness_lock(h);
	for (i = 0; i < 2; i++) {
		engine_qp_destroy(&q[i]->qp);
		engine_cq_destroy(&q[i]->cq.cq);
		sim_table_del(&h->dev->qp_by_qp_handle, q[i]->qp.qp_handle);
		sim_table_del(&h->dev->qps, q[i]->qp.qpn);
		sim_table_del(&h->dev->cqs, q[i]->cq.cq.cqn);
		free(q[i]->sq_elems);
		free(q[i]->rq_elems);
	}
	sim_table_del(&h->dev->mrs, h->mr_a.handle);
	sim_table_del(&h->dev->mrs, h->mr_b.handle);
	harness_unlock(h);
	free(h->buf_a);
	free(h->buf_b);
}

struct send_args {
	uint64_t wr_id;
	uint32_t opcode;
	uint32_t flags;
	uint8_t *addr;
	uint32_t len;
	uint32_t lkey;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t imm;
	uint64_t compare_add, swap;
	/* UD */
	uint32_t remote_qpn, remote_qkey;
	const uint8_t *dgid;
};

/* What the provider's post_send does: fill the element, publish it, ring. */
static inline void post_send(struct h_qp *q, const struct send_args *a)
{
	struct sim_qp *qp = &q->qp;
	uint32_t tail = __atomic_load_n(&q->rs.tx.prod_tail, __ATOMIC_RELAXED);
	struct pvrdma_sq_wqe_hdr *w = sim_ring_elem(&qp->sq, tail);
	struct pvrdma_sge *sge = (void *)(w + 1);

	memset(w, 0, H_SQ_ELEM);
	w->wr_id = a->wr_id;
	w->opcode = a->opcode;
	w->send_flags = a->flags;
	w->num_sge = 1;
	w->ex.imm_data = a->imm;
	if (qp->type == IBV_QPT_UD) {
		w->wr.ud.remote_qpn = a->remote_qpn;
		w->wr.ud.remote_qkey = a->remote_qkey;
		memcpy(w->wr.ud.av.dgid, a->dgid, 16);
		w->wr.ud.av.hop_limit = 64;
	} else if (a->opcode == PVRDMA_WR_ATOMIC_CMP_AND_SWP ||
		   a->opcode == PVRDMA_WR_ATOMIC_FETCH_AND_ADD) {
		w->wr.atomic.remote_addr = a->raddr;
		w->wr.atomic.rkey = a->rkey;
		w->wr.atomic.compare_add = a->compare_add;
		w->wr.atomic.swap = a->swap;
	} else {
		w->wr.rdma.remote_addr = a->raddr;
		w->wr.rdma.rkey = a->rkey;
	}
	sge->addr = (uintptr_t)a->addr;
	sge->length = a->len;
	sge->lkey = a->lkey;
	sim_ring_store(&q->rs.tx.prod_tail, sim_ring_idx_next(tail, H_SQ_N));
	engine_doorbell(qp->uctx, PVRDMA_UAR_QP_OFFSET,
			SIM_UAR_QP_SEND | qp->qp_handle);
}

static inline void post_recv(struct h_qp *q, uint64_t wr_id, uint8_t *addr,
			     uint32_t len, uint32_t lkey)
{
	struct sim_qp *qp = &q->qp;
	uint32_t tail = __atomic_load_n(&q->rs.rx.prod_tail, __ATOMIC_RELAXED);
	struct pvrdma_rq_wqe_hdr *w = sim_ring_elem(&qp->rq, tail);
	struct pvrdma_sge *sge = (void *)(w + 1);

	memset(w, 0, H_RQ_ELEM);
	w->wr_id = wr_id;
	w->num_sge = 1;
	sge->addr = (uintptr_t)addr;
	sge->length = len;
	sge->lkey = lkey;
	sim_ring_store(&q->rs.rx.prod_tail, sim_ring_idx_next(tail, H_RQ_N));
	engine_doorbell(qp->uctx, PVRDMA_UAR_QP_OFFSET,
			SIM_UAR_QP_RECV | qp->qp_handle);
}

static inline bool cq_empty(struct h_cq *c)
{
	return sim_ring_count(&c->cq.ring) == 0;
}

/* Waits for the next CQE; a hang guard, not a timing assertion. */
static inline void poll_one(struct h_cq *c, struct pvrdma_cqe *out)
{
	struct timespec start, now;
	void *e;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (sim_ring_peek(&c->cq.ring, &e) != SIM_RING_READY) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 20)
			fail_msg("no completion arrived");
		usleep(100);
	}
	memcpy(out, e, sizeof(*out));
	sim_ring_consume(&c->cq.ring);
}

/* Gives the device time to bounce RNR NAKs (correctness does not depend
 * on how many happen). */
static inline void wait_rnr_naks(struct harness *h, int ms)
{
	usleep(ms * 10000);
}

#endif /* TEST_ENGINE_HARNESS_H */
