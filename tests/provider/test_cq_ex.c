// SPDX-License-Identifier: BSD-2-Clause
/*
 * cq_ex.c on an in-memory ring: start/next/end_poll and the read_*
 * accessors, and the create_cq_ex flags the device lacks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <arpa/inet.h>

#include "fake_queues.h"

#define NCQE 8

struct fake_cqx {
	struct pvrdma_context ctx;
	struct pvrdma_cq cq;
	struct pvrdma_ring_state rs;
	struct pvrdma_cqe cqes[NCQE];
	struct pvrdma_qp *table[16];
	struct pvrdma_qp qp;
	uint32_t doorbell;
};

static struct fake_cqx *fake_cqx_new(void)
{
	struct fake_cqx *f = pvrdma_calloc_aligned(_Alignof(struct fake_cqx),
						   sizeof(*f));

	f->ctx.qp_table = f->table;
	f->ctx.qp_table_mask = 15;
	pthread_mutex_init(&f->ctx.qp_table_lock, NULL);
	f->cq.ring = &f->rs.rx;
	f->cq.cqes = f->cqes;
	f->cq.cqe_cnt = NCQE;
	f->cq.idx_mask = 2 * NCQE - 1;
	f->cq.cqn = 5;
	f->cq.doorbell = &f->doorbell;
	f->cq.ctx = &f->ctx;
	pvrdma_lock_init(&f->cq.lock, false);
	pvrdma_cq_init_fast(&f->cq);
	f->qp.qp_handle = 3;
	f->qp.ibv_qp.qp_num = 0x300;
	assert_int_equal(pvrdma_qp_table_add(&f->ctx, &f->qp), 0);
	pvrdma_cq_ex_init_ops(&f->cq, IBV_WC_EX_WITH_BYTE_LEN |
			      IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
			      IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID |
			      IBV_WC_EX_WITH_SL |
			      IBV_WC_EX_WITH_DLID_PATH_BITS);
	return f;
}

static void test_cq_ex_poll(void **state)
{
	struct fake_cqx *f = fake_cqx_new();
	struct ibv_cq_ex *x = &f->cq.ibv_cq_ex;
	struct ibv_poll_cq_attr attr = { 0 };
	int i;

	assert_int_equal(ibv_start_poll(x, &attr), ENOENT);
	/* ENOENT let go of the lock: taking it again must not hang */
	assert_false(f->cq.lock.single_thread);
	pvrdma_spin_lock(&f->cq.lock);
	pvrdma_spin_unlock(&f->cq.lock);

	for (i = 0; i < 2; i++)
		f->cqes[i] = (struct pvrdma_cqe) {
			.wr_id = 10 + i, .qp = 3,
			.opcode = PVRDMA_WC_RECV_RDMA_WITH_IMM,
			.status = i ? PVRDMA_WC_REM_ACCESS_ERR :
				      PVRDMA_WC_SUCCESS,
			.byte_len = 100 + i, .imm_data = htonl(7),
			.src_qp = 0x55, .wc_flags = PVRDMA_WC_WITH_IMM,
			.slid = 9, .sl = 2, .dlid_path_bits = 1,
			.vendor_err = i * 3,
		};
	f->rs.rx.prod_tail = 2;
	assert_int_equal(ibv_start_poll(x, &attr), 0);
	assert_int_equal(x->wr_id, 10);
	assert_int_equal(x->status, IBV_WC_SUCCESS);
	assert_int_equal(ibv_wc_read_opcode(x), IBV_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(ibv_wc_read_byte_len(x), 100);
	assert_int_equal(ibv_wc_read_imm_data(x), htonl(7));
	assert_int_equal(ibv_wc_read_qp_num(x), 0x300);
	assert_int_equal(ibv_wc_read_src_qp(x), 0x55);
	assert_int_equal(ibv_wc_read_wc_flags(x), IBV_WC_WITH_IMM);
	assert_int_equal(ibv_wc_read_slid(x), 9);
	assert_int_equal(ibv_wc_read_sl(x), 2);
	assert_int_equal(ibv_wc_read_dlid_path_bits(x), 1);
	assert_int_equal(ibv_wc_read_vendor_err(x), 0);
	assert_int_equal(ibv_next_poll(x), 0);
	assert_int_equal(x->wr_id, 11);
	assert_int_equal(x->status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(ibv_wc_read_vendor_err(x), 3);
	/* the consumer index moves at end_poll only */
	assert_int_equal(f->rs.rx.cons_head, 0);
	assert_int_equal(ibv_next_poll(x), ENOENT);
	ibv_end_poll(x);
	assert_int_equal(f->rs.rx.cons_head, 2);
	assert_int_equal(ibv_start_poll(x, &attr), ENOENT);
	assert_int_equal(fake_cq_stats(&f->cq).cqes, 2);
	assert_int_equal(fake_cq_stats(&f->cq).polls, 3);
	pvrdma_lock_destroy(&f->cq.lock);
	pthread_mutex_destroy(&f->ctx.qp_table_lock);
	free(f);
}

static void test_cq_ex_refuses_what_device_lacks(void **state)
{
	uint64_t bad[] = {
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
		IBV_WC_EX_WITH_CVLAN, IBV_WC_EX_WITH_FLOW_TAG,
		IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_cq_init_attr_ex a = { .cqe = 4 };
	size_t i;

	a.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
		     IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
		     IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
		     IBV_WC_EX_WITH_DLID_PATH_BITS;
	assert_int_equal(pvrdma_cq_ex_check(&a), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		a.wc_flags = bad[i];
		assert_int_equal(pvrdma_cq_ex_check(&a), EOPNOTSUPP);
	}
	a.wc_flags = 0;
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	a.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	assert_int_equal(pvrdma_cq_ex_check(&a), EOPNOTSUPP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cq_ex_poll),
		cmocka_unit_test(test_cq_ex_refuses_what_device_lacks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
