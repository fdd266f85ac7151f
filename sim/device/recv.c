// SPDX-License-Identifier: BSD-2-Clause
/*
 * Packets from the fabric: each goes to its QP's responder, completer or
 * UD receive; a UD receive writes the GRH a RoCE receive buffer starts
 * with. See engine.h.
 */
#include <string.h>

#include "publish.h"
#include "engine.h"

/*
 * Header lengths of a RoCE UD packet on the wire (IBA, Annex A16/A17): what
 * the length fields of the GRH area count besides the payload.
 */
#define ROCE_UDP_LEN	8

#define ROCE_BTH_LEN	12

#define ROCE_DETH_LEN	8

#define ROCE_IMMDT_LEN	4

#define ROCE_ICRC_LEN	4

#define ROCE_IPV4_LEN	20

#define ROCE_GRH_LEN	40

static void put_be16(uint8_t *p, unsigned int v)
{
	p[0] = (v >> 8) & 0xff;
	p[1] = v & 0xff;
}

/* The IPv4 header checksum: the ones' complement of the ones' complement
 * sum of the header's 16-bit words, the checksum field taken as zero. */
static unsigned int ipv4_header_checksum(const uint8_t ip[ROCE_IPV4_LEN])
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < ROCE_IPV4_LEN; i += 2)
		if (i != 10)
			sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

/*
 * The 40-byte GRH area a UD receive starts with, as rxe fills it: RoCE v2
 * over IPv4, 20 zero bytes and the IPv4 header; over IPv6, the IPv6
 * header; RoCE v1, the IB GRH. Lengths count BTH, DETH, ImmDt, payload,
 * pad and ICRC; the flow label is 0.
 */
static void build_grh(uint8_t grh[ROCE_GRH_LEN], const struct fab_hdr *h)
{
	/* the payload is padded to 4 bytes on the wire */
	uint32_t ib_len = ROCE_BTH_LEN + ROCE_DETH_LEN + ((h->len + 3) & ~3u) +
			  ROCE_ICRC_LEN;
	uint8_t type = dev_network_type(NULL, h->gid_type, h->src_gid);

	if (h->opcode == PVRDMA_WR_SEND_WITH_IMM)
		ib_len += ROCE_IMMDT_LEN;
	memset(grh, 0, ROCE_GRH_LEN);
	if (type == PVRDMA_NETWORK_IPV4) {
		uint8_t *ip = grh + ROCE_GRH_LEN - ROCE_IPV4_LEN;

		ip[0] = 0x45;		/* version 4, 5 words of header */
		ip[1] = h->tclass;
		put_be16(ip + 2, ROCE_IPV4_LEN + ROCE_UDP_LEN + ib_len);
		/* What the packet came with on the RoCE wire; else
		 * identification 0: it serves reassembly only, and a RoCE
		 * datagram may not be fragmented (RFC 6864, atomic
		 * datagrams). */
		if (h->read_len & FAB_UD_IPV4_SEEN) {
			put_be16(ip + 4, h->read_len & 0xffff);
			put_be16(ip + 6, (h->read_len >> 16) & 0x7fff);
		} else {
			put_be16(ip + 6, 0x4000);	/* don't fragment */
		}
		ip[8] = h->hop_limit;
		ip[9] = 17;		/* UDP */
		memcpy(ip + 12, h->src_gid + 12, 4);
		memcpy(ip + 16, h->dst_gid + 12, 4);
		put_be16(ip + 10, ipv4_header_checksum(ip));
		return;
	}
	grh[0] = 0x60 | (h->tclass >> 4);
	grh[1] = (h->tclass & 0xf) << 4;
	if (type == PVRDMA_NETWORK_IPV6) {
		put_be16(grh + 4, ROCE_UDP_LEN + ib_len);
		grh[6] = 17;		/* UDP */
	} else {
		put_be16(grh + 4, ib_len);
		grh[6] = 0x1b;		/* IBA transport */
	}
	grh[7] = h->hop_limit;
	memcpy(grh + 8, h->src_gid, 16);
	memcpy(grh + 24, h->dst_gid, 16);
}

/* Splits iov after skip bytes into out; returns the count. */
static int iov_skip(const struct iovec *in, int n, size_t skip,
		    struct iovec *out)
{
	int i, k = 0;

	for (i = 0; i < n; i++) {
		if (skip >= in[i].iov_len) {
			skip -= in[i].iov_len;
			continue;
		}
		out[k].iov_base = (uint8_t *)in[i].iov_base + skip;
		out[k].iov_len = in[i].iov_len - skip;
		skip = 0;
		k++;
	}
	return k;
}

static void ud_rx(struct eqp *e, const struct fab_hdr *h, struct fab_rx *rx)
{
	struct sim_qp *qp = e->qp;
	struct sim_recv_wr rwr;
	struct local_iov li;
	struct iovec rest[SIM_MAX_IOV];
	uint8_t grh[40];
	struct fab_rx grh_rx = { .mem = grh, .left = sizeof(grh) };
	enum recv_take t;
	int n;

	if (qp->type != IBV_QPT_UD ||
	    (qp->attr.state != IBV_QPS_RTR && qp->attr.state != IBV_QPS_RTS &&
	     qp->attr.state != IBV_QPS_SQD))
		return;
	if (h->qkey != qp->attr.qkey)
		return;		/* Q_Key violation: silently dropped */
	t = dev_recv_peek(qp, &rwr);
	if (t == RECV_BAD) {
		dev_qp_fatal(e);
		return;
	}
	if (t == RECV_NONE)
		return;		/* best effort */
	if (rwr.num_sge == UINT32_MAX ||
	    rwr.total_len < sizeof(grh) + (uint64_t)h->len) {
		dev_recv_consume(qp);
		dev_complete_recv_error(e, rwr.wr_id, PVRDMA_WC_LOC_LEN_ERR);
		dev_qp_to_error(e);
		return;
	}
	if (dev_map_sges(qp, rwr.sge, rwr.num_sge, IBV_ACCESS_LOCAL_WRITE,
			 &li)) {
		dev_recv_consume(qp);
		dev_complete_recv_error(e, rwr.wr_id, PVRDMA_WC_LOC_PROT_ERR);
		dev_qp_to_error(e);
		return;
	}
	build_grh(grh, h);
	n = iov_skip(li.iov, li.n, sizeof(grh), rest);
	if (!fab_rx_read(&grh_rx, li.iov, li.n) || !fab_rx_read(rx, rest, n)) {
		if (!grh_rx.fault && !rx->fault)
			return;		/* lost */
		dev_recv_consume(qp);
		dev_complete_recv_error(e, rwr.wr_id, PVRDMA_WC_LOC_PROT_ERR);
		dev_qp_to_error(e);
		return;
	}
	dev_recv_consume(qp);
	stat_add(&qp->uctx->dev->stats.bytes_rx, h->len);
	dev_recv_complete(qp, &rwr, h, PVRDMA_WC_RECV, h->len + sizeof(grh),
		      PVRDMA_WC_GRH);
}

/* The device's QP table is indexed by the on-wire number. */
static struct eqp *eqp_by_qpn(struct engine *eng, uint32_t qpn)
{
	struct sim_qp *qp = sim_table_get(&eng->dev->qps, qpn);

	return qp ? qp->engine : NULL;
}

uint64_t engine_rx_ahead(void *owner, uint32_t dqpn, uint32_t psn,
			 uint32_t max_packets, struct iovec *iov, int *niov,
			 uint32_t *mtu, bool *ends)
{
	struct engine *eng = engine_of(owner);
	struct eqp *e = eng ? eqp_by_qpn(eng, dqpn & 0xffffff) : NULL;

	if (!e)
		return 0;
	/* what earlier packets left to copy goes first */
	dev_place_flush(eng);
	return pkt_write_ahead(e, psn, max_packets, iov, niov, mtu, ends);
}

void engine_rx_placed(void *owner, struct fab_link *from, uint32_t dqpn,
		      uint32_t psn, uint32_t count, uint64_t bytes, bool ends,
		      bool asked)
{
	struct engine *eng = engine_of(owner);
	struct eqp *e = eng ? eqp_by_qpn(eng, dqpn & 0xffffff) : NULL;

	if (e)
		pkt_write_placed(e, from, psn, count, bytes, ends, asked);
}

/* One packet arrived at the adapter's port (dev->lock held): the
 * fabric's receive callback (struct fab_adapter). */
void engine_rx(void *owner, struct fab_link *from, const struct fab_hdr *h,
	       struct fab_rx *rx)
{
	struct engine *eng = engine_of(owner);
	struct sim_cq *cq;
	struct eqp *e;

	/* packets of a run are handled in order: those placed later first
	 * (place.c) */
	if (!dev_place_joins(h))
		dev_place_flush(eng);
	if (h->type == FAB_NOTIFY) {
		/* A same-host requester wrote a CQE into this receive CQ and
		 * took its arm (direct_send.c). The CQ goes by its number:
		 * the QP may be gone by now, the CQ not. */
		cq = sim_table_get(&eng->dev->cqs, h->rkey);
		if (cq)
			pub_cq_notified(cq);
		return;
	}
	e = eqp_by_qpn(eng, h->dst_qpn & 0xffffff);
	if (!e) {
		/* no such QP: dropped, as on the wire */
		stat_add(&eng->dev->stats.rx_no_qp, 1);
		return;
	}
	switch (h->type) {
	case FAB_REQ:
		dev_responder_rx(e, from, h, rx);
		break;
	case FAB_UD_SEND:
		/* its SRQ may be an RC QP's too (direct_send.c) */
		pub_lock(eng->dev);
		ud_rx(e, h, rx);
		pub_unlock(eng->dev);
		break;
	case FAB_ACK:
	case FAB_NAK:
	case FAB_READ_RESP:
	case FAB_ATOMIC_RESP:
		dev_requester_rx(e, h, rx);
		break;
	default:
		break;
	}
}
