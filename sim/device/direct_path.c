// SPDX-License-Identifier: BSD-2-Clause
/*
 * The requester's one entry point to the same-host path (direct_offer()):
 * a WQE the requester fetched either executes here in one copy
 * (direct.c, direct_send.c), waits in the ring, or takes the wire. The
 * policy: one copy only once nothing of the QP is in flight on the wire
 * (per-QP order); a stream that met the wire returns to one copy once the
 * wire drains, unless its target keeps refusing; a SEND that found no
 * receive is tried again for as long as the target's RNR NAK would have
 * the requester wait.
 */
#include "direct.h"
#include "engine.h"

/* Misses in a row after which a stream stops waiting for the wire to
 * drain, and how often it tries one copy again then. */
#define DIRECT_MISSES_HELD	4u
#define DIRECT_PROBE_EVERY	64u
/* A SEND that found no receive is tried again this often (at the QP's
 * next doorbell or round, at the latest on its timer): a receiver that
 * reposts a little late costs microseconds, not the RNR timer. */
#define DIRECT_RNR_RETRY_NS	5000ull

/* direct_execute(), counted for a stream's way back to one copy; -1:
 * no receive was posted, the WQE stays in the ring and is tried again. */
static int direct_attempt(struct eqp *e, const struct sim_send_wr *wr,
			  uint32_t *st, const struct sim_send_wr **done_wrs)
{
	uint64_t rnr_ns;
	unsigned int n = direct_execute(e->qp, e->req.link, wr, st, done_wrs,
					&rnr_ns);
	uint64_t now = e->eng->now;

	e->direct.fabric_run = 0;
	if (n) {
		e->direct.misses = 0;
		e->direct.rnr_since = 0;
		return (int)n;
	}
	if (rnr_ns) {
		if (!e->direct.rnr_since)
			e->direct.rnr_since = now;
		if (now - e->direct.rnr_since < rnr_ns) {
			dev_arm_rnr_timer(e, now + DIRECT_RNR_RETRY_NS);
			return -1;
		}
	}
	e->direct.rnr_since = 0;
	if (e->direct.misses < UINT8_MAX)
		e->direct.misses++;
	return 0;
}

static enum direct_way wire(struct eqp *e)
{
	if (e->direct.fabric_run < UINT8_MAX)
		e->direct.fabric_run++;
	return DIRECT_WIRE;
}

/* The WQE stays in the ring, fetched again later. */
static enum direct_way hold(struct eqp *e)
{
	atomic_fetch_sub(&e->qp->uctx->dev->stats.send_wqes, 1);
	return DIRECT_HOLD;
}

/* Consumes and completes the n WQEs done in one copy, the last with st. */
static enum direct_way complete(struct eqp *e, const struct sim_send_wr *wrs,
				unsigned int n, uint32_t st)
{
	struct sim_qp *qp = e->qp;
	uint64_t moved = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		moved += wrs[i].total_len;
	atomic_store_explicit(&e->eng->bulk_ns,
			      moved >= BULK_BYTES ? now_ns() : 0,
			      memory_order_relaxed);
	for (i = 0; i < n; i++) {
		sim_ring_consume(&qp->sq);
		dev_complete_send(e, &wrs[i], i + 1 < n ? 0 : st);
		/* in error (a CQ overflow): flushed */
		if (qp->attr.state != IBV_QPS_RTS)
			return DIRECT_STOP;
	}
	if (st) {
		dev_qp_to_error(e);
		return DIRECT_STOP;
	}
	return DIRECT_DONE;
}

enum direct_way direct_offer(struct eqp *e, struct out_wqe *o,
			     unsigned int *taken)
{
	const struct sim_send_wr *wrs;
	uint32_t st = o->local_err;
	int tried;

	*taken = 0;
	if (e->req.out_count) {
		/* Behind WQEs on the wire; a stream that wants one copy
		 * back waits for them rather than follow them. */
		if ((e->direct.misses < DIRECT_MISSES_HELD ||
		     e->direct.fabric_run >= DIRECT_PROBE_EVERY) &&
		    direct_reachable(e->qp, e->req.link))
			return hold(e);
		return wire(e);
	}
	if (e->direct.rnr_since) {
		if (e->eng->now < e->req.rnr_until)
			return hold(e);
		e->req.rnr_until = 0;
	}
	if (st || e->req.rnr_until)
		return wire(e);
	tried = direct_attempt(e, &o->wr, &st, &wrs);
	if (tried < 0)
		return hold(e);
	if (!tried)
		return wire(e);
	*taken = (unsigned int)tried;
	return complete(e, wrs, *taken, st);
}
