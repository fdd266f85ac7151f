// SPDX-License-Identifier: BSD-2-Clause
/*
 * The fabric's packets as RoCE v2 packets and back (sim/fabric/roce_map.c):
 * messages cut to the path MTU with one PSN per packet, each opcode's
 * headers, and the way back to what the device reads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <infiniband/verbs.h>
#include <rdma/vmw_pvrdma-abi.h>

#include "roce.h"

static struct fab_hdr req(uint8_t opcode, uint32_t len)
{
	struct fab_hdr h = { .magic = FAB_MAGIC, .type = FAB_REQ };

	h.opcode = opcode;
	h.len = len;
	h.dst_qpn = 0x1234;
	h.psn = 0xfffffe;	/* wraps inside the message */
	h.flags = IBV_MTU_1024 << FAB_F_MTU_SHIFT | FAB_F_SOLICITED |
		  FAB_F_ACKREQ;
	h.remote_addr = 0x10000;
	h.rkey = 0x55;
	memcpy(&h.imm, "\x01\x02\x03\x04", 4);
	return h;
}

/* Encodes and decodes packet n, as the wire would carry it. */
static void through_wire(const struct roce_pkt *p, uint32_t len,
			 struct roce_pkt *d)
{
	uint8_t b[ROCE_MAX_DATAGRAM];
	size_t hl = roce_encode(p, b);

	assert_true(hl > 0);
	memset(b + hl, 0xab, len + p->pad + ROCE_ICRC_LEN);
	assert_int_equal(roce_decode(d, b, hl + len + p->pad + ROCE_ICRC_LEN),
			 ROCE_OK);
	assert_int_equal(d->paylen, len);
}

static void test_send_cut_to_mtu(void **state)
{
	struct fab_hdr h = req(PVRDMA_WR_SEND_WITH_IMM, 2500), back;
	static const uint8_t ops[] = { ROCE_SEND_FIRST, ROCE_SEND_MIDDLE,
				       ROCE_SEND_LAST_IMM };
	static const uint32_t lens[] = { 1024, 1024, 452 };
	static const uint8_t segf[] = { FAB_F_SEG | FAB_F_FIRST, FAB_F_SEG,
					FAB_F_SEG | FAB_F_LAST };
	struct roce_pkt p, d;
	uint32_t n, count = 1, len;
	uint64_t off;

	(void)state;
	for (n = 0; n < count; n++) {
		assert_true(roce_map_tx(&h, n, &count, &p, &off, &len));
		assert_int_equal(count, 3);
		assert_int_equal(p.opcode, ops[n]);
		assert_int_equal(len, lens[n]);
		assert_int_equal(off, n * 1024ull);
		assert_int_equal(p.psn, (0xfffffe + n) & 0xffffff);
		assert_int_equal(p.dqpn, 0x1234);
		assert_int_equal(p.ackreq, n == 2);
		assert_int_equal(p.se, n == 2);
		assert_int_equal(p.pad, (4 - len % 4) % 4);
		through_wire(&p, len, &d);
		memset(&back, 0, sizeof(back));
		assert_true(roce_map_rx(&d, &back));
		assert_int_equal(back.type, FAB_REQ);
		assert_int_equal(back.opcode, n == 2 ? PVRDMA_WR_SEND_WITH_IMM :
					      PVRDMA_WR_SEND);
		assert_int_equal(back.flags & ~(FAB_F_SOLICITED | FAB_F_ACKREQ),
				 segf[n]);
		assert_int_equal(!!(back.flags & FAB_F_ACKREQ), n == 2);
		assert_int_equal(back.len, len);
		assert_int_equal(back.psn, p.psn);
		if (n == 2)
			assert_memory_equal(&back.imm, "\x01\x02\x03\x04", 4);
	}
}

/* The requester asks for the ACK of the packets it sends now on the last
 * of them, and only when it asks. */
static void test_ackreq_on_last_sent(void **state)
{
	struct fab_hdr h = req(PVRDMA_WR_RDMA_WRITE, 8 * 1024);
	struct roce_pkt p, d;
	struct fab_hdr back;
	uint32_t n, count = 1, len;
	uint64_t off;

	(void)state;
	h.atomic_a = 2;		/* a window's worth: packets 2..4 of 8 */
	h.atomic_b = 3;
	for (n = 2; n < 5; n++) {
		assert_true(roce_map_tx(&h, n, &count, &p, &off, &len));
		assert_int_equal(p.ackreq, n == 4);
		through_wire(&p, len, &d);
		memset(&back, 0, sizeof(back));
		assert_true(roce_map_rx(&d, &back));
		assert_int_equal(!!(back.flags & FAB_F_ACKREQ), n == 4);
	}
	h.flags &= ~FAB_F_ACKREQ;
	h.atomic_a = 5;		/* the rest, not asked for */
	h.atomic_b = 3;
	for (n = 5; n < 8; n++) {
		assert_true(roce_map_tx(&h, n, &count, &p, &off, &len));
		assert_false(p.ackreq);
	}
}

/* Maps the packets of a message of op and len at path MTU mtu that go
 * now (from first, n of them; 0: all), each from the one before as a
 * batch maps them, and checks each against roce_map_tx() on its own. */
static void check_steps(uint8_t op, uint32_t len, unsigned int mtu,
			uint32_t first, uint32_t n, bool ask)
{
	struct fab_hdr h = req(op, len);
	struct roce_pkt p, want;
	uint32_t i, end, count = 1, wcount = 1, plen, wlen;
	uint64_t off, woff;

	h.flags = (uint16_t)(mtu << FAB_F_MTU_SHIFT | (ask ? FAB_F_ACKREQ : 0));
	h.atomic_a = first;
	h.atomic_b = n;
	assert_true(roce_map_tx(&h, first, &count, &p, &off, &plen));
	end = n && first + n < count ? first + n : count;
	for (i = first + 1; i < end; i++) {
		assert_true(roce_map_tx_next(&h, i, &count, &p, &off, &plen));
		memset(&want, 0, sizeof(want));
		assert_true(roce_map_tx(&h, i, &wcount, &want, &woff, &wlen));
		assert_memory_equal(&p, &want, sizeof(p));
		assert_int_equal(count, wcount);
		assert_int_equal(off, woff);
		assert_int_equal(plen, wlen);
	}
}

/* Each packet mapped from the one before (roce_map_tx_next()) is the
 * packet roce_map_tx() maps on its own: SENDs and WRITEs, with and
 * without immediate, at each path MTU, whole or a window's worth, asked
 * for or not. */
static void test_next_is_the_mapping(void **state)
{
	static const uint8_t ops[] = { PVRDMA_WR_SEND, PVRDMA_WR_SEND_WITH_IMM,
				       PVRDMA_WR_RDMA_WRITE,
				       PVRDMA_WR_RDMA_WRITE_WITH_IMM };
	static const uint32_t lens[] = { 0, 1, 1024, 2500, 4096, 8195, 65536 };
	static const unsigned int mtus[] = { IBV_MTU_256, IBV_MTU_1024,
					     IBV_MTU_4096 };
	static const uint32_t wins[][2] = { { 0, 0 }, { 1, 3 }, { 0, 5 },
					    { 2, 64 } };
	unsigned int o, l, m, w;

	(void)state;
	for (o = 0; o < 4; o++) {
		for (l = 0; l < 7; l++) {
			for (m = 0; m < 3; m++) {
				for (w = 0; w < 4; w++) {
					check_steps(ops[o], lens[l], mtus[m],
						    wins[w][0], wins[w][1],
						    false);
					check_steps(ops[o], lens[l], mtus[m],
						    wins[w][0], wins[w][1],
						    true);
				}
			}
		}
	}
}

static void test_write_first_names_the_range(void **state)
{
	struct fab_hdr h = req(PVRDMA_WR_RDMA_WRITE, 2048), back;
	struct roce_pkt p, d;
	uint32_t count, len;
	uint64_t off;

	(void)state;
	assert_true(roce_map_tx(&h, 0, &count, &p, &off, &len));
	assert_int_equal(count, 2);
	assert_int_equal(p.opcode, ROCE_WRITE_FIRST);
	through_wire(&p, len, &d);
	assert_true(roce_map_rx(&d, &back));
	assert_int_equal(back.remote_addr, 0x10000);
	assert_int_equal(back.rkey, 0x55);
	assert_int_equal(back.read_len, 2048);	/* the whole message */
	assert_true(roce_map_tx(&h, 1, &count, &p, &off, &len));
	assert_int_equal(p.opcode, ROCE_WRITE_LAST);
	assert_int_equal(roce_hdr_len(p.opcode), ROCE_BTH_LEN);

	/* one packet: whole, no FAB_F_SEG, as other links carry it */
	h = req(PVRDMA_WR_RDMA_WRITE_WITH_IMM, 8);
	assert_true(roce_map_tx(&h, 0, &count, &p, &off, &len));
	assert_int_equal(p.opcode, ROCE_WRITE_ONLY_IMM);
	through_wire(&p, len, &d);
	memset(&back, 0, sizeof(back));
	assert_true(roce_map_rx(&d, &back));
	assert_int_equal(back.flags & FAB_F_SEG, 0);
	assert_int_equal(back.opcode, PVRDMA_WR_RDMA_WRITE_WITH_IMM);
}

static void test_read_and_atomics(void **state)
{
	struct fab_hdr h = req(PVRDMA_WR_RDMA_READ, 0), back;
	struct roce_pkt p, d;
	uint32_t count, len;
	uint64_t off;

	(void)state;
	h.read_len = 5000;
	assert_true(roce_map_tx(&h, 0, &count, &p, &off, &len));
	assert_int_equal(count, 1);
	assert_int_equal(p.opcode, ROCE_READ_REQ);
	assert_int_equal(p.reth.len, 5000);
	through_wire(&p, 0, &d);
	assert_true(roce_map_rx(&d, &back));
	assert_int_equal(back.opcode, PVRDMA_WR_RDMA_READ);
	assert_int_equal(back.read_len, 5000);

	/* its response: 5 packets, AETH on the first and last */
	memset(&h, 0, sizeof(h));
	h.type = FAB_READ_RESP;
	h.len = 5000;
	h.psn = 7;
	h.flags = IBV_MTU_1024 << FAB_F_MTU_SHIFT;
	assert_true(roce_map_tx(&h, 0, &count, &p, &off, &len));
	assert_int_equal(count, 5);
	assert_int_equal(p.opcode, ROCE_READ_RESP_FIRST);
	assert_true(roce_map_tx(&h, 2, &count, &p, &off, &len));
	assert_int_equal(p.opcode, ROCE_READ_RESP_MIDDLE);
	assert_int_equal(p.psn, 9);
	assert_true(roce_map_tx(&h, 4, &count, &p, &off, &len));
	assert_int_equal(p.opcode, ROCE_READ_RESP_LAST);
	assert_int_equal(len, 5000 - 4096);
	through_wire(&p, len, &d);
	memset(&back, 0, sizeof(back));
	assert_true(roce_map_rx(&d, &back));
	assert_int_equal(back.type, FAB_READ_RESP);
	assert_int_equal(back.flags, FAB_F_SEG | FAB_F_LAST);

	h = req(PVRDMA_WR_ATOMIC_CMP_AND_SWP, 0);
	h.atomic_a = 1;		/* compare */
	h.atomic_b = 2;		/* swap */
	assert_true(roce_map_tx(&h, 0, &count, &p, &off, &len));
	assert_int_equal(p.opcode, ROCE_CMP_SWAP);
	assert_int_equal(p.atmeth.compare, 1);
	assert_int_equal(p.atmeth.swap_add, 2);
	through_wire(&p, 0, &d);
	memset(&back, 0, sizeof(back));
	assert_true(roce_map_rx(&d, &back));
	assert_int_equal(back.atomic_a, 1);
	assert_int_equal(back.atomic_b, 2);
	assert_int_equal(back.remote_addr, 0x10000);
}

static void test_acks_and_naks(void **state)
{
	static const struct {
		uint8_t type, code;
		uint8_t syndrome;
	} cases[] = {
		{ FAB_ACK, FAB_ACK_DONE, 0x1f },
		{ FAB_NAK, FAB_NAK_RNR, 0x20 | 14 },
		{ FAB_NAK, FAB_NAK_SEQ, 0x60 },
		{ FAB_NAK, FAB_NAK_INV_REQ, 0x61 },
		{ FAB_NAK, FAB_NAK_REM_ACCESS, 0x62 },
		{ FAB_NAK, FAB_NAK_REM_OP, 0x63 },
	};
	struct fab_hdr h, back;
	struct roce_pkt p, d;
	uint32_t count, len;
	uint64_t off;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&h, 0, sizeof(h));
		h.type = cases[i].type;
		h.opcode = cases[i].code;
		h.rkey = 14;		/* RNR timer */
		h.psn = 99;
		assert_true(roce_map_tx(&h, 0, &count, &p, &off, &len));
		assert_int_equal(p.opcode, ROCE_ACK);
		assert_int_equal(p.aeth.syndrome, cases[i].syndrome);
		through_wire(&p, 0, &d);
		memset(&back, 0, sizeof(back));
		assert_true(roce_map_rx(&d, &back));
		assert_int_equal(back.type, cases[i].type);
		assert_int_equal(back.opcode, cases[i].code);
		assert_int_equal(back.psn, 99);
		if (cases[i].code == FAB_NAK_RNR && h.type == FAB_NAK)
			assert_int_equal(back.rkey, 14);
	}
	/* the wire acknowledges packets: a partial ACK is not sent */
	h.type = FAB_ACK;
	h.opcode = FAB_ACK_PARTIAL;
	assert_false(roce_map_tx(&h, 0, &count, &p, &off, &len));
}

/* Every response carries the responder's MSN in its AETH, as IBA
 * 9.7.5.1.2 has it, and the way back gives it to the requester. */
static void test_responses_carry_msn(void **state)
{
	static const uint8_t types[] = { FAB_ACK, FAB_NAK, FAB_READ_RESP,
					 FAB_ATOMIC_RESP };
	struct fab_hdr h, back;
	struct roce_pkt p, d;
	uint32_t count, len;
	uint64_t off;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(types); i++) {
		memset(&h, 0, sizeof(h));
		h.type = types[i];
		h.opcode = types[i] == FAB_NAK ? FAB_NAK_SEQ : FAB_ACK_DONE;
		h.imm = 0x12abcdef;	/* 24 bits of it are the MSN */
		h.len = types[i] == FAB_READ_RESP ? 8 : 0;
		h.flags = IBV_MTU_1024 << FAB_F_MTU_SHIFT;
		assert_true(roce_map_tx(&h, 0, &count, &p, &off, &len));
		assert_int_equal(p.aeth.msn, 0xabcdef);
		through_wire(&p, len, &d);
		assert_int_equal(d.aeth.msn, 0xabcdef);
		memset(&back, 0, sizeof(back));
		assert_true(roce_map_rx(&d, &back));
		assert_int_equal(back.imm, 0xabcdef);
	}
}

/* The default partition is the port's: its full (0xffff) and limited
 * (0x7fff) members get in; other partitions, and the invalid P_Key, do
 * not (IBA 10.9.3). What the sim sends is of the default partition. */
static void test_pkey(void **state)
{
	struct fab_hdr h = req(PVRDMA_WR_SEND, 8);
	struct roce_pkt p;
	uint32_t count, len;
	uint64_t off;

	(void)state;
	assert_true(roce_pkey_match(0xffff, ROCE_DEFAULT_PKEY));
	assert_true(roce_pkey_match(0x7fff, ROCE_DEFAULT_PKEY));
	assert_false(roce_pkey_match(0x7fff, 0x7fff));	/* both limited */
	assert_false(roce_pkey_match(0x8001, ROCE_DEFAULT_PKEY));
	assert_false(roce_pkey_match(0x1234, ROCE_DEFAULT_PKEY));
	assert_false(roce_pkey_match(0x0000, 0x0000));
	assert_false(roce_pkey_match(0x8000, 0x8000));
	assert_true(roce_pkey_match(0x8123, 0x0123));
	assert_true(roce_map_tx(&h, 0, &count, &p, &off, &len));
	assert_int_equal(p.pkey, ROCE_DEFAULT_PKEY);
}

static void test_ud(void **state)
{
	struct fab_hdr h = { .magic = FAB_MAGIC, .type = FAB_UD_SEND }, back;
	struct roce_pkt p, d;
	uint32_t count, len;
	uint64_t off;

	(void)state;
	h.opcode = PVRDMA_WR_SEND;
	h.src_qpn = 0x111;
	h.dst_qpn = 0x222;
	h.qkey = 0x11111111;
	h.len = 100;
	assert_true(roce_map_tx(&h, 0, &count, &p, &off, &len));
	assert_int_equal(p.opcode, ROCE_UD | ROCE_SEND_ONLY);
	assert_int_equal(p.deth.qkey, 0x11111111);
	assert_int_equal(p.deth.sqp, 0x111);
	through_wire(&p, 100, &d);
	memset(&back, 0, sizeof(back));
	assert_true(roce_map_rx(&d, &back));
	assert_int_equal(back.type, FAB_UD_SEND);
	assert_int_equal(back.src_qpn, 0x111);
	assert_int_equal(back.qkey, 0x11111111);
	assert_int_equal(back.len, 100);
	/* UC: the device has no UC QP, the packet is dropped */
	d.opcode = ROCE_UC | ROCE_SEND_ONLY;
	assert_false(roce_map_rx(&d, &back));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_cut_to_mtu),
		cmocka_unit_test(test_ackreq_on_last_sent),
		cmocka_unit_test(test_next_is_the_mapping),
		cmocka_unit_test(test_write_first_names_the_range),
		cmocka_unit_test(test_read_and_atomics),
		cmocka_unit_test(test_acks_and_naks),
		cmocka_unit_test(test_ud),
		cmocka_unit_test(test_responses_carry_msn),
		cmocka_unit_test(test_pkey),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
