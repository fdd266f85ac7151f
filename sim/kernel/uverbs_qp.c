// SPDX-License-Identifier: BSD-2-Clause
/*
 * Queue pairs: uverbs CREATE_QP/EX_CREATE_QP, MODIFY_QP/EX_MODIFY_QP,
 * QUERY_QP and DESTROY_QP, with what vmw_pvrdma and its device check.
 *
 * User rings, as the upstream provider lays them out and the device reads
 * them: the send buffer starts with one page of ring state (SQ ring at
 * offset 0, RQ ring at offset 8) followed by the SQ WQEs; the receive
 * buffer holds only RQ WQEs. WQE sizes are powers of two covering the
 * header and max_sge SGEs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "uaccess.h"
#include "uverbs_internal.h"

/* What both CREATE_QP forms carry. */
struct create_qp_args {
	uint64_t user_handle;
	uint32_t pd_handle, send_cq_handle, recv_cq_handle, srq_handle;
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge;
	uint32_t max_inline_data;
	uint8_t sq_sig_all, qp_type, is_srq;
	uint32_t create_flags;
};

/* Create flags uverbs passes on to a driver at all. */
#define UVERBS_CREATE_FLAGS_KNOWN \
	(IBV_QP_CREATE_BLOCK_SELF_MCAST_LB | IBV_QP_CREATE_SCATTER_FCS | \
	 IBV_QP_CREATE_CVLAN_STRIPPING | IBV_QP_CREATE_SOURCE_QPN | \
	 IBV_QP_CREATE_PCI_WRITE_END_PADDING | (1u << 3) /* cross chan */)

static uint32_t wqe_size(size_t hdr, uint32_t max_sge)
{
	return sim_roundup_pow2((uint32_t)(hdr + sizeof(struct pvrdma_sge) *
					   (max_sge ? max_sge : 1)));
}

/* The objects a CREATE_QP names. */
struct qp_objs {
	struct sim_pd *pd;
	struct sim_cq *scq, *rcq;
	struct sim_srq *srq;
};

/* uverbs: the QP types a user may ask for at all, and their objects. */
static int create_qp_objs(struct sim_file *f, const struct create_qp_args *a,
			  struct qp_objs *o)
{
	o->rcq = NULL;
	o->srq = NULL;
	switch (a->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
	case IBV_QPT_RAW_PACKET:
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
	case IBV_QPT_DRIVER:
		break;
	default:
		return -EINVAL;
	}
	/* An XRC target names an XRC domain; this device has none. */
	if (a->qp_type == IBV_QPT_XRC_RECV)
		return -EINVAL;
	if (a->qp_type != IBV_QPT_XRC_SEND) {
		if (a->is_srq) {
			o->srq = uobj_get(f, UOBJ_SRQ, a->srq_handle);
			if (!o->srq)
				return -EINVAL;
		}
		if (a->recv_cq_handle != a->send_cq_handle) {
			o->rcq = uobj_get(f, UOBJ_CQ, a->recv_cq_handle);
			if (!o->rcq)
				return -EINVAL;
		}
	}
	o->scq = uobj_get(f, UOBJ_CQ, a->send_cq_handle);
	if (a->qp_type != IBV_QPT_XRC_SEND && !o->rcq)
		o->rcq = o->scq;
	o->pd = uobj_get(f, UOBJ_PD, a->pd_handle);
	if (!o->pd || !o->scq)
		return -EINVAL;
	if (a->create_flags & ~UVERBS_CREATE_FLAGS_KNOWN)
		return -EINVAL;
	return 0;
}

/* The rings' shape: entries and their size, and the bytes each takes. */
struct qp_rings {
	uint32_t sq_n, sq_sz, rq_n, rq_sz;
	uint64_t sq_bytes, rq_bytes;
};

/* pvrdma_create_qp: the device's limits and the rings it was given. */
static int create_qp_rings(struct uverbs_call *c,
			   const struct create_qp_args *a, bool srq,
			   struct pvrdma_create_qp *ucmd, struct qp_rings *r)
{
	struct sim_dev *dev = c->f->dev;
	unsigned int max_ud;
	int ret;

	if (a->create_flags)
		return -EOPNOTSUPP;
	if (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UD)
		return -EOPNOTSUPP;
	if (srq && !sim_dev_max_srq(dev))
		return -EINVAL;
	ret = udata_in(c, ucmd, sizeof(*ucmd));
	if (ret)
		return ret;
	/* With namespaces the provider must take the QP handle back. */
	if (dev->cfg.namespaces &&
	    c->udata_outlen < sizeof(struct pvrdma_create_qp_resp))
		return -EOPNOTSUPP;

	if (a->max_send_wr > sim_dev_max_qp_wr(dev) ||
	    a->max_send_sge > SIM_MAX_SGE ||
	    (!srq && (a->max_recv_wr > sim_dev_max_qp_wr(dev) ||
		      a->max_recv_sge > SIM_MAX_SGE)))
		return -EINVAL;
	max_ud = dev->cfg.max_ud_qps ? dev->cfg.max_ud_qps :
		 SIM_MAX_UD_QP_DEFAULT;
	if (a->qp_type == IBV_QPT_UD && dev->num_ud_qps >= max_ud)
		return -ENOMEM;

	memset(r, 0, sizeof(*r));
	r->sq_n = sim_roundup_pow2(a->max_send_wr ? a->max_send_wr : 1);
	r->sq_sz = wqe_size(sizeof(struct pvrdma_sq_wqe_hdr), a->max_send_sge);
	r->sq_bytes = SIM_PAGE_SIZE + (uint64_t)r->sq_n * r->sq_sz;
	ret = uverbs_user_range_ok(ucmd->sbuf_addr, ucmd->sbuf_size);
	if (ret)
		return ret;
	if (ucmd->sbuf_size < r->sq_bytes)
		return -EINVAL;
	if (!srq) {
		r->rq_n = sim_roundup_pow2(a->max_recv_wr ? a->max_recv_wr : 1);
		r->rq_sz = wqe_size(sizeof(struct pvrdma_rq_wqe_hdr),
				    a->max_recv_sge);
		r->rq_bytes = (uint64_t)r->rq_n * r->rq_sz;
		ret = uverbs_user_range_ok(ucmd->rbuf_addr, ucmd->rbuf_size);
		if (ret)
			return ret;
		if (ucmd->rbuf_size < r->rq_bytes)
			return -EINVAL;
	}
	if (((uint64_t)ucmd->sbuf_size + SIM_PAGE_SIZE - 1) / SIM_PAGE_SIZE +
	    (srq ? 0 : ((uint64_t)ucmd->rbuf_size + SIM_PAGE_SIZE - 1) /
		       SIM_PAGE_SIZE) >
	    SIM_PAGE_DIR_MAX_PAGES)
		return -EINVAL;
	return 0;
}

/* The QP as its rings, now pinned, and its arguments make it. */
static void qp_init(struct sim_qp *qp, struct sim_ucontext *uctx,
		    const struct create_qp_args *a, const struct qp_objs *o,
		    const struct qp_rings *r)
{
	qp->user_handle = a->user_handle;
	qp->type = a->qp_type;
	qp->sq_sig_all = a->sq_sig_all;
	qp->uctx = uctx;
	qp->pd = o->pd;
	qp->send_cq = o->scq;
	qp->recv_cq = o->rcq;
	qp->srq = o->srq;
	qp->cap.max_send_wr = a->max_send_wr;
	qp->cap.max_recv_wr = a->max_recv_wr;
	qp->cap.max_send_sge = a->max_send_sge;
	qp->cap.max_recv_sge = a->max_recv_sge;
	qp->cap.max_inline_data = 0;	/* the driver supports none */
	qp->sq.state = (struct pvrdma_ring *)(qp->ring_pin.base +
					      qp->ring_pin.off[0]);
	qp->sq.elems = qp->ring_pin.base + qp->ring_pin.off[0] +
		       SIM_PAGE_SIZE;
	qp->sq.nelems = r->sq_n;
	qp->sq.elem_size = r->sq_sz;
	qp->sq.max_sge = a->max_send_sge ? a->max_send_sge : 1;
	if (!o->srq) {
		qp->rq.state = (struct pvrdma_ring *)(qp->ring_pin.base +
						      qp->ring_pin.off[0] + 8);
		qp->rq.elems = qp->ring_pin.base + qp->ring_pin.off[1];
		qp->rq.nelems = r->rq_n;
		qp->rq.elem_size = r->rq_sz;
		qp->rq.max_sge = a->max_recv_sge ? a->max_recv_sge : 1;
	}
	qp->attr.state = IBV_QPS_RESET;
}

/*
 * The device handle (doorbells and CQEs name it; the provider indexes a
 * table of qp_tab_size (= max_qp) entries with it) and the QPN. Nothing
 * is kept on failure.
 */
static int qp_numbers(struct sim_dev *dev, struct sim_qp *qp)
{
	uint32_t next = SIM_FIRST_QP_HANDLE;
	int ret;

	ret = -sim_table_alloc(&dev->qp_by_qp_handle, SIM_FIRST_QP_HANDLE,
			       SIM_MAX_QP - 1, &next, qp, &qp->qp_handle);
	if (ret)
		return ret;
	if (dev->cfg.namespaces) {
		uint32_t first = SIM_FIRST_NS_QPN, last = SIM_MAX_QPN;

		/* An address other processes of the host may share: the
		 * QPN says which of them this adapter is. */
		fabric_qpn_range(dev->index, dev->cfg.ipv4, &first, &last);
		ret = -sim_table_alloc(&dev->qps, first, last,
				       &dev->next_qpn, qp, &qp->qpn);
	} else {
		qp->qpn = qp->qp_handle;
		ret = -sim_table_put(&dev->qps, qp->qpn, qp);
	}
	if (ret)
		sim_table_del(&dev->qp_by_qp_handle, qp->qp_handle);
	return ret;
}

static int create_qp_respond(struct uverbs_call *c, const struct sim_qp *qp,
			     struct ib_uverbs_ex_create_qp_resp *resp)
{
	struct pvrdma_create_qp_resp uresp = { 0 };

	memset(resp, 0, sizeof(*resp));
	resp->base.qp_handle = qp->handle;
	resp->base.qpn = qp->qpn;
	resp->base.max_send_wr = qp->cap.max_send_wr;
	resp->base.max_recv_wr = qp->cap.max_recv_wr;
	resp->base.max_send_sge = qp->cap.max_send_sge;
	resp->base.max_recv_sge = qp->cap.max_recv_sge;
	resp->base.max_inline_data = 0;
	resp->response_length = c->outlen < sizeof(*resp) ?
		(uint32_t)c->outlen : (uint32_t)sizeof(*resp);
	uresp.qpn = qp->qpn;
	uresp.qp_handle = qp->qp_handle;
	/* The driver copies back as much as the provider has room for; a
	 * copy that faults destroys the QP and answers EINVAL. */
	if (c->udata_outlen && c->udata_out &&
	    sim_copy_to_user(c->udata_out, &uresp,
			     c->udata_outlen < sizeof(uresp) ?
			     c->udata_outlen : sizeof(uresp)))
		return -EINVAL;
	return uverbs_response(c, resp, sizeof(*resp));
}

static int create_qp(struct uverbs_call *c, const struct create_qp_args *a,
		     struct ib_uverbs_ex_create_qp_resp *resp)
{
	struct sim_file *f = c->f;
	struct sim_dev *dev = f->dev;
	struct pvrdma_create_qp ucmd;
	struct sim_pin_range rings[2];
	struct qp_objs o;
	struct qp_rings r;
	struct sim_qp *qp;
	int ret;

	ret = create_qp_objs(f, a, &o);
	if (ret)
		return ret;
	ret = create_qp_rings(c, a, o.srq != NULL, &ucmd, &r);
	if (ret)
		return ret;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	/* The device's page directory: the send buffer's pages (ring
	 * state, SQ WQEs) and the receive buffer's (RQ WQEs). */
	rings[0] = (struct sim_pin_range){
		.addr = ucmd.sbuf_addr & ~(uint64_t)(SIM_PAGE_SIZE - 1),
		.len = r.sq_bytes,
	};
	rings[1] = (struct sim_pin_range){
		.addr = ucmd.rbuf_addr & ~(uint64_t)(SIM_PAGE_SIZE - 1),
		.len = r.rq_bytes,
	};
	ret = sim_pin_rings(&qp->ring_pin, rings, o.srq ? 1 : 2);
	if (ret)
		goto err_free;
	qp_init(qp, f->uctx, a, &o, &r);
	ret = qp_numbers(dev, qp);
	if (ret)
		goto err_free;
	ret = uobj_add(f, UOBJ_QP, qp, &qp->handle);
	if (ret)
		goto err_numbers;
	ret = sim_device->qp_create(qp);
	if (ret) {
		ret = ret > 0 ? -ret : ret;
		goto err_uobj;
	}
	ret = create_qp_respond(c, qp, resp);
	if (ret) {
		sim_device->qp_destroy(qp);
		goto err_uobj;
	}
	o.pd->refs++;
	o.scq->refs++;
	if (o.rcq)
		o.rcq->refs++;
	if (o.srq)
		o.srq->refs++;
	if (qp->type == IBV_QPT_UD)
		dev->num_ud_qps++;
	return 0;

err_uobj:
	uobj_del(f, qp->handle);
err_numbers:
	sim_table_del(&dev->qps, qp->qpn);
	sim_table_del(&dev->qp_by_qp_handle, qp->qp_handle);
err_free:
	sim_unpin(&qp->ring_pin);
	free(qp);
	return ret;
}

/* The fields CREATE_QP and EX_CREATE_QP share: the same names in both
 * request structs, so one list takes them from either. */
#define CREATE_QP_ARGS(a, cmd)						\
	do {								\
		(a)->user_handle = (cmd)->user_handle;			\
		(a)->pd_handle = (cmd)->pd_handle;			\
		(a)->send_cq_handle = (cmd)->send_cq_handle;		\
		(a)->recv_cq_handle = (cmd)->recv_cq_handle;		\
		(a)->srq_handle = (cmd)->srq_handle;			\
		(a)->max_send_wr = (cmd)->max_send_wr;			\
		(a)->max_recv_wr = (cmd)->max_recv_wr;			\
		(a)->max_send_sge = (cmd)->max_send_sge;		\
		(a)->max_recv_sge = (cmd)->max_recv_sge;		\
		(a)->max_inline_data = (cmd)->max_inline_data;		\
		(a)->sq_sig_all = (cmd)->sq_sig_all;			\
		(a)->qp_type = (cmd)->qp_type;				\
		(a)->is_srq = (cmd)->is_srq;				\
	} while (0)

int uverbs_create_qp(struct uverbs_call *c)
{
	struct ib_uverbs_create_qp cmd;
	struct ib_uverbs_ex_create_qp_resp resp;
	struct create_qp_args a = { 0 };
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	CREATE_QP_ARGS(&a, &cmd);
	return create_qp(c, &a, &resp);
}

int uverbs_ex_create_qp(struct uverbs_call *c)
{
	struct ib_uverbs_ex_create_qp cmd;
	struct ib_uverbs_ex_create_qp_resp resp;
	struct create_qp_args a = { 0 };
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (cmd.comp_mask & ~IB_UVERBS_CREATE_QP_SUP_COMP_MASK)
		return -EINVAL;
	if (cmd.reserved)
		return -EINVAL;
	/* Receive work queue indirection tables: none on this device. */
	if (cmd.comp_mask & IB_UVERBS_CREATE_QP_MASK_IND_TABLE)
		return -EINVAL;
	CREATE_QP_ARGS(&a, &cmd);
	a.create_flags = cmd.create_flags;
	return create_qp(c, &a, &resp);
}

static void dest_to_ah(const struct ib_uverbs_qp_dest *d,
		       struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	memcpy(ah->grh.dgid.raw, d->dgid, 16);
	ah->grh.flow_label = d->flow_label;
	ah->grh.sgid_index = d->sgid_index;
	ah->grh.hop_limit = d->hop_limit;
	ah->grh.traffic_class = d->traffic_class;
	ah->dlid = d->dlid;
	ah->sl = d->sl;
	ah->src_path_bits = d->src_path_bits;
	ah->static_rate = d->static_rate;
	ah->is_global = d->is_global;
	ah->port_num = d->port_num;
}

static void ah_to_dest(const struct ibv_ah_attr *ah,
		       struct ib_uverbs_qp_dest *d)
{
	memset(d, 0, sizeof(*d));
	d->sl = ah->sl;
	d->src_path_bits = ah->src_path_bits;
	d->static_rate = ah->static_rate;
	d->port_num = ah->port_num;
	d->is_global = ah->is_global;
	/* RoCE: no LIDs. */
	if (ah->is_global) {
		memcpy(d->dgid, ah->grh.dgid.raw, 16);
		d->flow_label = ah->grh.flow_label;
		d->sgid_index = ah->grh.sgid_index;
		d->hop_limit = ah->grh.hop_limit;
		d->traffic_class = ah->grh.traffic_class;
	}
}

/* A RoCE path must be global and start at one of the port's GIDs. */
static int check_av(const struct sim_dev *dev, const struct ibv_ah_attr *ah)
{
	if (ah->port_num != 1)
		return -EINVAL;
	if (!ah->is_global)
		return -EINVAL;
	if (ah->grh.sgid_index >= dev->gid_count ||
	    ah->grh.sgid_index >= SIM_GID_TABLE_LEN)
		return -EINVAL;
	return 0;
}

#define QP_ACCESS_KNOWN (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* The device: values it cannot take. */
static int modify_qp_values_ok(const struct ib_uverbs_modify_qp *cmd,
			       int mask)
{
	if ((mask & IBV_QP_PATH_MTU) &&
	    (cmd->path_mtu < IBV_MTU_256 || cmd->path_mtu > IBV_MTU_4096))
		return -EINVAL;
	if ((mask & IBV_QP_TIMEOUT) && cmd->timeout > 31)
		return -EINVAL;
	if ((mask & IBV_QP_RETRY_CNT) && cmd->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IBV_QP_RNR_RETRY) && cmd->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
	    cmd->max_rd_atomic > sim_dev_max_qp_init_rd_atom())
		return -EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	    cmd->max_dest_rd_atomic > sim_dev_max_qp_rd_atom())
		return -EINVAL;
	if ((mask & IBV_QP_ACCESS_FLAGS) &&
	    (cmd->qp_access_flags & ~QP_ACCESS_KNOWN))
		return -EINVAL;
	if ((mask & IBV_QP_PATH_MIG_STATE) &&
	    cmd->path_mig_state > IBV_MIG_ARMED)
		return -EINVAL;
	return 0;
}

/* The attributes MODIFY_QP sets as they are given. */
static void modify_qp_attrs(struct sim_qp_attr *na,
			    const struct ib_uverbs_modify_qp *cmd, int mask)
{
	if (mask & IBV_QP_PATH_MTU)
		na->path_mtu = cmd->path_mtu;
	if (mask & IBV_QP_RQ_PSN)
		na->rq_psn = cmd->rq_psn & 0xffffff;
	if (mask & IBV_QP_SQ_PSN)
		na->sq_psn = cmd->sq_psn & 0xffffff;
	if (mask & IBV_QP_DEST_QPN)
		na->dest_qp_num = cmd->dest_qp_num & 0xffffff;
	if (mask & IBV_QP_ACCESS_FLAGS)
		na->qp_access_flags = (int)cmd->qp_access_flags;
	if (mask & IBV_QP_PKEY_INDEX)
		na->pkey_index = cmd->pkey_index;
	if (mask & IBV_QP_PORT)
		na->port_num = cmd->port_num;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		na->max_rd_atomic = cmd->max_rd_atomic;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		na->max_dest_rd_atomic = cmd->max_dest_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		na->min_rnr_timer = cmd->min_rnr_timer;
	if (mask & IBV_QP_TIMEOUT)
		na->timeout = cmd->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		na->retry_cnt = cmd->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		na->rnr_retry = cmd->rnr_retry;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		na->en_sqd_async_notify = cmd->en_sqd_async_notify;
	if (mask & IBV_QP_PATH_MIG_STATE)
		na->path_mig_state = cmd->path_mig_state;
}

static int modify_qp(struct uverbs_call *c,
		     const struct ib_uverbs_modify_qp *cmd, uint32_t legal)
{
	struct sim_dev *dev = c->f->dev;
	struct sim_qp_attr na;
	enum ibv_qp_state cur, next, old;
	struct sim_qp *qp;
	int mask = (int)cmd->attr_mask;
	int ret;

	if (cmd->attr_mask & ~legal)
		return -EOPNOTSUPP;
	qp = uobj_get(c->f, UOBJ_QP, cmd->qp_handle);
	if (!qp)
		return -EINVAL;
	/* uverbs: ports and states must exist. */
	if ((mask & IBV_QP_PORT) && cmd->port_num != 1)
		return -EINVAL;
	if ((mask & IBV_QP_AV) && cmd->dest.port_num != 1)
		return -EINVAL;
	if ((mask & IBV_QP_ALT_PATH) &&
	    (cmd->alt_port_num != 1 || cmd->alt_dest.port_num != 1))
		return -EINVAL;
	if (((mask & IBV_QP_CUR_STATE) && cmd->cur_qp_state > IBV_QPS_ERR) ||
	    ((mask & IBV_QP_STATE) && cmd->qp_state > IBV_QPS_ERR))
		return -EINVAL;

	/* pvrdma_modify_qp */
	cur = (mask & IBV_QP_CUR_STATE) ? cmd->cur_qp_state : qp->attr.state;
	next = (mask & IBV_QP_STATE) ? cmd->qp_state : cur;
	if (!sim_qp_transition_ok(cur, next, qp->type, mask))
		return -EINVAL;
	if ((mask & IBV_QP_MIN_RNR_TIMER) && cmd->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IBV_QP_PKEY_INDEX) &&
	    cmd->pkey_index >= sim_dev_max_pkeys())
		return -EINVAL;

	ret = modify_qp_values_ok(cmd, mask);
	if (ret)
		return ret;
	/* A path MTU whose packets the port's interface cannot carry would
	 * lose every full packet on the RoCE wire (don't fragment): the
	 * program hears of it here rather than as retries exhausted. */
	if ((mask & IBV_QP_PATH_MTU) &&
	    cmd->path_mtu > sim_dev_wire_mtu(dev))
		return -EINVAL;

	/* Nothing is applied until everything has passed. */
	na = qp->attr;
	if (mask & IBV_QP_AV) {
		dest_to_ah(&cmd->dest, &na.ah_attr);
		ret = check_av(dev, &na.ah_attr);
		if (ret)
			return ret;
	}
	if (mask & IBV_QP_ALT_PATH) {
		dest_to_ah(&cmd->alt_dest, &na.alt_ah_attr);
		ret = check_av(dev, &na.alt_ah_attr);
		if (ret)
			return ret;
		na.alt_pkey_index = cmd->alt_pkey_index;
		na.alt_port_num = cmd->alt_port_num;
		na.alt_timeout = cmd->alt_timeout;
	}
	if (mask & IBV_QP_QKEY)
		na.qkey = cmd->qkey;
	if (cur == IBV_QPS_RESET && next == IBV_QPS_RESET) {
		/* The driver keeps the Q_Key and tells the device nothing. */
		qp->attr.qkey = na.qkey;
		return 0;
	}
	modify_qp_attrs(&na, cmd, mask);
	na.state = next;
	na.sq_draining = 0;
	if (next == IBV_QPS_RESET) {
		/* Back to RESET: the device forgets the QP's attributes. */
		memset(&na, 0, sizeof(na));
		na.state = IBV_QPS_RESET;
	}

	old = qp->attr.state;
	qp->attr = na;
	sim_device->qp_modified(qp, old);
	return 0;
}

/* IB_QP_DEST_QPN is the last attribute legacy MODIFY_QP may name, the
 * rate limit the last one of the extended form. */
#define LEGACY_QP_ATTR_MASK ((IBV_QP_DEST_QPN << 1) - 1)
#define EX_QP_ATTR_MASK ((IBV_QP_RATE_LIMIT << 1) - 1)

int uverbs_modify_qp(struct uverbs_call *c)
{
	struct ib_uverbs_modify_qp cmd;
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	return modify_qp(c, &cmd, LEGACY_QP_ATTR_MASK);
}

int uverbs_ex_modify_qp(struct uverbs_call *c)
{
	struct ib_uverbs_ex_modify_qp cmd;
	struct ib_uverbs_ex_modify_qp_resp resp = { 0 };
	int ret;

	ret = uverbs_request(c, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	ret = modify_qp(c, &cmd.base, EX_QP_ATTR_MASK);
	if (ret)
		return ret;
	resp.response_length = c->outlen < sizeof(resp) ?
		(uint32_t)c->outlen : (uint32_t)sizeof(resp);
	return uverbs_response(c, &resp, sizeof(resp));
}

/* QUERY_QP's response (zeroed by the caller). */
void uverbs_qp_query(const void *obj, void *response)
{
	struct ib_uverbs_query_qp_resp *r = response;
	const struct sim_qp *qp = obj;
	const struct sim_qp_attr *a;

	a = &qp->attr;
	r->qp_state = a->state;
	r->cur_qp_state = a->state;
	/* pvrdma_query_qp answers a QP in RESET without asking the device:
	 * everything but the state reads zero. It never reports
	 * sq_sig_all. */
	if (a->state != IBV_QPS_RESET) {
		ah_to_dest(&a->ah_attr, &r->dest);
		ah_to_dest(&a->alt_ah_attr, &r->alt_dest);
		r->max_send_wr = qp->cap.max_send_wr;
		r->max_recv_wr = qp->cap.max_recv_wr;
		r->max_send_sge = qp->cap.max_send_sge;
		r->max_recv_sge = qp->cap.max_recv_sge;
		r->max_inline_data = qp->cap.max_inline_data;
		r->qkey = a->qkey;
		r->rq_psn = a->rq_psn;
		r->sq_psn = a->sq_psn;
		r->dest_qp_num = a->dest_qp_num;
		r->qp_access_flags = (uint32_t)a->qp_access_flags;
		r->pkey_index = a->pkey_index;
		r->alt_pkey_index = a->alt_pkey_index;
		r->path_mtu = a->path_mtu;
		r->path_mig_state = a->path_mig_state;
		r->sq_draining = a->sq_draining;
		r->max_rd_atomic = a->max_rd_atomic;
		r->max_dest_rd_atomic = a->max_dest_rd_atomic;
		r->min_rnr_timer = a->min_rnr_timer;
		r->port_num = a->port_num;
		r->timeout = a->timeout;
		r->retry_cnt = a->retry_cnt;
		r->rnr_retry = a->rnr_retry;
		r->alt_port_num = a->alt_port_num;
		r->alt_timeout = a->alt_timeout;
	}
}

void uverbs_qp_free(struct sim_file *f, void *obj)
{
	struct sim_qp *qp = obj;
	struct sim_dev *dev = f->dev;

	sim_device->qp_destroy(qp);
	sim_table_del(&dev->qps, qp->qpn);
	sim_table_del(&dev->qp_by_qp_handle, qp->qp_handle);
	qp->pd->refs--;
	qp->send_cq->refs--;
	if (qp->recv_cq)
		qp->recv_cq->refs--;
	if (qp->srq)
		qp->srq->refs--;
	if (qp->type == IBV_QPT_UD && dev->num_ud_qps)
		dev->num_ud_qps--;
	sim_unpin(&qp->ring_pin);
	free(qp);
}

/* DESTROY_QP's response: the async events the application got. */
void uverbs_qp_report(struct sim_file *f, void *obj, void *response)
{
	struct ib_uverbs_destroy_qp_resp *resp = response;
	struct sim_qp *qp = obj;

	qp->async_events_reported -=
		sim_event_async_reclaim(f, qp->user_handle);
	resp->events_reported = qp->async_events_reported;
}
