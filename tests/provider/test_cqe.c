// SPDX-License-Identifier: BSD-2-Clause
/* CQE -> ibv_wc: every field and the enum mappings that differ. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <endian.h>

#include "pvrdma.h"

static struct ibv_wc decode(const struct pvrdma_cqe *cqe)
{
	struct ibv_wc wc;

	memset(&wc, 0xee, sizeof(wc));
	pvrdma_cqe_to_wc(cqe, 0x1234, &wc);
	return wc;
}

static void test_recv_fields(void **state)
{
	struct pvrdma_cqe cqe = {
		.wr_id = 0x1122334455667788ull, .qp = 7,
		.opcode = PVRDMA_WC_RECV, .status = PVRDMA_WC_SUCCESS,
		.byte_len = 4096, .imm_data = htobe32(0xa0b0c0d0),
		.src_qp = 0xabcdef, .wc_flags = PVRDMA_WC_WITH_IMM |
						PVRDMA_WC_GRH,
		.vendor_err = 0, .pkey_index = 3, .slid = 0x10, .sl = 2,
		.dlid_path_bits = 1, .port_num = 1,
	};
	struct ibv_wc wc = decode(&cqe);

	assert_int_equal(wc.wr_id, 0x1122334455667788ull);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_int_equal(wc.qp_num, 0x1234);	/* the QP's number, not the
						 * device handle in cqe.qp */
	assert_int_equal(wc.byte_len, 4096);
	assert_int_equal(wc.imm_data, htobe32(0xa0b0c0d0));
	assert_int_equal(wc.src_qp, 0xabcdef);
	assert_int_equal(wc.wc_flags, IBV_WC_WITH_IMM | IBV_WC_GRH);
	assert_int_equal(wc.vendor_err, 0);
	assert_int_equal(wc.pkey_index, 3);
	assert_int_equal(wc.slid, 0x10);
	assert_int_equal(wc.sl, 2);
	assert_int_equal(wc.dlid_path_bits, 1);
}

static void test_opcodes(void **state)
{
	static const struct { uint32_t dev; enum ibv_wc_opcode ibv; } map[] = {
		{ PVRDMA_WC_SEND, IBV_WC_SEND },
		{ PVRDMA_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE },
		{ PVRDMA_WC_RDMA_READ, IBV_WC_RDMA_READ },
		{ PVRDMA_WC_COMP_SWAP, IBV_WC_COMP_SWAP },
		{ PVRDMA_WC_FETCH_ADD, IBV_WC_FETCH_ADD },
		{ PVRDMA_WC_BIND_MW, IBV_WC_BIND_MW },
		/* these two are numbered differently on the two sides */
		{ PVRDMA_WC_LSO, IBV_WC_TSO },
		{ PVRDMA_WC_LOCAL_INV, IBV_WC_LOCAL_INV },
		{ PVRDMA_WC_RECV, IBV_WC_RECV },
		{ PVRDMA_WC_RECV_RDMA_WITH_IMM, IBV_WC_RECV_RDMA_WITH_IMM },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		struct pvrdma_cqe cqe = { .opcode = map[i].dev };

		assert_int_equal(decode(&cqe).opcode, map[i].ibv);
	}
}

static void test_statuses(void **state)
{
	static const struct { uint32_t dev; enum ibv_wc_status ibv; } map[] = {
		{ PVRDMA_WC_SUCCESS, IBV_WC_SUCCESS },
		{ PVRDMA_WC_LOC_LEN_ERR, IBV_WC_LOC_LEN_ERR },
		{ PVRDMA_WC_LOC_PROT_ERR, IBV_WC_LOC_PROT_ERR },
		{ PVRDMA_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR },
		{ PVRDMA_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR },
		{ PVRDMA_WC_RETRY_EXC_ERR, IBV_WC_RETRY_EXC_ERR },
		{ PVRDMA_WC_RNR_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR },
		{ PVRDMA_WC_REM_INV_REQ_ERR, IBV_WC_REM_INV_REQ_ERR },
		{ PVRDMA_WC_FATAL_ERR, IBV_WC_FATAL_ERR },
		{ PVRDMA_WC_GENERAL_ERR, IBV_WC_GENERAL_ERR },
		{ 1000, IBV_WC_GENERAL_ERR },	/* unknown: an error */
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		struct pvrdma_cqe cqe = { .status = map[i].dev,
					  .vendor_err = 0x77 };
		struct ibv_wc wc = decode(&cqe);

		assert_int_equal(wc.status, map[i].ibv);
		assert_int_equal(wc.vendor_err, 0x77);
	}
}

static void test_flags(void **state)
{
	struct pvrdma_cqe cqe = { .wc_flags = PVRDMA_WC_WITH_INVALIDATE };

	/* the device's bit 2 is ibv's bit 3 and vice versa */
	assert_int_equal(decode(&cqe).wc_flags, IBV_WC_WITH_INV);
	cqe.wc_flags = PVRDMA_WC_IP_CSUM_OK;
	assert_int_equal(decode(&cqe).wc_flags, IBV_WC_IP_CSUM_OK);
	/* no ibv counterpart: dropped */
	cqe.wc_flags = PVRDMA_WC_WITH_SMAC | PVRDMA_WC_WITH_VLAN |
		       PVRDMA_WC_WITH_NETWORK_HDR_TYPE;
	assert_int_equal(decode(&cqe).wc_flags, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recv_fields),
		cmocka_unit_test(test_opcodes),
		cmocka_unit_test(test_statuses),
		cmocka_unit_test(test_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
