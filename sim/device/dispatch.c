// SPDX-License-Identifier: BSD-2-Clause
/*
 * Doorbells: the queue a trapped doorbell goes through when the device is
 * busy, engine_doorbell() on the trapping thread (a signal handler), and
 * doorbell_run() with the rounds of device work it starts. See engine.h.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "publish.h"
#include "engine.h"

static void rx_inline(struct engine *eng, bool roce);
static void poll_hint(struct engine *eng);
static void doorbell_run(struct sim_dev *dev, struct sim_ucontext *uctx,
			 uint32_t offset, uint32_t value, bool late);

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

bool dev_dbq_empty(struct db_queue *q)
{
	unsigned long idx = q->head & (DBQ_SIZE - 1);

	return atomic_load(&q->slot[idx].seq_rel) + idx != q->head + 1;
}

/*
 * A send doorbell of a stream of large same-host transfers (the last
 * batch moved BULK_BYTES or more less than BULK_GAP_NS ago, or the device
 * thread lingers for the next) stays queued for the device thread, as a
 * hypervisor hands a doorbell to its backend: the copy then overlaps the
 * application's posting rather than serialise with it. The next holder of
 * dev->lock runs it (dev_unlock(), engine_main()).
 */
static bool bulk_handoff(struct engine *eng, uint32_t offset, uint32_t value)
{
	uint64_t t;

	if (offset != PVRDMA_UAR_QP_OFFSET || !(value & SIM_UAR_QP_SEND) ||
	    !eng->started)
		return false;
	t = atomic_load_explicit(&eng->bulk_ns, memory_order_relaxed);
	return t && (atomic_load_explicit(&eng->bulk_linger,
					  memory_order_relaxed) ||
		     now_ns() - t < BULK_GAP_NS) &&
	       atomic_fetch_add_explicit(&eng->handed, 1,
					 memory_order_relaxed) < BULK_HANDED;
}

void engine_doorbell(struct sim_ucontext *uctx, uint32_t offset,
		     uint32_t value)
{
	struct sim_dev *dev = uctx->dev;
	struct sim_stats *st = &dev->stats;
	struct engine *eng = engine_of(dev);
	bool handoff;

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
	/* The trapping thread runs the doorbell, as a hypervisor handles an
	 * MMIO exit on the vCPU that took it. A QP or SRQ doorbell is queued and
	 * run by whoever holds dev->lock (a holder drains the queue before and
	 * after it unlocks), so a sender never sleeps on the lock. */
	if (offset != PVRDMA_UAR_CQ_OFFSET) {
		handoff = bulk_handoff(eng, offset, value);
		dbq_push(&eng->dbq, uctx, offset, value);
		atomic_thread_fence(memory_order_seq_cst);
		if (handoff || pthread_mutex_trylock(&dev->lock)) {
			fabric_wake(eng->port);
			/* the stream goes on while the device thread wakes */
			if (handoff)
				atomic_store_explicit(&eng->bulk_ns, now_ns(),
						      memory_order_relaxed);
			return;
		}
		eng->now = now_ns();
		dev_dbq_drain(eng);
		rx_inline(eng, false);
		dev_acks_flush(eng);
		dev_unlock(eng, dev);
		/* A stream's next doorbell follows this trap's return at
		 * once, a ping-pong's a round trip later. */
		if (atomic_load_explicit(&eng->bulk_ns, memory_order_relaxed))
			atomic_store_explicit(&eng->bulk_ns, now_ns(),
					      memory_order_relaxed);
		return;
	}
	/* A CQ arm is in force when the store retires: the trap waits for
	 * dev->lock, under which CQEs are written. Only a signal handler that
	 * rings on a thread inside the sim (EDEADLK) queues it, to be applied
	 * late (arm_late()). */
	if (pthread_mutex_lock(&dev->lock)) {
		dbq_push(&eng->dbq, uctx, offset, value);
		fabric_wake(eng->port);
		return;
	}
	eng->now = now_ns();
	dev_dbq_drain(eng);	/* older doorbells first */
	doorbell_run(dev, uctx, offset, value, false);
	rx_inline(eng, true);
	dev_acks_flush(eng);
	dev_unlock(eng, dev);
}

/* An arm applied late: a CQE the consumer has not taken yet fires the
 * event at once (a spurious event is harmless, a lost one hangs the
 * application). */
static void arm_late(struct sim_cq *cq)
{
	struct sim_ring r = cq->ring;
	uint32_t tail, head;
	bool sol = false;

	if (!r.state || !r.nelems)
		return;
	tail = sim_ring_load(&r.state->prod_tail);
	head = sim_ring_load(&r.state->cons_head);
	if (!sim_ring_idx_valid(tail, r.nelems) ||
	    !sim_ring_idx_valid(head, r.nelems) || tail == head)
		return;
	/* Same-host requesters' CQEs have no entry there: any may be. */
	sol = cq->shared;
	for (; head != tail && cq->cqe_solicited;
	     head = sim_ring_idx_next(head, r.nelems))
		sol |= cq->cqe_solicited[sim_ring_slot(head, r.nelems)];
	sim_device_upcalls.comp_event(cq, sol);
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
			dev_sq_progress(qp->engine);
		if ((value & SIM_UAR_QP_RECV) &&
		    qp->attr.state == IBV_QPS_ERR)
			dev_qp_flush(qp->engine);
		return;
	case PVRDMA_UAR_CQ_OFFSET:
		cq = sim_table_get(&dev->cqs, h);
		if (!cq || cq->uctx != uctx)
			break;
		/* Same-host requesters see the arm before the trap
		 * returns (direct_send.c). */
		pub_lock(dev);
		pub_cq_pull(cq);
		if (value & SIM_UAR_CQ_ARM)
			cq->armed = SIM_CQ_ARM_NEXT;
		else if ((value & SIM_UAR_CQ_ARM_SOL) &&
			 cq->armed == SIM_CQ_ARM_NONE)
			cq->armed = SIM_CQ_ARM_SOLICITED;
		if (late && cq->armed != SIM_CQ_ARM_NONE)
			arm_late(cq);
		pub_cq(cq);
		pub_unlock(dev);
		return;
	case PVRDMA_UAR_SRQ_OFFSET:
		srq = sim_table_get(&dev->srqs, h);
		if (!srq || srq->uctx != uctx)
			break;
		return;		/* receives wait for their messages */
	}
	stat_add(&dev->stats.db_bad, 1);
}

/* Doorbells popped before any of them runs: a small array, the trap may
 * run on a small signal stack. */
#define DRAIN_CHUNK	32

struct db_popped {
	struct sim_ucontext *uctx;
	uint32_t offset;
	uint32_t value;
};

/* Runs what traps queued, a chunk at a time; a doorbell equal to the one
 * popped just before it is dropped (that one's run sees the WQEs of
 * both), so a stream handed to the device thread cannot fill the queue. */
int dev_dbq_drain(struct engine *eng)
{
	struct db_popped p[DRAIN_CHUNK];
	int n = 0, k, i;

	do {
		for (k = 0; k < DRAIN_CHUNK &&
		     dbq_pop(&eng->dbq, &p[k].uctx, &p[k].offset,
			     &p[k].value);
		     n++) {
			if (!k || p[k].uctx != p[k - 1].uctx ||
			    p[k].offset != p[k - 1].offset ||
			    p[k].value != p[k - 1].value)
				k++;
		}
		for (i = 0; i < k; i++)
			doorbell_run(eng->dev, p[i].uctx, p[i].offset,
				     p[i].value, true);
	} while (k);
	if (n)
		atomic_store_explicit(&eng->handed, 0, memory_order_relaxed);
	return n;
}

/* One round of device work (dev->lock held). inline_rx: read every link
 * now, rather than act on what fabric_wait() saw. Returns the units of
 * work found. */
int engine_round(struct engine *eng, bool inline_rx)
{
	int work;

	eng->now = now_ns();
	work = dev_dbq_drain(eng);
	work += fabric_deliver(eng->port);
	if (inline_rx)
		work += fabric_rx_poll(eng->port);
	if (atomic_load(&eng->kick_pending))
		work += dev_run_kicks(eng);
	if (eng->waiters.first)
		work += dev_run_waiters(eng);
	dev_acks_flush(eng);
	dev_run_timers(eng);
	dev_run_raise_checks(eng);
	dev_acks_flush(eng);
	return work;
}

/* A POLL doorbell (the application polls an empty CQ): the trapping
 * thread of an idle device runs a round, so the CQE awaited may be there
 * at the next poll with no device-thread wake-up between. It reads every
 * link: meanwhile the device thread leaves them to these rounds
 * (fabric_wait_quiet()), a frame no sender counted too. */
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

/* The thread that ran a doorbell reads what arrived on the links too: our
 * provider rings nothing on an empty poll, and beside spinning
 * applications the device thread rarely gets a CPU. Unix links no frame
 * was sent on since they were found empty are not asked (single copies
 * leave them empty; an event-driven message traps 3 or 4 times a side).
 * A post (roce false) leaves the RoCE socket to the device thread, which
 * its datagrams wake, and to POLL doorbells: what comes there for a
 * stream is its ACKs, and the posting thread that took them would also
 * send the window they open, on top of every post's packets, while the
 * device thread has a CPU of its own for that. */
static void rx_inline(struct engine *eng, bool roce)
{
	if (eng->started && eng->port)
		fabric_rx_poll_hinted(eng->port, roce);
}
