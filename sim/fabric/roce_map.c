// SPDX-License-Identifier: BSD-2-Clause
/*
 * The fabric's packets as RoCE v2 packets and back (roce.h): a message
 * is cut into packets of the path MTU with consecutive PSNs, the
 * extended headers carry what struct fab_hdr carries. The fabric's
 * packet types map onto the BTH opcodes one for one, except that a
 * message of many packets arrives as many FAB_F_SEG packets.
 */
#include <string.h>

#include <rdma/vmw_pvrdma-abi.h>

#include "roce.h"

#define PSN_MASK	0xffffffu

static uint32_t mtu_of(const struct fab_hdr *h)
{
	unsigned int m = (h->flags & FAB_F_MTU_MASK) >> FAB_F_MTU_SHIFT;

	return m >= 1 && m <= 5 ? 128u << m : 1024u;
}

/* Packet n of a message of total bytes cut to mtu: which part it is. */
static void cut(uint64_t total, uint32_t mtu, uint32_t n, uint32_t *count,
		uint64_t *off, uint32_t *len, bool *first, bool *last)
{
	uint64_t c = (total + mtu - 1) / mtu;

	*count = c ? (uint32_t)c : 1;
	*off = (uint64_t)n * mtu;
	*len = (uint32_t)(total - *off < mtu ? total - *off : mtu);
	*first = n == 0;
	*last = n + 1 == *count;
}

/* A SEND's or WRITE's first, middle, last or only packet, from the
 * opcode of the first: the middle and last are 1 and 2 after it, only is
 * 4 after it. */
/* The end of the packets of a SEND or WRITE of count that go now: a
 * window's worth (atomic_a, atomic_b), or all. */
static uint32_t sent_end(const struct fab_hdr *h, uint32_t count)
{
	uint64_t end = h->atomic_b ? h->atomic_a + h->atomic_b : count;

	return end < count ? (uint32_t)end : count;
}

/* Whether packet n of count asks for an ACK: the last of those sent
 * now, where the requester asks. */
static bool asks_ack(const struct fab_hdr *h, uint32_t n, uint32_t count)
{
	return (h->flags & FAB_F_ACKREQ) && n + 1 == sent_end(h, count);
}

static uint8_t part_opcode(uint8_t first_op, bool first, bool last)
{
	if (first && last)
		return first_op + 4;
	return first ? first_op : last ? first_op + 2 : first_op + 1;
}

static bool map_request(const struct fab_hdr *h, uint32_t n, uint32_t *count,
			struct roce_pkt *p, uint64_t *off, uint32_t *len)
{
	bool first, last, imm;

	switch (h->opcode) {
	case PVRDMA_WR_SEND:
	case PVRDMA_WR_SEND_WITH_IMM:
	case PVRDMA_WR_RDMA_WRITE:
	case PVRDMA_WR_RDMA_WRITE_WITH_IMM:
		cut(h->len, mtu_of(h), n, count, off, len, &first, &last);
		imm = h->opcode == PVRDMA_WR_SEND_WITH_IMM ||
		      h->opcode == PVRDMA_WR_RDMA_WRITE_WITH_IMM;
		if (h->opcode == PVRDMA_WR_SEND ||
		    h->opcode == PVRDMA_WR_SEND_WITH_IMM) {
			p->opcode = part_opcode(ROCE_SEND_FIRST, first, last);
		} else {
			p->opcode = part_opcode(ROCE_WRITE_FIRST, first, last);
			p->reth.va = h->remote_addr;
			p->reth.rkey = h->rkey;
			p->reth.len = h->len;
		}
		/* ..._LAST_IMM and ..._ONLY_IMM follow their plain forms */
		if (imm && last)
			p->opcode++;
		p->imm = h->imm;
		p->se = last && (h->flags & FAB_F_SOLICITED);
		p->ackreq = asks_ack(h, n, *count);
		return true;
	case PVRDMA_WR_RDMA_READ:
		p->opcode = ROCE_READ_REQ;
		p->reth.va = h->remote_addr;
		p->reth.rkey = h->rkey;
		p->reth.len = h->read_len;
		break;
	case PVRDMA_WR_ATOMIC_CMP_AND_SWP:
		p->opcode = ROCE_CMP_SWAP;
		p->atmeth.swap_add = h->atomic_b;
		p->atmeth.compare = h->atomic_a;
		break;
	case PVRDMA_WR_ATOMIC_FETCH_AND_ADD:
		p->opcode = ROCE_FETCH_ADD;
		p->atmeth.swap_add = h->atomic_a;
		break;
	default:
		return false;
	}
	p->atmeth.va = h->remote_addr;
	p->atmeth.rkey = h->rkey;
	p->ackreq = true;
	*count = 1;
	*off = 0;
	*len = 0;
	return true;
}

/* Packet n of a SEND or WRITE from packet n - 1, as roce_map_tx() left
 * it, where n is a middle packet that does not ask for an ACK: its
 * headers are the last one's but the opcode and PSN, its payload the
 * next path MTU's. */
static bool next_middle(const struct fab_hdr *h, uint32_t n, uint32_t count,
			struct roce_pkt *p, uint64_t *off, uint32_t len)
{
	uint8_t op = p->opcode;

	if (!n || n + 1 >= count || h->type != FAB_REQ ||
	    asks_ack(h, n, count))
		return false;
	if (op == ROCE_SEND_FIRST || op == ROCE_WRITE_FIRST)
		p->opcode = op + 1;
	else if (op != ROCE_SEND_MIDDLE && op != ROCE_WRITE_MIDDLE)
		return false;
	p->psn = (p->psn + 1) & PSN_MASK;
	*off += len;
	return true;
}

bool roce_map_tx_next(const struct fab_hdr *h, uint32_t n, uint32_t *count,
		      struct roce_pkt *p, uint64_t *off, uint32_t *len)
{
	return next_middle(h, n, *count, p, off, *len) ||
	       roce_map_tx(h, n, count, p, off, len);
}

static uint8_t nak_syndrome(const struct fab_hdr *h)
{
	switch (h->opcode) {
	case FAB_NAK_RNR:
		return roce_aeth_rnr((uint8_t)h->rkey);
	case FAB_NAK_SEQ:
		return roce_aeth_nak(ROCE_NAK_PSN_SEQ);
	case FAB_NAK_REM_ACCESS:
		return roce_aeth_nak(ROCE_NAK_REM_ACCESS);
	case FAB_NAK_INV_REQ:
		return roce_aeth_nak(ROCE_NAK_INV_REQ);
	default:
		return roce_aeth_nak(ROCE_NAK_REM_OP);
	}
}

bool roce_map_tx(const struct fab_hdr *h, uint32_t n, uint32_t *count,
		 struct roce_pkt *p, uint64_t *off, uint32_t *len)
{
	bool first, last;

	memset(p, 0, sizeof(*p));
	p->pkey = ROCE_DEFAULT_PKEY;
	p->dqpn = h->dst_qpn & 0xffffff;
	*count = 1;
	*off = 0;
	*len = 0;
	switch (h->type) {
	case FAB_REQ:
		if (!map_request(h, n, count, p, off, len))
			return false;
		break;
	case FAB_ACK:
		if (h->opcode != FAB_ACK_DONE)
			return false;	/* the wire ACKs its packets */
		p->opcode = ROCE_ACK;
		p->aeth.syndrome = roce_aeth_ack();
		break;
	case FAB_NAK:
		p->opcode = ROCE_ACK;
		p->aeth.syndrome = nak_syndrome(h);
		break;
	case FAB_READ_RESP:
		cut(h->len, mtu_of(h), n, count, off, len, &first, &last);
		p->opcode = first && last ? ROCE_READ_RESP_ONLY :
			    first ? ROCE_READ_RESP_FIRST :
			    last ? ROCE_READ_RESP_LAST : ROCE_READ_RESP_MIDDLE;
		p->aeth.syndrome = roce_aeth_ack();
		break;
	case FAB_ATOMIC_RESP:
		p->opcode = ROCE_ATOMIC_ACK;
		p->aeth.syndrome = roce_aeth_ack();
		p->atmack = h->atomic_a;
		break;
	case FAB_UD_SEND:
		p->opcode = ROCE_UD | (h->opcode == PVRDMA_WR_SEND_WITH_IMM ?
				       ROCE_SEND_ONLY_IMM : ROCE_SEND_ONLY);
		p->deth.qkey = h->qkey;
		p->deth.sqp = h->src_qpn & 0xffffff;
		p->imm = h->imm;
		p->se = h->flags & FAB_F_SOLICITED;
		*len = h->len;
		break;
	default:
		return false;
	}
	/* the AETH of a response: the responder's MSN */
	if (h->type != FAB_REQ && h->type != FAB_UD_SEND)
		p->aeth.msn = h->imm & PSN_MASK;
	p->psn = (h->psn + n) & PSN_MASK;
	p->pad = (uint8_t)(-*len & 3);
	return true;
}

/* Which part of its message a packet is, in FAB_F_* flags; a message of
 * one packet is whole, as the fabric's other links carry messages. */
static uint8_t seg_flags(uint32_t m)
{
	if ((m & ROCE_M_FIRST) && (m & ROCE_M_LAST))
		return 0;
	return FAB_F_SEG | (m & ROCE_M_FIRST ? FAB_F_FIRST : 0) |
	       (m & ROCE_M_LAST ? FAB_F_LAST : 0);
}

static bool map_rx_request(const struct roce_pkt *p, uint32_t m,
			   struct fab_hdr *h)
{
	h->type = FAB_REQ;
	h->len = p->paylen;
	if (m & ROCE_M_SEND) {
		h->opcode = m & ROCE_M_IMMDT ? PVRDMA_WR_SEND_WITH_IMM :
					       PVRDMA_WR_SEND;
	} else if (m & ROCE_M_WRITE) {
		h->opcode = m & ROCE_M_IMMDT ? PVRDMA_WR_RDMA_WRITE_WITH_IMM :
					       PVRDMA_WR_RDMA_WRITE;
		h->remote_addr = p->reth.va;
		h->rkey = p->reth.rkey;
		h->read_len = p->reth.len;	/* the whole message */
	} else if (m & ROCE_M_READ) {
		h->opcode = PVRDMA_WR_RDMA_READ;
		h->remote_addr = p->reth.va;
		h->rkey = p->reth.rkey;
		h->read_len = p->reth.len;
		return true;
	} else {
		h->opcode = (p->opcode & 0x1f) == ROCE_CMP_SWAP ?
			    PVRDMA_WR_ATOMIC_CMP_AND_SWP :
			    PVRDMA_WR_ATOMIC_FETCH_AND_ADD;
		h->remote_addr = p->atmeth.va;
		h->rkey = p->atmeth.rkey;
		if (h->opcode == PVRDMA_WR_ATOMIC_CMP_AND_SWP) {
			h->atomic_a = p->atmeth.compare;
			h->atomic_b = p->atmeth.swap_add;
		} else {
			h->atomic_a = p->atmeth.swap_add;
		}
		return true;
	}
	h->flags |= seg_flags(m);
	return true;
}

static void map_rx_aeth(const struct roce_pkt *p, struct fab_hdr *h)
{
	uint8_t s = p->aeth.syndrome;

	switch (roce_aeth_kind(s)) {
	case ROCE_AETH_ACK:
		h->type = FAB_ACK;
		h->opcode = FAB_ACK_DONE;
		break;
	case ROCE_AETH_RNR_NAK:
		h->type = FAB_NAK;
		h->opcode = FAB_NAK_RNR;
		h->rkey = s & 0x1f;
		break;
	default:
		h->type = FAB_NAK;
		switch (s & 0x1f) {
		case ROCE_NAK_PSN_SEQ:
			h->opcode = FAB_NAK_SEQ;
			break;
		case ROCE_NAK_REM_ACCESS:
			h->opcode = FAB_NAK_REM_ACCESS;
			break;
		case ROCE_NAK_INV_REQ:
			h->opcode = FAB_NAK_INV_REQ;
			break;
		default:
			h->opcode = FAB_NAK_REM_OP;
			break;
		}
	}
}

bool roce_map_rx(const struct roce_pkt *p, struct fab_hdr *h)
{
	uint32_t m = roce_opcode_mask(p->opcode);

	h->dst_qpn = p->dqpn;
	h->psn = p->psn;
	h->imm = p->imm;
	if (p->se)
		h->flags |= FAB_F_SOLICITED;
	if (p->ackreq)
		h->flags |= FAB_F_ACKREQ;
	if ((p->opcode & 0xe0) == ROCE_UD) {
		h->type = FAB_UD_SEND;
		h->opcode = m & ROCE_M_IMMDT ? PVRDMA_WR_SEND_WITH_IMM :
					       PVRDMA_WR_SEND;
		h->src_qpn = p->deth.sqp;
		h->qkey = p->deth.qkey;
		h->len = p->paylen;
		return true;
	}
	if ((p->opcode & 0xe0) != ROCE_RC)
		return false;	/* UC: the device has no such QP */
	if (m & ROCE_M_REQ)
		return map_rx_request(p, m, h);
	h->imm = p->aeth.msn;
	if (m & ROCE_M_READ) {
		/* a READ may be answered in parts: each its packets */
		h->type = FAB_READ_RESP;
		h->len = p->paylen;
		h->flags |= FAB_F_SEG | (m & ROCE_M_FIRST ? FAB_F_FIRST : 0) |
			    (m & ROCE_M_LAST ? FAB_F_LAST : 0);
		return true;
	}
	if (m & ROCE_M_ATOMIC) {
		h->type = FAB_ATOMIC_RESP;
		h->atomic_a = p->atmack;
		return roce_aeth_kind(p->aeth.syndrome) == ROCE_AETH_ACK;
	}
	map_rx_aeth(p, h);
	return true;
}
