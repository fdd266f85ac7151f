// SPDX-License-Identifier: BSD-2-Clause
/*
 * SRQ creation refuses bad attributes, and says EOPNOTSUPP on a device
 * without SRQs, before any syscall (fake_ctx.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>

#include "fake_ctx.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_srq_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
