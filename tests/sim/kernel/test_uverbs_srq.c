// SPDX-License-Identifier: BSD-2-Clause
/*
 * The SRQ commands of the uverbs ABI (uverbs_srq.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include "uverbs_harness.h"

static void test_srq(void **state)
{
	struct ib_uverbs_create_srq c = { 0 };
	struct pvrdma_create_srq u = { 0 };
	struct {
		struct ib_uverbs_create_srq_resp r;
		struct pvrdma_create_srq_resp u;
	} resp;
	struct ib_uverbs_destroy_srq d = { 0 };
	struct ib_uverbs_destroy_srq_resp dr;
	struct sim_file *f;
	struct sim_srq *srq;

	dev_setup(14, false);
	f = open_ctx();
	c.pd_handle = alloc_pd(f, NULL);
	c.max_wr = 16;
	c.max_sge = 1;
	c.srq_limit = 4;
	u.buf_addr = (uintptr_t)page_buf(2 * SIM_PAGE_SIZE);
	u.buf_size = SIM_PAGE_SIZE;		/* no room for WQEs */
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_CREATE_SRQ, &c, sizeof(c),
			     &u, sizeof(u), &resp, sizeof(resp)), -1);
	assert_int_equal(errno, EINVAL);
	c.max_wr = 32768 + 1;
	u.buf_size = 2 * SIM_PAGE_SIZE;
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_CREATE_SRQ, &c, sizeof(c),
			     &u, sizeof(u), &resp, sizeof(resp)), -1);
	assert_int_equal(errno, EINVAL);
	c.max_wr = 16;
	assert_true(cmd(f, IB_USER_VERBS_CMD_CREATE_SRQ, &c, sizeof(c), &u,
			sizeof(u), &resp, sizeof(resp)) > 0);
	assert_int_equal(resp.r.max_wr, 16);
	srq = sim_table_get(&dev.srqs, resp.u.srqn);
	assert_non_null(srq);
	assert_int_equal(srq->ring.nelems, 16);
	assert_int_equal(srq->ring.elem_size, 32);
	assert_int_equal(srq->limit, 4);
	d.srq_handle = resp.r.srq_handle;
	assert_true(cmd(f, IB_USER_VERBS_CMD_DESTROY_SRQ, &d, sizeof(d), NULL,
			0, &dr, sizeof(dr)) > 0);
	assert_int_equal(dr.events_reported, 0);
	uverbs_close(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_srq),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
