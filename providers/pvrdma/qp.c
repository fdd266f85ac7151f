// SPDX-License-Identifier: BSD-2-Clause
/*
 * Queue pairs: RC and UD. Buffers (device ABI):
 *   send buffer: one ring-state page (tx = SQ, rx = RQ), then SQ WQEs
 *   recv buffer: RQ WQEs (none when the QP uses an SRQ)
 * Counts are powers of two; a WQE is the next power of two of its header
 * plus max_sge SGEs. Everything is checked against the device limits
 * before anything is allocated.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ccan/minmax.h>
#include <infiniband/pvrdmadv.h>

#include "pvrdma.h"

static int check_qp_type(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
	case IBV_QPT_UD:
		return 0;
	case IBV_QPT_UC:
	case IBV_QPT_RAW_PACKET:
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
	case IBV_QPT_DRIVER:
		return EOPNOTSUPP;	/* real types PVRDMA does not have */
	default:
		return EINVAL;
	}
}

static int check_create_qp(const struct pvrdma_context *ctx,
			   const struct ibv_qp_init_attr_ex *attr)
{
	const struct pvrdma_limits *lim = &ctx->limits;
	int ret = check_qp_type(attr->qp_type);

	if (ret)
		return ret;
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd)
		return EINVAL;
	/* XRC, RSS, TSO: nothing of the kind on this device */
	if (attr->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD |
					  IBV_QP_INIT_ATTR_CREATE_FLAGS |
					  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags)
		return EOPNOTSUPP;
	if (!attr->send_cq || !attr->recv_cq)
		return EINVAL;
	if (attr->cap.max_send_wr > lim->max_qp_wr ||
	    attr->cap.max_send_sge > lim->max_sge)
		return EINVAL;
	if (!attr->srq && (attr->cap.max_recv_wr > lim->max_qp_wr ||
			   attr->cap.max_recv_sge > lim->max_sge))
		return EINVAL;
	if (attr->cap.max_inline_data > ctx->max_inline_data)
		return EINVAL;
	return 0;
}

static void free_qp_bufs(struct pvrdma_qp *qp)
{
	pvrdma_buf_free(&qp->sbuf);
	pvrdma_buf_free(&qp->rbuf);
}

/* Both create_qp and create_qp_ex. */
/* The queues' shape: entries (a power of two), SGEs and WQE size. */
struct qp_shape {
	uint32_t sq_cnt, sq_sge, sq_wqe;
	uint32_t rq_cnt, rq_sge, rq_wqe;	/* 0 with an SRQ */
};

static int qp_shape(const struct pvrdma_context *ctx,
		    const struct ibv_qp_init_attr_ex *attr, struct qp_shape *s)
{
	memset(s, 0, sizeof(*s));
	s->sq_cnt = (uint32_t)roundup_pow_of_two(
		max_t(uint32_t, attr->cap.max_send_wr, 1));
	s->sq_sge = attr->cap.max_send_sge ? attr->cap.max_send_sge : 1;
	s->sq_wqe = pvrdma_sq_wqe_size(s->sq_sge);
	if (!attr->srq) {
		s->rq_cnt = (uint32_t)roundup_pow_of_two(
			max_t(uint32_t, attr->cap.max_recv_wr, 1));
		s->rq_sge = attr->cap.max_recv_sge ? attr->cap.max_recv_sge : 1;
		s->rq_wqe = pvrdma_rq_wqe_size(s->rq_sge);
	}
	/* rounding up must not exceed what the device takes either */
	if (s->sq_cnt > ctx->limits.max_qp_wr ||
	    s->rq_cnt > ctx->limits.max_qp_wr)
		return EINVAL;
	return 0;
}

/* CREATE_QP to the kernel with the rings made, then the doorbells of the
 * handle it answers. */
static int qp_create_cmd(struct ibv_context *context, struct pvrdma_qp *qp,
			 const struct ibv_qp_init_attr_ex *attr,
			 const struct qp_shape *s)
{
	struct pvrdma_cmd_create_qp cmd = {};
	struct pvrdma_cmd_create_qp_resp resp = {};
	struct ibv_qp_init_attr_ex kattr;
	uint8_t *uar = to_pctx(context)->uar;
	int ret;

	cmd.drv_payload.sbuf_addr = (uintptr_t)qp->sbuf.addr;
	cmd.drv_payload.sbuf_size = (uint32_t)qp->sbuf.size;
	cmd.drv_payload.rbuf_addr = (uintptr_t)qp->rbuf.addr;
	cmd.drv_payload.rbuf_size = (uint32_t)qp->rbuf.size;
	cmd.drv_payload.qp_addr = (uintptr_t)qp;

	kattr = *attr;
	kattr.comp_mask = IBV_QP_INIT_ATTR_PD;
	kattr.cap.max_send_wr = s->sq_cnt;
	kattr.cap.max_send_sge = s->sq_sge;
	kattr.cap.max_recv_wr = s->rq_cnt;
	kattr.cap.max_recv_sge = s->rq_sge;
	kattr.cap.max_inline_data = 0;	/* the device has none: ours */
	ret = ibv_cmd_create_qp_ex(context, &qp->vqp, &kattr, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		return ret;

	/* Namespaced devices name the QP to the device by a handle that
	 * differs from the QPN; older ones return 0 and use the QPN. */
	qp->qp_handle = resp.drv_payload.qp_handle ? resp.drv_payload.qp_handle :
					     qp->ibv_qp.qp_num;
	qp->sq.doorbell = (uint32_t *)(uar + PVRDMA_UAR_QP_OFFSET);
	qp->sq.doorbell_value = (qp->qp_handle & PVRDMA_UAR_HANDLE_MASK) |
				PVRDMA_DB_QP_SEND;
	qp->rq.doorbell = qp->sq.doorbell;
	qp->rq.doorbell_value = (qp->qp_handle & PVRDMA_UAR_HANDLE_MASK) |
				PVRDMA_DB_QP_RECV;
	return 0;
}

static struct pvrdma_qp *qp_create(struct ibv_context *context,
				   struct ibv_qp_init_attr_ex *attr)
{
	struct pvrdma_context *ctx = to_pctx(context);
	size_t page = to_pdev(context->device)->page_size;
	struct pvrdma_ring_state *rs;
	struct qp_shape s;
	struct pvrdma_pd *pd;
	struct pvrdma_qp *qp;
	bool single;
	int ret;

	if (!attr) {
		errno = EINVAL;
		return NULL;
	}
	ret = check_create_qp(ctx, attr);
	if (!ret)
		ret = qp_shape(ctx, attr, &s);
	if (ret) {
		errno = ret;
		return NULL;
	}
	pd = to_ppd(attr->pd);
	single = pd->td != NULL;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	ret = pvrdma_buf_alloc(&qp->sbuf, pd, page +
			       align((size_t)s.sq_cnt * s.sq_wqe, page),
			       page, PVRDMADV_RES_TYPE_QP_SQ);
	if (ret)
		goto err_free;
	if (!attr->srq) {
		ret = pvrdma_buf_alloc(&qp->rbuf, pd,
				       align((size_t)s.rq_cnt * s.rq_wqe,
						    page),
				       page, PVRDMADV_RES_TYPE_QP_RQ);
		if (ret)
			goto err_bufs;
	}
	rs = qp->sbuf.addr;
	pvrdma_wq_init(&qp->sq, &rs->tx, (uint8_t *)qp->sbuf.addr + page,
		       s.sq_cnt, s.sq_wqe, s.sq_sge, single);
	if (!attr->srq)
		pvrdma_wq_init(&qp->rq, &rs->rx, qp->rbuf.addr, s.rq_cnt,
			       s.rq_wqe, s.rq_sge, single);
	qp->srq = attr->srq ? to_psrq(attr->srq) : NULL;
	qp->atomic_cap = ctx->limits.atomic_cap;
	ret = pvrdma_inline_init(qp, attr->pd, attr->cap.max_inline_data);
	if (ret)
		goto err_locks;
	ret = qp_create_cmd(context, qp, attr, &s);
	if (ret)
		goto err_inline;
	pvrdma_qp_init_fast(qp);

	ret = pvrdma_qp_table_add(ctx, qp);
	if (ret) {
		ibv_cmd_destroy_qp(&qp->ibv_qp);
		goto err_inline;
	}
	pvrdma_track_qp(ctx, qp);

	attr->cap.max_send_wr = s.sq_cnt;
	attr->cap.max_send_sge = s.sq_sge;
	attr->cap.max_recv_wr = s.rq_cnt;
	attr->cap.max_recv_sge = s.rq_sge;
	attr->cap.max_inline_data = qp->max_inline_data;
	return qp;

err_inline:
	pvrdma_inline_fini(qp);
err_locks:
	if (!attr->srq)
		pvrdma_lock_destroy(&qp->rq.lock);
	pvrdma_lock_destroy(&qp->sq.lock);
err_bufs:
	free_qp_bufs(qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *pvrdma_create_qp(struct ibv_pd *pd,
				struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = {};
	struct pvrdma_qp *qp;

	if (!attr) {
		errno = EINVAL;
		return NULL;
	}
	ex.qp_context = attr->qp_context;
	ex.send_cq = attr->send_cq;
	ex.recv_cq = attr->recv_cq;
	ex.srq = attr->srq;
	ex.cap = attr->cap;
	ex.qp_type = attr->qp_type;
	ex.sq_sig_all = attr->sq_sig_all;
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = qp_create(pd->context, &ex);
	if (!qp)
		return NULL;
	attr->cap = ex.cap;
	return &qp->ibv_qp;
}

struct ibv_qp *pvrdma_create_qp_ex(struct ibv_context *context,
				   struct ibv_qp_init_attr_ex *attr)
{
	struct pvrdma_qp *qp;
	uint64_t ops = 0;
	int ret;

	if (!attr) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ops = attr->send_ops_flags;
		ret = pvrdma_qp_ex_check_ops(to_pctx(context), attr->qp_type,
					     ops);
		if (ret) {
			errno = ret;
			return NULL;
		}
	}
	qp = qp_create(context, attr);
	if (!qp)
		return NULL;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		pvrdma_qp_ex_init_ops(qp, ops);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	return &qp->ibv_qp;
}

/* What the device would refuse anyway, refused before the syscall. */
int pvrdma_check_modify_qp(const struct pvrdma_limits *lim,
			   const struct ibv_qp_attr *attr, int mask)
{
	if (mask & ~(IBV_QP_RATE_LIMIT - 1))
		return EOPNOTSUPP;
	if ((mask & IBV_QP_STATE) && attr->qp_state > IBV_QPS_ERR)
		return EINVAL;
	if ((mask & IBV_QP_CUR_STATE) && attr->cur_qp_state > IBV_QPS_ERR)
		return EINVAL;
	if ((mask & IBV_QP_PORT) &&
	    (attr->port_num < 1 || attr->port_num > lim->phys_port_cnt))
		return EINVAL;
	if ((mask & IBV_QP_PKEY_INDEX) && attr->pkey_index >= lim->max_pkeys)
		return EINVAL;
	if ((mask & IBV_QP_PATH_MTU) &&
	    (attr->path_mtu < IBV_MTU_256 || attr->path_mtu > IBV_MTU_4096))
		return EINVAL;
	if ((mask & IBV_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return EINVAL;
	if ((mask & IBV_QP_TIMEOUT) && attr->timeout > 31)
		return EINVAL;
	if ((mask & IBV_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return EINVAL;
	if ((mask & IBV_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return EINVAL;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > lim->max_qp_init_rd_atom)
		return EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > lim->max_qp_rd_atom)
		return EINVAL;
	return 0;
}

/* After a move to RESET: nothing of the old life of the QP remains. */
static void qp_forget_work(struct pvrdma_qp *qp)
{
	struct pvrdma_cq *scq = to_pcq(qp->ibv_qp.send_cq);
	struct pvrdma_cq *rcq = to_pcq(qp->ibv_qp.recv_cq);

	pvrdma_cq_remove_qp(rcq, qp->qp_handle);
	if (scq != rcq)
		pvrdma_cq_remove_qp(scq, qp->qp_handle);
}

int pvrdma_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		     int attr_mask)
{
	struct pvrdma_qp *qp = to_pqp(ibqp);
	struct ibv_modify_qp cmd;
	int ret;

	ret = pvrdma_check_modify_qp(&to_pctx(ibqp->context)->limits, attr,
				     attr_mask);
	if (ret)
		return ret;
	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		qp_forget_work(qp);
		pvrdma_wq_reset(&qp->sq);
		if (!qp->srq)
			pvrdma_wq_reset(&qp->rq);
	}
	return 0;
}

int pvrdma_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct pvrdma_qp *qp = to_pqp(ibqp);
	struct ibv_query_qp cmd;
	int ret;

	ret = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
			       sizeof(cmd));
	if (ret)
		return ret;
	/* what this provider actually built */
	init_attr->cap.max_send_wr = qp->sq.wqe_cnt;
	init_attr->cap.max_send_sge = qp->sq.max_sge;
	init_attr->cap.max_recv_wr = qp->srq ? 0 : qp->rq.wqe_cnt;
	init_attr->cap.max_recv_sge = qp->srq ? 0 : qp->rq.max_sge;
	init_attr->cap.max_inline_data = qp->max_inline_data;
	attr->cap = init_attr->cap;
	return 0;
}

int pvrdma_destroy_qp(struct ibv_qp *ibqp)
{
	struct pvrdma_qp *qp = to_pqp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	/* out of the table first, then out of the CQs: once the CQ locks
	 * were taken no poller can still hold a pointer to it */
	pvrdma_qp_table_del(to_pctx(ibqp->context), qp);
	qp_forget_work(qp);
	pvrdma_untrack_qp(to_pctx(ibqp->context), qp);
	pvrdma_inline_fini(qp);
	pvrdma_lock_destroy(&qp->sq.lock);
	if (!qp->srq)
		pvrdma_lock_destroy(&qp->rq.lock);
	free_qp_bufs(qp);
	free(qp);
	return 0;
}
