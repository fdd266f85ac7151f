// SPDX-License-Identifier: BSD-2-Clause
/*
 * The device's timers (RC ACK timeout, RNR wait) and the kicks the control
 * path leaves for the device thread. See engine.h.
 */
#include "engine.h"
#include "publish.h"
#include "view.h"

/* IB min_rnr_timer encoding -> microseconds. */
const uint32_t dev_rnr_timer_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* Local ACK timeout: 4.096 us * 2^timeout, at least 1 ms (the sim's
 * scheduling granularity), at most 8 s; 0 (infinite) waits 8 s per try
 * so that a vanished peer never hangs a QP forever. */
uint64_t dev_ack_timeout_ns(const struct sim_qp *qp)
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

/* A timer armed outside the device thread's round may be due before its
 * sleep ends: a kick makes it recompute the sleep, or a request lost
 * where no packet wakes anyone would never time out. */
static void engine_deadline(struct engine *eng, uint64_t when)
{
	if (eng->next_deadline && when >= eng->next_deadline)
		return;
	eng->next_deadline = when;
	if (eng->started && when < eng->sleep_until) {
		eng->sleep_until = when;
		atomic_store(&eng->kick_pending, true);
		fabric_wake(eng->port);
	}
}

/* The local ACK timer of the oldest unacknowledged request. */
void dev_arm_timer(struct eqp *e, uint64_t when)
{
	e->req.deadline = when;
	e->req.deadline_tx = fabric_link_tx_bytes(e->req.link);
	engine_deadline(e->eng, when);
}

/* From the clock, not the round's start: a round that read long responses
 * would arm a deadline already mostly spent. */
void dev_restart_ack_timer(struct eqp *e)
{
	dev_arm_timer(e, now_ns() + dev_ack_timeout_ns(e->qp));
}

/* The RNR timer: a separate deadline, so that waiting out an RNR NAK
 * never counts as an ACK timeout (that would spend the retry count). */
void dev_arm_rnr_timer(struct eqp *e, uint64_t when)
{
	e->req.rnr_until = when;
	engine_deadline(e->eng, when);
}

static void qp_timer(struct eqp *e, uint64_t now)
{
	struct sim_qp *qp = e->qp;

	if (e->req.rnr_until && now >= e->req.rnr_until) {
		e->req.rnr_until = 0;
		dev_sq_progress(e);
	}
	if (!e->req.deadline || now < e->req.deadline)
		return;
	e->req.deadline = 0;
	/* Requests waiting for a link the peer stopped reading count as
	 * sent and lost: a peer that never drains its link is a peer that
	 * never answers, and ends in RETRY_EXC_ERR like one that is gone. */
	if (!e->req.out_count)
		return;
	/* A request still leaving on a link that drains is long, not lost
	 * (one frame here, many packets and ACKs on the wire). */
	if (fabric_link_busy(e->req.link) &&
	    fabric_link_push(e->req.link) != e->req.deadline_tx) {
		dev_arm_timer(e, now + dev_ack_timeout_ns(qp));
		return;
	}
	/* retry_cnt 7 is seven retries, not "infinite": only rnr_retry has
	 * an infinite encoding. A peer that is gone ends in RETRY_EXC_ERR. */
	if (!e->req.retries_left--) {
		dev_requester_fail(e, PVRDMA_WC_RETRY_EXC_ERR);
		return;
	}
	/* Resend from the oldest unacknowledged request; look the peer up
	 * again, it may have come back. */
	stat_add(&qp->uctx->dev->stats.retransmits, e->req.out_sent);
	dev_out_unsend(e);
	pkt_rewind(e, e->req.win_base);
	if (!fabric_link_alive(e->req.link))
		e->need_resolve = true;
	dev_sq_progress(e);
	if (!e->req.deadline && e->req.out_count)
		dev_arm_timer(e, now + dev_ack_timeout_ns(qp));
}

void dev_run_timers(struct engine *eng)
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
		d = e->req.deadline;

		if (e->req.rnr_until && (!d || e->req.rnr_until < d))
			d = e->req.rnr_until;
		if (d && (!eng->next_deadline || d < eng->next_deadline))
			eng->next_deadline = d;
	}
}

/* Same-host requesters that took an arm of this adapter's CQs and died
 * before its event (view.h): a requester's raise lasts microseconds, so
 * one held RAISE_CHECK_NS after it was seen is looked at, and the events
 * of those whose process is gone are raised here. The device thread
 * wakes when such a requester's link closes; its process may still be
 * exiting then, hence the check again later. */
#define RAISE_CHECK_NS	20000000ull

void dev_run_raise_checks(struct engine *eng)
{
	if (!view_raises_held(eng->dev->index)) {
		eng->raise_check_at = 0;
		return;
	}
	if (!eng->raise_check_at) {
		eng->raise_check_at = eng->now + RAISE_CHECK_NS;
	} else if (eng->now >= eng->raise_check_at) {
		eng->raise_check_at = 0;
		if (!pub_raises_recover(eng->dev))
			return;
		eng->raise_check_at = eng->now + RAISE_CHECK_NS;
	}
	engine_deadline(eng, eng->raise_check_at);
}

void dev_kick(struct eqp *e)
{
	struct engine *eng = e->eng;

	qlist_push(&eng->kicks, &e->kick);
	atomic_store(&eng->kick_pending, true);
	fabric_wake(eng->port);
}

int dev_run_kicks(struct engine *eng)
{
	struct qlink *l;
	int n = 0;

	atomic_store(&eng->kick_pending, false);
	while ((l = qlist_pop(&eng->kicks))) {
		dev_sq_progress(eqp_of(l, kick));
		n++;
	}
	return n;
}
