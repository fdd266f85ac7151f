// SPDX-License-Identifier: BSD-2-Clause
/*
 * The RoCE v2 header codec of sim/fabric/roce_hdr.c: each header's bytes
 * in wire order, the opcode table, and what the decoder refuses.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "roce_hdr.h"

static void test_bth_bytes(void **state)
{
	struct roce_pkt p = {
		.opcode = ROCE_RC | ROCE_SEND_ONLY, .se = true, .pad = 2,
		.pkey = 0xffff, .dqpn = 0x123456, .ackreq = true,
		.psn = 0xabcdef,
	};
	static const uint8_t want[] = { 0x04, 0xa0, 0xff, 0xff, 0x00, 0x12,
					0x34, 0x56, 0x80, 0xab, 0xcd, 0xef };
	uint8_t b[ROCE_MAX_HDR_LEN + 16];
	struct roce_pkt d;

	(void)state;
	assert_int_equal(roce_encode(&p, b), 12);
	assert_memory_equal(b, want, sizeof(want));
	memset(b + 12, 0, 6);	/* 2 bytes of payload, 2 of pad, ICRC */
	assert_int_equal(roce_decode(&d, b, 12 + 4 + 4), ROCE_OK);
	assert_int_equal(d.opcode, p.opcode);
	assert_true(d.se);
	assert_true(d.ackreq);
	assert_int_equal(d.pad, 2);
	assert_int_equal(d.pkey, 0xffff);
	assert_int_equal(d.dqpn, 0x123456);
	assert_int_equal(d.psn, 0xabcdef);
	assert_int_equal(d.paylen, 2);
	assert_ptr_equal(d.payload, b + 12);
}

/* roce_bth_is() takes the BTH roce_encode() wrote with those fields, and
 * refuses it when any one of them, the transport version or the
 * partition differs. */
static void test_bth_is(void **state)
{
	struct roce_pkt p = {
		.opcode = ROCE_WRITE_LAST, .pad = 3, .pkey = 0x7fff,
		.dqpn = 0x123456, .ackreq = true, .psn = 0xfffffe,
	};
	uint8_t b[ROCE_MAX_HDR_LEN];
	bool ack = false;

	(void)state;
	roce_encode(&p, b);
	assert_true(roce_bth_is(b, ROCE_WRITE_LAST, 3, ROCE_DEFAULT_PKEY,
				0x123456, 0xfffffe, &ack));
	assert_true(ack);
	assert_false(roce_bth_is(b, ROCE_WRITE_MIDDLE, 3, ROCE_DEFAULT_PKEY,
				 0x123456, 0xfffffe, &ack));
	assert_false(roce_bth_is(b, ROCE_WRITE_LAST, 0, ROCE_DEFAULT_PKEY,
				 0x123456, 0xfffffe, &ack));
	assert_false(roce_bth_is(b, ROCE_WRITE_LAST, 3, ROCE_DEFAULT_PKEY,
				 0x123457, 0xfffffe, &ack));
	assert_false(roce_bth_is(b, ROCE_WRITE_LAST, 3, ROCE_DEFAULT_PKEY,
				 0x123456, 0xffffff, &ack));
	/* the packet's key, a limited member's, matched the default full
	 * key above; another partition's does not */
	assert_false(roce_bth_is(b, ROCE_WRITE_LAST, 3, 0x8001, 0x123456,
				 0xfffffe, &ack));
	b[1] |= 1;	/* transport version 1 */
	assert_false(roce_bth_is(b, ROCE_WRITE_LAST, 3, ROCE_DEFAULT_PKEY,
				 0x123456, 0xfffffe, &ack));
	b[1] &= (uint8_t)~1;
	b[1] |= 0xc0;	/* SE and MigReq are not looked at */
	b[8] = 0;
	assert_true(roce_bth_is(b, ROCE_WRITE_LAST, 3, ROCE_DEFAULT_PKEY,
				0x123456, 0xfffffe, &ack));
	assert_false(ack);
}

static void test_ext_headers(void **state)
{
	uint8_t b[128];
	struct roce_pkt p = { .opcode = ROCE_RC | ROCE_WRITE_ONLY_IMM }, d;
	static const uint8_t reth_imm[] = {
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* VA */
		0xab, 0xcd, 0xef, 0x01,		/* R_Key */
		0x00, 0x00, 0x10, 0x00,		/* DMA length */
		0xde, 0xad, 0xbe, 0xef,		/* ImmDt */
	};
	static const uint8_t atm[] = {
		0, 0, 0, 0, 0, 0, 0x10, 0x08, 0, 0, 0, 7,
		0, 0, 0, 0, 0, 0, 0, 2,		/* swap */
		0, 0, 0, 0, 0, 0, 0, 1,		/* compare */
	};
	static const uint8_t ack[] = { 0x60 | 2, 0x00, 0x01, 0x02,
				       0, 0, 0, 0, 0, 0, 0x12, 0x34 };
	static const uint8_t deth[] = { 0x80, 0x01, 0x00, 0x00,
					0x00, 0x00, 0x00, 0x01 };

	(void)state;
	p.reth.va = 0x1122334455667788ull;
	p.reth.rkey = 0xabcdef01;
	p.reth.len = 4096;
	memcpy(&p.imm, "\xde\xad\xbe\xef", 4);
	assert_int_equal(roce_encode(&p, b), 12 + 16 + 4);
	assert_memory_equal(b + 12, reth_imm, sizeof(reth_imm));
	assert_int_equal(roce_decode(&d, b, 12 + 16 + 4 + 4), ROCE_OK);
	assert_int_equal(d.reth.va, p.reth.va);
	assert_int_equal(d.reth.rkey, p.reth.rkey);
	assert_int_equal(d.reth.len, 4096);
	assert_int_equal(d.imm, p.imm);

	memset(&p, 0, sizeof(p));
	p.opcode = ROCE_RC | ROCE_CMP_SWAP;
	p.atmeth.va = 0x1008;
	p.atmeth.rkey = 7;
	p.atmeth.swap_add = 2;
	p.atmeth.compare = 1;
	assert_int_equal(roce_encode(&p, b), 12 + 28);
	assert_memory_equal(b + 12, atm, sizeof(atm));
	assert_int_equal(roce_decode(&d, b, 12 + 28 + 4), ROCE_OK);
	assert_int_equal(d.atmeth.swap_add, 2);
	assert_int_equal(d.atmeth.compare, 1);

	memset(&p, 0, sizeof(p));
	p.opcode = ROCE_RC | ROCE_ATOMIC_ACK;
	p.aeth.syndrome = roce_aeth_nak(ROCE_NAK_REM_ACCESS);
	p.aeth.msn = 0x102;
	p.atmack = 0x1234;
	assert_int_equal(roce_encode(&p, b), 12 + 4 + 8);
	assert_memory_equal(b + 12, ack, sizeof(ack));
	assert_int_equal(roce_decode(&d, b, 12 + 12 + 4), ROCE_OK);
	assert_int_equal(roce_aeth_kind(d.aeth.syndrome), ROCE_AETH_NAK);
	assert_int_equal(d.atmack, 0x1234);

	memset(&p, 0, sizeof(p));
	p.opcode = ROCE_UD | ROCE_SEND_ONLY;
	p.deth.qkey = 0x80010000;
	p.deth.sqp = 1;
	assert_int_equal(roce_encode(&p, b), 12 + 8);
	assert_memory_equal(b + 12, deth, sizeof(deth));
	assert_int_equal(roce_decode(&d, b, 12 + 8 + 4), ROCE_OK);
	assert_int_equal(d.deth.qkey, 0x80010000);
	assert_int_equal(d.deth.sqp, 1);
}

static void test_opcode_table(void **state)
{
	(void)state;
	assert_int_equal(roce_hdr_len(ROCE_RC | ROCE_READ_RESP_MIDDLE), 12);
	assert_int_equal(roce_hdr_len(ROCE_RC | ROCE_READ_RESP_FIRST), 16);
	assert_int_equal(roce_hdr_len(ROCE_RC | ROCE_READ_REQ), 28);
	assert_int_equal(roce_hdr_len(ROCE_RC | ROCE_SEND_ONLY_INV), 16);
	assert_int_equal(roce_hdr_len(ROCE_UD | ROCE_SEND_ONLY_IMM), 24);
	assert_int_equal(roce_hdr_len(ROCE_UC | ROCE_WRITE_FIRST), 28);
	/* UC has no READ, UD only SEND_ONLY, RD and CNP are not spoken */
	assert_int_equal(roce_opcode_mask(ROCE_UC | ROCE_READ_REQ), 0);
	assert_int_equal(roce_opcode_mask(ROCE_UD | ROCE_SEND_FIRST), 0);
	assert_int_equal(roce_opcode_mask(0x40), 0);
	assert_int_equal(roce_opcode_mask(0x81), 0);
	assert_int_equal(roce_opcode_mask(ROCE_RC | 0x15), 0);
	assert_string_equal(roce_opcode_name(ROCE_RC | ROCE_WRITE_LAST_IMM),
			    "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE");
	assert_true(roce_opcode_mask(ROCE_RC | ROCE_SEND_MIDDLE) &
		    ROCE_M_MIDDLE);
}

static void test_decode_refuses(void **state)
{
	uint8_t b[64] = { 0 };
	struct roce_pkt d;

	(void)state;
	b[0] = ROCE_RC | ROCE_SEND_ONLY;
	assert_int_equal(roce_decode(&d, b, 15), ROCE_E_TRUNC);
	assert_int_equal(roce_decode(&d, b, 16), ROCE_OK);
	assert_int_equal(d.paylen, 0);
	b[0] = ROCE_RC | ROCE_WRITE_ONLY;	/* RETH cut short */
	assert_int_equal(roce_decode(&d, b, 12 + 15 + 4), ROCE_E_TRUNC);
	b[0] = 0x55;
	assert_int_equal(roce_decode(&d, b, 32), ROCE_E_OPCODE);
	b[0] = ROCE_RC | ROCE_SEND_ONLY;
	b[1] = 1;				/* TVer 1 */
	assert_int_equal(roce_decode(&d, b, 32), ROCE_E_TVER);
	b[1] = 3 << 4;				/* pad 3, 2 bytes left */
	assert_int_equal(roce_decode(&d, b, 12 + 2 + 4), ROCE_E_PAD);
	b[0] = ROCE_RC | ROCE_ACK;		/* an ACK with payload */
	b[1] = 0;
	assert_int_equal(roce_decode(&d, b, 12 + 4 + 4 + 4), ROCE_E_PAYLOAD);
	b[1] = 1 << 4;
	assert_int_equal(roce_decode(&d, b, 12 + 4 + 4), ROCE_E_PAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bth_bytes),
		cmocka_unit_test(test_bth_is),
		cmocka_unit_test(test_ext_headers),
		cmocka_unit_test(test_opcode_table),
		cmocka_unit_test(test_decode_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
