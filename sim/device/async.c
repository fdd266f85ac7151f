// SPDX-License-Identifier: BSD-2-Clause
/*
 * --async-mode (vSphere 8's vrdma.asyncMode): while the adapter is active,
 * its device thread does not wait for doorbells or readiness; each round it
 * reads every link and looks at the send rings of its QPs, trading a host
 * CPU for latency (work is found without a wake-up). An adapter idle for
 * ASYNC_IDLE_NS goes back to sleeping and burns no CPU. See engine.h.
 */
#include "engine.h"

/* How long the device keeps polling after the adapter's last activity. */
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

/* dev->lock held; true: the thread polls on. */
bool dev_async_poll(struct engine *eng)
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
			dev_sq_progress(eqp_of(l, all));
	dev_acks_flush(eng);
	return true;
}
