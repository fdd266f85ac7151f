// SPDX-License-Identifier: BSD-2-Clause
/*
 * QP control verbs refuse bad attributes before any syscall or allocation
 * (fake_ctx.h: reaching the kernel would read EBADF).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>

#include "fake_ctx.h"

static void expect_qp_errno(struct fake_ctx *f, struct ibv_qp_init_attr a,
			    int err)
{
	errno = 0;
	assert_null(pvrdma_create_qp(&f->pd.ibv_pd, &a));
	assert_int_equal(errno, err);
}

static void test_create_qp_checks(void **state)
{
	struct fake_ctx *f = fake_ctx_new();
	struct ibv_qp_init_attr ok = {
		.send_cq = &f->cq.ibv_cq, .recv_cq = &f->cq.ibv_cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1024, .max_recv_wr = 1024,
			 .max_send_sge = 16, .max_recv_sge = 16 },
	};
	struct ibv_qp_init_attr a;

	a = ok; a.qp_type = IBV_QPT_UC;
	expect_qp_errno(f, a, EOPNOTSUPP);
	a = ok; a.qp_type = IBV_QPT_XRC_SEND;
	expect_qp_errno(f, a, EOPNOTSUPP);
	a = ok; a.qp_type = (enum ibv_qp_type)1234;
	expect_qp_errno(f, a, EINVAL);
	a = ok; a.send_cq = NULL;
	expect_qp_errno(f, a, EINVAL);
	a = ok; a.cap.max_send_wr = 1025;
	expect_qp_errno(f, a, EINVAL);
	a = ok; a.cap.max_recv_wr = 1025;
	expect_qp_errno(f, a, EINVAL);
	a = ok; a.cap.max_send_sge = 17;
	expect_qp_errno(f, a, EINVAL);
	a = ok; a.cap.max_recv_sge = 17;
	expect_qp_errno(f, a, EINVAL);
	/* 1000 rounds up to 1024: fine; the limit itself is not a power
	 * of two here: 600 -> 1024 > 1000 */
	f->ctx.limits.max_qp_wr = 1000;
	a = ok; a.cap.max_send_wr = 600; a.cap.max_recv_wr = 1;
	expect_qp_errno(f, a, EINVAL);
	free(f);
}

static void test_modify_qp_checks(void **state)
{
	struct fake_ctx *f = fake_ctx_new();
	const struct pvrdma_limits *l = &f->ctx.limits;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .port_num = 1, .path_mtu = IBV_MTU_1024,
		.min_rnr_timer = 12, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7, .max_rd_atomic = 4, .max_dest_rd_atomic = 4,
	};
	int all = IBV_QP_STATE | IBV_QP_PORT | IBV_QP_PATH_MTU |
		  IBV_QP_MIN_RNR_TIMER | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
		  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_PKEY_INDEX;
	struct ibv_qp_attr b;

	assert_int_equal(pvrdma_check_modify_qp(l, &a, all), 0);
	b = a; b.port_num = 2;
	assert_int_equal(pvrdma_check_modify_qp(l, &b, all), EINVAL);
	b = a; b.port_num = 0;
	assert_int_equal(pvrdma_check_modify_qp(l, &b, all), EINVAL);
	b = a; b.pkey_index = 1;
	assert_int_equal(pvrdma_check_modify_qp(l, &b, all), EINVAL);
	b = a; b.path_mtu = (enum ibv_mtu)6;
	assert_int_equal(pvrdma_check_modify_qp(l, &b, all), EINVAL);
	b = a; b.min_rnr_timer = 32;
	assert_int_equal(pvrdma_check_modify_qp(l, &b, all), EINVAL);
	b = a; b.timeout = 32;
	assert_int_equal(pvrdma_check_modify_qp(l, &b, all), EINVAL);
	b = a; b.retry_cnt = 8;
	assert_int_equal(pvrdma_check_modify_qp(l, &b, all), EINVAL);
	b = a; b.rnr_retry = 8;
	assert_int_equal(pvrdma_check_modify_qp(l, &b, all), EINVAL);
	b = a; b.max_rd_atomic = 5;
	assert_int_equal(pvrdma_check_modify_qp(l, &b, all), EINVAL);
	b = a; b.max_dest_rd_atomic = 5;
	assert_int_equal(pvrdma_check_modify_qp(l, &b, all), EINVAL);
	b = a; b.qp_state = (enum ibv_qp_state)9;
	assert_int_equal(pvrdma_check_modify_qp(l, &b, all), EINVAL);
	/* fields outside the mask are not looked at */
	b = a; b.port_num = 9;
	assert_int_equal(pvrdma_check_modify_qp(l, &b, IBV_QP_STATE), 0);
	assert_int_equal(pvrdma_check_modify_qp(l, &a, IBV_QP_RATE_LIMIT),
			 EOPNOTSUPP);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_qp_checks),
		cmocka_unit_test(test_modify_qp_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
