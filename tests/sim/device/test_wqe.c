// SPDX-License-Identifier: BSD-2-Clause
/* Decoding and validation of the WQEs the provider writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "wqe.h"

/* Header + 4 SGEs, rounded to a power of two as the provider does. */
#define ELEM_SIZE 256u

static uint8_t elem[ELEM_SIZE];
static struct sim_ring sq = { .elem_size = ELEM_SIZE, .max_sge = 4 };

static struct pvrdma_sq_wqe_hdr *sq_hdr(uint32_t opcode, uint32_t num_sge)
{
	struct pvrdma_sq_wqe_hdr *h = (void *)elem;
	struct pvrdma_sge *sge = (void *)(h + 1);
	uint32_t i;

	memset(elem, 0, sizeof(elem));
	h->wr_id = 0x1234;
	h->opcode = opcode;
	h->num_sge = num_sge;
	h->send_flags = IBV_SEND_SIGNALED;
	for (i = 0; i < num_sge && i < 8; i++) {
		sge[i].addr = 0x1000 * (i + 1);
		sge[i].length = 100 + i;
		sge[i].lkey = 7;
	}
	return h;
}

static void test_send_rc(void **unused)
{
	struct pvrdma_sq_wqe_hdr *h = sq_hdr(PVRDMA_WR_SEND_WITH_IMM, 3);
	struct sim_send_wr wr;

	h->ex.imm_data = 0xaabbccdd;
	assert_int_equal(sim_wqe_decode_send(&sq, elem, IBV_QPT_RC, &wr),
			 PVRDMA_WC_SUCCESS);
	assert_int_equal(wr.wr_id, 0x1234);
	assert_int_equal(wr.num_sge, 3);
	assert_int_equal(wr.total_len, 100 + 101 + 102);
	assert_int_equal(wr.imm_data, 0xaabbccdd);
	assert_int_equal(wr.sge[2].addr, 0x3000);
	assert_int_equal(wr.sge[2].lkey, 7);
	assert_int_equal(sim_wqe_wc_opcode(wr.opcode), PVRDMA_WC_SEND);
}

static void test_rdma_and_atomic_fields(void **unused)
{
	struct pvrdma_sq_wqe_hdr *h = sq_hdr(PVRDMA_WR_RDMA_READ, 1);
	struct sim_send_wr wr;

	h->wr.rdma.remote_addr = 0xdead0000;
	h->wr.rdma.rkey = 99;
	assert_int_equal(sim_wqe_decode_send(&sq, elem, IBV_QPT_RC, &wr),
			 PVRDMA_WC_SUCCESS);
	assert_int_equal(wr.remote_addr, 0xdead0000);
	assert_int_equal(wr.rkey, 99);
	assert_true(sim_wqe_is_read_or_atomic(wr.opcode));
	assert_int_equal(sim_wqe_wc_opcode(wr.opcode), PVRDMA_WC_RDMA_READ);

	h = sq_hdr(PVRDMA_WR_ATOMIC_CMP_AND_SWP, 1);
	((struct pvrdma_sge *)(h + 1))->length = 8;
	h->wr.atomic.remote_addr = 0x8000;
	h->wr.atomic.rkey = 5;
	h->wr.atomic.compare_add = 11;
	h->wr.atomic.swap = 22;
	assert_int_equal(sim_wqe_decode_send(&sq, elem, IBV_QPT_RC, &wr),
			 PVRDMA_WC_SUCCESS);
	assert_int_equal(wr.compare_add, 11);
	assert_int_equal(wr.swap, 22);
	assert_int_equal(wr.rkey, 5);
	assert_int_equal(sim_wqe_wc_opcode(wr.opcode), PVRDMA_WC_COMP_SWAP);

	/* The original value needs exactly 8 bytes. */
	((struct pvrdma_sge *)(h + 1))->length = 4;
	assert_int_equal(sim_wqe_decode_send(&sq, elem, IBV_QPT_RC, &wr),
			 PVRDMA_WC_LOC_LEN_ERR);
}

static void test_ud_fields(void **unused)
{
	struct pvrdma_sq_wqe_hdr *h = sq_hdr(PVRDMA_WR_SEND, 1);
	struct sim_send_wr wr;

	h->wr.ud.remote_qpn = 0x12;
	h->wr.ud.remote_qkey = 0x11111111;
	h->wr.ud.av.dgid[15] = 0x42;
	h->wr.ud.av.gid_index = 1;
	assert_int_equal(sim_wqe_decode_send(&sq, elem, IBV_QPT_UD, &wr),
			 PVRDMA_WC_SUCCESS);
	assert_int_equal(wr.remote_qpn, 0x12);
	assert_int_equal(wr.remote_qkey, 0x11111111);
	assert_int_equal(wr.av.dgid[15], 0x42);
	assert_int_equal(wr.av.gid_index, 1);
}

static void test_bad_opcode(void **unused)
{
	struct sim_send_wr wr;

	sq_hdr(PVRDMA_WR_RDMA_WRITE, 1);
	assert_int_equal(sim_wqe_decode_send(&sq, elem, IBV_QPT_UD, &wr),
			 PVRDMA_WC_LOC_QP_OP_ERR);
	assert_int_equal(wr.wr_id, 0x1234);
	sq_hdr(PVRDMA_WR_LOCAL_INV, 0);
	assert_int_equal(sim_wqe_decode_send(&sq, elem, IBV_QPT_RC, &wr),
			 PVRDMA_WC_LOC_QP_OP_ERR);
	sq_hdr(0x77, 0);
	assert_int_equal(sim_wqe_decode_send(&sq, elem, IBV_QPT_RC, &wr),
			 PVRDMA_WC_LOC_QP_OP_ERR);
	/* Inline data has no form in the device ABI. */
	sq_hdr(PVRDMA_WR_SEND, 1)->send_flags |= IBV_SEND_INLINE;
	assert_int_equal(sim_wqe_decode_send(&sq, elem, IBV_QPT_RC, &wr),
			 PVRDMA_WC_LOC_QP_OP_ERR);
}

static void test_bad_num_sge(void **unused)
{
	struct sim_send_wr wr;
	struct sim_ring small = { .elem_size = 64, .max_sge = 16 };

	sq_hdr(PVRDMA_WR_SEND, 5);
	assert_int_equal(sim_wqe_decode_send(&sq, elem, IBV_QPT_RC, &wr),
			 PVRDMA_WC_LOC_LEN_ERR);
	sq_hdr(PVRDMA_WR_SEND, 0xffffffffu);
	assert_int_equal(sim_wqe_decode_send(&sq, elem, IBV_QPT_RC, &wr),
			 PVRDMA_WC_LOC_LEN_ERR);
	/* The send header is 80 bytes: nothing fits in a 64-byte element,
	 * whatever max_sge says. */
	assert_int_equal(sim_wqe_max_sge(&small,
					 sizeof(struct pvrdma_sq_wqe_hdr)), 0);
	assert_int_equal(sim_wqe_max_sge(&sq,
					 sizeof(struct pvrdma_sq_wqe_hdr)), 4);
}

static void test_recv(void **unused)
{
	struct sim_ring rq = { .elem_size = 64, .max_sge = 2 };
	struct pvrdma_rq_wqe_hdr *h = (void *)elem;
	struct pvrdma_sge *sge = (void *)(h + 1);
	struct sim_recv_wr wr;

	memset(elem, 0, sizeof(elem));
	h->wr_id = 77;
	h->num_sge = 2;
	sge[0].length = 10;
	sge[1].length = 20;
	sge[1].lkey = 3;
	assert_int_equal(sim_wqe_decode_recv(&rq, elem, &wr),
			 PVRDMA_WC_SUCCESS);
	assert_int_equal(wr.wr_id, 77);
	assert_int_equal(wr.total_len, 30);
	assert_int_equal(wr.sge[1].lkey, 3);
	h->num_sge = 3;
	assert_int_equal(sim_wqe_decode_recv(&rq, elem, &wr),
			 PVRDMA_WC_LOC_LEN_ERR);
	assert_int_equal(wr.wr_id, 77);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_rc),
		cmocka_unit_test(test_rdma_and_atomic_fields),
		cmocka_unit_test(test_ud_fields),
		cmocka_unit_test(test_bad_opcode),
		cmocka_unit_test(test_bad_num_sge),
		cmocka_unit_test(test_recv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
