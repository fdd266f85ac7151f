// SPDX-License-Identifier: BSD-2-Clause
/*
 * RoCE v2 transport headers: the opcode table and the encoding of each
 * header in wire order (big-endian fields). See roce_hdr.h.
 */
#include <string.h>

#include "roce_hdr.h"

#define M_SEND	(ROCE_M_SEND | ROCE_M_REQ | ROCE_M_PAYLOAD)
#define M_WRITE	(ROCE_M_WRITE | ROCE_M_REQ | ROCE_M_PAYLOAD)
#define M_RRESP	(ROCE_M_READ | ROCE_M_PAYLOAD)
#define M_ONLY	(ROCE_M_FIRST | ROCE_M_LAST)

/* By operation (bits 4-0), as RC has them. */
static const uint32_t rc_ops[32] = {
	[ROCE_SEND_FIRST] = M_SEND | ROCE_M_FIRST,
	[ROCE_SEND_MIDDLE] = M_SEND | ROCE_M_MIDDLE,
	[ROCE_SEND_LAST] = M_SEND | ROCE_M_LAST,
	[ROCE_SEND_LAST_IMM] = M_SEND | ROCE_M_LAST | ROCE_M_IMMDT,
	[ROCE_SEND_ONLY] = M_SEND | M_ONLY,
	[ROCE_SEND_ONLY_IMM] = M_SEND | M_ONLY | ROCE_M_IMMDT,
	[ROCE_WRITE_FIRST] = M_WRITE | ROCE_M_FIRST | ROCE_M_RETH,
	[ROCE_WRITE_MIDDLE] = M_WRITE | ROCE_M_MIDDLE,
	[ROCE_WRITE_LAST] = M_WRITE | ROCE_M_LAST,
	[ROCE_WRITE_LAST_IMM] = M_WRITE | ROCE_M_LAST | ROCE_M_IMMDT,
	[ROCE_WRITE_ONLY] = M_WRITE | M_ONLY | ROCE_M_RETH,
	[ROCE_WRITE_ONLY_IMM] = M_WRITE | M_ONLY | ROCE_M_RETH |
				ROCE_M_IMMDT,
	[ROCE_READ_REQ] = ROCE_M_READ | ROCE_M_REQ | M_ONLY | ROCE_M_RETH,
	[ROCE_READ_RESP_FIRST] = M_RRESP | ROCE_M_FIRST | ROCE_M_AETH,
	[ROCE_READ_RESP_MIDDLE] = M_RRESP | ROCE_M_MIDDLE,
	[ROCE_READ_RESP_LAST] = M_RRESP | ROCE_M_LAST | ROCE_M_AETH,
	[ROCE_READ_RESP_ONLY] = M_RRESP | M_ONLY | ROCE_M_AETH,
	[ROCE_ACK] = ROCE_M_AETH | M_ONLY,
	[ROCE_ATOMIC_ACK] = ROCE_M_ATOMIC | M_ONLY | ROCE_M_AETH |
			    ROCE_M_ATMACK,
	[ROCE_CMP_SWAP] = ROCE_M_ATOMIC | ROCE_M_REQ | M_ONLY |
			  ROCE_M_ATMETH,
	[ROCE_FETCH_ADD] = ROCE_M_ATOMIC | ROCE_M_REQ | M_ONLY |
			   ROCE_M_ATMETH,
	[ROCE_SEND_LAST_INV] = M_SEND | ROCE_M_LAST | ROCE_M_IETH,
	[ROCE_SEND_ONLY_INV] = M_SEND | M_ONLY | ROCE_M_IETH,
};

static const char *const op_names[32] = {
	"SEND_FIRST", "SEND_MIDDLE", "SEND_LAST", "SEND_LAST_WITH_IMMEDIATE",
	"SEND_ONLY", "SEND_ONLY_WITH_IMMEDIATE", "RDMA_WRITE_FIRST",
	"RDMA_WRITE_MIDDLE", "RDMA_WRITE_LAST",
	"RDMA_WRITE_LAST_WITH_IMMEDIATE", "RDMA_WRITE_ONLY",
	"RDMA_WRITE_ONLY_WITH_IMMEDIATE", "RDMA_READ_REQUEST",
	"RDMA_READ_RESPONSE_FIRST", "RDMA_READ_RESPONSE_MIDDLE",
	"RDMA_READ_RESPONSE_LAST", "RDMA_READ_RESPONSE_ONLY", "ACKNOWLEDGE",
	"ATOMIC_ACKNOWLEDGE", "COMPARE_SWAP", "FETCH_ADD", NULL,
	"SEND_LAST_WITH_INVALIDATE", "SEND_ONLY_WITH_INVALIDATE",
};

uint32_t roce_opcode_mask(uint8_t opcode)
{
	uint8_t op = opcode & 0x1f;

	switch (opcode & 0xe0) {
	case ROCE_RC:
		return rc_ops[op];
	case ROCE_UC:
		/* UC: SENDs and WRITEs, no acknowledgement */
		return op <= ROCE_WRITE_ONLY_IMM ? rc_ops[op] : 0;
	case ROCE_UD:
		if (op == ROCE_SEND_ONLY || op == ROCE_SEND_ONLY_IMM)
			return rc_ops[op] | ROCE_M_DETH;
		return 0;
	default:
		return 0;
	}
}

const char *roce_opcode_name(uint8_t opcode)
{
	static const char *const tr[8] = { "RC_", "UC_", "RD_", "UD_" };
	static __thread char buf[48];

	if (!roce_opcode_mask(opcode))
		return "UNKNOWN";
	strcpy(buf, tr[opcode >> 5]);
	strcat(buf, op_names[opcode & 0x1f]);
	return buf;
}

size_t roce_hdr_len(uint8_t opcode)
{
	uint32_t m = roce_opcode_mask(opcode);
	size_t len = ROCE_BTH_LEN;

	if (!m)
		return 0;
	if (m & ROCE_M_DETH)
		len += ROCE_DETH_LEN;
	if (m & ROCE_M_RETH)
		len += ROCE_RETH_LEN;
	if (m & ROCE_M_ATMETH)
		len += ROCE_ATMETH_LEN;
	if (m & ROCE_M_AETH)
		len += ROCE_AETH_LEN;
	if (m & ROCE_M_ATMACK)
		len += ROCE_ATMACK_LEN;
	if (m & ROCE_M_IMMDT)
		len += ROCE_IMMDT_LEN;
	if (m & ROCE_M_IETH)
		len += ROCE_IETH_LEN;
	return len;
}

static uint8_t *put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = (uint8_t)v;
	return p + 2;
}

static uint8_t *put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
	return p + 3;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	return put16(p + 2, (uint16_t)v);
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	return put32(p + 4, (uint32_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

bool roce_bth_is(const uint8_t *bth, uint8_t opcode, uint8_t pad,
		 uint16_t pkey, uint32_t dqpn, uint32_t psn, bool *ackreq)
{
	/* byte 1: SE, MigReq, the pad count, TVer (in its low 4 bits) */
	if (bth[0] != opcode || (bth[1] & 0x3f) != (uint8_t)(pad << 4) ||
	    get24(bth + 5) != dqpn || get24(bth + 9) != psn ||
	    !roce_pkey_match(get16(bth + 2), pkey))
		return false;
	*ackreq = bth[8] & 0x80;
	return true;
}

size_t roce_encode(const struct roce_pkt *pk, uint8_t *buf)
{
	uint32_t m = roce_opcode_mask(pk->opcode);
	uint8_t *p = buf;

	if (!m)
		return 0;
	*p++ = pk->opcode;
	*p++ = (uint8_t)((pk->se ? 0x80 : 0) | (pk->mig ? 0x40 : 0) |
			 (pk->pad & 3) << 4 | (pk->tver & 0xf));
	p = put16(p, pk->pkey);
	*p++ = pk->fecn_becn;
	p = put24(p, pk->dqpn);
	*p++ = pk->ackreq ? 0x80 : 0;
	p = put24(p, pk->psn);
	if (m & ROCE_M_DETH) {
		p = put32(p, pk->deth.qkey);
		*p++ = 0;
		p = put24(p, pk->deth.sqp);
	}
	if (m & ROCE_M_RETH) {
		p = put64(p, pk->reth.va);
		p = put32(p, pk->reth.rkey);
		p = put32(p, pk->reth.len);
	}
	if (m & ROCE_M_ATMETH) {
		p = put64(p, pk->atmeth.va);
		p = put32(p, pk->atmeth.rkey);
		p = put64(p, pk->atmeth.swap_add);
		p = put64(p, pk->atmeth.compare);
	}
	if (m & ROCE_M_AETH) {
		*p++ = pk->aeth.syndrome;
		p = put24(p, pk->aeth.msn);
	}
	if (m & ROCE_M_ATMACK)
		p = put64(p, pk->atmack);
	if (m & ROCE_M_IMMDT) {
		memcpy(p, &pk->imm, 4);
		p += 4;
	}
	if (m & ROCE_M_IETH) {
		memcpy(p, &pk->ieth, 4);
		p += 4;
	}
	return (size_t)(p - buf);
}

static void decode_ext(struct roce_pkt *pk, uint32_t m, const uint8_t *p)
{
	if (m & ROCE_M_DETH) {
		pk->deth.qkey = get32(p);
		pk->deth.sqp = get24(p + 5);
		p += ROCE_DETH_LEN;
	}
	if (m & ROCE_M_RETH) {
		pk->reth.va = get64(p);
		pk->reth.rkey = get32(p + 8);
		pk->reth.len = get32(p + 12);
		p += ROCE_RETH_LEN;
	}
	if (m & ROCE_M_ATMETH) {
		pk->atmeth.va = get64(p);
		pk->atmeth.rkey = get32(p + 8);
		pk->atmeth.swap_add = get64(p + 12);
		pk->atmeth.compare = get64(p + 20);
		p += ROCE_ATMETH_LEN;
	}
	if (m & ROCE_M_AETH) {
		pk->aeth.syndrome = p[0];
		pk->aeth.msn = get24(p + 1);
		p += ROCE_AETH_LEN;
	}
	if (m & ROCE_M_ATMACK) {
		pk->atmack = get64(p);
		p += ROCE_ATMACK_LEN;
	}
	if (m & ROCE_M_IMMDT) {
		memcpy(&pk->imm, p, 4);
		p += ROCE_IMMDT_LEN;
	}
	if (m & ROCE_M_IETH)
		memcpy(&pk->ieth, p, 4);
}

enum roce_err roce_decode(struct roce_pkt *pk, const uint8_t *buf,
			  size_t len)
{
	uint32_t m;
	size_t hl, rest;

	memset(pk, 0, sizeof(*pk));
	if (len < ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return ROCE_E_TRUNC;
	pk->opcode = buf[0];
	pk->se = buf[1] & 0x80;
	pk->mig = buf[1] & 0x40;
	pk->pad = (buf[1] >> 4) & 3;
	pk->tver = buf[1] & 0xf;
	pk->pkey = get16(buf + 2);
	pk->fecn_becn = buf[4];
	pk->dqpn = get24(buf + 5);
	pk->ackreq = buf[8] & 0x80;
	pk->psn = get24(buf + 9);
	m = roce_opcode_mask(pk->opcode);
	if (!m)
		return ROCE_E_OPCODE;
	if (pk->tver)
		return ROCE_E_TVER;
	hl = roce_hdr_len(pk->opcode);
	if (len < hl + ROCE_ICRC_LEN)
		return ROCE_E_TRUNC;
	rest = len - hl - ROCE_ICRC_LEN;
	if (!(m & ROCE_M_PAYLOAD) && (rest || pk->pad))
		return rest ? ROCE_E_PAYLOAD : ROCE_E_PAD;
	if (pk->pad > rest)
		return ROCE_E_PAD;
	decode_ext(pk, m, buf + ROCE_BTH_LEN);
	pk->payload = buf + hl;
	pk->paylen = (uint32_t)(rest - pk->pad);
	return ROCE_OK;
}
