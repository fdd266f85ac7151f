// SPDX-License-Identifier: BSD-2-Clause
/*
 * The responder: checks remote keys and access, moves data into place,
 * consumes receive WQEs (the QP's receive ring or its SRQ), and
 * acknowledges, as an RC responder does. See engine.h.
 */
#include <errno.h>
#include <string.h>

#include "publish.h"
#include "engine.h"

static void send_ctrl(struct eqp *e, struct fab_link *to, uint8_t type,
		      uint8_t code, uint32_t psn, uint32_t dst_qpn)
{
	struct fab_hdr h;

	dev_hdr_init(&h, e->qp, type, e->qp->attr.ah_attr.grh.sgid_index);
	h.opcode = code;
	h.psn = psn;
	h.dst_qpn = dst_qpn;
	h.imm = e->resp.msn;
	if (code == FAB_NAK_RNR && type == FAB_NAK)
		h.rkey = e->qp->attr.min_rnr_timer;
	fabric_send(e->eng->port, to, &h, NULL, 0);
}

/* A queued ACK goes out before any other response of the QP, and only
 * once what it acknowledges is in place (place.c). */
static void ack_flush_one(struct eqp *e)
{
	dev_place_flush(e->eng);
	if (!qlink_linked(&e->ack))
		return;
	qlink_del(&e->ack);
	send_ctrl(e, e->resp.ack_link, FAB_ACK, 0, e->resp.ack_psn,
		  e->qp->attr.dest_qp_num);
}

/* Queues the ACK of the request at psn (len bytes): coalesced until the
 * round ends if the request asked for it (FAB_F_ACKREQ), else until one
 * that asks comes (the requester asks where its stream stops, req.c),
 * but over ACK_COALESCE_MAX bytes at most, or a long stream leaves its
 * requester without one until its timer runs out. */
static void ack_queue(struct eqp *e, struct fab_link *to, uint32_t psn,
		      uint64_t len, bool asked)
{
	if (qlink_linked(&e->ack) && e->resp.ack_link != to) {
		ack_flush_one(e);
		if (e->qp->attr.state == IBV_QPS_ERR)
			return;	/* a packet before this one failed */
	}
	if (!qlink_linked(&e->ack)) {
		e->resp.ack_bytes = 0;
		e->resp.ack_asked = false;
	}
	e->resp.ack_link = to;
	e->resp.ack_psn = psn;
	e->resp.ack_bytes += len;
	e->resp.ack_asked |= asked;
	qlist_push(&e->eng->acks, &e->ack);
	if (e->resp.ack_bytes >= ACK_COALESCE_MAX)
		ack_flush_one(e);
}

void dev_resp_ack_queue(struct eqp *e, struct fab_link *to, uint32_t psn,
		    uint64_t len, bool asked)
{
	ack_queue(e, to, psn, len, asked);
}

void dev_acks_flush(struct engine *eng)
{
	struct qlink *l, *next;

	/* in place first: no copy left to change the list below */
	dev_place_flush(eng);
	for (l = eng->acks.first; l; l = next) {
		next = l->next;
		if (eqp_of(l, ack)->resp.ack_asked)
			ack_flush_one(eqp_of(l, ack));
	}
}

/* A packet placed later that failed (place.c) NAKed first: this
 * packet, after it, is dropped. */
static void nak(struct eqp *e, struct fab_link *to, uint8_t code,
		uint32_t psn, uint32_t dst_qpn)
{
	if (!dev_place_settle(e))
		return;
	ack_flush_one(e);
	stat_add(&e->qp->uctx->dev->stats.naks, 1);
	send_ctrl(e, to, FAB_NAK, code, psn, dst_qpn);
}

/* The receive ring the QP takes its receive WQEs from. */
static struct sim_ring recv_ring(struct sim_qp *qp)
{
	return qp->srq ? qp->srq->ring : qp->rq;
}

void dev_srq_limit_check(struct sim_srq *srq)
{
	struct sim_ring r = srq->ring;
	int64_t n;

	if (!srq->limit)
		return;
	n = sim_ring_count(&r);
	if (n >= 0 && n < srq->limit) {
		srq->limit = 0;	/* fires once, then disarmed */
		pub_srq(srq);
		sim_device_upcalls.async_event(srq->uctx, srq->user_handle,
					       IBV_EVENT_SRQ_LIMIT_REACHED,
					       &srq->async_events_reported);
	}
}

/* Peeks the next receive WQE (not consumed until recv_consume). */
enum recv_take dev_recv_peek(struct sim_qp *qp, struct sim_recv_wr *rwr)
{
	struct sim_ring r = recv_ring(qp);
	enum sim_ring_status rs;
	void *elem;

	if (!r.state || !r.nelems)
		return RECV_NONE;
	rs = sim_ring_peek(&r, &elem);
	if (rs == SIM_RING_INVALID)
		return RECV_BAD;
	if (rs != SIM_RING_READY)
		return RECV_NONE;
	if (sim_wqe_decode_recv(&r, elem, rwr))
		rwr->num_sge = UINT32_MAX;	/* completes LOC_LEN_ERR */
	return RECV_OK;
}

void dev_recv_consume(struct sim_qp *qp)
{
	struct sim_ring r = recv_ring(qp);

	sim_ring_consume(&r);
	stat_add(&qp->uctx->dev->stats.recv_wqes, 1);
	if (qp->srq)
		dev_srq_limit_check(qp->srq);
}

void dev_recv_cqe_fill(struct pvrdma_cqe *c, uint32_t qp_handle,
		   uint8_t port_num, uint64_t wr_id, const struct fab_hdr *h,
		   uint32_t opcode, uint32_t byte_len, uint32_t wc_flags)
{
	memset(c, 0, sizeof(*c));
	c->wr_id = wr_id;
	c->qp = qp_handle;
	c->opcode = opcode;
	c->status = PVRDMA_WC_SUCCESS;
	c->port_num = port_num;
	c->byte_len = byte_len;
	c->imm_data = h->imm;
	c->src_qp = h->src_qpn;
	c->wc_flags = wc_flags;
	if (h->opcode == PVRDMA_WR_SEND_WITH_IMM ||
	    h->opcode == PVRDMA_WR_RDMA_WRITE_WITH_IMM)
		c->wc_flags |= PVRDMA_WC_WITH_IMM;
	else
		c->imm_data = 0;
	memcpy(c->smac, h->smac, 6);
	c->network_hdr_type = dev_network_type(NULL, h->gid_type, h->src_gid);
	if (wc_flags & PVRDMA_WC_GRH)
		c->sl = dev_roce_packet_type(c->network_hdr_type);
}

void dev_recv_complete(struct sim_qp *qp, const struct sim_recv_wr *rwr,
		   const struct fab_hdr *h, uint32_t opcode,
		   uint32_t byte_len, uint32_t wc_flags)
{
	struct pvrdma_cqe c;

	dev_recv_cqe_fill(&c, qp->qp_handle,
		      qp->attr.port_num ? qp->attr.port_num : 1, rwr->wr_id,
		      h, opcode, byte_len, wc_flags);
	dev_cqe_write(qp, qp->recv_cq, &c, h->flags & FAB_F_SOLICITED);
}

/* Reads the payload of request h into iov, a MiB at a time from a socket,
 * each MiB but the last answered with a partial ACK: the requester's
 * timer would otherwise resend a message slower than its timeout. */
static bool payload_read(struct eqp *e, struct fab_link *from,
			 const struct fab_hdr *h, struct fab_rx *rx,
			 const struct iovec *iov, int n)
{
	struct iovec part[SIM_MAX_IOV];
	size_t skip = 0;
	int i = 0;

	if (!rx->link || rx->left <= ACK_COALESCE_MAX)
		return fab_rx_read(rx, iov, n);
	while (rx->left > ACK_COALESCE_MAX) {
		uint64_t want = ACK_COALESCE_MAX;
		int np = 0;

		while (want && i < n && np < SIM_MAX_IOV) {
			size_t l = iov[i].iov_len - skip;

			if (l > want)
				l = want;
			part[np].iov_base = (uint8_t *)iov[i].iov_base + skip;
			part[np].iov_len = l;
			np++;
			want -= l;
			skip += l;
			if (skip == iov[i].iov_len) {
				i++;
				skip = 0;
			}
		}
		if (!np)
			break;	/* iov ends first: the read below says so */
		if (!fab_rx_read(rx, part, np))
			return false;
		ack_flush_one(e);
		send_ctrl(e, from, FAB_ACK, FAB_ACK_PARTIAL, h->psn,
			  h->src_qpn);
	}
	if (i < n) {
		part[0].iov_base = (uint8_t *)iov[i].iov_base + skip;
		part[0].iov_len = iov[i].iov_len - skip;
		memcpy(&part[1], &iov[i + 1], sizeof(*iov) * (n - i - 1));
		return fab_rx_read(rx, part, n - i);
	}
	return fab_rx_read(rx, part, 0);
}

/* A responder-side error: the QP is in error, the requester is told. */
static void responder_fail(struct eqp *e, struct fab_link *from,
			   const struct fab_hdr *h, uint8_t code)
{
	if (!dev_place_settle(e))
		return;
	nak(e, from, code, h->psn, h->src_qpn);
	dev_qp_to_error(e);
}

void dev_resp_nak(struct eqp *e, struct fab_link *to, uint8_t code,
	      uint32_t psn, uint32_t dst_qpn)
{
	nak(e, to, code, psn, dst_qpn);
}

void dev_resp_fail(struct eqp *e, struct fab_link *from,
	       const struct fab_hdr *h, uint8_t code)
{
	responder_fail(e, from, h, code);
}

static void rc_recv_message(struct eqp *e, struct fab_link *from,
			    const struct fab_hdr *h, struct fab_rx *rx,
			    const struct local_iov *write_dst)
{
	struct sim_qp *qp = e->qp;
	struct sim_recv_wr rwr;
	struct local_iov li;
	enum recv_take t = dev_recv_peek(qp, &rwr);
	bool is_write = h->opcode == PVRDMA_WR_RDMA_WRITE_WITH_IMM;

	if (t == RECV_BAD) {
		dev_qp_fatal(e);
		return;
	}
	if (t == RECV_NONE) {
		e->resp.nak_sent = true;
		nak(e, from, FAB_NAK_RNR, h->psn, h->src_qpn);
		return;
	}
	if (rwr.num_sge == UINT32_MAX) {
		dev_recv_consume(qp);
		dev_complete_recv_error(e, rwr.wr_id, PVRDMA_WC_LOC_LEN_ERR);
		responder_fail(e, from, h, FAB_NAK_REM_OP);
		return;
	}
	if (!is_write) {
		if (dev_map_sges(qp, rwr.sge, rwr.num_sge, IBV_ACCESS_LOCAL_WRITE,
			     &li)) {
			dev_recv_consume(qp);
			dev_complete_recv_error(e, rwr.wr_id,
					    PVRDMA_WC_LOC_PROT_ERR);
			responder_fail(e, from, h, FAB_NAK_REM_OP);
			return;
		}
		if (h->len > rwr.total_len) {
			dev_recv_consume(qp);
			dev_complete_recv_error(e, rwr.wr_id,
					    PVRDMA_WC_LOC_LEN_ERR);
			responder_fail(e, from, h, FAB_NAK_INV_REQ);
			return;
		}
		if (!payload_read(e, from, h, rx, li.iov, li.n)) {
			if (rx->fault) {
				dev_recv_consume(qp);
				dev_complete_recv_error(e, rwr.wr_id,
						    PVRDMA_WC_LOC_PROT_ERR);
				responder_fail(e, from, h, FAB_NAK_REM_OP);
			}
			return;
		}
	} else if (!payload_read(e, from, h, rx, write_dst->iov,
				 write_dst->n)) {
		if (rx->fault)
			responder_fail(e, from, h, FAB_NAK_REM_ACCESS);
		return;
	}
	dev_recv_consume(qp);
	dev_recv_complete(qp, &rwr, h, is_write ? PVRDMA_WC_RECV_RDMA_WITH_IMM :
			  PVRDMA_WC_RECV, h->len, 0);
	stat_add(&qp->uctx->dev->stats.bytes_rx, h->len);
	e->resp.epsn = (h->psn + 1) & PSN_MASK;
	e->resp.msn = (e->resp.msn + 1) & PSN_MASK;
	e->resp.nak_sent = false;
	ack_queue(e, from, h->psn, h->len, h->flags & FAB_F_ACKREQ);
}

/* Checks an incoming RDMA/atomic against the QP's rights and the rkey;
 * ri gets where the bytes are. */
static bool remote_check(struct eqp *e, const struct fab_hdr *h,
			 uint64_t len, int need, struct local_iov *ri)
{
	struct sim_qp *qp = e->qp;

	if ((qp->attr.qp_access_flags & need) != need)
		return false;
	ri->n = SIM_MAX_IOV;
	return sim_mr_map(qp->uctx->dev, qp->pd, h->rkey, true,
			  h->remote_addr, len, need, ri->iov, &ri->n) ==
	       SIM_ACCESS_OK;
}

/* Whether h, a READ at a PSN before the one expected, asks again for a
 * READ executed lately, or for its rest (struct read_record). */
static bool read_resent(const struct eqp *e, const struct fab_hdr *h)
{
	unsigned int i;

	for (i = 0; i < READ_RECORDS; i++) {
		const struct read_record *r = &e->resp.reads[i];

		if (r->valid && ((h->psn - r->psn) & PSN_MASK) < r->span &&
		    h->rkey == r->rkey && h->remote_addr >= r->va &&
		    h->remote_addr - r->va <= r->len &&
		    h->read_len <= r->len - (h->remote_addr - r->va))
			return true;
	}
	return false;
}

static void rc_read(struct eqp *e, struct fab_link *from,
		    const struct fab_hdr *h)
{
	uint32_t span;
	struct fab_hdr r;
	struct local_iov ri;

	if (!remote_check(e, h, h->read_len, IBV_ACCESS_REMOTE_READ, &ri)) {
		responder_fail(e, from, h, FAB_NAK_REM_ACCESS);
		return;
	}
	ack_flush_one(e);
	/* a new READ is a message executed; a resend's answer is not */
	if (h->psn == e->resp.epsn)
		e->resp.msn = (e->resp.msn + 1) & PSN_MASK;
	dev_hdr_init(&r, e->qp, FAB_READ_RESP,
		 e->qp->attr.ah_attr.grh.sgid_index);
	r.dst_qpn = h->src_qpn;
	r.psn = h->psn;
	r.imm = e->resp.msn;
	r.len = h->read_len;
	r.flags |= pkt_mtu_flags(e->qp);
	/* Sent from the MR itself whenever the socket takes it: a requester
	 * that asks for many long READs and reads slowly (or not at all)
	 * costs this adapter no copy of what it asked for. */
	if (!fabric_send_in_place(e->eng->port, from, &r, ri.iov, ri.n) &&
	    errno == EFAULT) {
		responder_fail(e, from, h, FAB_NAK_REM_ACCESS);
		return;
	}
	stat_add(&e->qp->uctx->dev->stats.bytes_tx, h->read_len);
	if (h->psn == e->resp.epsn) {
		span = pkt_read_span(e, from, h);
		e->resp.reads[e->resp.read_next] = (struct read_record){
			.valid = true, .psn = h->psn, .span = span,
			.rkey = h->rkey, .va = h->remote_addr,
			.len = h->read_len,
		};
		e->resp.read_next = (e->resp.read_next + 1) % READ_RECORDS;
		e->resp.epsn = (h->psn + span) & PSN_MASK;
		e->resp.nak_sent = false;
	}
}

static const struct atomic_result *atomic_result_of(const struct eqp *e,
						    uint32_t psn)
{
	unsigned int i;

	for (i = 0; i < ATOMIC_RESULTS; i++)
		if (e->resp.atomics[i].valid && e->resp.atomics[i].psn == psn)
			return &e->resp.atomics[i];
	return NULL;
}

static void rc_atomic(struct eqp *e, struct fab_link *from,
		      const struct fab_hdr *h)
{
	struct fab_hdr r;
	struct local_iov ri;
	uint64_t *p, orig;

	/* a misaligned atomic fails the QP when it is the request
	 * expected, not when it only claims an old PSN (a stray packet) */
	if ((h->remote_addr & 7) && h->psn == e->resp.epsn) {
		responder_fail(e, from, h, FAB_NAK_INV_REQ);
		return;
	}
	if (h->psn != e->resp.epsn) {
		/* A resend of an atomic executed already: its result. */
		const struct atomic_result *res = atomic_result_of(e, h->psn);

		if (!res) {
			/* Older than every result kept: the requester
			 * broke its max_rd_atomic. Never execute twice. */
			nak(e, from, FAB_NAK_INV_REQ, h->psn, h->src_qpn);
			return;
		}
		orig = res->orig;
	} else {
		/* aligned: 8 bytes never span two pages, one piece */
		if (!remote_check(e, h, 8, IBV_ACCESS_REMOTE_ATOMIC, &ri)) {
			responder_fail(e, from, h, FAB_NAK_REM_ACCESS);
			return;
		}
		p = ri.iov[0].iov_base;
		if (!sim_app_writable(p, 8)) {
			responder_fail(e, from, h, FAB_NAK_REM_ACCESS);
			return;
		}
		/* atomic with the same-host requesters' atomics too */
		pub_lock(e->qp->uctx->dev);
		if (h->opcode == PVRDMA_WR_ATOMIC_CMP_AND_SWP) {
			orig = h->atomic_a;
			__atomic_compare_exchange_n(p, &orig, h->atomic_b,
						    false, __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
		} else {
			orig = __atomic_fetch_add(p, h->atomic_a,
						  __ATOMIC_SEQ_CST);
		}
		pub_unlock(e->qp->uctx->dev);
		e->resp.atomics[e->resp.atomic_next] = (struct atomic_result){
			.valid = true, .psn = h->psn, .orig = orig,
		};
		e->resp.atomic_next =
			(e->resp.atomic_next + 1) % ATOMIC_RESULTS;
		e->resp.epsn = (h->psn + 1) & PSN_MASK;
		e->resp.msn = (e->resp.msn + 1) & PSN_MASK;
		e->resp.nak_sent = false;
	}
	ack_flush_one(e);
	dev_hdr_init(&r, e->qp, FAB_ATOMIC_RESP,
		 e->qp->attr.ah_attr.grh.sgid_index);
	r.dst_qpn = h->src_qpn;
	r.psn = h->psn;
	r.imm = e->resp.msn;
	r.atomic_a = orig;
	fabric_send(e->eng->port, from, &r, NULL, 0);
}

/* A request at a PSN before the one expected: a resend of what was
 * executed is answered again (a READ's data, an atomic's result, an ACK
 * for the rest); a READ that none executed covers is dropped. */
static void rc_resent(struct eqp *e, struct fab_link *from,
		      const struct fab_hdr *h)
{
	if (h->opcode == PVRDMA_WR_RDMA_READ) {
		if (read_resent(e, h))
			rc_read(e, from, h);
		else
			stat_add(&e->qp->uctx->dev->stats.rx_stray_reads, 1);
	} else if (sim_wqe_is_read_or_atomic(h->opcode)) {
		rc_atomic(e, from, h);
	} else {
		ack_queue(e, from, (e->resp.epsn - 1) & PSN_MASK, 0, true);
	}
}

void dev_responder_rx(struct eqp *e, struct fab_link *from,
		  const struct fab_hdr *h, struct fab_rx *rx)
{
	struct sim_qp *qp = e->qp;
	enum ibv_qp_state st = qp->attr.state;
	struct local_iov ri;
	struct fab_hdr copy;

	if (qp->type != IBV_QPT_RC)
		return;
	h = pkt_rc_source(e, from, h, &copy);
	/* Only a QP past RTR takes requests; others drop them silently. */
	if (!sim_qp_state_takes_requests(st))
		return;

	if (h->psn != e->resp.epsn) {
		if (psn_before(h->psn, e->resp.epsn)) {
			rc_resent(e, from, h);
		} else if (!e->resp.nak_sent) {
			e->resp.nak_sent = true;
			nak(e, from, FAB_NAK_SEQ, e->resp.epsn, h->src_qpn);
		}
		return;
	}

	/* a message of many packets, one of them (packets.c) */
	if (h->flags & FAB_F_SEG) {
		pkt_request(e, from, h, rx);
		return;
	}
	switch (h->opcode) {
	case PVRDMA_WR_SEND:
	case PVRDMA_WR_SEND_WITH_IMM:
		/* same-host requesters take receives too (direct_send.c) */
		pub_lock(qp->uctx->dev);
		rc_recv_message(e, from, h, rx, NULL);
		pub_unlock(qp->uctx->dev);
		break;
	case PVRDMA_WR_RDMA_WRITE:
	case PVRDMA_WR_RDMA_WRITE_WITH_IMM:
		if (!remote_check(e, h, h->len, IBV_ACCESS_REMOTE_WRITE, &ri)) {
			responder_fail(e, from, h, FAB_NAK_REM_ACCESS);
			return;
		}
		if (h->opcode == PVRDMA_WR_RDMA_WRITE_WITH_IMM) {
			pub_lock(qp->uctx->dev);
			rc_recv_message(e, from, h, rx, &ri);
			pub_unlock(qp->uctx->dev);
			return;
		}
		if (!payload_read(e, from, h, rx, ri.iov, ri.n)) {
			if (rx->fault)
				responder_fail(e, from, h,
					       FAB_NAK_REM_ACCESS);
			return;
		}
		stat_add(&qp->uctx->dev->stats.bytes_rx, h->len);
		e->resp.epsn = (h->psn + 1) & PSN_MASK;
		e->resp.msn = (e->resp.msn + 1) & PSN_MASK;
		e->resp.nak_sent = false;
		ack_queue(e, from, h->psn, h->len, h->flags & FAB_F_ACKREQ);
		break;
	case PVRDMA_WR_RDMA_READ:
		rc_read(e, from, h);
		break;
	case PVRDMA_WR_ATOMIC_CMP_AND_SWP:
	case PVRDMA_WR_ATOMIC_FETCH_AND_ADD:
		rc_atomic(e, from, h);
		break;
	default:
		responder_fail(e, from, h, FAB_NAK_INV_REQ);
		break;
	}
}
