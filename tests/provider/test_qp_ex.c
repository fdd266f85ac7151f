// SPDX-License-Identifier: BSD-2-Clause
/*
 * qp_ex.c against in-memory queues: the ibv_wr_* builders ring one
 * doorbell per batch and nothing on abort or error; which ibv_wr_* a QP
 * type may be created with.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <arpa/inet.h>

#include "fake_queues.h"

#define ALL_RC_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		    IBV_QP_EX_WITH_RDMA_WRITE | \
		    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		    IBV_QP_EX_WITH_RDMA_READ | \
		    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

static struct fake_qp *ex_qp(uint32_t cnt, uint64_t ops)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC, cnt, 2);

	pvrdma_qp_ex_init_ops(&f->qp, ops);
	return f;
}

static void test_wr_batch_one_doorbell(void **state)
{
	struct fake_qp *f = ex_qp(8, ALL_RC_OPS);
	struct ibv_qp_ex *x = &f->qp.vqp.qp_ex;
	struct ibv_sge sg[2] = { { 0x1000, 10, 1 }, { 0x2000, 20, 2 } };

	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 7, 0x3000, 30);
	x->wr_id = 2;
	ibv_wr_send_imm(x, htonl(5));
	ibv_wr_set_sge_list(x, 2, sg);
	x->wr_id = 3;
	ibv_wr_rdma_write_imm(x, 0x99, 0xabc, htonl(6));
	ibv_wr_set_sge(x, 7, 0x3000, 1);
	x->wr_id = 4;
	ibv_wr_rdma_read(x, 0x98, 0xdef);
	ibv_wr_set_sge(x, 7, 0x3000, 1);
	x->wr_id = 5;
	ibv_wr_atomic_cmp_swp(x, 0x97, 0x10, 3, 4);
	ibv_wr_set_sge(x, 7, 0x3000, 8);
	x->wr_id = 6;
	ibv_wr_atomic_fetch_add(x, 0x96, 0x18, 9);
	ibv_wr_set_sge(x, 7, 0x3000, 8);
	x->wr_id = 7;
	ibv_wr_rdma_write(x, 0x95, 0x20);
	ibv_wr_set_sge(x, 7, 0x3000, 8);
	/* nothing visible before complete */
	assert_int_equal(f->rs.tx.prod_tail, 0);
	assert_int_equal(f->doorbell, 0);
	assert_int_equal(ibv_wr_complete(x), 0);
	assert_int_equal(f->rs.tx.prod_tail, 7);
	assert_int_equal(f->doorbell, 0x42 | PVRDMA_DB_QP_SEND);
	assert_int_equal(fake_wq_stats(&f->qp.sq).posts, 1);
	assert_int_equal(fake_wq_stats(&f->qp.sq).wqes, 7);

	assert_int_equal(sq_hdr(f, 0)->opcode, PVRDMA_WR_SEND);
	assert_int_equal(sq_hdr(f, 0)->wr_id, 1);
	assert_int_equal(sq_hdr(f, 0)->send_flags, IBV_SEND_SIGNALED);
	assert_int_equal(sq_hdr(f, 0)->num_sge, 1);
	assert_int_equal(sq_sge(f, 0)->addr, 0x3000);
	assert_int_equal(sq_hdr(f, 1)->opcode, PVRDMA_WR_SEND_WITH_IMM);
	assert_int_equal(sq_hdr(f, 1)->ex.imm_data, htonl(5));
	assert_int_equal(sq_hdr(f, 1)->num_sge, 2);
	assert_int_equal(sq_sge(f, 1)[1].lkey, 2);
	assert_int_equal(sq_hdr(f, 2)->opcode, PVRDMA_WR_RDMA_WRITE_WITH_IMM);
	assert_int_equal(sq_hdr(f, 2)->wr.rdma.rkey, 0x99);
	assert_int_equal(sq_hdr(f, 2)->wr.rdma.remote_addr, 0xabc);
	assert_int_equal(sq_hdr(f, 3)->opcode, PVRDMA_WR_RDMA_READ);
	assert_int_equal(sq_hdr(f, 4)->opcode, PVRDMA_WR_ATOMIC_CMP_AND_SWP);
	assert_int_equal(sq_hdr(f, 4)->wr.atomic.compare_add, 3);
	assert_int_equal(sq_hdr(f, 4)->wr.atomic.swap, 4);
	assert_int_equal(sq_hdr(f, 5)->opcode, PVRDMA_WR_ATOMIC_FETCH_AND_ADD);
	assert_int_equal(sq_hdr(f, 5)->wr.atomic.compare_add, 9);
	assert_int_equal(sq_hdr(f, 6)->opcode, PVRDMA_WR_RDMA_WRITE);
	fake_qp_free(f);
}

static void test_wr_abort_and_errors(void **state)
{
	struct fake_qp *f = ex_qp(4, IBV_QP_EX_WITH_SEND);
	struct ibv_qp_ex *x = &f->qp.vqp.qp_ex;
	struct ibv_sge sg[3] = { { 0 } };
	int i;

	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 1, 2, 3);
	ibv_wr_abort(x);
	assert_int_equal(f->rs.tx.prod_tail, 0);
	assert_int_equal(f->doorbell, 0);

	/* opcode not in send_ops_flags */
	ibv_wr_start(x);
	ibv_wr_rdma_write(x, 1, 2);
	assert_int_equal(ibv_wr_complete(x), EINVAL);
	/* too many SGEs (max_sge 2): the whole batch fails */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 1, 2, 3);
	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, 3, sg);
	assert_int_equal(ibv_wr_complete(x), EINVAL);
	/* inline on a QP without inline room */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, sg, 4);
	assert_int_equal(ibv_wr_complete(x), EINVAL);
	/* ring full: 5 WRs on 4 slots */
	ibv_wr_start(x);
	for (i = 0; i < 5; i++) {
		ibv_wr_send(x);
		ibv_wr_set_sge(x, 1, 2, 3);
	}
	assert_int_equal(ibv_wr_complete(x), ENOMEM);
	/* before RTS */
	f->qp.ibv_qp.state = IBV_QPS_RTR;
	ibv_wr_start(x);
	ibv_wr_send(x);
	assert_int_equal(ibv_wr_complete(x), EINVAL);
	assert_int_equal(f->rs.tx.prod_tail, 0);
	assert_int_equal(f->doorbell, 0);
	assert_int_equal(fake_wq_stats(&f->qp.sq).posts, 0);
	fake_qp_free(f);
}

static void test_qp_ex_ops_by_type(void **state)
{
	struct pvrdma_context ctx = { .limits.atomic_cap = IBV_ATOMIC_HCA };

	assert_int_equal(pvrdma_qp_ex_check_ops(&ctx, IBV_QPT_RC,
						ALL_RC_OPS), 0);
	assert_int_equal(pvrdma_qp_ex_check_ops(&ctx, IBV_QPT_RC,
						IBV_QP_EX_WITH_BIND_MW),
			 EOPNOTSUPP);
	assert_int_equal(pvrdma_qp_ex_check_ops(&ctx, IBV_QPT_RC,
						IBV_QP_EX_WITH_TSO),
			 EOPNOTSUPP);
	assert_int_equal(pvrdma_qp_ex_check_ops(&ctx, IBV_QPT_UD,
						IBV_QP_EX_WITH_SEND |
						IBV_QP_EX_WITH_SEND_WITH_IMM),
			 0);
	assert_int_equal(pvrdma_qp_ex_check_ops(&ctx, IBV_QPT_UD,
						IBV_QP_EX_WITH_RDMA_WRITE),
			 EOPNOTSUPP);
	ctx.limits.atomic_cap = IBV_ATOMIC_NONE;
	assert_int_equal(pvrdma_qp_ex_check_ops(
				 &ctx, IBV_QPT_RC,
				 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD),
			 EOPNOTSUPP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wr_batch_one_doorbell),
		cmocka_unit_test(test_wr_abort_and_errors),
		cmocka_unit_test(test_qp_ex_ops_by_type),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
