// SPDX-License-Identifier: BSD-2-Clause
/*
 * Doorbells: the queue a trapped doorbell goes through when the device is
 * busy, engine_doorbell() on the trapping thread (a signal handler), and
 * doorbell_run() with the rounds of device work it starts. See engine.h.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "direct.h"
#include "engine.h"

static void rx_inline(struct engine *eng);
static int drain_queued(struct engine *eng);
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

bool dbq_empty(struct db_queue *q)
{
	unsigned long idx = q->head & (DBQ_SIZE - 1);

	return atomic_load(&q->slot[idx].seq_rel) + idx != q->head + 1;
}

/*
 * A send doorbell while the adapter streams large same-host transfers (a
 * batch of BULK_BYTES or more, or the trap that ran one, ended less than
 * BULK_GAP_NS ago: eng->bulk_ns; or the device thread, which ran the last
 * one, waits for the next: eng->bulk_linger): the trap leaves it queued
 * for the device thread, as a hypervisor hands a doorbell to its device
 * backend, and returns. The copy of a 64 KiB WRITE or READ costs several
 * traps; done on the trapping thread it serialises with the application's
 * posting, done by the device thread it overlaps with it, and the WQEs the
 * application posts meanwhile go in the device's next batch. A ping-pong
 * of large messages posts its next one a round trip later: its trap
 * executes it, with no wake-up in its latency. Only the trap defers,
 * never the device's own work (a round that runs sq_progress executes
 * what it finds, whoever runs it): a deferred doorbell is executed by the
 * next holder of dev->lock, so it can neither come back nor be stranded
 * (dev_unlock(), engine_main()).
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
	/*
	 * The trapping thread executes the doorbell itself, the way a
	 * hypervisor handles an MMIO exit on the vCPU that took it: no
	 * hand-off to the device thread, no wake-up.
	 *
	 * A QP or SRQ doorbell only says "look at the ring": it is queued,
	 * and executed by whoever holds dev->lock, this thread if it is free
	 * (and the stream is not one bulk_handoff() gives the device thread).
	 * A holder drains the queue before it lets the lock go and again
	 * after (dev_unlock()); the device thread drains it every round and
	 * is woken if it sleeps: a queued doorbell is never stranded, and a
	 * sender never sleeps on the lock while the device is busy.
	 */
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
		drain_queued(eng);
		rx_inline(eng);
		acks_flush(eng);
		dev_unlock(eng, dev);
		/* A stream's next doorbell follows this trap's return at
		 * once, a ping-pong's a round trip later. */
		if (atomic_load_explicit(&eng->bulk_ns, memory_order_relaxed))
			atomic_store_explicit(&eng->bulk_ns, now_ns(),
					      memory_order_relaxed);
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
			sq_progress(qp->engine);
		if ((value & SIM_UAR_QP_RECV) &&
		    qp->attr.state == IBV_QPS_ERR)
			qp_flush(qp->engine);
		return;
	case PVRDMA_UAR_CQ_OFFSET:
		cq = sim_table_get(&dev->cqs, h);
		if (!cq || cq->uctx != uctx)
			break;
		/* Same-host requesters see the arm before the trap
		 * returns (direct_send.c). */
		direct_own_lock(dev);
		direct_cq_pull(cq);
		if (value & SIM_UAR_CQ_ARM)
			cq->armed = SIM_CQ_ARM_NEXT;
		else if ((value & SIM_UAR_CQ_ARM_SOL) &&
			 cq->armed == SIM_CQ_ARM_NONE)
			cq->armed = SIM_CQ_ARM_SOLICITED;
		if (late && cq->armed != SIM_CQ_ARM_NONE)
			arm_late(cq);
		direct_cq_publish(cq);
		direct_own_unlock(dev);
		return;
	case PVRDMA_UAR_SRQ_OFFSET:
		srq = sim_table_get(&dev->srqs, h);
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
void dev_unlock(struct engine *eng, struct sim_dev *dev)
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

/* Doorbells popped before any of them runs: a small array, the trap may
 * run on a small signal stack. */
#define DRAIN_CHUNK	32

struct db_popped {
	struct sim_ucontext *uctx;
	uint32_t offset;
	uint32_t value;
};

/*
 * Doorbells queued by traps that could not run them (dev->lock held, or
 * handed to the device thread). They are popped a chunk at a time, and a
 * doorbell equal to the one popped just before it is dropped: the run of
 * that one comes after both pops, so it sees every WQE either of them
 * announced. An application that posts while the device executes its
 * previous posts (a stream handed to the device thread) queues one
 * doorbell per WQE, and one run executes them all: without this the queue
 * grew by the WQEs of each run until it was full.
 */
static int drain_queued(struct engine *eng)
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

/*
 * One round of device work (dev->lock held): what a trap left queued, what
 * arrived on the fabric, control-path kicks, full links that drained,
 * timers. rx: reads the links now (an application thread, or a device
 * thread that did not wait on the links: engine_round()'s inline_rx);
 * NULL: act on what fabric_wait() saw. Returns the units of work found.
 */
static int round_run(struct engine *eng, int (*rx)(struct fab_port *))
{
	int work;

	eng->now = now_ns();
	work = drain_queued(eng);
	work += fabric_deliver(eng->port);
	if (rx)
		work += rx(eng->port);
	if (atomic_load(&eng->kick_pending))
		work += run_kicks(eng);
	if (eng->waiters.first)
		work += run_waiters(eng);
	acks_flush(eng);
	run_timers(eng);
	acks_flush(eng);
	return work;
}

int engine_round(struct engine *eng, bool inline_rx)
{
	return round_run(eng, inline_rx ? fabric_rx_poll : NULL);
}

/*
 * A POLL doorbell: the application is busy-polling an empty CQ. Upstream
 * rings one per empty poll "to give the device a chance to poll", and
 * that is what it gets: if the device is idle (the lock is free), the
 * trapping thread runs a round of device work, reading what already
 * arrived on the fabric, so the CQE the application waits for can be there
 * when the provider polls again, with no device-thread wake-up between
 * (the Unix links only if a frame was sent on them, rx_inline()).
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
	round_run(eng, fabric_rx_poll_hinted);
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
 * application that rings nothing. A Unix link no same-host sender wrote
 * to since it was found empty is not asked (fabric_rx_poll_hinted()):
 * single copies put nothing on the links, and an event-driven message
 * traps three or four times on each side.
 */
static void rx_inline(struct engine *eng)
{
	if (eng->started && eng->port)
		fabric_rx_poll_hinted(eng->port);
}
