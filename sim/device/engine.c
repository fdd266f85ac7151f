// SPDX-License-Identifier: BSD-2-Clause
/*
 * The device. Its work runs on whichever thread holds dev->lock:
 *
 *   doorbells   run on the application thread that trapped them, as a
 *               hypervisor handles an MMIO exit on the vCPU that took it
 *               (engine_doorbell: a CQ arm is in force when the store
 *               retires; QP/SRQ doorbells are queued and run by the lock
 *               holder, so a sender never waits for a busy device);
 *   POLL        an application polling an empty CQ runs a round of device
 *               work itself (receives), so its CQE needs no wake-up;
 *   receives    every other doorbell a thread runs also reads what waits
 *               on the fabric (rx_inline()): a provider that rings no
 *               POLL still gets its receives done on its own thread;
 *   the thread  one per adapter: receives when no application polls,
 *               EPOLLOUT of full links, RNR and ACK timers, kicks of the
 *               control path;
 *   requester   reads SQ WQEs from the user ring, checks local memory,
 *               sends requests over the fabric, keeps them until the
 *               responder acknowledges, retries on RNR NAKs and timeouts;
 *   responder   checks remote keys and access, moves data into place,
 *               consumes receive WQEs, acknowledges;
 *   completions CQEs written into the user CQ ring, then events.
 *
 * Everything except the doorbell queue runs with dev->lock held, so the
 * control path (uverbs) sees objects either before or after a unit of work.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "direct.h"
#include "fabric.h"
#include "ring.h"
#include "shared.h"
#include "wqe.h"

/* ---- doorbell queue ---- */

#define DBQ_SIZE	4096u	/* power of two */

/*
 * Vyukov's bounded MPMC queue, used with one consumer. Each slot carries a
 * sequence number stored relative to its index, so that all-zero memory is
 * an initialised empty queue: no set-up before the first trap.
 */
struct db_slot {
	atomic_ulong seq_rel;
	struct sim_ucontext *uctx;
	uint32_t offset;
	uint32_t value;
};

struct db_queue {
	atomic_ulong tail;		/* producers */
	unsigned long head;		/* the device thread */
	struct db_slot slot[DBQ_SIZE];
};

/* ---- per-QP transport state ---- */

struct out_wqe {
	struct sim_send_wr wr;
	uint32_t psn;
	uint8_t local_err;		/* status to complete with, 0 = none */
};

/*
 * The engine's lists of QPs (qpn hash chains, all QPs, kicks, pending
 * ACKs, QPs waiting for a full link). A QP's membership of a list is its
 * link's pprev and nothing else: no flag beside it can disagree with the
 * list, an unlink is O(1) from wherever the QP is, and linking a QP that
 * is already on its list is a no-op (a QP once linked to itself made the
 * ACK flush spin forever with dev->lock held).
 */
struct qlink {
	struct qlink *next;
	struct qlink **pprev;		/* NULL: on no list */
};

struct qlist {
	struct qlink *first;
};

#define eqp_of(l, member) \
	((struct eqp *)((uint8_t *)(l) - offsetof(struct eqp, member)))

static bool qlink_linked(const struct qlink *l)
{
	return l->pprev != NULL;
}

static void qlist_push(struct qlist *h, struct qlink *l)
{
	if (qlink_linked(l))
		return;
	l->next = h->first;
	if (l->next)
		l->next->pprev = &l->next;
	h->first = l;
	l->pprev = &h->first;
}

static void qlink_del(struct qlink *l)
{
	if (!qlink_linked(l))
		return;
	*l->pprev = l->next;
	if (l->next)
		l->next->pprev = l->pprev;
	l->next = NULL;
	l->pprev = NULL;
}

static struct qlink *qlist_pop(struct qlist *h)
{
	struct qlink *l = h->first;

	if (l)
		qlink_del(l);
	return l;
}

/* Moves every member of from to an empty to (to must stay in place while
 * it holds them: its members point at it). */
static void qlist_take(struct qlist *to, struct qlist *from)
{
	to->first = from->first;
	from->first = NULL;
	if (to->first)
		to->first->pprev = &to->first;
}

/*
 * A requester has at most max_rd_atomic READs and atomics outstanding, at
 * most the device's max_qp_init_rd_atom (16, device_attr.c); the responder
 * keeps the result of as many atomics (max_qp_rd_atom, 16), so a resend
 * of any atomic still outstanding finds its result: an atomic executes
 * once, however often it is resent.
 */
#define ATOMIC_RESULTS	16u

struct atomic_result {
	bool valid;
	uint32_t psn;
	uint64_t orig;
};

struct eqp {
	struct sim_qp *qp;
	struct engine *eng;
	struct qlink hash;		/* eng->qpn_hash[qpn % QPN_HASH] */
	struct qlink all;		/* eng->all */
	struct qlink kick;		/* eng->kicks: control path kicked */
	struct qlink ack;		/* eng->acks: an ACK is queued */
	struct qlink wait;		/* eng->waiters: waits for its link */
	bool need_resolve;

	/* requester */
	struct out_wqe *out;
	uint32_t out_cap, out_head, out_count, out_sent;
	uint32_t next_psn;
	uint64_t deadline;		/* ns; 0 = no timer */
	uint64_t rnr_until;
	uint8_t retries_left;
	uint8_t rnr_left;
	struct fab_link *link;		/* RC: the peer */
	uint8_t ud_gid[16];		/* UD: last destination resolved */
	struct fab_link *ud_link;

	uint32_t rd_inflight;		/* READs, atomics unanswered */

	/* responder */
	uint32_t epsn;
	bool nak_sent;
	struct fab_link *ack_link;
	uint32_t ack_psn;
	/* The results of the last atomics executed, for their resends. */
	struct atomic_result atomics[ATOMIC_RESULTS];
	uint32_t atomic_next;
};

#define QPN_HASH	1024u

struct engine {
	struct sim_dev *dev;
	struct db_queue dbq;
	struct fab_port *port;
	pthread_t thread;
	bool started;
	atomic_bool stop;
	atomic_bool kick_pending;
	_Atomic uint64_t last_poll_ns;	/* the last POLL doorbell */
	atomic_bool dev_set;		/* dev is known (before the start) */
	struct qlist qpn_hash[QPN_HASH];
	struct qlist all;
	struct qlist kicks;
	struct qlist acks;
	struct qlist waiters;		/* QPs waiting for a full link */
	uint64_t next_deadline;
	uint64_t now;
	/* --async-mode: the thread polls until this long after activity */
	unsigned long async_seen;
	uint64_t async_until;
};

static struct engine engines[SIM_MAX_ADAPTERS];

#define PSN_MASK	0xffffffu
/* pvrdma_av.port_pd: the PD number in bits 0-23, the port above. */
#define PVRDMA_AV_PDN_MASK	0xffffffu

/* dev->gid_type holds libibverbs' sysfs GID types: 0 = IB/RoCE v1,
 * 1 = RoCE v2 (enum ibv_gid_type_sysfs, private to libibverbs). */
#define GID_TYPE_ROCE_V2	1
/* An application that rang a POLL doorbell this recently is polling: the
 * trapping thread does the receive work, the device thread stays off the
 * sockets (a wake-up per packet would take a CPU from a poller). */
#define POLLING_NS	30000ull

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static struct engine *engine_of(struct sim_dev *dev)
{
	return dev->index < SIM_MAX_ADAPTERS ? &engines[dev->index] : NULL;
}

static void stat_add(atomic_ulong *c, unsigned long v)
{
	atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

/* a precedes b in 24-bit PSN space */
static bool psn_before(uint32_t a, uint32_t b)
{
	return ((a - b) << 8) & 0x80000000u;
}

/* ---- doorbells (any thread, signal context) ---- */

static void dbq_push(struct db_queue *q, struct sim_ucontext *uctx,
		     uint32_t offset, uint32_t value)
{
	unsigned long pos = atomic_load_explicit(&q->tail,
						 memory_order_relaxed);
	struct db_slot *s;
	long diff;

	for (;;) {
		unsigned long idx = pos & (DBQ_SIZE - 1);

		s = &q->slot[idx];
		diff = (long)(atomic_load_explicit(&s->seq_rel,
						   memory_order_acquire) +
			      idx - pos);
		if (diff == 0) {
			if (atomic_compare_exchange_weak(&q->tail, &pos,
							 pos + 1))
				break;
		} else if (diff < 0) {
			/* Full: the device drains it; never drop a doorbell. */
			sched_yield();
			pos = atomic_load(&q->tail);
		} else {
			pos = atomic_load(&q->tail);
		}
	}
	s->uctx = uctx;
	s->offset = offset;
	s->value = value;
	atomic_store_explicit(&s->seq_rel, pos + 1 - (pos & (DBQ_SIZE - 1)),
			      memory_order_release);
}

static bool dbq_pop(struct db_queue *q, struct sim_ucontext **uctx,
		    uint32_t *offset, uint32_t *value)
{
	unsigned long idx = q->head & (DBQ_SIZE - 1);
	struct db_slot *s = &q->slot[idx];

	if (atomic_load_explicit(&s->seq_rel, memory_order_acquire) + idx !=
	    q->head + 1)
		return false;
	*uctx = s->uctx;
	*offset = s->offset;
	*value = s->value;
	atomic_store_explicit(&s->seq_rel, q->head + DBQ_SIZE - idx,
			      memory_order_release);
	q->head++;
	return true;
}

static bool dbq_empty(struct db_queue *q)
{
	unsigned long idx = q->head & (DBQ_SIZE - 1);

	return atomic_load(&q->slot[idx].seq_rel) + idx != q->head + 1;
}

static void poll_hint(struct engine *eng);
static int drain_queued(struct engine *eng);
static void dev_unlock(struct engine *eng, struct sim_dev *dev);
static void doorbell_run(struct sim_dev *dev, struct sim_ucontext *uctx,
			 uint32_t offset, uint32_t value, bool late);
static void acks_flush(struct engine *eng);
static void rx_inline(struct engine *eng);

void engine_doorbell(struct sim_ucontext *uctx, uint32_t offset,
		     uint32_t value)
{
	struct sim_dev *dev = uctx->dev;
	struct sim_stats *st = &dev->stats;
	struct engine *eng = engine_of(dev);

	switch (offset) {
	case PVRDMA_UAR_QP_OFFSET:
		if (value & SIM_UAR_QP_SEND)
			stat_add(&st->db_qp_send, 1);
		if (value & SIM_UAR_QP_RECV)
			stat_add(&st->db_qp_recv, 1);
		break;
	case PVRDMA_UAR_CQ_OFFSET:
		if (value & SIM_UAR_CQ_ARM)
			stat_add(&st->db_cq_arm, 1);
		if (value & SIM_UAR_CQ_ARM_SOL)
			stat_add(&st->db_cq_arm_sol, 1);
		if (value & SIM_UAR_CQ_POLL)
			stat_add(&st->db_cq_poll, 1);
		break;
	case PVRDMA_UAR_SRQ_OFFSET:
		stat_add(&st->db_srq_recv, 1);
		break;
	default:
		stat_add(&st->db_bad, 1);
		return;
	}
	if (!eng)
		return;
	/* A doorbell may come before the first QP started the device (an
	 * SRQ filled, a CQ armed): the queue's consumer needs the adapter. */
	if (!atomic_load_explicit(&eng->dev_set, memory_order_acquire)) {
		eng->dev = dev;
		atomic_store_explicit(&eng->dev_set, true,
				      memory_order_release);
	}
	if (offset == PVRDMA_UAR_CQ_OFFSET &&
	    !(value & (SIM_UAR_CQ_ARM | SIM_UAR_CQ_ARM_SOL))) {
		poll_hint(eng);
		return;
	}
	/*
	 * The trapping thread executes the doorbell itself, the way a
	 * hypervisor handles an MMIO exit on the vCPU that took it: no
	 * hand-off to the device thread, no wake-up.
	 *
	 * A QP or SRQ doorbell only says "look at the ring": it is queued,
	 * and executed by whoever holds dev->lock, this thread if it is free.
	 * A holder drains the queue before it lets the lock go and again
	 * after (dev_unlock()); the device thread drains it every round and
	 * is woken if it sleeps: a queued doorbell is never stranded, and a
	 * sender never sleeps on the lock while the device is busy.
	 */
	if (offset != PVRDMA_UAR_CQ_OFFSET) {
		dbq_push(&eng->dbq, uctx, offset, value);
		atomic_thread_fence(memory_order_seq_cst);
		if (pthread_mutex_trylock(&dev->lock)) {
			fabric_wake(eng->port);
			return;
		}
		eng->now = now_ns();
		drain_queued(eng);
		rx_inline(eng);
		acks_flush(eng);
		dev_unlock(eng, dev);
		return;
	}
	/*
	 * A CQ arm must be in force when the store instruction retires: CQEs
	 * are written under dev->lock too, so each one is either before the
	 * arm (the consumer's poll after arming finds it) or after it (it
	 * raises the event). So the trap waits for the lock.
	 *
	 * The application holds no sim lock at a doorbell, except when a
	 * signal handler of its own rings one while the thread is inside
	 * the sim (dev->lock is an error-checking mutex: EDEADLK). Only then
	 * the arm is queued, and applied with the rules of a late arm
	 * (arm_late()).
	 */
	if (pthread_mutex_lock(&dev->lock)) {
		dbq_push(&eng->dbq, uctx, offset, value);
		fabric_wake(eng->port);
		return;
	}
	eng->now = now_ns();
	drain_queued(eng);	/* older doorbells first */
	doorbell_run(dev, uctx, offset, value, false);
	rx_inline(eng);
	acks_flush(eng);
	dev_unlock(eng, dev);
}

/* ---- completions ---- */

/* The driver points a CQ's or SRQ's ring state at the "rx" ring of its
 * state page already; the copy keeps one place to change that. */
static struct sim_ring rx_ring_of(const struct sim_ring *r)
{
	return *r;
}

static void qp_to_error(struct eqp *e);

static uint8_t network_type(struct sim_dev *dev, uint8_t gid_type,
			    const uint8_t gid[16])
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (gid_type != GID_TYPE_ROCE_V2)
		return PVRDMA_NETWORK_ROCE_V1;
	return memcmp(gid, v4mapped, 12) ? PVRDMA_NETWORK_IPV6 :
					   PVRDMA_NETWORK_IPV4;
}

/*
 * The sl of a UD receive completion on RoCE: there is no SL on Ethernet, and
 * the ConnectX adapters that carry RoCE for vSphere hosts report the packet's
 * type there instead (bit 3: a UDP header, i.e. RoCE v2; bits 2-0: the L3
 * header, 0 GRH, 1 IPv6, 2 IPv4). Programs rely on it: UCX's ud_verbs (1.13
 * to 1.18) takes the address family of the GRH area from it, and drops
 * every IPv4 datagram of a device that reports 0.
 */
static uint8_t roce_packet_type(uint8_t network_type)
{
	switch (network_type) {
	case PVRDMA_NETWORK_IPV4:
		return 0x8 | 0x2;
	case PVRDMA_NETWORK_IPV6:
		return 0x8 | 0x1;
	default:
		return 0;
	}
}

/*
 * Writes one CQE for qp into cq. A full CQ is not overwritten: the CQ is in
 * error (CQ_ERR, once) and the QP goes to the error state.
 */
static void cqe_write(struct sim_qp *qp, struct sim_cq *cq,
		      const struct pvrdma_cqe *src, bool solicited)
{
	struct sim_dev *dev = qp->uctx->dev;
	struct sim_ring ring;
	void *slot;

	if (!cq || cq->overflowed)
		return;
	ring = rx_ring_of(&cq->ring);
	if (sim_ring_reserve(&ring, &slot) != SIM_RING_READY) {
		cq->overflowed = true;
		sim_event_async(cq->uctx, cq->user_handle, IBV_EVENT_CQ_ERR,
				&cq->async_events_reported);
		if (qp->engine)
			qp_to_error(qp->engine);
		return;
	}
	memcpy(slot, src, sizeof(*src));
	if (src->status != PVRDMA_WC_SUCCESS) {
		stat_add(&dev->stats.error_cqes, 1);
		solicited = true;
	}
	/* What a late solicited arm needs to know of the pending CQEs. */
	if (!cq->cqe_solicited)
		cq->cqe_solicited = calloc(ring.nelems, 1);
	if (cq->cqe_solicited)
		cq->cqe_solicited[((uint8_t *)slot - ring.elems) /
				  ring.elem_size] = solicited;
	sim_ring_produce(&ring);	/* release: the CQE is complete */
	stat_add(&dev->stats.cqes, 1);
	sim_event_comp(cq, solicited);
}

static void cqe_init(struct pvrdma_cqe *c, struct sim_qp *qp, uint64_t wr_id,
		     uint32_t opcode, uint32_t status)
{
	memset(c, 0, sizeof(*c));
	c->wr_id = wr_id;
	c->qp = qp->qp_handle;
	c->opcode = opcode;
	c->status = status;
	c->port_num = qp->attr.port_num ? qp->attr.port_num : 1;
}

static void complete_send(struct eqp *e, const struct sim_send_wr *wr,
			  uint32_t status)
{
	struct sim_qp *qp = e->qp;
	struct pvrdma_cqe c;

	if (status == PVRDMA_WC_SUCCESS &&
	    !(wr->send_flags & IBV_SEND_SIGNALED) && !qp->sq_sig_all)
		return;
	cqe_init(&c, qp, wr->wr_id, sim_wqe_wc_opcode(wr->opcode), status);
	if (status == PVRDMA_WC_SUCCESS)
		c.byte_len = wr->total_len;
	cqe_write(qp, qp->send_cq, &c, false);
}

static void complete_recv_error(struct eqp *e, uint64_t wr_id,
				uint32_t status)
{
	struct pvrdma_cqe c;

	cqe_init(&c, e->qp, wr_id, PVRDMA_WC_RECV, status);
	cqe_write(e->qp, e->qp->recv_cq, &c, true);
}

/* ---- the error state ---- */

static struct out_wqe *out_at(struct eqp *e, uint32_t i)
{
	return &e->out[(e->out_head + i) % e->out_cap];
}

/*
 * The oldest WQE in flight retires: only now does its SQ slot go back to
 * the producer. The device keeps a fetched RC WQE in the ring until it is
 * done with everything the WQE names, since a resend (RNR, timeout) or a
 * send waiting for the socket reads its buffers again, and a provider may
 * reuse what a slot points at (inline data bounce buffers) once cons_head
 * has passed it.
 */
static void out_pop(struct eqp *e)
{
	if (e->out_sent) {
		e->out_sent--;
		if (sim_wqe_is_read_or_atomic(out_at(e, 0)->wr.opcode))
			e->rd_inflight--;
	}
	sim_ring_consume(&e->qp->sq);
	e->out_head = (e->out_head + 1) % e->out_cap;
	e->out_count--;
}

/* Everything in flight is to be sent again (timeout, NAK, RNR). */
static void out_unsend(struct eqp *e)
{
	e->out_sent = 0;
	e->rd_inflight = 0;
}

/* Every WQE still queued completes with WR_FLUSH_ERR, in order. */
static void qp_flush(struct eqp *e)
{
	struct sim_qp *qp = e->qp;
	struct sim_send_wr swr;
	struct sim_recv_wr rwr;
	uint32_t n;
	void *elem;

	while (e->out_count) {
		swr = out_at(e, 0)->wr;
		out_pop(e);	/* slot back before the CQE shows it done */
		complete_send(e, &swr, PVRDMA_WC_WR_FLUSH_ERR);
	}
	e->deadline = 0;
	/* A ring holds at most nelems WQEs: more means the indices are
	 * being rewritten under us (the ring-state page shared with a CQ's
	 * buffer, say), and the device stops rather than spin. */
	if (qp->sq.state && qp->sq.nelems) {
		for (n = 0; n < qp->sq.nelems &&
			    sim_ring_peek(&qp->sq, &elem) == SIM_RING_READY;
		     n++) {
			sim_wqe_decode_send(&qp->sq, elem, qp->type, &swr);
			sim_ring_consume(&qp->sq);
			stat_add(&qp->uctx->dev->stats.send_wqes, 1);
			complete_send(e, &swr, PVRDMA_WC_WR_FLUSH_ERR);
		}
	}
	if (!qp->srq && qp->rq.state && qp->rq.nelems) {
		for (n = 0; n < qp->rq.nelems &&
			    sim_ring_peek(&qp->rq, &elem) == SIM_RING_READY;
		     n++) {
			sim_wqe_decode_recv(&qp->rq, elem, &rwr);
			sim_ring_consume(&qp->rq);
			stat_add(&qp->uctx->dev->stats.recv_wqes, 1);
			complete_recv_error(e, rwr.wr_id,
					    PVRDMA_WC_WR_FLUSH_ERR);
		}
	}
}

/* The device moves a QP to the error state after a completion error (no
 * async event: the error CQE tells the application). */
static void qp_to_error(struct eqp *e)
{
	struct sim_qp *qp = e->qp;

	if (qp->attr.state == IBV_QPS_ERR)
		return;
	qp->attr.state = IBV_QPS_ERR;
	shared_qp_publish(qp->uctx->dev, qp);	/* same-host requesters */
	qp_flush(e);
	if (qp->srq)
		sim_event_async(qp->uctx, qp->user_handle,
				IBV_EVENT_QP_LAST_WQE_REACHED,
				&qp->async_events_reported);
}

/* A ring the driver corrupted: catastrophic for the QP. */
static void qp_fatal(struct eqp *e)
{
	struct sim_qp *qp = e->qp;

	if (qp->attr.state == IBV_QPS_ERR)
		return;
	sim_event_async(qp->uctx, qp->user_handle, IBV_EVENT_QP_FATAL,
			&qp->async_events_reported);
	qp_to_error(e);
}

/* ---- timers ---- */

/* IB min_rnr_timer encoding -> microseconds. */
static const uint32_t rnr_timer_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* Local ACK timeout: 4.096 us * 2^timeout, at least 1 ms (the sim's
 * scheduling granularity), at most 8 s; 0 (infinite) waits 8 s per try
 * so that a vanished peer never hangs a QP forever. */
static uint64_t ack_timeout_ns(const struct sim_qp *qp)
{
	uint64_t ns;

	if (!qp->attr.timeout || qp->attr.timeout > 31)
		return 8000000000ull;
	ns = 4096ull << qp->attr.timeout;
	if (ns < 1000000ull)
		ns = 1000000ull;
	if (ns > 8000000000ull)
		ns = 8000000000ull;
	return ns;
}

static void engine_deadline(struct engine *eng, uint64_t when)
{
	if (!eng->next_deadline || when < eng->next_deadline)
		eng->next_deadline = when;
}

/* The local ACK timer of the oldest unacknowledged request. */
static void arm_timer(struct eqp *e, uint64_t when)
{
	e->deadline = when;
	engine_deadline(e->eng, when);
}

/* The RNR timer: a separate deadline, so that waiting out an RNR NAK
 * never counts as an ACK timeout (that would spend the retry count). */
static void arm_rnr_timer(struct eqp *e, uint64_t when)
{
	e->rnr_until = when;
	engine_deadline(e->eng, when);
}

/* ---- requester ---- */

static void link_wait(struct eqp *e)
{
	qlist_push(&e->eng->waiters, &e->wait);
}

static void sq_progress(struct eqp *e);

/* QPs whose link drained (or died: their timers take over) send on. */
static int run_waiters(struct engine *eng)
{
	struct qlist todo;
	struct qlink *l;
	struct eqp *e;
	int n = 0;

	/* A QP that finds its link full again waits on eng->waiters anew,
	 * not on the list being walked. */
	qlist_take(&todo, &eng->waiters);
	while ((l = qlist_pop(&todo))) {
		e = eqp_of(l, wait);
		if (fabric_link_busy(e->link)) {
			qlist_push(&eng->waiters, &e->wait);
			continue;
		}
		sq_progress(e);
		n++;
	}
	return n;
}

/* Where the device reads or writes an SGE list or a remote range: one
 * piece per SGE, more where an MR kept pages the application gave up. */
struct local_iov {
	struct iovec iov[SIM_MAX_IOV];
	int n;
};

/* Checks the local SGEs of wr; need is the access the device needs. */
static uint32_t map_sges(struct sim_qp *qp, const struct pvrdma_sge *sge,
			 uint32_t num_sge, int need, struct local_iov *li)
{
	uint32_t i;
	int n;

	li->n = 0;
	for (i = 0; i < num_sge; i++) {
		if (!sge[i].length)
			continue;
		n = SIM_MAX_IOV - li->n;
		if (sim_mr_map(qp->uctx->dev, qp->pd, sge[i].lkey, false,
			       sge[i].addr, sge[i].length, need,
			       li->iov + li->n, &n))
			return PVRDMA_WC_LOC_PROT_ERR;
		li->n += n;
	}
	return PVRDMA_WC_SUCCESS;
}

static void hdr_init(struct fab_hdr *h, struct sim_qp *qp, uint8_t type,
		     uint8_t gid_index)
{
	struct sim_dev *dev = qp->uctx->dev;

	memset(h, 0, sizeof(*h));
	h->magic = FAB_MAGIC;
	h->type = type;
	h->src_qpn = qp->qpn;
	if (gid_index >= SIM_GID_TABLE_LEN)
		gid_index = 0;
	memcpy(h->src_gid, dev->gid[gid_index].raw, 16);
	h->gid_type = dev->gid_type[gid_index];
	memcpy(h->smac, dev->cfg.mac, 6);
	h->hop_limit = 64;
}

/* Sends the request of one RC WQE; a local protection error is reported
 * instead (the WQE completes with it once it is the oldest). */
static uint32_t rc_transmit(struct eqp *e, struct out_wqe *o)
{
	struct sim_qp *qp = e->qp;
	const struct sim_send_wr *wr = &o->wr;
	struct fab_hdr h;
	struct local_iov li;
	uint32_t st;
	int need = 0;

	if (sim_wqe_is_read_or_atomic(wr->opcode))
		need = IBV_ACCESS_LOCAL_WRITE;
	st = map_sges(qp, wr->sge, wr->num_sge, need, &li);
	if (st)
		return st;

	hdr_init(&h, qp, FAB_REQ, qp->attr.ah_attr.grh.sgid_index);
	memcpy(h.dst_gid, qp->attr.ah_attr.grh.dgid.raw, 16);
	h.opcode = wr->opcode;
	h.dst_qpn = qp->attr.dest_qp_num;
	h.psn = o->psn;
	h.imm = wr->imm_data;
	h.rkey = wr->rkey;
	h.remote_addr = wr->remote_addr;
	h.atomic_a = wr->compare_add;
	h.atomic_b = wr->swap;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		h.flags |= FAB_F_SOLICITED;
	if (sim_wqe_is_read_or_atomic(wr->opcode)) {
		h.read_len = wr->total_len;
		li.n = 0;
	} else {
		h.len = wr->total_len;
		stat_add(&qp->uctx->dev->stats.bytes_tx, wr->total_len);
	}
	/* A payload the device cannot read: nothing was sent. */
	if (!fabric_send(e->eng->port, e->link, &h, li.iov, li.n) &&
	    errno == EFAULT)
		return PVRDMA_WC_LOC_PROT_ERR;
	return PVRDMA_WC_SUCCESS;
}

static uint32_t mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128u << mtu : 1024;
}

/* UD: best effort, complete at once. */
static uint32_t ud_send(struct eqp *e, const struct sim_send_wr *wr)
{
	struct sim_qp *qp = e->qp;
	struct sim_dev *dev = qp->uctx->dev;
	struct fab_hdr h;
	struct local_iov li;
	uint32_t st;

	/* The AH names its PD in the AV (port_pd): one of another PD than
	 * the QP's is no address for it, and the WR fails as rxe's
	 * requester fails it when the AH's PD is not the QP's. */
	if ((wr->av.port_pd & PVRDMA_AV_PDN_MASK) != qp->pd->pdn)
		return PVRDMA_WC_LOC_QP_OP_ERR;
	st = map_sges(qp, wr->sge, wr->num_sge, 0, &li);
	if (st)
		return st;
	if (wr->total_len > mtu_bytes(dev->cfg.mtu))
		return PVRDMA_WC_LOC_LEN_ERR;
	if (wr->av.gid_index >= dev->gid_count)
		return PVRDMA_WC_LOC_QP_OP_ERR;

	hdr_init(&h, qp, FAB_UD_SEND, wr->av.gid_index);
	memcpy(h.dst_gid, wr->av.dgid, 16);
	h.opcode = wr->opcode;
	h.dst_qpn = wr->remote_qpn;
	h.imm = wr->imm_data;
	/* A Q_Key with the high bit set means "use the QP's own". */
	h.qkey = (wr->remote_qkey & 0x80000000u) ? qp->attr.qkey :
						    wr->remote_qkey;
	h.hop_limit = wr->av.hop_limit;
	h.tclass = (wr->av.sl_tclass_flowlabel >> 20) & 0xff;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		h.flags |= FAB_F_SOLICITED;
	h.len = wr->total_len;

	if (!fabric_link_alive(e->ud_link) || memcmp(e->ud_gid, wr->av.dgid, 16)) {
		e->ud_link = fabric_resolve(e->eng->port, wr->av.dgid);
		memcpy(e->ud_gid, wr->av.dgid, 16);
	}
	if (fabric_send(e->eng->port, e->ud_link, &h, li.iov, li.n))
		stat_add(&dev->stats.bytes_tx, wr->total_len);
	else if (errno == EFAULT)
		return PVRDMA_WC_LOC_PROT_ERR;
	return PVRDMA_WC_SUCCESS;
}

static void rc_resolve(struct eqp *e)
{
	struct sim_qp *qp = e->qp;

	e->need_resolve = false;
	if (!(qp->attr.ah_attr.is_global))
		e->link = NULL;	/* RoCE routes by GID only */
	else
		e->link = fabric_resolve(e->eng->port,
					 qp->attr.ah_attr.grh.dgid.raw);
}

/* The oldest WQE failed locally: complete it, then the QP is in error. */
static void complete_local_error(struct eqp *e)
{
	struct out_wqe *o = out_at(e, 0);
	struct sim_send_wr wr = o->wr;
	uint32_t st = o->local_err;

	out_pop(e);
	complete_send(e, &wr, st);
	qp_to_error(e);
}

static void sq_drained_check(struct eqp *e)
{
	struct sim_qp *qp = e->qp;

	if (qp->attr.state != IBV_QPS_SQD || !qp->attr.sq_draining ||
	    e->out_count)
		return;
	qp->attr.sq_draining = 0;
	if (qp->attr.en_sqd_async_notify)
		sim_event_async(qp->uctx, qp->user_handle,
				IBV_EVENT_SQ_DRAINED,
				&qp->async_events_reported);
}

/* READs and atomics a QP may have outstanding. 0 would stall them for
 * good; a QP that did not raise it from 0 gets one at a time. */
static uint32_t rd_atomic_limit(const struct sim_qp *qp)
{
	return qp->attr.max_rd_atomic ? qp->attr.max_rd_atomic : 1;
}

/* Fetches what the SQ ring holds and sends what may be sent. */
static void sq_progress(struct eqp *e)
{
	struct sim_qp *qp = e->qp;
	struct sim_dev *dev = qp->uctx->dev;
	enum ibv_qp_state state = qp->attr.state;
	enum sim_ring_status rs;
	const struct sim_send_wr *direct_wrs;
	unsigned int ndirect, i;
	struct out_wqe *o;
	void *elem;
	uint32_t st;

	if (state == IBV_QPS_ERR) {
		qp_flush(e);
		return;
	}
	if (state != IBV_QPS_RTS && state != IBV_QPS_SQD)
		return;		/* WQEs wait in the ring */
	if (!qp->sq.state || !qp->sq.nelems)
		return;
	if (e->need_resolve)
		rc_resolve(e);

	while (state == IBV_QPS_RTS && e->out_count < e->out_cap) {
		/* past the WQEs in flight, which stay in the ring (out_pop) */
		rs = sim_ring_peek_at(&qp->sq, e->out_count, &elem);
		if (rs == SIM_RING_INVALID) {
			qp_fatal(e);
			return;
		}
		if (rs != SIM_RING_READY)
			break;
		o = out_at(e, e->out_count);
		memset(o, 0, offsetof(struct out_wqe, wr.sge));
		st = sim_wqe_decode_send(&qp->sq, elem, qp->type, &o->wr);
		stat_add(&dev->stats.send_wqes, 1);
		o->local_err = st;
		if (qp->type == IBV_QPT_UD) {
			/* a datagram leaves at once: nothing to keep */
			sim_ring_consume(&qp->sq);
			if (!st)
				st = ud_send(e, &o->wr);
			complete_send(e, &o->wr, st);
			if (st) {
				qp_to_error(e);
				return;
			}
			continue;
		}
		/* Same-host target: executed here, in one copy, once nothing
		 * of the QP is in flight on the fabric (per-QP order). */
		if (!st && !e->out_count && !e->rnr_until &&
		    (ndirect = direct_execute(qp, e->link, &o->wr, &st,
					      &direct_wrs))) {
			for (i = 0; i < ndirect; i++) {
				sim_ring_consume(&qp->sq);
				complete_send(e, &direct_wrs[i],
					      i + 1 < ndirect ? 0 : st);
				/* in error (a CQ overflow): flushed */
				if (qp->attr.state != IBV_QPS_RTS)
					return;
			}
			if (st) {
				qp_to_error(e);
				return;
			}
			continue;
		}
		o->psn = e->next_psn;
		e->next_psn = (e->next_psn + 1) & PSN_MASK;
		e->out_count++;
	}

	while (e->out_sent < e->out_count && e->eng->now >= e->rnr_until) {
		o = out_at(e, e->out_sent);
		if (fabric_link_busy(e->link)) {
			/* The socket is full: wait for it to drain rather
			 * than copy the payload (the WQE stays unsent). */
			link_wait(e);
			break;
		}
		if (!o->local_err && (o->wr.send_flags & IBV_SEND_FENCE) &&
		    e->out_sent)
			break;	/* fence: earlier reads/atomics finish first */
		if (!o->local_err &&
		    sim_wqe_is_read_or_atomic(o->wr.opcode) &&
		    e->rd_inflight >= rd_atomic_limit(qp))
			break;	/* the responder's resources are taken */
		if (o->local_err) {
			if (e->out_sent)
				break;	/* completes once it is the oldest */
			complete_local_error(e);
			return;
		}
		st = rc_transmit(e, o);
		if (st) {
			o->local_err = st;
			continue;
		}
		e->out_sent++;
		if (sim_wqe_is_read_or_atomic(o->wr.opcode))
			e->rd_inflight++;
		if (!e->deadline)
			arm_timer(e, e->eng->now + ack_timeout_ns(qp));
	}
	sq_drained_check(e);
}

/* Responses acknowledge every request before psn (implicitly) and, for an
 * ACK, psn itself. READs and atomics complete only with their data. */
static void ack_upto(struct eqp *e, uint32_t psn, bool inclusive)
{
	struct sim_send_wr wr;
	struct out_wqe *o;
	bool progress = false;

	while (e->out_count && e->out_sent) {
		o = out_at(e, 0);
		if (!psn_before(o->psn, psn) && !(inclusive && o->psn == psn))
			break;
		if (sim_wqe_is_read_or_atomic(o->wr.opcode))
			break;
		/* The SQ slot goes back before the CQE appears: an
		 * application that posts one WR per completion (perftest's
		 * tx_depth) must find the slot free. */
		wr = o->wr;
		out_pop(e);
		complete_send(e, &wr, PVRDMA_WC_SUCCESS);
		progress = true;
	}
	if (progress) {
		e->retries_left = e->qp->attr.retry_cnt;
		e->rnr_left = e->qp->attr.rnr_retry;
		e->deadline = 0;
		if (e->out_sent)
			arm_timer(e, e->eng->now + ack_timeout_ns(e->qp));
	}
	if (e->out_count && !e->out_sent && out_at(e, 0)->local_err)
		complete_local_error(e);
}

static void requester_fail(struct eqp *e, uint32_t status)
{
	struct out_wqe *o = out_at(e, 0);
	struct sim_send_wr wr = o->wr;

	out_pop(e);
	complete_send(e, &wr, status);
	qp_to_error(e);
}

/* The response to the READ or atomic at the head of the queue. */
static void read_atomic_done(struct eqp *e, const struct fab_hdr *h,
			     struct fab_rx *rx)
{
	struct sim_qp *qp = e->qp;
	struct out_wqe *o = out_at(e, 0);
	struct local_iov li;
	struct sim_send_wr wr;
	uint64_t val = h->atomic_a;

	if (map_sges(qp, o->wr.sge, o->wr.num_sge, IBV_ACCESS_LOCAL_WRITE,
		     &li)) {
		requester_fail(e, PVRDMA_WC_LOC_PROT_ERR);
		return;
	}
	if (h->type == FAB_READ_RESP) {
		if (!fab_rx_read(rx, li.iov, li.n)) {
			if (rx->fault)
				requester_fail(e, PVRDMA_WC_LOC_PROT_ERR);
			return;		/* lost: the timer resends */
		}
		stat_add(&qp->uctx->dev->stats.bytes_rx, h->len);
	} else {
		/* the original value lands in the local SGE(s) */
		struct fab_rx mem = { .mem = (void *)&val, .left = 8 };

		if (!fab_rx_read(&mem, li.iov, li.n)) {
			requester_fail(e, PVRDMA_WC_LOC_PROT_ERR);
			return;
		}
	}
	wr = o->wr;
	out_pop(e);
	complete_send(e, &wr, PVRDMA_WC_SUCCESS);
	e->retries_left = qp->attr.retry_cnt;
	e->rnr_left = qp->attr.rnr_retry;
	e->deadline = 0;
	if (e->out_sent)
		arm_timer(e, e->eng->now + ack_timeout_ns(qp));
}

static uint32_t nak_status(uint8_t code)
{
	switch (code) {
	case FAB_NAK_REM_ACCESS:
		return PVRDMA_WC_REM_ACCESS_ERR;
	case FAB_NAK_INV_REQ:
		return PVRDMA_WC_REM_INV_REQ_ERR;
	default:
		return PVRDMA_WC_REM_OP_ERR;
	}
}

static void requester_rx(struct eqp *e, const struct fab_hdr *h,
			 struct fab_rx *rx)
{
	struct sim_qp *qp = e->qp;

	if (qp->type != IBV_QPT_RC || !e->out_count)
		return;
	if (qp->attr.state != IBV_QPS_RTS && qp->attr.state != IBV_QPS_SQD)
		return;

	switch (h->type) {
	case FAB_ACK:
		ack_upto(e, h->psn, true);
		break;
	case FAB_READ_RESP:
	case FAB_ATOMIC_RESP:
		ack_upto(e, h->psn, false);
		if (e->out_count && e->out_sent && out_at(e, 0)->psn == h->psn)
			read_atomic_done(e, h, rx);
		break;
	case FAB_NAK:
		ack_upto(e, h->psn, false);
		if (!e->out_count || !e->out_sent ||
		    out_at(e, 0)->psn != h->psn)
			break;	/* stale */
		if (h->opcode == FAB_NAK_SEQ) {
			out_unsend(e);	/* go back to psn */
		} else if (h->opcode == FAB_NAK_RNR) {
			if (qp->attr.rnr_retry != 7 && !e->rnr_left--) {
				requester_fail(e,
					       PVRDMA_WC_RNR_RETRY_EXC_ERR);
				return;
			}
			/* Nothing is in flight until the RNR timer resends:
			 * the ACK timer restarts with the resend. */
			out_unsend(e);
			e->deadline = 0;
			arm_rnr_timer(e, e->eng->now +
				      1000ull * rnr_timer_us[h->rkey & 31]);
		} else {
			requester_fail(e, nak_status(h->opcode));
			return;
		}
		break;
	default:
		return;
	}
	sq_progress(e);
}

/* ---- responder ---- */

static void send_ctrl(struct eqp *e, struct fab_link *to, uint8_t type,
		      uint8_t code, uint32_t psn, uint32_t dst_qpn)
{
	struct fab_hdr h;

	hdr_init(&h, e->qp, type, e->qp->attr.ah_attr.grh.sgid_index);
	h.opcode = code;
	h.psn = psn;
	h.dst_qpn = dst_qpn;
	if (code == FAB_NAK_RNR && type == FAB_NAK)
		h.rkey = e->qp->attr.min_rnr_timer;
	fabric_send(e->eng->port, to, &h, NULL, 0);
}

/* A queued ACK goes out before any other response of the QP. */
static void ack_flush_one(struct eqp *e)
{
	if (!qlink_linked(&e->ack))
		return;
	qlink_del(&e->ack);
	send_ctrl(e, e->ack_link, FAB_ACK, 0, e->ack_psn,
		  e->qp->attr.dest_qp_num);
}

static void ack_queue(struct eqp *e, struct fab_link *to, uint32_t psn)
{
	if (qlink_linked(&e->ack) && e->ack_link != to)
		ack_flush_one(e);
	e->ack_link = to;
	e->ack_psn = psn;
	qlist_push(&e->eng->acks, &e->ack);
}

static void acks_flush(struct engine *eng)
{
	while (eng->acks.first)
		ack_flush_one(eqp_of(eng->acks.first, ack));
}

static void nak(struct eqp *e, struct fab_link *to, uint8_t code,
		uint32_t psn, uint32_t dst_qpn)
{
	ack_flush_one(e);
	send_ctrl(e, to, FAB_NAK, code, psn, dst_qpn);
}

/* The receive ring the QP takes its receive WQEs from. */
static struct sim_ring recv_ring(struct sim_qp *qp)
{
	return qp->srq ? rx_ring_of(&qp->srq->ring) : qp->rq;
}

static void srq_limit_check(struct sim_srq *srq)
{
	struct sim_ring r = rx_ring_of(&srq->ring);
	int64_t n;

	if (!srq->limit)
		return;
	n = sim_ring_count(&r);
	if (n >= 0 && n < srq->limit) {
		srq->limit = 0;	/* fires once, then disarmed */
		sim_event_async(srq->uctx, srq->user_handle,
				IBV_EVENT_SRQ_LIMIT_REACHED,
				&srq->async_events_reported);
	}
}

enum recv_take { RECV_NONE, RECV_OK, RECV_BAD };

/* Peeks the next receive WQE (not consumed until recv_consume). */
static enum recv_take recv_peek(struct sim_qp *qp, struct sim_recv_wr *rwr)
{
	struct sim_ring r = recv_ring(qp);
	enum sim_ring_status rs;
	void *elem;

	if (!r.state || !r.nelems)
		return RECV_NONE;
	rs = sim_ring_peek(&r, &elem);
	if (rs == SIM_RING_INVALID)
		return RECV_BAD;
	if (rs != SIM_RING_READY)
		return RECV_NONE;
	if (sim_wqe_decode_recv(&r, elem, rwr))
		rwr->num_sge = UINT32_MAX;	/* completes LOC_LEN_ERR */
	return RECV_OK;
}

static void recv_consume(struct sim_qp *qp)
{
	struct sim_ring r = recv_ring(qp);

	sim_ring_consume(&r);
	stat_add(&qp->uctx->dev->stats.recv_wqes, 1);
	if (qp->srq)
		srq_limit_check(qp->srq);
}

static void recv_complete(struct sim_qp *qp, const struct sim_recv_wr *rwr,
			  const struct fab_hdr *h, uint32_t opcode,
			  uint32_t byte_len, uint32_t wc_flags)
{
	struct pvrdma_cqe c;

	cqe_init(&c, qp, rwr->wr_id, opcode, PVRDMA_WC_SUCCESS);
	c.byte_len = byte_len;
	c.imm_data = h->imm;
	c.src_qp = h->src_qpn;
	c.wc_flags = wc_flags;
	if (h->opcode == PVRDMA_WR_SEND_WITH_IMM ||
	    h->opcode == PVRDMA_WR_RDMA_WRITE_WITH_IMM)
		c.wc_flags |= PVRDMA_WC_WITH_IMM;
	else
		c.imm_data = 0;
	memcpy(c.smac, h->smac, 6);
	c.network_hdr_type = network_type(qp->uctx->dev, h->gid_type,
					  h->src_gid);
	if (wc_flags & PVRDMA_WC_GRH)
		c.sl = roce_packet_type(c.network_hdr_type);
	cqe_write(qp, qp->recv_cq, &c, h->flags & FAB_F_SOLICITED);
}

/* A responder-side error: the QP is in error, the requester is told. */
static void responder_fail(struct eqp *e, struct fab_link *from,
			   const struct fab_hdr *h, uint8_t code)
{
	nak(e, from, code, h->psn, h->src_qpn);
	qp_to_error(e);
}

static void rc_recv_message(struct eqp *e, struct fab_link *from,
			    const struct fab_hdr *h, struct fab_rx *rx,
			    const struct local_iov *write_dst)
{
	struct sim_qp *qp = e->qp;
	struct sim_recv_wr rwr;
	struct local_iov li;
	enum recv_take t = recv_peek(qp, &rwr);
	bool is_write = h->opcode == PVRDMA_WR_RDMA_WRITE_WITH_IMM;

	if (t == RECV_BAD) {
		qp_fatal(e);
		return;
	}
	if (t == RECV_NONE) {
		e->nak_sent = true;
		nak(e, from, FAB_NAK_RNR, h->psn, h->src_qpn);
		return;
	}
	if (rwr.num_sge == UINT32_MAX) {
		recv_consume(qp);
		complete_recv_error(e, rwr.wr_id, PVRDMA_WC_LOC_LEN_ERR);
		responder_fail(e, from, h, FAB_NAK_REM_OP);
		return;
	}
	if (!is_write) {
		if (map_sges(qp, rwr.sge, rwr.num_sge, IBV_ACCESS_LOCAL_WRITE,
			     &li)) {
			recv_consume(qp);
			complete_recv_error(e, rwr.wr_id,
					    PVRDMA_WC_LOC_PROT_ERR);
			responder_fail(e, from, h, FAB_NAK_REM_OP);
			return;
		}
		if (h->len > rwr.total_len) {
			recv_consume(qp);
			complete_recv_error(e, rwr.wr_id,
					    PVRDMA_WC_LOC_LEN_ERR);
			responder_fail(e, from, h, FAB_NAK_INV_REQ);
			return;
		}
		if (!fab_rx_read(rx, li.iov, li.n)) {
			if (rx->fault) {
				recv_consume(qp);
				complete_recv_error(e, rwr.wr_id,
						    PVRDMA_WC_LOC_PROT_ERR);
				responder_fail(e, from, h, FAB_NAK_REM_OP);
			}
			return;
		}
	} else if (!fab_rx_read(rx, write_dst->iov, write_dst->n)) {
		if (rx->fault)
			responder_fail(e, from, h, FAB_NAK_REM_ACCESS);
		return;
	}
	recv_consume(qp);
	recv_complete(qp, &rwr, h, is_write ? PVRDMA_WC_RECV_RDMA_WITH_IMM :
			  PVRDMA_WC_RECV, h->len, 0);
	stat_add(&qp->uctx->dev->stats.bytes_rx, h->len);
	e->epsn = (h->psn + 1) & PSN_MASK;
	e->nak_sent = false;
	ack_queue(e, from, h->psn);
}

/* Checks an incoming RDMA/atomic against the QP's rights and the rkey;
 * ri gets where the bytes are. */
static bool remote_check(struct eqp *e, const struct fab_hdr *h,
			 uint64_t len, int need, struct local_iov *ri)
{
	struct sim_qp *qp = e->qp;

	if ((qp->attr.qp_access_flags & need) != need)
		return false;
	ri->n = SIM_MAX_IOV;
	return sim_mr_map(qp->uctx->dev, qp->pd, h->rkey, true,
			  h->remote_addr, len, need, ri->iov, &ri->n) ==
	       SIM_ACCESS_OK;
}

static void rc_read(struct eqp *e, struct fab_link *from,
		    const struct fab_hdr *h)
{
	struct fab_hdr r;
	struct local_iov ri;

	if (!remote_check(e, h, h->read_len, IBV_ACCESS_REMOTE_READ, &ri)) {
		responder_fail(e, from, h, FAB_NAK_REM_ACCESS);
		return;
	}
	ack_flush_one(e);
	hdr_init(&r, e->qp, FAB_READ_RESP,
		 e->qp->attr.ah_attr.grh.sgid_index);
	r.dst_qpn = h->src_qpn;
	r.psn = h->psn;
	r.len = h->read_len;
	if (!fabric_send(e->eng->port, from, &r, ri.iov, ri.n) &&
	    errno == EFAULT) {
		responder_fail(e, from, h, FAB_NAK_REM_ACCESS);
		return;
	}
	stat_add(&e->qp->uctx->dev->stats.bytes_tx, h->read_len);
	if (h->psn == e->epsn) {
		e->epsn = (h->psn + 1) & PSN_MASK;
		e->nak_sent = false;
	}
}

static const struct atomic_result *atomic_result_of(const struct eqp *e,
						    uint32_t psn)
{
	unsigned int i;

	for (i = 0; i < ATOMIC_RESULTS; i++)
		if (e->atomics[i].valid && e->atomics[i].psn == psn)
			return &e->atomics[i];
	return NULL;
}

static void rc_atomic(struct eqp *e, struct fab_link *from,
		      const struct fab_hdr *h)
{
	struct fab_hdr r;
	struct local_iov ri;
	uint64_t *p, orig;

	if (h->remote_addr & 7) {
		responder_fail(e, from, h, FAB_NAK_INV_REQ);
		return;
	}
	if (h->psn != e->epsn) {
		/* A resend of an atomic executed already: its result. */
		const struct atomic_result *res = atomic_result_of(e, h->psn);

		if (!res) {
			/* Older than every result kept: the requester
			 * broke its max_rd_atomic. Never execute twice. */
			nak(e, from, FAB_NAK_INV_REQ, h->psn, h->src_qpn);
			return;
		}
		orig = res->orig;
	} else {
		/* aligned: 8 bytes never span two pages, one piece */
		if (!remote_check(e, h, 8, IBV_ACCESS_REMOTE_ATOMIC, &ri)) {
			responder_fail(e, from, h, FAB_NAK_REM_ACCESS);
			return;
		}
		p = ri.iov[0].iov_base;
		if (!sim_app_writable(p, 8)) {
			responder_fail(e, from, h, FAB_NAK_REM_ACCESS);
			return;
		}
		/* atomic with the same-host requesters' atomics too */
		shared_atomic_lock(e->qp->uctx->dev);
		if (h->opcode == PVRDMA_WR_ATOMIC_CMP_AND_SWP) {
			orig = h->atomic_a;
			__atomic_compare_exchange_n(p, &orig, h->atomic_b,
						    false, __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
		} else {
			orig = __atomic_fetch_add(p, h->atomic_a,
						  __ATOMIC_SEQ_CST);
		}
		shared_atomic_unlock(e->qp->uctx->dev);
		e->atomics[e->atomic_next] = (struct atomic_result){
			.valid = true, .psn = h->psn, .orig = orig,
		};
		e->atomic_next = (e->atomic_next + 1) % ATOMIC_RESULTS;
		e->epsn = (h->psn + 1) & PSN_MASK;
		e->nak_sent = false;
	}
	ack_flush_one(e);
	hdr_init(&r, e->qp, FAB_ATOMIC_RESP,
		 e->qp->attr.ah_attr.grh.sgid_index);
	r.dst_qpn = h->src_qpn;
	r.psn = h->psn;
	r.atomic_a = orig;
	fabric_send(e->eng->port, from, &r, NULL, 0);
}

static void responder_rx(struct eqp *e, struct fab_link *from,
			 const struct fab_hdr *h, struct fab_rx *rx)
{
	struct sim_qp *qp = e->qp;
	enum ibv_qp_state st = qp->attr.state;
	struct local_iov ri;

	if (qp->type != IBV_QPT_RC)
		return;
	/* Only a QP past RTR takes requests; others drop them silently. */
	if (st != IBV_QPS_RTR && st != IBV_QPS_RTS && st != IBV_QPS_SQD &&
	    st != IBV_QPS_SQE)
		return;

	if (h->psn != e->epsn) {
		if (psn_before(h->psn, e->epsn)) {
			/* a resend of what was executed: answer again */
			if (h->opcode == PVRDMA_WR_RDMA_READ)
				rc_read(e, from, h);
			else if (sim_wqe_is_read_or_atomic(h->opcode))
				rc_atomic(e, from, h);
			else
				ack_queue(e, from, (e->epsn - 1) & PSN_MASK);
		} else if (!e->nak_sent) {
			e->nak_sent = true;
			nak(e, from, FAB_NAK_SEQ, e->epsn, h->src_qpn);
		}
		return;
	}

	switch (h->opcode) {
	case PVRDMA_WR_SEND:
	case PVRDMA_WR_SEND_WITH_IMM:
		rc_recv_message(e, from, h, rx, NULL);
		break;
	case PVRDMA_WR_RDMA_WRITE:
	case PVRDMA_WR_RDMA_WRITE_WITH_IMM:
		if (!remote_check(e, h, h->len, IBV_ACCESS_REMOTE_WRITE, &ri)) {
			responder_fail(e, from, h, FAB_NAK_REM_ACCESS);
			return;
		}
		if (h->opcode == PVRDMA_WR_RDMA_WRITE_WITH_IMM) {
			rc_recv_message(e, from, h, rx, &ri);
			return;
		}
		if (!fab_rx_read(rx, ri.iov, ri.n)) {
			if (rx->fault)
				responder_fail(e, from, h,
					       FAB_NAK_REM_ACCESS);
			return;
		}
		stat_add(&qp->uctx->dev->stats.bytes_rx, h->len);
		e->epsn = (h->psn + 1) & PSN_MASK;
		e->nak_sent = false;
		ack_queue(e, from, h->psn);
		break;
	case PVRDMA_WR_RDMA_READ:
		rc_read(e, from, h);
		break;
	case PVRDMA_WR_ATOMIC_CMP_AND_SWP:
	case PVRDMA_WR_ATOMIC_FETCH_AND_ADD:
		rc_atomic(e, from, h);
		break;
	default:
		responder_fail(e, from, h, FAB_NAK_INV_REQ);
		break;
	}
}

/*
 * Header lengths of a RoCE UD packet on the wire (IBA, Annex A16/A17): what
 * the length fields of the GRH area count besides the payload.
 */
#define ROCE_UDP_LEN	8
#define ROCE_BTH_LEN	12
#define ROCE_DETH_LEN	8
#define ROCE_IMMDT_LEN	4
#define ROCE_ICRC_LEN	4
#define ROCE_IPV4_LEN	20
#define ROCE_GRH_LEN	40

static void put_be16(uint8_t *p, unsigned int v)
{
	p[0] = (v >> 8) & 0xff;
	p[1] = v & 0xff;
}

/* The IPv4 header checksum: the ones' complement of the ones' complement
 * sum of the header's 16-bit words, the checksum field taken as zero. */
static unsigned int ipv4_header_checksum(const uint8_t ip[ROCE_IPV4_LEN])
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < ROCE_IPV4_LEN; i += 2)
		if (i != 10)
			sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

/*
 * Writes the 40-byte GRH area the receiver of a UD datagram finds first, as
 * RoCE hardware and rxe fill it from the packet's network header:
 * - RoCE v2 over IPv4: bytes 0-19 zero, the IPv4 header in bytes 20-39
 *   (total length of the IP datagram, don't fragment, TTL from the hop
 *   limit, protocol UDP, header checksum, the two addresses);
 * - RoCE v2 over IPv6: the IPv6 header (payload length from the UDP header
 *   on, next header UDP);
 * - RoCE v1: the IB GRH (payload length from the BTH on, next header 0x1b).
 * Both lengths count the BTH, DETH, ImmDt, payload and ICRC the packet
 * carries (Ethernet has no VCRC). The flow label is 0, as rxe sends it.
 */
static void build_grh(uint8_t grh[ROCE_GRH_LEN], const struct fab_hdr *h)
{
	uint32_t ib_len = ROCE_BTH_LEN + ROCE_DETH_LEN + h->len + ROCE_ICRC_LEN;
	uint8_t type = network_type(NULL, h->gid_type, h->src_gid);

	if (h->opcode == PVRDMA_WR_SEND_WITH_IMM)
		ib_len += ROCE_IMMDT_LEN;
	memset(grh, 0, ROCE_GRH_LEN);
	if (type == PVRDMA_NETWORK_IPV4) {
		uint8_t *ip = grh + ROCE_GRH_LEN - ROCE_IPV4_LEN;

		ip[0] = 0x45;		/* version 4, 5 words of header */
		ip[1] = h->tclass;
		put_be16(ip + 2, ROCE_IPV4_LEN + ROCE_UDP_LEN + ib_len);
		/* Identification 0: it serves reassembly only, and a RoCE
		 * datagram may not be fragmented (RFC 6864, atomic
		 * datagrams). */
		put_be16(ip + 6, 0x4000);	/* don't fragment */
		ip[8] = h->hop_limit;
		ip[9] = 17;		/* UDP */
		memcpy(ip + 12, h->src_gid + 12, 4);
		memcpy(ip + 16, h->dst_gid + 12, 4);
		put_be16(ip + 10, ipv4_header_checksum(ip));
		return;
	}
	grh[0] = 0x60 | (h->tclass >> 4);
	grh[1] = (h->tclass & 0xf) << 4;
	if (type == PVRDMA_NETWORK_IPV6) {
		put_be16(grh + 4, ROCE_UDP_LEN + ib_len);
		grh[6] = 17;		/* UDP */
	} else {
		put_be16(grh + 4, ib_len);
		grh[6] = 0x1b;		/* IBA transport */
	}
	grh[7] = h->hop_limit;
	memcpy(grh + 8, h->src_gid, 16);
	memcpy(grh + 24, h->dst_gid, 16);
}

/* Splits iov after skip bytes into out; returns the count. */
static int iov_skip(const struct iovec *in, int n, size_t skip,
		    struct iovec *out)
{
	int i, k = 0;

	for (i = 0; i < n; i++) {
		if (skip >= in[i].iov_len) {
			skip -= in[i].iov_len;
			continue;
		}
		out[k].iov_base = (uint8_t *)in[i].iov_base + skip;
		out[k].iov_len = in[i].iov_len - skip;
		skip = 0;
		k++;
	}
	return k;
}

static void ud_rx(struct eqp *e, const struct fab_hdr *h, struct fab_rx *rx)
{
	struct sim_qp *qp = e->qp;
	struct sim_recv_wr rwr;
	struct local_iov li;
	struct iovec rest[SIM_MAX_IOV];
	uint8_t grh[40];
	struct fab_rx grh_rx = { .mem = grh, .left = sizeof(grh) };
	enum recv_take t;
	int n;

	if (qp->type != IBV_QPT_UD ||
	    (qp->attr.state != IBV_QPS_RTR && qp->attr.state != IBV_QPS_RTS &&
	     qp->attr.state != IBV_QPS_SQD))
		return;
	if (h->qkey != qp->attr.qkey)
		return;		/* Q_Key violation: silently dropped */
	t = recv_peek(qp, &rwr);
	if (t == RECV_BAD) {
		qp_fatal(e);
		return;
	}
	if (t == RECV_NONE)
		return;		/* best effort */
	if (rwr.num_sge == UINT32_MAX ||
	    rwr.total_len < sizeof(grh) + (uint64_t)h->len) {
		recv_consume(qp);
		complete_recv_error(e, rwr.wr_id, PVRDMA_WC_LOC_LEN_ERR);
		qp_to_error(e);
		return;
	}
	if (map_sges(qp, rwr.sge, rwr.num_sge, IBV_ACCESS_LOCAL_WRITE, &li)) {
		recv_consume(qp);
		complete_recv_error(e, rwr.wr_id, PVRDMA_WC_LOC_PROT_ERR);
		qp_to_error(e);
		return;
	}
	build_grh(grh, h);
	n = iov_skip(li.iov, li.n, sizeof(grh), rest);
	if (!fab_rx_read(&grh_rx, li.iov, li.n) || !fab_rx_read(rx, rest, n)) {
		if (!grh_rx.fault && !rx->fault)
			return;		/* lost */
		recv_consume(qp);
		complete_recv_error(e, rwr.wr_id, PVRDMA_WC_LOC_PROT_ERR);
		qp_to_error(e);
		return;
	}
	recv_consume(qp);
	stat_add(&qp->uctx->dev->stats.bytes_rx, h->len);
	recv_complete(qp, &rwr, h, PVRDMA_WC_RECV, h->len + sizeof(grh),
		      PVRDMA_WC_GRH);
}

static struct eqp *eqp_by_qpn(struct engine *eng, uint32_t qpn)
{
	struct qlink *l;

	for (l = eng->qpn_hash[qpn % QPN_HASH].first; l; l = l->next)
		if (eqp_of(l, hash)->qp->qpn == qpn)
			return eqp_of(l, hash);
	return NULL;
}

void engine_rx(struct sim_dev *dev, struct fab_link *from,
	       const struct fab_hdr *h, struct fab_rx *rx)
{
	struct engine *eng = engine_of(dev);
	struct eqp *e;

	e = eqp_by_qpn(eng, h->dst_qpn & 0xffffff);
	if (!e)
		return;		/* no such QP: dropped, as on the wire */
	switch (h->type) {
	case FAB_REQ:
		responder_rx(e, from, h, rx);
		break;
	case FAB_UD_SEND:
		ud_rx(e, h, rx);
		break;
	case FAB_ACK:
	case FAB_NAK:
	case FAB_READ_RESP:
	case FAB_ATOMIC_RESP:
		requester_rx(e, h, rx);
		break;
	default:
		break;
	}
}

/* ---- timers and kicks (device thread, dev->lock held) ---- */

static void qp_timer(struct eqp *e, uint64_t now)
{
	struct sim_qp *qp = e->qp;

	if (e->rnr_until && now >= e->rnr_until) {
		e->rnr_until = 0;
		sq_progress(e);
	}
	if (!e->deadline || now < e->deadline)
		return;
	e->deadline = 0;
	/* Requests waiting for a link the peer stopped reading count as
	 * sent and lost: a peer that never drains its link is a peer that
	 * never answers, and ends in RETRY_EXC_ERR like one that is gone. */
	if (!e->out_count)
		return;
	/* retry_cnt 7 is seven retries, not "infinite": only rnr_retry has
	 * an infinite encoding. A peer that is gone ends in RETRY_EXC_ERR. */
	if (!e->retries_left--) {
		requester_fail(e, PVRDMA_WC_RETRY_EXC_ERR);
		return;
	}
	/* Resend from the oldest unacknowledged request; look the peer up
	 * again, it may have come back. */
	stat_add(&qp->uctx->dev->stats.retransmits, e->out_sent);
	out_unsend(e);
	if (!fabric_link_alive(e->link))
		e->need_resolve = true;
	sq_progress(e);
	if (!e->deadline && e->out_count)
		arm_timer(e, now + ack_timeout_ns(qp));
}

static void run_timers(struct engine *eng)
{
	struct qlink *l, *next;
	struct eqp *e;

	if (!eng->next_deadline || eng->now < eng->next_deadline)
		return;
	eng->next_deadline = 0;
	for (l = eng->all.first; l; l = next) {
		next = l->next;
		qp_timer(eqp_of(l, all), eng->now);
	}
	for (l = eng->all.first; l; l = l->next) {
		uint64_t d;

		e = eqp_of(l, all);
		d = e->deadline;

		if (e->rnr_until && (!d || e->rnr_until < d))
			d = e->rnr_until;
		if (d && (!eng->next_deadline || d < eng->next_deadline))
			eng->next_deadline = d;
	}
}

static void kick(struct eqp *e)
{
	struct engine *eng = e->eng;

	qlist_push(&eng->kicks, &e->kick);
	atomic_store(&eng->kick_pending, true);
	fabric_wake(eng->port);
}

static int run_kicks(struct engine *eng)
{
	struct qlink *l;
	int n = 0;

	atomic_store(&eng->kick_pending, false);
	while ((l = qlist_pop(&eng->kicks))) {
		sq_progress(eqp_of(l, kick));
		n++;
	}
	return n;
}

/* ---- doorbell processing (device thread, dev->lock held) ---- */

static void *find_by_num(struct sim_table *t, uint32_t num, size_t num_off)
{
	void *o = sim_table_get(t, num);
	uint32_t i;

	if (o && *(uint32_t *)((uint8_t *)o + num_off) == num)
		return o;
	for (i = 0; i < t->size; i++) {
		o = t->slot[i];
		if (o && *(uint32_t *)((uint8_t *)o + num_off) == num)
			return o;
	}
	return NULL;
}

/*
 * An arm the device applies late (queued by a trap that could not take
 * dev->lock): CQEs may have been written since the application's last
 * empty poll, and it may be asleep waiting for their event. A CQE the
 * consumer has not taken yet therefore fires the event at once (for a
 * solicited arm, only a solicited or an error one): a spurious event is
 * harmless, a lost one hangs the application.
 */
static void arm_late(struct sim_cq *cq)
{
	struct sim_ring r = rx_ring_of(&cq->ring);
	uint32_t tail, head;
	bool sol = false;

	if (!r.state || !r.nelems)
		return;
	tail = sim_ring_load(&r.state->prod_tail);
	head = sim_ring_load(&r.state->cons_head);
	if (!sim_ring_idx_valid(tail, r.nelems) ||
	    !sim_ring_idx_valid(head, r.nelems) || tail == head)
		return;
	for (; head != tail && cq->cqe_solicited;
	     head = sim_ring_idx_next(head, r.nelems))
		sol |= cq->cqe_solicited[sim_ring_slot(head, r.nelems)];
	sim_event_comp(cq, sol);
}

static void doorbell_run(struct sim_dev *dev, struct sim_ucontext *uctx,
			 uint32_t offset, uint32_t value, bool late)
{
	uint32_t h = value & PVRDMA_UAR_HANDLE_MASK;
	struct sim_qp *qp;
	struct sim_cq *cq;
	struct sim_srq *srq;

	switch (offset) {
	case PVRDMA_UAR_QP_OFFSET:
		qp = sim_table_get(&dev->qp_by_qp_handle, h);
		if (!qp || qp->uctx != uctx || !qp->engine)
			break;
		if (value & SIM_UAR_QP_SEND)
			sq_progress(qp->engine);
		if ((value & SIM_UAR_QP_RECV) &&
		    qp->attr.state == IBV_QPS_ERR)
			qp_flush(qp->engine);
		return;
	case PVRDMA_UAR_CQ_OFFSET:
		cq = find_by_num(&dev->cqs, h, offsetof(struct sim_cq, cqn));
		if (!cq || cq->uctx != uctx)
			break;
		if (value & SIM_UAR_CQ_ARM)
			cq->armed = SIM_CQ_ARM_NEXT;
		else if ((value & SIM_UAR_CQ_ARM_SOL) &&
			 cq->armed == SIM_CQ_ARM_NONE)
			cq->armed = SIM_CQ_ARM_SOLICITED;
		if (late && cq->armed != SIM_CQ_ARM_NONE)
			arm_late(cq);
		return;
	case PVRDMA_UAR_SRQ_OFFSET:
		srq = find_by_num(&dev->srqs, h,
				  offsetof(struct sim_srq, srqn));
		if (!srq || srq->uctx != uctx)
			break;
		return;		/* receives wait for their messages */
	}
	stat_add(&dev->stats.db_bad, 1);
}

/*
 * Releases dev->lock without stranding a doorbell queued by a trap that
 * found the lock taken: the trap queued, then tried the lock; we unlock,
 * then look at the queue (full fences between, Dekker style): one of the
 * two sees the other.
 */
static void dev_unlock(struct engine *eng, struct sim_dev *dev)
{
	for (;;) {
		pthread_mutex_unlock(&dev->lock);
		atomic_thread_fence(memory_order_seq_cst);
		if (dbq_empty(&eng->dbq) || pthread_mutex_trylock(&dev->lock))
			return;
		eng->now = now_ns();
		drain_queued(eng);
		acks_flush(eng);
	}
}

/* Doorbells queued by traps that could not run them (dev->lock held). */
static int drain_queued(struct engine *eng)
{
	struct sim_ucontext *uctx;
	uint32_t offset, value;
	int n = 0;

	while (dbq_pop(&eng->dbq, &uctx, &offset, &value)) {
		doorbell_run(eng->dev, uctx, offset, value, true);
		n++;
	}
	return n;
}

/*
 * One round of device work (dev->lock held): what a trap left queued, what
 * arrived on the fabric, control-path kicks, full links that drained,
 * timers. inline_rx: read every link now (an application thread, or a
 * device thread that did not wait on the links); otherwise act on what
 * fabric_wait() saw. Returns how many units of work it found.
 */
static int engine_round(struct engine *eng, bool inline_rx)
{
	int work;

	eng->now = now_ns();
	work = drain_queued(eng);
	work += fabric_deliver(eng->port);
	if (inline_rx)
		work += fabric_rx_poll(eng->port);
	if (atomic_load(&eng->kick_pending))
		work += run_kicks(eng);
	if (eng->waiters.first)
		work += run_waiters(eng);
	acks_flush(eng);
	run_timers(eng);
	acks_flush(eng);
	return work;
}

/*
 * A POLL doorbell: the application is busy-polling an empty CQ. Upstream
 * rings one per empty poll "to give the device a chance to poll", and
 * that is what it gets: if the device is idle (the lock is free), the
 * trapping thread runs a round of device work, reading what already
 * arrived on the fabric, so the CQE the application waits for can be there
 * when the provider polls again, with no device-thread wake-up between.
 * A busy device is doing that work already: the doorbell then costs only
 * the trap.
 */
static void poll_hint(struct engine *eng)
{
	struct sim_dev *dev = eng->dev;

	if (!eng->started || !eng->port || !dev)
		return;
	if (pthread_mutex_trylock(&dev->lock))
		return;
	engine_round(eng, true);
	atomic_store_explicit(&eng->last_poll_ns, eng->now,
			      memory_order_relaxed);
	dev_unlock(eng, dev);
}

/*
 * Every doorbell a thread traps and runs (QP send or receive, SRQ receive,
 * CQ arm) also reads what already arrived on the adapter's links: that
 * thread holds dev->lock anyway, an idle link costs one non-blocking recv,
 * and a hypervisor handling the exit may as well look at the backend's
 * queues. Our provider rings no doorbell on an empty poll (each one is a VM
 * exit on ESXi), so without this the receive side of a streaming or
 * ping-pong application waited for the device thread to get a CPU, which
 * two spinning applications rarely leave it; with it, the receiver's own
 * receive postings and sends (and the sender's, for its ACKs) keep the
 * fabric drained. The device thread still watches the links for an
 * application that rings nothing.
 */
static void rx_inline(struct engine *eng)
{
	if (eng->started && eng->port)
		fabric_rx_poll(eng->port);
}

/* ---- asynchronous mode (vSphere 8's vrdma.asyncMode) ---- */

/* How long the device keeps polling after the adapter's last activity:
 * an idle adapter goes back to sleeping and burns no CPU. */
#define ASYNC_IDLE_NS	100000000ull

/* Anything the adapter did shows in its counters. */
static unsigned long adapter_activity(struct sim_dev *dev)
{
	struct sim_stats *st = &dev->stats;

	return atomic_load_explicit(&st->db_qp_send, memory_order_relaxed) +
	       atomic_load_explicit(&st->db_qp_recv, memory_order_relaxed) +
	       atomic_load_explicit(&st->db_srq_recv, memory_order_relaxed) +
	       atomic_load_explicit(&st->db_cq_arm, memory_order_relaxed) +
	       atomic_load_explicit(&st->db_cq_poll, memory_order_relaxed) +
	       atomic_load_explicit(&st->send_wqes, memory_order_relaxed) +
	       atomic_load_explicit(&st->recv_wqes, memory_order_relaxed) +
	       atomic_load_explicit(&st->cqes, memory_order_relaxed);
}

/*
 * With --async-mode the device thread does not wait for doorbells or
 * readiness while the adapter is active: each round it reads every link
 * and looks at the send rings of its QPs, trading a host CPU for latency
 * (work is found without a wake-up). Returns true to poll on.
 */
static bool async_poll(struct engine *eng)
{
	unsigned long seen;
	struct qlink *l;

	if (!sim_global.async_mode)
		return false;
	seen = adapter_activity(eng->dev);
	if (seen != eng->async_seen) {
		eng->async_seen = seen;
		eng->async_until = eng->now + ASYNC_IDLE_NS;
	}
	if (eng->now >= eng->async_until)
		return false;
	fabric_rx_poll(eng->port);
	for (l = eng->all.first; l; l = l->next)
		if (eqp_of(l, all)->qp->attr.state == IBV_QPS_RTS)
			sq_progress(eqp_of(l, all));
	acks_flush(eng);
	return true;
}

/* ---- the device thread ---- */

static int sleep_timeout_ms(struct engine *eng)
{
	uint64_t d = eng->next_deadline;

	if (!d)
		return -1;
	if (d <= eng->now)
		return 0;
	return (int)((d - eng->now + 999999) / 1000000);
}

/*
 * The device thread: receives (packets, EPOLLOUT of full links), timers,
 * kicks of the control path. Doorbells run on the threads that ring them.
 *
 * While the application polls its CQ (POLL doorbells keep coming), its own
 * traps do the receive work, and a device thread woken by every packet
 * would only take a CPU from it and contend for dev->lock (two cores, two
 * pollers). The device thread then sleeps "quietly" (wake-ups and new
 * connections only) until POLLING_NS after the last POLL doorbell, reads
 * the links itself, and if no POLL doorbell came meanwhile, the application
 * stopped polling (it waits for an event, or spins on memory as
 * ib_write_lat does): it sleeps in epoll on everything again.
 */
static void *engine_main(void *arg)
{
	struct engine *eng = arg;
	struct sim_dev *dev = eng->dev;
	uint64_t last_poll, quiet_ns = 0;
	sigset_t all;
	int timeout = 0;

	/* Signals are the application's: never run its handlers here. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);

	while (!atomic_load(&eng->stop)) {
		if (timeout || quiet_ns) {
			if (!fabric_sleep_prepare(eng->port)) {
				timeout = 0;
				quiet_ns = 0;
			} else if (!dbq_empty(&eng->dbq) ||
				   atomic_load(&eng->kick_pending)) {
				fabric_sleep_cancel(eng->port);
				timeout = 0;
				quiet_ns = 0;
			}
		}
		if (quiet_ns)
			fabric_wait_quiet(eng->port, quiet_ns);
		else
			fabric_wait(eng->port, timeout);
		pthread_mutex_lock(&dev->lock);
		if (engine_round(eng, quiet_ns != 0)) {
			timeout = 0;
			quiet_ns = 0;
		} else if (async_poll(eng)) {
			timeout = 0;
			quiet_ns = 0;
			dev_unlock(eng, dev);
			sched_yield();	/* the application's core too */
			continue;
		} else {
			timeout = sleep_timeout_ms(eng);
			last_poll = atomic_load_explicit(&eng->last_poll_ns,
							 memory_order_relaxed);
			quiet_ns = 0;
			if (eng->now - last_poll < POLLING_NS) {
				quiet_ns = last_poll + POLLING_NS - eng->now;
				if (timeout >= 0 &&
				    (uint64_t)timeout * 1000000ull < quiet_ns)
					quiet_ns = timeout ?
						   (uint64_t)timeout * 1000000ull :
						   0;
			}
		}
		dev_unlock(eng, dev);
	}
	return NULL;
}

static void engines_at_exit(void)
{
	unsigned int i;

	for (i = 0; i < SIM_MAX_ADAPTERS; i++)
		if (engines[i].started)
			fabric_close(engines[i].port);
}

/* Starts the device of an adapter (idempotent; dev->lock held or not
 * yet shared). Doorbells trapped before it are kept and run first. */
int engine_start(struct sim_dev *dev)
{
	static bool atexit_done;
	struct engine *eng = engine_of(dev);
	int ret;

	if (!eng)
		return EINVAL;
	if (eng->started)
		return 0;
	eng->dev = dev;
	atomic_store(&eng->dev_set, true);
	dev->engine = eng;
	eng->port = fabric_open(dev);
	if (!eng->port)
		return ENOMEM;
	atomic_store(&eng->stop, false);
	ret = pthread_create(&eng->thread, NULL, engine_main, eng);
	if (ret) {
		fabric_close(eng->port);
		eng->port = NULL;
		return ret;
	}
	eng->started = true;
	if (!atexit_done) {
		atexit_done = true;
		atexit(engines_at_exit);
	}
	return 0;
}

/* Stops the device thread (dev->lock NOT held: the thread takes it). */
void engine_stop(struct sim_dev *dev)
{
	struct engine *eng = engine_of(dev);

	if (!eng || !eng->started)
		return;
	atomic_store(&eng->stop, true);
	atomic_store(&eng->kick_pending, true);
	fabric_wake(eng->port);
	pthread_join(eng->thread, NULL);
	fabric_close(eng->port);
	eng->started = false;
}

/* ---- control path hooks (dev->lock held) ---- */

int engine_qp_create(struct sim_qp *qp)
{
	struct sim_dev *dev = qp->uctx->dev;
	struct engine *eng = engine_of(dev);
	struct eqp *e;
	int ret;

	if (!eng)
		return EINVAL;
	ret = engine_start(dev);
	if (ret)
		return ret;
	e = calloc(1, sizeof(*e));
	if (!e)
		return ENOMEM;
	e->qp = qp;
	e->eng = eng;
	e->out_cap = qp->sq.nelems ? qp->sq.nelems : 1;
	e->out = calloc(e->out_cap, sizeof(*e->out));
	if (!e->out) {
		free(e);
		return ENOMEM;
	}
	qlist_push(&eng->qpn_hash[qp->qpn % QPN_HASH], &e->hash);
	qlist_push(&eng->all, &e->all);
	qp->engine = e;
	shared_qp_publish(dev, qp);
	return 0;
}

/* Forgets the transport state: nothing outstanding, nothing expected. */
static void eqp_reset(struct eqp *e)
{
	e->out_head = e->out_count = e->out_sent = 0;
	e->rd_inflight = 0;
	e->deadline = e->rnr_until = 0;
	e->link = e->ud_link = NULL;
	e->need_resolve = false;
	e->nak_sent = false;
	memset(e->atomics, 0, sizeof(e->atomics));
	e->atomic_next = 0;
	qlink_del(&e->ack);
	qlink_del(&e->wait);
}

void engine_qp_modified(struct sim_qp *qp, enum ibv_qp_state old_state)
{
	struct eqp *e = qp->engine;
	enum ibv_qp_state s = qp->attr.state;

	if (e)
		shared_qp_publish(qp->uctx->dev, qp); /* access flags too */
	if (!e || s == old_state)
		return;
	switch (s) {
	case IBV_QPS_RESET:
		eqp_reset(e);
		break;
	case IBV_QPS_INIT:
		break;
	case IBV_QPS_RTR:
		e->epsn = qp->attr.rq_psn & PSN_MASK;
		e->nak_sent = false;
		e->need_resolve = true;
		break;
	case IBV_QPS_RTS:
		if (old_state == IBV_QPS_RTR) {
			e->next_psn = qp->attr.sq_psn & PSN_MASK;
			e->retries_left = qp->attr.retry_cnt;
			e->rnr_left = qp->attr.rnr_retry;
			e->need_resolve = true;
		}
		kick(e);	/* the ring may hold WQEs already */
		break;
	case IBV_QPS_SQD:
		qp->attr.sq_draining = 1;
		kick(e);
		break;
	case IBV_QPS_ERR:
		qp->attr.state = old_state;	/* let qp_to_error see it */
		qp_to_error(e);
		break;
	default:
		break;
	}
}

void engine_qp_destroy(struct sim_qp *qp)
{
	struct eqp *e = qp->engine;

	if (!e)
		return;
	shared_qp_withdraw(qp->uctx->dev, qp);
	qlink_del(&e->hash);
	qlink_del(&e->all);
	qlink_del(&e->kick);
	qlink_del(&e->ack);
	qlink_del(&e->wait);
	qp->engine = NULL;
	free(e->out);
	free(e);
}

void engine_cq_destroy(struct sim_cq *cq)
{
	/* CQEs are written only through live QPs, which hold a reference on
	 * their CQs: only the solicited shadow is left in the device. */
	free(cq->cqe_solicited);
	cq->cqe_solicited = NULL;
}

void engine_srq_modified(struct sim_srq *srq)
{
	srq_limit_check(srq);
}
