// SPDX-License-Identifier: BSD-2-Clause
/*
 * pvrdmadv inside the provider: the fast-path counters of a context and
 * what can be inferred about the device.
 *
 * Counters live in each queue and CQ and are bumped by their single writer
 * without atomics (see pvrdma_stat_add); what the fast path does not count
 * is derived here (pvrdma_wq_read_stats). A query sums the live objects
 * and what destroyed ones left behind. Objects are tracked on lists of the
 * context, walked only here and touched only at create/destroy.
 */
#include <errno.h>
#include <string.h>

#include <ccan/minmax.h>

#include "pvrdma.h"

void pvrdma_objects_init(struct pvrdma_context *ctx)
{
	pthread_mutex_init(&ctx->objects_lock, NULL);
	list_head_init(&ctx->qps);
	list_head_init(&ctx->cqs);
	list_head_init(&ctx->srqs);
}

/* The counters of a queue as pvrdmadv reports them (see struct
 * pvrdma_wq_counters for what is derived). */
void pvrdma_wq_read_stats(const struct pvrdma_wq *wq,
			  struct pvrdma_wq_stats *out)
{
	uint64_t posts = pvrdma_stat_read(&wq->counters.posts);

	out->posts = posts;
	out->wqes = pvrdma_stat_read(&wq->prod) -
		    pvrdma_stat_read(&wq->reset_skipped);
	out->inline_wqes = pvrdma_stat_read(&wq->counters.inline_wqes);
	out->lock_acquisitions = wq->lock.single_thread ? 0 :
		posts + pvrdma_stat_read(&wq->counters.idle_sections);
}

void pvrdma_cq_read_stats(const struct pvrdma_cq *cq,
			  struct pvrdma_cq_stats *out)
{
	const struct pvrdma_cq_counters *c = &cq->counters;

	out->empty_polls = pvrdma_stat_read(&c->empty_polls);
	out->polls = pvrdma_stat_read(&c->found_polls) + out->empty_polls;
	out->cqes = pvrdma_stat_read(&c->cqes);
	out->db_poll = pvrdma_stat_read(&c->db_poll);
	out->db_arm = pvrdma_stat_read(&c->db_arm);
	out->db_arm_sol = pvrdma_stat_read(&c->db_arm_sol);
	out->arms_skipped = pvrdma_stat_read(&c->arms_skipped);
	out->lock_acquisitions = cq->lock.single_thread ? 0 :
		out->polls + pvrdma_stat_read(&c->other_sections);
}

static void wq_stats_sum(struct pvrdma_wq_stats *to,
			 const struct pvrdma_wq *wq)
{
	struct pvrdma_wq_stats s;

	pvrdma_wq_read_stats(wq, &s);
	to->posts += s.posts;
	to->wqes += s.wqes;
	to->inline_wqes += s.inline_wqes;
	to->lock_acquisitions += s.lock_acquisitions;
}

static void cq_stats_sum(struct pvrdma_cq_stats *to,
			 const struct pvrdma_cq *cq)
{
	struct pvrdma_cq_stats s;

	pvrdma_cq_read_stats(cq, &s);
	to->polls += s.polls;
	to->empty_polls += s.empty_polls;
	to->cqes += s.cqes;
	to->db_poll += s.db_poll;
	to->db_arm += s.db_arm;
	to->db_arm_sol += s.db_arm_sol;
	to->arms_skipped += s.arms_skipped;
	to->lock_acquisitions += s.lock_acquisitions;
}

void pvrdma_track_qp(struct pvrdma_context *ctx, struct pvrdma_qp *qp)
{
	pthread_mutex_lock(&ctx->objects_lock);
	list_add_tail(&ctx->qps, &qp->node);
	if (qp->qp_handle != qp->ibv_qp.qp_num)
		ctx->seen_qp_handle_ne_qpn = true;
	pthread_mutex_unlock(&ctx->objects_lock);
}

void pvrdma_untrack_qp(struct pvrdma_context *ctx, struct pvrdma_qp *qp)
{
	pthread_mutex_lock(&ctx->objects_lock);
	list_del(&qp->node);
	wq_stats_sum(&ctx->retired.sq, &qp->sq);
	if (!qp->srq)
		wq_stats_sum(&ctx->retired.rq, &qp->rq);
	pthread_mutex_unlock(&ctx->objects_lock);
}

void pvrdma_track_cq(struct pvrdma_context *ctx, struct pvrdma_cq *cq)
{
	pthread_mutex_lock(&ctx->objects_lock);
	list_add_tail(&ctx->cqs, &cq->node);
	pthread_mutex_unlock(&ctx->objects_lock);
}

void pvrdma_untrack_cq(struct pvrdma_context *ctx, struct pvrdma_cq *cq)
{
	pthread_mutex_lock(&ctx->objects_lock);
	list_del(&cq->node);
	cq_stats_sum(&ctx->retired.cq, cq);
	pthread_mutex_unlock(&ctx->objects_lock);
}

void pvrdma_track_srq(struct pvrdma_context *ctx, struct pvrdma_srq *srq)
{
	pthread_mutex_lock(&ctx->objects_lock);
	list_add_tail(&ctx->srqs, &srq->node);
	pthread_mutex_unlock(&ctx->objects_lock);
}

void pvrdma_untrack_srq(struct pvrdma_context *ctx, struct pvrdma_srq *srq)
{
	pthread_mutex_lock(&ctx->objects_lock);
	list_del(&srq->node);
	wq_stats_sum(&ctx->retired.srq, &srq->rq);
	pthread_mutex_unlock(&ctx->objects_lock);
}

int pvrdma_dv_query_counters(struct ibv_context *ibctx,
			     struct pvrdmadv_counters *out, size_t outlen)
{
	struct pvrdma_context *ctx = to_pctx(ibctx);
	struct pvrdma_retired_stats t;
	struct pvrdmadv_counters c = {};
	struct pvrdma_qp *qp;
	struct pvrdma_srq *srq;
	struct pvrdma_cq *cq;

	pthread_mutex_lock(&ctx->objects_lock);
	t = ctx->retired;
	list_for_each(&ctx->qps, qp, node) {
		wq_stats_sum(&t.sq, &qp->sq);
		if (!qp->srq)
			wq_stats_sum(&t.rq, &qp->rq);
	}
	list_for_each(&ctx->srqs, srq, node)
		wq_stats_sum(&t.srq, &srq->rq);
	list_for_each(&ctx->cqs, cq, node)
		cq_stats_sum(&t.cq, cq);
	pthread_mutex_unlock(&ctx->objects_lock);

	/* one doorbell per post call that put WQEs on the ring */
	c.db_qp_send = t.sq.posts;
	c.db_qp_recv = t.rq.posts;
	c.db_srq_recv = t.srq.posts;
	c.db_cq_arm = t.cq.db_arm;
	c.db_cq_arm_sol = t.cq.db_arm_sol;
	c.db_cq_poll = t.cq.db_poll;
	c.post_send = t.sq.posts;
	c.post_recv = t.rq.posts + t.srq.posts;
	c.send_wqes = t.sq.wqes;
	c.recv_wqes = t.rq.wqes + t.srq.wqes;
	c.inline_wqes = t.sq.inline_wqes;
	c.polls = t.cq.polls;
	c.empty_polls = t.cq.empty_polls;
	c.cqes = t.cq.cqes;
	c.arms_skipped = t.cq.arms_skipped;
	c.lock_acquisitions = t.sq.lock_acquisitions +
			      t.rq.lock_acquisitions +
			      t.srq.lock_acquisitions +
			      t.cq.lock_acquisitions;
	memcpy(out, &c, min(outlen, sizeof(c)));
	return 0;
}

/* Is some GID of the device of type RoCE v2 (a HW v14+ feature)? */
static bool has_roce_v2_gid(struct pvrdma_context *ctx)
{
	struct ibv_context *ibctx = &ctx->vctx.context;
	unsigned int port;
	int i;

	for (port = 1; port <= ctx->limits.phys_port_cnt; port++) {
		for (i = 0; i < ctx->ports[port - 1].gid_tbl_len; i++) {
			struct ibv_gid_entry e;

			if (ibv_query_gid_ex(ibctx, port, (uint32_t)i, &e, 0))
				continue;	/* empty entry */
			if (e.gid_type == IBV_GID_TYPE_ROCE_V2)
				return true;
		}
	}
	return false;
}

int pvrdma_dv_query_device(struct ibv_context *ibctx,
			   struct pvrdmadv_device_attr *out, size_t outlen)
{
	struct pvrdma_context *ctx = to_pctx(ibctx);
	struct pvrdmadv_device_attr a = {};

	if (ctx->limits.max_srq)
		a.flags |= PVRDMADV_DEVICE_FLAG_SRQ;
	if (has_roce_v2_gid(ctx))
		a.flags |= PVRDMADV_DEVICE_FLAG_ROCE_V2;
	pthread_mutex_lock(&ctx->objects_lock);
	if (ctx->seen_qp_handle_ne_qpn)
		a.flags |= PVRDMADV_DEVICE_FLAG_QP_NAMESPACES;
	pthread_mutex_unlock(&ctx->objects_lock);
	a.min_hw_version = a.flags & (PVRDMADV_DEVICE_FLAG_SRQ |
				      PVRDMADV_DEVICE_FLAG_ROCE_V2) ? 14 : 13;
	a.max_inline_data = ctx->max_inline_data;
	a.cq_poll_doorbell_interval = ctx->cq_poll_db_interval;
	a.comp_mask = PVRDMADV_DEVICE_ATTR_MIN_HW_VERSION |
		      PVRDMADV_DEVICE_ATTR_MAX_INLINE |
		      PVRDMADV_DEVICE_ATTR_CQ_POLL_DB;
	memcpy(out, &a, min(outlen, sizeof(a)));
	return 0;
}

const struct pvrdma_dv_ops pvrdma_dv_ops = {
	.query_counters = pvrdma_dv_query_counters,
	.query_device = pvrdma_dv_query_device,
};
