// SPDX-License-Identifier: BSD-2-Clause
/* WR -> WQE: the bytes the device reads, for every opcode and QP type. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <endian.h>
#include <errno.h>

#include "fake_queues.h"

/* Offsets of the device's SQ WQE header (the ABI, written out). */
enum {
	OFF_WR_ID = 0, OFF_NUM_SGE = 8, OFF_OPCODE = 16, OFF_FLAGS = 20,
	OFF_IMM = 24, OFF_REMOTE_ADDR = 32, OFF_RDMA_RKEY = 40,
	OFF_COMPARE_ADD = 40, OFF_SWAP = 48, OFF_ATOMIC_RKEY = 56,
	OFF_UD_QPN = 32, OFF_UD_QKEY = 36, OFF_UD_AV = 40, OFF_SGE = 80,
};

static uint64_t rd64(const uint8_t *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint32_t rd32(const uint8_t *p, size_t off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static struct ibv_sge sges[2] = {
	{ .addr = 0x1000, .length = 64, .lkey = 0x11 },
	{ .addr = 0x2000, .length = 32, .lkey = 0x22 },
};

static void encode(uint8_t *wqe, enum ibv_qp_type type,
		   struct ibv_send_wr *wr)
{
	memset(wqe, FAKE_FILL, 256);
	pvrdma_encode_send_wqe(wqe, type, wr);
}

static void check_sges(const uint8_t *wqe, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		assert_int_equal(rd64(wqe, OFF_SGE + 16 * i), sges[i].addr);
		assert_int_equal(rd32(wqe, OFF_SGE + 16 * i + 8),
				 sges[i].length);
		assert_int_equal(rd32(wqe, OFF_SGE + 16 * i + 12),
				 sges[i].lkey);
	}
}

static void test_rc_send(void **state)
{
	uint8_t wqe[256];
	struct ibv_send_wr wr = {
		.wr_id = 0xdeadbeefcafe, .sg_list = sges, .num_sge = 2,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED,
	};

	encode(wqe, IBV_QPT_RC, &wr);
	assert_int_equal(rd64(wqe, OFF_WR_ID), 0xdeadbeefcafe);
	assert_int_equal(rd32(wqe, OFF_NUM_SGE), 2);
	assert_int_equal(rd32(wqe, OFF_OPCODE), PVRDMA_WR_SEND);
	assert_int_equal(rd32(wqe, OFF_FLAGS),
			 IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	assert_int_equal(rd32(wqe, OFF_IMM), 0);
	/* no stale bytes in the unused union */
	assert_int_equal(rd64(wqe, OFF_REMOTE_ADDR), 0);
	assert_int_equal(rd32(wqe, OFF_RDMA_RKEY), 0);
	check_sges(wqe, 2);
	/* nothing written past the last SGE */
	assert_true(fake_untouched(wqe + OFF_SGE + 32, 256 - OFF_SGE - 32));
}

static void test_rc_send_with_imm(void **state)
{
	uint8_t wqe[256];
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = sges, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htobe32(0x01020304),
	};

	encode(wqe, IBV_QPT_RC, &wr);
	assert_int_equal(rd32(wqe, OFF_OPCODE), PVRDMA_WR_SEND_WITH_IMM);
	assert_memory_equal(wqe + OFF_IMM, "\x01\x02\x03\x04", 4);
	check_sges(wqe, 1);
}

static void test_rc_rdma(void **state)
{
	static const struct {
		enum ibv_wr_opcode op;
		uint32_t dev_op;
	} cases[] = {
		{ IBV_WR_RDMA_WRITE, PVRDMA_WR_RDMA_WRITE },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, PVRDMA_WR_RDMA_WRITE_WITH_IMM },
		{ IBV_WR_RDMA_READ, PVRDMA_WR_RDMA_READ },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t wqe[256];
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = sges, .num_sge = 1,
			.opcode = cases[i].op, .imm_data = htobe32(9),
			.wr.rdma = { .remote_addr = 0xabc000, .rkey = 0x77 },
		};

		encode(wqe, IBV_QPT_RC, &wr);
		assert_int_equal(rd32(wqe, OFF_OPCODE), cases[i].dev_op);
		assert_int_equal(rd64(wqe, OFF_REMOTE_ADDR), 0xabc000);
		assert_int_equal(rd32(wqe, OFF_RDMA_RKEY), 0x77);
		assert_int_equal(rd32(wqe, OFF_IMM),
				 cases[i].op == IBV_WR_RDMA_WRITE_WITH_IMM ?
				 htobe32(9) : 0);
		check_sges(wqe, 1);
	}
}

static void test_rc_atomics(void **state)
{
	uint8_t wqe[256];
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = sges, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
		.wr.atomic = { .remote_addr = 0x8000, .compare_add = 5,
			       .swap = 6, .rkey = 0x99 },
	};

	encode(wqe, IBV_QPT_RC, &wr);
	assert_int_equal(rd32(wqe, OFF_OPCODE), PVRDMA_WR_ATOMIC_CMP_AND_SWP);
	assert_int_equal(rd64(wqe, OFF_REMOTE_ADDR), 0x8000);
	assert_int_equal(rd64(wqe, OFF_COMPARE_ADD), 5);
	assert_int_equal(rd64(wqe, OFF_SWAP), 6);
	assert_int_equal(rd32(wqe, OFF_ATOMIC_RKEY), 0x99);

	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	encode(wqe, IBV_QPT_RC, &wr);
	assert_int_equal(rd32(wqe, OFF_OPCODE),
			 PVRDMA_WR_ATOMIC_FETCH_AND_ADD);
	assert_int_equal(rd64(wqe, OFF_COMPARE_ADD), 5);
	assert_int_equal(rd64(wqe, OFF_SWAP), 0);	/* not a swap */
	assert_int_equal(rd32(wqe, OFF_ATOMIC_RKEY), 0x99);
}

static void test_ud_send(void **state)
{
	uint8_t wqe[256];
	struct pvrdma_ah ah = { .av = { .port_pd = 0x01000005,
					.gid_index = 2, .hop_limit = 64,
					.dmac = { 1, 2, 3, 4, 5, 6 } } };
	struct ibv_send_wr wr = {
		.wr_id = 3, .sg_list = sges, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htobe32(1),
		.wr.ud = { .ah = &ah.ibv_ah, .remote_qpn = 0xabcd,
			   .remote_qkey = 0x11111111 },
	};

	encode(wqe, IBV_QPT_UD, &wr);
	assert_int_equal(rd32(wqe, OFF_OPCODE), PVRDMA_WR_SEND_WITH_IMM);
	assert_int_equal(rd32(wqe, OFF_UD_QPN), 0xabcd);
	assert_int_equal(rd32(wqe, OFF_UD_QKEY), 0x11111111);
	assert_memory_equal(wqe + OFF_UD_AV, &ah.av, sizeof(ah.av));
	check_sges(wqe, 1);
}

static void test_inline_flag_not_passed(void **state)
{
	uint8_t wqe[256];
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_INLINE | IBV_SEND_FENCE,
	};

	encode(wqe, IBV_QPT_RC, &wr);
	assert_int_equal(rd32(wqe, OFF_FLAGS), IBV_SEND_FENCE);
	assert_int_equal(rd32(wqe, OFF_NUM_SGE), 0);
}

static void test_recv_wqe(void **state)
{
	uint8_t wqe[64];
	struct ibv_recv_wr wr = { .wr_id = 0x55, .sg_list = sges,
				  .num_sge = 2 };

	memset(wqe, FAKE_FILL, sizeof(wqe));
	pvrdma_encode_recv_wqe(wqe, &wr);
	assert_int_equal(rd64(wqe, 0), 0x55);
	assert_int_equal(rd32(wqe, 8), 2);
	assert_int_equal(rd32(wqe, 12), 0);
	assert_int_equal(rd64(wqe, 16), 0x1000);
	assert_int_equal(rd32(wqe, 24), 64);
	assert_int_equal(rd32(wqe, 28), 0x11);
	assert_int_equal(rd64(wqe, 32), 0x2000);
	assert_int_equal(rd32(wqe, 44), 0x22);
}

static void test_wqe_sizes(void **state)
{
	assert_int_equal(pvrdma_sq_wqe_size(1), 128);	/* 80 + 16 */
	assert_int_equal(pvrdma_sq_wqe_size(3), 128);	/* 80 + 48 */
	assert_int_equal(pvrdma_sq_wqe_size(4), 256);
	assert_int_equal(pvrdma_rq_wqe_size(1), 32);
	assert_int_equal(pvrdma_rq_wqe_size(2), 64);
	assert_int_equal(pvrdma_rq_wqe_size(16), 512);
}

static void test_check_send_wr(void **state)
{
	struct fake_qp *rc = fake_qp_new(IBV_QPT_RC, 4, 2);
	struct fake_qp *ud = fake_qp_new(IBV_QPT_UD, 4, 2);
	struct pvrdma_ah ah = {};
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .sg_list = sges,
				  .num_sge = 2 };

	assert_int_equal(pvrdma_check_send_wr(&rc->qp, &wr), 0);
	wr.num_sge = 3;
	assert_int_equal(pvrdma_check_send_wr(&rc->qp, &wr), EINVAL);
	wr.num_sge = -1;
	assert_int_equal(pvrdma_check_send_wr(&rc->qp, &wr), EINVAL);
	wr.num_sge = 1;
	wr.opcode = IBV_WR_LOCAL_INV;
	assert_int_equal(pvrdma_check_send_wr(&rc->qp, &wr), EINVAL);
	wr.opcode = (enum ibv_wr_opcode)99;
	assert_int_equal(pvrdma_check_send_wr(&rc->qp, &wr), EINVAL);
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_IP_CSUM;
	assert_int_equal(pvrdma_check_send_wr(&rc->qp, &wr), EINVAL);
	wr.send_flags = IBV_SEND_INLINE;		/* 64 bytes > 0 */
	assert_int_equal(pvrdma_check_send_wr(&rc->qp, &wr), EINVAL);
	wr.num_sge = 0;					/* nothing to inline */
	assert_int_equal(pvrdma_check_send_wr(&rc->qp, &wr), 0);
	wr.num_sge = 1;
	wr.send_flags = 0;

	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	assert_int_equal(pvrdma_check_send_wr(&rc->qp, &wr), 0);
	rc->qp.atomic_cap = IBV_ATOMIC_NONE;
	assert_int_equal(pvrdma_check_send_wr(&rc->qp, &wr), EINVAL);

	/* UD: sends only, and only with an AH */
	wr.opcode = IBV_WR_SEND;
	assert_int_equal(pvrdma_check_send_wr(&ud->qp, &wr), EINVAL);
	wr.wr.ud.ah = &ah.ibv_ah;
	assert_int_equal(pvrdma_check_send_wr(&ud->qp, &wr), 0);
	wr.opcode = IBV_WR_RDMA_WRITE;
	assert_int_equal(pvrdma_check_send_wr(&ud->qp, &wr), EINVAL);
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	assert_int_equal(pvrdma_check_send_wr(&ud->qp, &wr), EINVAL);

	fake_qp_free(rc);
	fake_qp_free(ud);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rc_send),
		cmocka_unit_test(test_rc_send_with_imm),
		cmocka_unit_test(test_rc_rdma),
		cmocka_unit_test(test_rc_atomics),
		cmocka_unit_test(test_ud_send),
		cmocka_unit_test(test_inline_flag_not_passed),
		cmocka_unit_test(test_recv_wqe),
		cmocka_unit_test(test_wqe_sizes),
		cmocka_unit_test(test_check_send_wr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
