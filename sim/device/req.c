// SPDX-License-Identifier: BSD-2-Clause
/*
 * The requester: reads SQ WQEs from the user ring, checks local memory,
 * sends RC requests and UD datagrams over the fabric, keeps RC requests
 * until the responder acknowledges them. See engine.h.
 */
#include <errno.h>
#include <string.h>

#include "direct.h"
#include "engine.h"

static void link_wait(struct eqp *e)
{
	qlist_push(&e->eng->waiters, &e->wait);
}

/* QPs whose link drained (or died: their timers take over) send on. */
int dev_run_waiters(struct engine *eng)
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
		if (fabric_link_busy(e->req.link)) {
			qlist_push(&eng->waiters, &e->wait);
			continue;
		}
		dev_sq_progress(e);
		n++;
	}
	return n;
}

/* Checks the local SGEs of wr; need is the access the device needs. */
uint32_t dev_map_sges(struct sim_qp *qp, const struct pvrdma_sge *sge,
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

void dev_hdr_init(struct fab_hdr *h, struct sim_qp *qp, uint8_t type,
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

/* rc_transmit(): the window of a link of packets is full (packets.c). */
#define RC_WINDOW_FULL	UINT32_MAX

static uint32_t mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128u << mtu : 1024;
}

/* The payload bytes h sends of wr: a window's part of it (pkt_window()),
 * or all of it once. */
static uint64_t sent_bytes(const struct eqp *e, const struct fab_hdr *h,
			   const struct sim_send_wr *wr, bool first_part)
{
	uint64_t mtu = mtu_bytes(e->qp->attr.path_mtu);

	if (sim_wqe_is_read_or_atomic(wr->opcode) ||
	    !fabric_link_segments(e->req.link) || !h->atomic_b)
		return first_part ? wr->total_len : 0;
	return (uint64_t)h->atomic_b * mtu;
}

/*
 * Whether the requester asks for the ACK of what it sends now (bytes of
 * it new). A responder may hold the ACKs of requests that do not ask
 * (resp.c), so it asks wherever it waits for one: where the stream stops
 * (the last WQE fetched) while a WQE sent since the last ask completes
 * with a CQE, or all are sent again; where the next WQE waits for what is
 * in flight (a fence, a READ or atomic, an error to complete); and every
 * pkt_ask_every() bytes, half the window at most, so that a full
 * window always has an asked packet in flight whose ACK opens it, and a
 * long stream's WQEs complete as it goes. A READ or atomic is answered
 * anyway. A stream of WQEs the application posts one at a time, each the
 * last fetched when it goes, asks once per signaled one or so many
 * bytes, not once per WQE.
 */
static bool ask_ack(struct eqp *e, const struct out_wqe *o, uint64_t bytes)
{
	const struct out_wqe *next;

	e->req.unasked += bytes;
	if ((o->wr.send_flags & IBV_SEND_SIGNALED) || e->qp->sq_sig_all)
		e->req.ask_owed = true;
	if (sim_wqe_is_read_or_atomic(o->wr.opcode) ||
	    e->req.unasked >= pkt_ask_every(e))
		goto ask;
	if (e->req.out_sent + 1 >= e->req.out_count) {
		if (e->req.ask_owed)
			goto ask;
		return false;
	}
	next = dev_out_at(e, e->req.out_sent + 1);
	if (next->local_err || (next->wr.send_flags & IBV_SEND_FENCE) ||
	    sim_wqe_is_read_or_atomic(next->wr.opcode))
		goto ask;
	return false;
ask:
	e->req.unasked = 0;
	e->req.ask_owed = false;
	return true;
}

/* Sends the request of one RC WQE, or (*whole false) the part of it the
 * window lets go; a local protection error is reported instead (the WQE
 * completes with it once it is the oldest). */
static uint32_t rc_transmit(struct eqp *e, struct out_wqe *o, bool *whole)
{
	struct sim_qp *qp = e->qp;
	const struct sim_send_wr *wr = &o->wr;
	bool first_part = !o->pkts_sent;
	struct fab_hdr h;
	struct local_iov li;
	uint32_t st;
	int need = 0;

	if (sim_wqe_is_read_or_atomic(wr->opcode))
		need = IBV_ACCESS_LOCAL_WRITE;
	st = dev_map_sges(qp, wr->sge, wr->num_sge, need, &li);
	if (st)
		return st;

	dev_hdr_init(&h, qp, FAB_REQ, qp->attr.ah_attr.grh.sgid_index);
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
	h.flags |= pkt_mtu_flags(qp);
	if (sim_wqe_is_read_or_atomic(wr->opcode)) {
		h.read_len = wr->total_len;
		li.n = 0;
	} else {
		h.len = wr->total_len;
	}
	if (!pkt_window(e, o, &h, whole))
		return RC_WINDOW_FULL;
	if (ask_ack(e, o, sent_bytes(e, &h, wr, first_part)))
		h.flags |= FAB_F_ACKREQ;
	if (!sim_wqe_is_read_or_atomic(wr->opcode) && first_part)
		stat_add(&qp->uctx->dev->stats.bytes_tx, wr->total_len);
	/* A payload the device cannot read: nothing was sent. The rest of
	 * one the socket does not take now is sent from its place: the
	 * application leaves it alone until the WR completes, which takes
	 * the responder's ACK of all of it, or a flush, an error or the
	 * QP's end, before which the link copies it (in_place_settle). */
	if (!fabric_send_in_place(e->eng->port, e->req.link, &h, li.iov,
				  li.n) &&
	    errno == EFAULT)
		return PVRDMA_WC_LOC_PROT_ERR;
	return PVRDMA_WC_SUCCESS;
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
	st = dev_map_sges(qp, wr->sge, wr->num_sge, 0, &li);
	if (st)
		return st;
	if (wr->total_len > mtu_bytes(sim_dev_active_mtu(dev)))
		return PVRDMA_WC_LOC_LEN_ERR;
	if (wr->av.gid_index >= dev->gid_count)
		return PVRDMA_WC_LOC_QP_OP_ERR;

	dev_hdr_init(&h, qp, FAB_UD_SEND, wr->av.gid_index);
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

	if (!fabric_link_alive(e->req.ud_link) ||
	    memcmp(e->req.ud_gid, wr->av.dgid, 16) ||
	    (e->req.ud_qpn ^ wr->remote_qpn) >> FAB_SLOT_SHIFT) {
		e->req.ud_link = fabric_resolve(e->eng->port, wr->av.dgid,
					    wr->remote_qpn);
		memcpy(e->req.ud_gid, wr->av.dgid, 16);
		e->req.ud_qpn = wr->remote_qpn;
	}
	if (fabric_send(e->eng->port, e->req.ud_link, &h, li.iov, li.n))
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
		e->req.link = NULL;	/* RoCE routes by GID only */
	else
		e->req.link = fabric_resolve(e->eng->port,
					 qp->attr.ah_attr.grh.dgid.raw,
					 qp->attr.dest_qp_num);
}

/* The oldest WQE failed locally: complete it, then the QP is in error. */
void dev_complete_local_error(struct eqp *e)
{
	struct out_wqe *o = dev_out_at(e, 0);
	struct sim_send_wr wr = o->wr;
	uint32_t st = o->local_err;

	dev_out_pop(e);
	dev_complete_send(e, &wr, st);
	dev_qp_to_error(e);
}

static void sq_drained_check(struct eqp *e)
{
	struct sim_qp *qp = e->qp;

	if (qp->attr.state != IBV_QPS_SQD || !qp->attr.sq_draining ||
	    e->req.out_count)
		return;
	qp->attr.sq_draining = 0;
	if (qp->attr.en_sqd_async_notify)
		sim_device_upcalls.async_event(qp->uctx, qp->user_handle,
					       IBV_EVENT_SQ_DRAINED,
					       &qp->async_events_reported);
}

/* READs and atomics a QP may have outstanding. 0 would stall them for
 * good; a QP that did not raise it from 0 gets one at a time. */
static uint32_t rd_atomic_limit(const struct sim_qp *qp)
{
	return qp->attr.max_rd_atomic ? qp->attr.max_rd_atomic : 1;
}

/* A UD datagram leaves at once: nothing to keep. false: the QP is in
 * error. */
static bool ud_step(struct eqp *e, struct out_wqe *o)
{
	uint32_t st = o->local_err;

	sim_ring_consume(&e->qp->sq);
	if (!st)
		st = ud_send(e, &o->wr);
	dev_complete_send(e, &o->wr, st);
	if (st) {
		dev_qp_to_error(e);
		return false;
	}
	return true;
}

/* An RC WQE to send: its PSNs, and it is in flight (o stays in the ring
 * until it is acknowledged, dev_out_pop). */
static void rc_enqueue(struct eqp *e, struct out_wqe *o)
{
	o->psn = e->req.next_psn;
	o->pkts_sent = 0;
	o->last_psn = (o->psn + pkt_span(e, &o->wr) - 1) & PSN_MASK;
	e->req.next_psn = (o->last_psn + 1) & PSN_MASK;
	e->req.out_count++;
}

/* The fetch step: the WQEs the ring holds now (one posted meanwhile brings
 * its own doorbell; chasing it would keep the device on one QP), past
 * those in flight; the same-host path may execute one at once. false: the
 * QP left RTS. */
static bool sq_fetch(struct eqp *e)
{
	struct sim_qp *qp = e->qp;
	struct sim_dev *dev = qp->uctx->dev;
	unsigned int taken = 0, n;
	enum sim_ring_status rs;
	struct out_wqe *o;
	int64_t ready;
	void *elem;

	ready = sim_ring_count(&qp->sq);
	while (e->req.out_count < e->req.out_cap &&
	       (ready < 0 || e->req.out_count + taken < ready)) {
		rs = sim_ring_peek_at(&qp->sq, e->req.out_count, &elem);
		if (rs == SIM_RING_INVALID) {
			dev_qp_fatal(e);
			return false;
		}
		if (rs != SIM_RING_READY)
			break;
		o = dev_out_at(e, e->req.out_count);
		memset(o, 0, offsetof(struct out_wqe, wr.sge));
		o->local_err = sim_wqe_decode_send(&qp->sq, elem, qp->type,
						   &o->wr);
		stat_add(&dev->stats.send_wqes, 1);
		if (qp->type == IBV_QPT_UD) {
			if (!ud_step(e, o))
				return false;
			taken++;
			continue;
		}
		switch (direct_offer(e, o, &n)) {
		case DIRECT_DONE:
			taken += n;
			continue;
		case DIRECT_HOLD:
			return true;
		case DIRECT_STOP:
			return false;
		case DIRECT_WIRE:
			break;
		}
		rc_enqueue(e, o);
	}
	return true;
}

/* The transmit step: what is in flight and not sent yet goes out, as far
 * as the link, fences, the responder's resources and the window let it. */
static void sq_transmit(struct eqp *e)
{
	struct sim_qp *qp = e->qp;
	struct out_wqe *o;
	uint32_t st;
	bool whole;

	while (e->req.out_sent < e->req.out_count &&
	       e->eng->now >= e->req.rnr_until) {
		o = dev_out_at(e, e->req.out_sent);
		if (fabric_link_busy(e->req.link)) {
			/* The socket is full: wait for it to drain rather
			 * than copy the payload (the WQE stays unsent). */
			link_wait(e);
			break;
		}
		if (!o->local_err && (o->wr.send_flags & IBV_SEND_FENCE) &&
		    e->req.out_sent)
			break;	/* fence: earlier reads/atomics finish first */
		if (!o->local_err &&
		    sim_wqe_is_read_or_atomic(o->wr.opcode) &&
		    e->req.rd_inflight >= rd_atomic_limit(qp))
			break;	/* the responder's resources are taken */
		if (o->local_err) {
			if (e->req.out_sent)
				break;	/* completes once it is the oldest */
			dev_complete_local_error(e);
			return;
		}
		st = rc_transmit(e, o, &whole);
		if (st == RC_WINDOW_FULL)
			break;	/* ACKs open it (packets.c) */
		if (st) {
			o->local_err = st;
			continue;
		}
		if (!whole) {
			/* the rest as ACKs open the window */
			if (!e->req.deadline)
				dev_restart_ack_timer(e);
			break;
		}
		e->req.out_sent++;
		if (sim_wqe_is_read_or_atomic(o->wr.opcode))
			e->req.rd_inflight++;
		if (!e->req.deadline)
			dev_restart_ack_timer(e);
	}
	sq_drained_check(e);
}

/* Fetches what the SQ ring holds and sends what may be sent. */
void dev_sq_progress(struct eqp *e)
{
	struct sim_qp *qp = e->qp;
	enum ibv_qp_state state = qp->attr.state;

	if (state == IBV_QPS_ERR) {
		dev_qp_flush(e);
		return;
	}
	if (state != IBV_QPS_RTS && state != IBV_QPS_SQD)
		return;		/* WQEs wait in the ring */
	if (!qp->sq.state || !qp->sq.nelems)
		return;
	if (e->need_resolve)
		rc_resolve(e);
	if (state == IBV_QPS_RTS && !sq_fetch(e))
		return;
	sq_transmit(e);
}
