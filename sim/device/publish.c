// SPDX-License-Identifier: BSD-2-Clause
/*
 * The target's side of the same-host single copy (direct.c is the
 * requester's): what the adapter publishes of its MRs and QPs in its
 * shared segment (sim/fabric/shared.c), as the views a same-host
 * requester checks a one-sided operation against. The segment holds plain
 * views by adapter index; the device decides here what of its objects a
 * requester may reach. Each call runs with dev->lock held (the segment's
 * lock is taken after it).
 */
#include <assert.h>

#include "direct.h"
#include "shared.h"

static_assert(SIM_MAX_MR <= SHARED_MR_KEYS, "the segment holds every key");

void sim_dev_shared_open(struct sim_dev *dev)
{
	shared_open(dev->index);
}

void sim_mr_publish(struct sim_dev *dev, const struct sim_mr *mr)
{
	struct shared_mr_view v = {
		.addr = mr->addr,
		.iova = mr->iova,
		.length = mr->length,
		.access = mr->access,
		.pdn = mr->pd->pdn,
	};

	/* Only memory reached as the application's own pages is published:
	 * pages an MR keeps for itself (pinning) are the device's. */
	if (mr->shadow || mr->pin_lost)
		return;
	shared_mr_publish(dev->index, mr->rkey, &v);
}

void sim_mr_withdraw(struct sim_dev *dev, const struct sim_mr *mr)
{
	shared_mr_withdraw(dev->index, mr->rkey);
}

void direct_qp_publish(const struct sim_qp *qp)
{
	struct shared_qp_view v = {
		.pdn = qp->pd ? qp->pd->pdn : 0,
		.access = qp->attr.qp_access_flags,
		.state = (uint8_t)qp->attr.state,
		.type = (uint8_t)qp->type,
	};

	shared_qp_publish(qp->uctx->dev->index, qp->qpn, &v);
}

void direct_qp_withdraw(const struct sim_qp *qp)
{
	shared_qp_withdraw(qp->uctx->dev->index, qp->qpn);
}
