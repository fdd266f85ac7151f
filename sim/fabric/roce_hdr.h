/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * RoCE v2 transport headers (IBA vol. 1 ch. 9, annex A17): the BTH and
 * the extended headers that follow it, encoded to and decoded from the
 * bytes of a UDP datagram to port 4791. A datagram is
 *
 *   BTH [DETH] [RETH] [AtomicETH] [AETH] [AtomicAckETH] [ImmDt] [IETH]
 *   payload, pad to 4 bytes, ICRC (roce_icrc.h)
 *
 * which extended headers are present is fixed by the BTH opcode
 * (roce_opcode_mask()). Only what RoCE carries is known here: RC, UC and
 * UD opcodes; RD and the CNP are not (decoded as unknown opcodes).
 */
#ifndef PVRDMA_SIM_FABRIC_ROCE_HDR_H
#define PVRDMA_SIM_FABRIC_ROCE_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROCE_UDP_PORT		4791
#define ROCE_BTH_LEN		12
#define ROCE_RETH_LEN		16
#define ROCE_AETH_LEN		4
#define ROCE_ATMETH_LEN		28
#define ROCE_ATMACK_LEN		8
#define ROCE_IMMDT_LEN		4
#define ROCE_IETH_LEN		4
#define ROCE_DETH_LEN		8
#define ROCE_ICRC_LEN		4
/* The longest header run an opcode has: BTH + RETH + ImmDt (RC) or
 * BTH + AtomicETH. */
#define ROCE_MAX_HDR_LEN	(ROCE_BTH_LEN + ROCE_ATMETH_LEN)

/* BTH opcodes: transport in bits 7-5, operation in bits 4-0. */
enum roce_opcode {
	ROCE_RC = 0x00,
	ROCE_UC = 0x20,
	ROCE_UD = 0x60,

	ROCE_SEND_FIRST = 0x00,
	ROCE_SEND_MIDDLE = 0x01,
	ROCE_SEND_LAST = 0x02,
	ROCE_SEND_LAST_IMM = 0x03,
	ROCE_SEND_ONLY = 0x04,
	ROCE_SEND_ONLY_IMM = 0x05,
	ROCE_WRITE_FIRST = 0x06,
	ROCE_WRITE_MIDDLE = 0x07,
	ROCE_WRITE_LAST = 0x08,
	ROCE_WRITE_LAST_IMM = 0x09,
	ROCE_WRITE_ONLY = 0x0a,
	ROCE_WRITE_ONLY_IMM = 0x0b,
	ROCE_READ_REQ = 0x0c,
	ROCE_READ_RESP_FIRST = 0x0d,
	ROCE_READ_RESP_MIDDLE = 0x0e,
	ROCE_READ_RESP_LAST = 0x0f,
	ROCE_READ_RESP_ONLY = 0x10,
	ROCE_ACK = 0x11,
	ROCE_ATOMIC_ACK = 0x12,
	ROCE_CMP_SWAP = 0x13,
	ROCE_FETCH_ADD = 0x14,
	ROCE_SEND_LAST_INV = 0x16,
	ROCE_SEND_ONLY_INV = 0x17,
};

/* What an opcode's packet carries and is (roce_opcode_mask()). */
enum roce_mask {
	ROCE_M_RETH = 1u << 0,
	ROCE_M_AETH = 1u << 1,
	ROCE_M_ATMETH = 1u << 2,
	ROCE_M_ATMACK = 1u << 3,
	ROCE_M_IMMDT = 1u << 4,
	ROCE_M_IETH = 1u << 5,
	ROCE_M_DETH = 1u << 6,
	ROCE_M_PAYLOAD = 1u << 7,	/* may carry payload */
	ROCE_M_REQ = 1u << 8,		/* a request (else a response) */
	ROCE_M_FIRST = 1u << 9,		/* first packet of a message */
	ROCE_M_MIDDLE = 1u << 10,
	ROCE_M_LAST = 1u << 11,		/* last packet of a message */
	ROCE_M_SEND = 1u << 12,
	ROCE_M_WRITE = 1u << 13,
	ROCE_M_READ = 1u << 14,		/* READ request or response */
	ROCE_M_ATOMIC = 1u << 15,	/* atomic request or its ACK */
};

/* AETH syndrome: bits 6-5 the kind, bits 4-0 its value. */
enum roce_aeth_kind {
	ROCE_AETH_ACK = 0x00,		/* value: credit count */
	ROCE_AETH_RNR_NAK = 0x20,	/* value: RNR timer encoding */
	ROCE_AETH_NAK = 0x60,		/* value: enum roce_nak */
};

enum roce_nak {
	ROCE_NAK_PSN_SEQ = 0,
	ROCE_NAK_INV_REQ = 1,
	ROCE_NAK_REM_ACCESS = 2,
	ROCE_NAK_REM_OP = 3,
};

/* The AETH credit field of an ACK that carries no credits (rxe's). */
#define ROCE_AETH_NO_CREDITS	0x1f

/* Decoded headers of one packet, host order except imm (the ImmDt and
 * IETH are kept in network order, as the work rings carry them). */
struct roce_pkt {
	uint8_t opcode;
	bool se;		/* solicited event */
	bool mig;		/* MigReq */
	uint8_t pad;		/* pad count, 0-3 */
	uint8_t tver;		/* transport version, 0 */
	uint16_t pkey;
	uint8_t fecn_becn;	/* BTH byte 4 (resv8a on RoCE: FECN, BECN) */
	uint32_t dqpn;		/* 24 bits */
	bool ackreq;
	uint32_t psn;		/* 24 bits */

	struct {
		uint64_t va;
		uint32_t rkey;
		uint32_t len;
	} reth;
	struct {
		uint8_t syndrome;
		uint32_t msn;	/* 24 bits */
	} aeth;
	struct {
		uint64_t va;
		uint32_t rkey;
		uint64_t swap_add;
		uint64_t compare;
	} atmeth;
	uint64_t atmack;	/* original value */
	uint32_t imm;		/* ImmDt, network order */
	uint32_t ieth;		/* IETH: the R_Key to invalidate, network order */
	struct {
		uint32_t qkey;
		uint32_t sqp;	/* 24 bits */
	} deth;

	const uint8_t *payload;	/* decode: where the payload starts */
	uint32_t paylen;	/* payload bytes, pad not counted */
};

enum roce_err {
	ROCE_OK = 0,
	ROCE_E_TRUNC,		/* shorter than its headers and ICRC */
	ROCE_E_OPCODE,		/* not an opcode of RC, UC or UD */
	ROCE_E_TVER,		/* transport version not 0 */
	ROCE_E_PAD,		/* pad count where no payload may be */
	ROCE_E_PAYLOAD,		/* payload where the opcode has none */
};

/* enum roce_mask bits of opcode; 0: unknown. */
uint32_t roce_opcode_mask(uint8_t opcode);
/* BTH and extended headers of opcode, in bytes (0: unknown). */
size_t roce_hdr_len(uint8_t opcode);
/* Writes the headers of p (by p->opcode) to buf, which holds at least
 * roce_hdr_len(p->opcode) bytes; returns that length, 0 if unknown. */
size_t roce_encode(const struct roce_pkt *p, uint8_t *buf);
/* Decodes the UDP payload buf[0..len) (ICRC included, not checked here:
 * roce_icrc_check()). */
enum roce_err roce_decode(struct roce_pkt *p, const uint8_t *buf,
			  size_t len);
/* Whether the BTH at bth is one roce_decode() would find with these
 * opcode, pad count, destination QP and PSN, transport version 0, and a
 * P_Key that roce_pkey_match()es pkey, without decoding the packet; its
 * AckReq in *ackreq. */
bool roce_bth_is(const uint8_t *bth, uint8_t opcode, uint8_t pad,
		 uint16_t pkey, uint32_t dqpn, uint32_t psn, bool *ackreq);
/* The opcode's name ("RC_SEND_ONLY"), for logs and tests. */
const char *roce_opcode_name(uint8_t opcode);

/* AETH syndromes. */
static inline uint8_t roce_aeth_ack(void)
{
	return ROCE_AETH_ACK | ROCE_AETH_NO_CREDITS;
}

static inline uint8_t roce_aeth_rnr(uint8_t timer)
{
	return ROCE_AETH_RNR_NAK | (timer & 0x1f);
}

static inline uint8_t roce_aeth_nak(enum roce_nak code)
{
	return ROCE_AETH_NAK | code;
}

static inline uint8_t roce_aeth_kind(uint8_t syndrome)
{
	return syndrome & 0x60;
}

/* The P_Key table of an adapter's port holds the default P_Key only
 * (sim/host/sysfs.c shows it): a full member of the default partition. */
#define ROCE_DEFAULT_PKEY	0xffff

/* Whether a packet's P_Key matches the port's P_Key mine (IBA 10.9.3):
 * the same partition (the low 15 bits, which 0 names in neither), and
 * one of the two a full member (bit 15). */
static inline bool roce_pkey_match(uint16_t pkey, uint16_t mine)
{
	return (pkey & 0x7fff) && (pkey & 0x7fff) == (mine & 0x7fff) &&
	       ((pkey | mine) & 0x8000);
}

#endif /* PVRDMA_SIM_FABRIC_ROCE_HDR_H */
