// SPDX-License-Identifier: BSD-2-Clause
/*
 * Messages as packets: over a link that cuts each message into packets
 * of the path MTU (RoCE v2, fabric_link_segments()), a message takes one
 * PSN per packet, as on any IB transport, and arrives at the responder,
 * or its READ response at the requester, one packet at a time
 * (FAB_F_SEG). The requester, completer and responder keep their
 * message-at-a-time logic; this file adds what packets need: how many
 * PSNs a WQE takes, the packets of a SEND or WRITE placed one after the
 * other into one receive WQE or one remote range, and a READ response
 * placed packet by packet into the local SGEs. See engine.h.
 */
#include <string.h>

#include "publish.h"
#include "engine.h"

static uint32_t mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128u << mtu : 1024;
}

static uint32_t packets_of(uint64_t len, uint32_t mtu)
{
	return len ? (uint32_t)((len + mtu - 1) / mtu) : 1;
}

uint8_t pkt_mtu_flags(const struct sim_qp *qp)
{
	enum ibv_mtu m = qp->attr.path_mtu;

	if (m < IBV_MTU_256 || m > IBV_MTU_4096)
		m = IBV_MTU_1024;
	return (uint8_t)(m << FAB_F_MTU_SHIFT);
}

uint32_t pkt_span(const struct eqp *e, const struct sim_send_wr *wr)
{
	if (!fabric_link_segments(e->req.link))
		return 1;
	if (wr->opcode == PVRDMA_WR_ATOMIC_CMP_AND_SWP ||
	    wr->opcode == PVRDMA_WR_ATOMIC_FETCH_AND_ADD)
		return 1;
	/* a READ's PSNs are its response's packets */
	return packets_of(wr->total_len, mtu_bytes(e->qp->attr.path_mtu));
}

uint32_t pkt_read_span(const struct eqp *e, const struct fab_link *from,
		       const struct fab_hdr *h)
{
	if (!fabric_link_segments(from))
		return 1;
	return packets_of(h->read_len, mtu_bytes(e->qp->attr.path_mtu));
}

bool pkt_psn_in(const struct out_wqe *o, uint32_t psn)
{
	return !psn_before(psn, o->psn) && !psn_before(o->last_psn, psn);
}

/* RC packets on such a wire do not name their source QP: it is the
 * QP's destination. */
const struct fab_hdr *pkt_rc_source(const struct eqp *e,
				    const struct fab_link *from,
				    const struct fab_hdr *h,
				    struct fab_hdr *copy)
{
	if (!fabric_link_segments(from))
		return h;
	*copy = *h;
	copy->src_qpn = e->qp->attr.dest_qp_num;
	return copy;
}

/* Reads the packet's payload into iov after skip bytes of it. */
static bool place(struct fab_rx *rx, const struct iovec *iov, int n,
		  uint64_t skip)
{
	struct iovec rest[SIM_MAX_IOV];
	int i, k = 0;

	for (i = 0; i < n; i++) {
		if (skip >= iov[i].iov_len) {
			skip -= iov[i].iov_len;
			continue;
		}
		rest[k].iov_base = (uint8_t *)iov[i].iov_base + skip;
		rest[k].iov_len = iov[i].iov_len - skip;
		skip = 0;
		k++;
	}
	return fab_rx_read(rx, rest, k);
}

/* The first packet of a SEND: its receive WQE, kept until the last. */
static bool send_first(struct eqp *e, struct fab_link *from,
		       const struct fab_hdr *h)
{
	struct sim_qp *qp = e->qp;
	enum recv_take t = dev_recv_peek(qp, &e->resp.seg_rwr);

	if (t == RECV_BAD) {
		dev_qp_fatal(e);
		return false;
	}
	if (t == RECV_NONE) {
		e->resp.nak_sent = true;
		dev_resp_nak(e, from, FAB_NAK_RNR, h->psn, h->src_qpn);
		return false;
	}
	if (e->resp.seg_rwr.num_sge == UINT32_MAX) {
		dev_recv_consume(qp);
		dev_complete_recv_error(e, e->resp.seg_rwr.wr_id,
				    PVRDMA_WC_LOC_LEN_ERR);
		dev_resp_fail(e, from, h, FAB_NAK_REM_OP);
		return false;
	}
	return true;
}

/* A SEND's packet into its receive WQE at seg_off. */
static bool send_place(struct eqp *e, struct fab_link *from,
		       const struct fab_hdr *h, struct fab_rx *rx)
{
	struct sim_qp *qp = e->qp;
	struct local_iov li;
	uint32_t st = 0;

	if (e->resp.seg_off + h->len > e->resp.seg_rwr.total_len)
		st = PVRDMA_WC_LOC_LEN_ERR;
	else if (dev_map_sges(qp, e->resp.seg_rwr.sge, e->resp.seg_rwr.num_sge,
			  IBV_ACCESS_LOCAL_WRITE, &li) ||
		 (!place(rx, li.iov, li.n, e->resp.seg_off) && rx->fault))
		st = PVRDMA_WC_LOC_PROT_ERR;
	if (!st)
		return true;
	dev_recv_consume(qp);
	dev_complete_recv_error(e, e->resp.seg_rwr.wr_id, st);
	dev_resp_fail(e, from, h, st == PVRDMA_WC_LOC_LEN_ERR ?
		  FAB_NAK_INV_REQ : FAB_NAK_REM_OP);
	return false;
}

/* A WRITE's packet into the range its first packet named: with the
 * run's copy (place.c) where it can, else now. */
static bool write_place(struct eqp *e, struct fab_link *from,
			const struct fab_hdr *h, struct fab_rx *rx)
{
	struct sim_qp *qp = e->qp;
	struct local_iov ri;
	int later = 0;

	ri.n = SIM_MAX_IOV;
	if (e->resp.seg_off + h->len > e->resp.seg_total ||
	    (qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE) !=
		    IBV_ACCESS_REMOTE_WRITE ||
	    sim_mr_map(qp->uctx->dev, qp->pd, e->resp.seg_rkey, true,
		       e->resp.seg_va + e->resp.seg_off, h->len,
		       IBV_ACCESS_REMOTE_WRITE,
		       ri.iov, &ri.n) != SIM_ACCESS_OK ||
	    ((later = dev_place_defer(e, from, h, rx, &ri)) == 0 &&
	     !fab_rx_read(rx, ri.iov, ri.n) && rx->fault)) {
		e->resp.seg_busy = false;
		dev_resp_fail(e, from, h, FAB_NAK_REM_ACCESS);
		return false;
	}
	return later >= 0;
}

/* The last packet of a SEND or WRITE with immediate: its completion. */
static void message_done(struct eqp *e, const struct fab_hdr *h)
{
	struct sim_qp *qp = e->qp;

	dev_recv_consume(qp);
	dev_recv_complete(qp, &e->resp.seg_rwr, h,
		      h->opcode == PVRDMA_WR_RDMA_WRITE_WITH_IMM ?
		      PVRDMA_WC_RECV_RDMA_WITH_IMM : PVRDMA_WC_RECV,
		      (uint32_t)e->resp.seg_off, 0);
}

/* Packets psn .. psn + count - 1 of the message in progress taken, bytes
 * of payload in all (seg_off counts them already): the responder expects
 * the next, ends the message if the last of them ends it, counts them and
 * queues their ACK (asked: one of them asked for it). */
static void resp_took(struct eqp *e, struct fab_link *from, uint32_t psn,
		      uint32_t count, uint64_t bytes, bool ends, bool asked)
{
	if (ends) {
		e->resp.seg_busy = false;
		e->resp.msn = (e->resp.msn + 1) & PSN_MASK;
	}
	stat_add(&e->qp->uctx->dev->stats.bytes_rx, bytes);
	e->resp.epsn = (psn + count) & PSN_MASK;
	e->resp.nak_sent = false;
	dev_resp_ack_queue(e, from, (psn + count - 1) & PSN_MASK, bytes, asked);
}

static bool is_send(uint8_t op)
{
	return op == PVRDMA_WR_SEND || op == PVRDMA_WR_SEND_WITH_IMM;
}

/*
 * One packet of a SEND or WRITE of many, in PSN order (the responder
 * checked it). Packets of one message come as first, middle..., last,
 * each but the last the path MTU long; anything else is an invalid
 * request, as IBA 9.7.5.1.4 has it.
 */
static void request_packet(struct eqp *e, struct fab_link *from,
			   const struct fab_hdr *h, struct fab_rx *rx)
{
	struct sim_qp *qp = e->qp;
	bool first = h->flags & FAB_F_FIRST, last = h->flags & FAB_F_LAST;
	bool send = is_send(h->opcode);
	uint32_t mtu = mtu_bytes(qp->attr.path_mtu);

	if (first == e->resp.seg_busy ||
	    (!first && send != is_send(e->resp.seg_op)) ||
	    h->len > mtu || (!last && h->len != mtu)) {
		e->resp.seg_busy = false;
		dev_resp_fail(e, from, h, FAB_NAK_INV_REQ);
		return;
	}
	if (first) {
		e->resp.seg_off = 0;
		if (send && !send_first(e, from, h))
			return;
		e->resp.seg_va = h->remote_addr;
		e->resp.seg_rkey = h->rkey;
		e->resp.seg_total = h->read_len;
	}
	/* a WRITE with immediate takes its receive at its last packet */
	if (last && h->opcode == PVRDMA_WR_RDMA_WRITE_WITH_IMM &&
	    !send_first(e, from, h))
		return;
	if (send ? !send_place(e, from, h, rx) : !write_place(e, from, h, rx))
		return;
	e->resp.seg_busy = true;
	e->resp.seg_op = h->opcode;
	e->resp.seg_off += h->len;
	if (last && (send || h->opcode == PVRDMA_WR_RDMA_WRITE_WITH_IMM))
		message_done(e, h);
	resp_took(e, from, h->psn, 1, h->len, last, h->flags & FAB_F_ACKREQ);
}

/* e takes the next packets of a plain WRITE, between its first and last
 * packet, from psn on: the PSN next in order. A WRITE with immediate
 * takes a receive at its last packet, whose headers are longer. */
static bool write_goes_on(const struct eqp *e, uint32_t psn)
{
	const struct sim_qp *qp = e->qp;

	return qp->type == IBV_QPT_RC && e->resp.seg_busy &&
	       e->resp.seg_op == PVRDMA_WR_RDMA_WRITE && psn == e->resp.epsn &&
	       sim_qp_state_takes_requests(qp->attr.state) &&
	       (qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE) ==
		       IBV_ACCESS_REMOTE_WRITE &&
	       e->resp.seg_off < e->resp.seg_total;
}

uint64_t pkt_write_ahead(struct eqp *e, uint32_t psn, uint32_t max_packets,
			 struct iovec *iov, int *niov, uint32_t *mtu,
			 bool *ends)
{
	struct sim_qp *qp = e->qp;
	uint64_t left, len;

	if (!write_goes_on(e, psn))
		return 0;
	*mtu = mtu_bytes(qp->attr.path_mtu);
	left = e->resp.seg_total - e->resp.seg_off;
	len = (uint64_t)max_packets * *mtu;
	*ends = left <= len;
	if (*ends)
		len = left;
	if (sim_mr_map(qp->uctx->dev, qp->pd, e->resp.seg_rkey, true,
		       e->resp.seg_va + e->resp.seg_off, len,
		       IBV_ACCESS_REMOTE_WRITE, iov, niov) != SIM_ACCESS_OK)
		return 0;
	return len;
}

void pkt_write_placed(struct eqp *e, struct fab_link *from, uint32_t psn,
		      uint32_t count, uint64_t bytes, bool ends, bool asked)
{
	uint64_t left = e->resp.seg_total - e->resp.seg_off;

	/* what pkt_write_ahead() found holds: the lock was not let go
	 * since (a run that does not fit it is dropped, as on the wire) */
	if (!count || !write_goes_on(e, psn) || bytes > left ||
	    ends != (bytes == left))
		return;
	e->resp.seg_off += bytes;
	resp_took(e, from, psn, count, bytes, ends, asked);
}

void pkt_request(struct eqp *e, struct fab_link *from,
		 const struct fab_hdr *h, struct fab_rx *rx)
{
	struct sim_dev *dev = e->qp->uctx->dev;

	/* same-host requesters take receives too (direct_send.c) */
	pub_lock(dev);
	request_packet(e, from, h, rx);
	pub_unlock(dev);
}

/*
 * One packet of the response to the READ at the head of the queue: its
 * bytes go to their place in the local SGEs; the last completes it. A
 * packet missing on the way leaves the rest unplaced (they must come in
 * order): the ACK timer asks for the READ again.
 */
void pkt_read_response(struct eqp *e, const struct fab_hdr *h,
		       struct fab_rx *rx)
{
	struct sim_qp *qp = e->qp;
	struct out_wqe *o = dev_out_at(e, 0);
	uint32_t mtu = mtu_bytes(qp->attr.path_mtu);
	uint64_t off = (uint64_t)((h->psn - o->psn) & PSN_MASK) * mtu;
	struct local_iov li;
	struct sim_send_wr wr;

	if (o->wr.opcode != PVRDMA_WR_RDMA_READ || !pkt_psn_in(o, h->psn))
		return;
	/* a READ asked for in parts is answered in parts, each from a
	 * first packet: at its start, or where the last part ended */
	if ((h->flags & FAB_F_FIRST) && h->psn == o->psn)
		e->req.rresp_next = o->psn;
	if (h->psn != e->req.rresp_next || off + h->len > o->wr.total_len ||
	    (!(h->flags & FAB_F_LAST) && h->len != mtu))
		return;
	if (dev_map_sges(qp, o->wr.sge, o->wr.num_sge, IBV_ACCESS_LOCAL_WRITE,
		     &li) || (!place(rx, li.iov, li.n, off) && rx->fault)) {
		dev_requester_fail(e, PVRDMA_WC_LOC_PROT_ERR);
		return;
	}
	stat_add(&qp->uctx->dev->stats.bytes_rx, h->len);
	e->req.rresp_next = (h->psn + 1) & PSN_MASK;
	pkt_acked(e, e->req.rresp_next);
	e->req.retries_left = qp->attr.retry_cnt;
	dev_restart_ack_timer(e);
	if (h->psn != o->last_psn)
		return;
	wr = o->wr;
	dev_out_pop(e);
	dev_complete_send(e, &wr, PVRDMA_WC_SUCCESS);
	e->req.rnr_left = qp->attr.rnr_retry;
	e->req.deadline = 0;
	if (e->req.out_sent)
		dev_restart_ack_timer(e);
}

/*
 * Packets a QP has in flight at most on such a link: what the
 * receiver's socket holds while its reader waits for a CPU
 * (fabric_link_window(): 256 KiB to 1 MiB), so that a long message, or
 * a stream of them, is not lost at the receiver wholesale and resent
 * again and again, nor stalls the stream each time the receiver waits;
 * what is lost past a gap is sent again from the gap (the responder's
 * sequence NAK names it). rxe bounds its packets in flight per QP as
 * well.
 */
static uint32_t window_pkts(const struct eqp *e, uint32_t mtu)
{
	uint32_t w = fabric_link_window(e->req.link) / mtu;

	return w < 16 ? 16 : w > 1024 ? 1024 : w;
}

static uint32_t wqe_packets(const struct out_wqe *o)
{
	return ((o->last_psn - o->psn) & PSN_MASK) + 1;
}

void pkt_acked(struct eqp *e, uint32_t psn)
{
	if (psn_before(e->req.win_base, psn))
		e->req.win_base = psn;
}

bool pkt_window(struct eqp *e, struct out_wqe *o, struct fab_hdr *h,
		bool *whole)
{
	uint32_t mtu = mtu_bytes(e->qp->attr.path_mtu);
	uint32_t total = wqe_packets(o), base, next, inflight, room, n;
	uint64_t off;

	*whole = true;
	if (!fabric_link_segments(e->req.link) ||
	    (sim_wqe_is_read_or_atomic(o->wr.opcode) &&
	     o->wr.opcode != PVRDMA_WR_RDMA_READ))
		return true;
	base = dev_out_at(e, 0)->psn;
	if (psn_before(base, e->req.win_base))
		base = e->req.win_base;
	next = (o->psn + o->pkts_sent) & PSN_MASK;
	inflight = psn_before(next, base) ? 0 : (next - base) & PSN_MASK;
	room = window_pkts(e, mtu);
	if (inflight >= room)
		return false;
	n = total - o->pkts_sent;
	if (n > room - inflight)
		n = room - inflight;
	off = (uint64_t)o->pkts_sent * mtu;
	if (o->wr.opcode == PVRDMA_WR_RDMA_READ) {
		/* this part of the READ: its own request */
		h->psn = next;
		h->remote_addr += off;
		h->read_len = (uint32_t)(o->wr.total_len - off <
					 (uint64_t)n * mtu ?
					 o->wr.total_len - off :
					 (uint64_t)n * mtu);
	} else {
		h->atomic_a = o->pkts_sent;
		h->atomic_b = n;
	}
	o->pkts_sent += n;
	*whole = o->pkts_sent >= total;
	return true;
}

uint64_t pkt_ask_every(const struct eqp *e)
{
	uint64_t w = fabric_link_window(e->req.link);

	/* half the window: one asked for is always in flight when it is
	 * full, and its ACK opens half of it */
	return w && w / 2 < ACK_ASK_BYTES ? w / 2 : ACK_ASK_BYTES;
}

void pkt_rewind(struct eqp *e, uint32_t psn)
{
	struct out_wqe *o;
	uint32_t i;

	for (i = 0; i < e->req.out_count; i++)
		dev_out_at(e, i)->pkts_sent = 0;
	if (!e->req.out_count)
		return;
	o = dev_out_at(e, 0);
	if (fabric_link_segments(e->req.link) && pkt_psn_in(o, psn))
		o->pkts_sent = (psn - o->psn) & PSN_MASK;
}
