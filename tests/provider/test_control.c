// SPDX-License-Identifier: BSD-2-Clause
/*
 * Control verbs refuse bad attributes before any syscall or allocation:
 * run against a context whose command fd is invalid, so reaching the
 * kernel would show up as EBADF instead of the expected errno.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>

#include "pvrdma.h"

struct fake_ctx {
	struct pvrdma_device dev;
	struct pvrdma_context ctx;
	struct pvrdma_pd pd;
	struct pvrdma_cq cq;
};

static struct fake_ctx *fake_ctx_new(void)
{
	struct fake_ctx *f = pvrdma_calloc_aligned(_Alignof(struct fake_ctx),
						   sizeof(*f));

	f->dev.page_size = 4096;
	f->ctx.vctx.context.device = &f->dev.vdev.device;
	f->ctx.vctx.context.cmd_fd = -1;
	f->ctx.limits = (struct pvrdma_limits) {
		.max_qp_wr = 1024, .max_sge = 16, .max_cqe = 4096,
		.max_srq = 64, .max_srq_wr = 1024, .max_srq_sge = 16,
		 .max_qp_rd_atom = 4,
		.max_qp_init_rd_atom = 4, .max_pkeys = 1, .phys_port_cnt = 1,
	};
	f->pd.ibv_pd.context = &f->ctx.vctx.context;
	f->cq.ibv_cq.context = &f->ctx.vctx.context;
	return f;
}

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

static void test_create_cq_checks(void **state)
{
	struct fake_ctx *f = fake_ctx_new();

	errno = 0;
	assert_null(pvrdma_create_cq(&f->ctx.vctx.context, 0, NULL, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(pvrdma_create_cq(&f->ctx.vctx.context, 4097, NULL, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(pvrdma_create_cq(&f->ctx.vctx.context, -5, NULL, 0));
	assert_int_equal(errno, EINVAL);
	f->ctx.limits.max_cqe = 3000;		/* 2049 would need 4096 */
	errno = 0;
	assert_null(pvrdma_create_cq(&f->ctx.vctx.context, 2049, NULL, 0));
	assert_int_equal(errno, EINVAL);
	free(f);
}

static void test_create_srq_checks(void **state)
{
	struct fake_ctx *f = fake_ctx_new();
	struct ibv_srq_init_attr a = { .attr = { .max_wr = 1025,
						 .max_sge = 1 } };

	errno = 0;
	assert_null(pvrdma_create_srq(&f->pd.ibv_pd, &a));
	assert_int_equal(errno, EINVAL);
	a.attr.max_wr = 16;
	a.attr.max_sge = 17;
	errno = 0;
	assert_null(pvrdma_create_srq(&f->pd.ibv_pd, &a));
	assert_int_equal(errno, EINVAL);
	a.attr.max_sge = 1;
	a.attr.srq_limit = 17;
	errno = 0;
	assert_null(pvrdma_create_srq(&f->pd.ibv_pd, &a));
	assert_int_equal(errno, EINVAL);
	/* a device without SRQ support (HW v13 reports every SRQ limit as
	 * 0): EOPNOTSUPP for an ordinary request, not EINVAL for its sizes */
	a.attr.srq_limit = 0;
	a.attr.max_wr = 16;
	a.attr.max_sge = 1;
	f->ctx.limits.max_srq = 0;
	f->ctx.limits.max_srq_wr = 0;
	f->ctx.limits.max_srq_sge = 0;
	errno = 0;
	assert_null(pvrdma_create_srq(&f->pd.ibv_pd, &a));
	assert_int_equal(errno, EOPNOTSUPP);
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

static void test_fw_ver(void **state)
{
	char buf[64];

	pvrdma_format_fw_ver(buf, sizeof(buf),
			     (3ull << 32) | (14ull << 16) | 7);
	assert_string_equal(buf, "3.14.007");
	pvrdma_format_fw_ver(buf, sizeof(buf), 0);
	assert_string_equal(buf, "0.0.000");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_qp_checks),
		cmocka_unit_test(test_create_cq_checks),
		cmocka_unit_test(test_create_srq_checks),
		cmocka_unit_test(test_modify_qp_checks),
		cmocka_unit_test(test_fw_ver),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
