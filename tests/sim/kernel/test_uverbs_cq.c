// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CQ commands of the uverbs ABI (uverbs_cq.c, events.c): sizes, the
 * vendor udata, completion and async events.
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

static void test_cq_sizes_and_events(void **state)
{
	struct ib_uverbs_create_comp_channel cc = { 0 };
	struct ib_uverbs_create_comp_channel_resp ccr;
	struct ib_uverbs_req_notify_cq n = { 0 };
	struct ib_uverbs_destroy_cq d = { 0 };
	struct ib_uverbs_destroy_cq_resp dr;
	struct ib_uverbs_comp_event_desc ev;
	struct sim_file *f;
	struct sim_cq *cq;
	uint32_t h = 0, cqn, granted;	/* h: set by create_cq */

	dev_setup(18, false);
	f = open_ctx();
	/* 5 entries become 8: the state page and 8 CQEs fit in 2 pages. */
	assert_int_equal(create_cq(f, 5, -1, 2, &h, &cqn, &granted), 0);
	assert_int_equal(granted, 8);
	assert_int_equal(cqn, 1);
	/* 100 entries of 64 bytes do not fit in 2 pages. */
	assert_int_equal(create_cq(f, 100, -1, 2, NULL, NULL, NULL), EINVAL);
	assert_int_equal(create_cq(f, 0, -1, 2, NULL, NULL, NULL), EINVAL);
	assert_int_equal(create_cq(f, 16384 + 1, -1, 2, NULL, NULL,
				   NULL), EINVAL);
	/* Not a channel of this file. */
	assert_int_equal(create_cq(f, 4, 0, 2, NULL, NULL, NULL), EBADF);
	/* Vendor data too short to hold the ring address. */
	{
		struct ib_uverbs_create_cq c = { .cqe = 4, .comp_channel = -1 };
		uint8_t u[8] = { 0 }, resp[16];

		assert_int_equal(cmd(f, IB_USER_VERBS_CMD_CREATE_CQ, &c,
				     sizeof(c), u, sizeof(u), resp,
				     sizeof(resp)), -1);
		assert_int_equal(errno, EFAULT);
	}

	assert_true(cmd(f, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, &cc,
			sizeof(cc), NULL, 0, &ccr, sizeof(ccr)) > 0);
	assert_int_equal(fcntl((int)ccr.fd, F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(create_cq(f, 16, (int)ccr.fd, 2, &h, &cqn, NULL), 0);
	cq = sim_table_get(&dev.cqs, cqn);
	assert_non_null(cq);
	/* Unarmed: no event. Armed: one, then disarmed. */
	sim_event_comp(cq, false);
	n.cq_handle = h;
	assert_true(cmd(f, IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, &n, sizeof(n),
			NULL, 0, NULL, 0) > 0);
	sim_event_comp(cq, false);
	sim_event_comp(cq, false);
	assert_int_equal(read((int)ccr.fd, &ev, sizeof(ev)),
			 sizeof(ev));
	assert_int_equal(ev.cq_handle, cq->user_handle);
	assert_int_equal(read((int)ccr.fd, &ev, sizeof(ev)), -1);
	/* Solicited-only arm ignores an unsolicited completion. */
	n.solicited_only = 1;
	assert_true(cmd(f, IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, &n, sizeof(n),
			NULL, 0, NULL, 0) > 0);
	sim_event_comp(cq, false);
	assert_int_equal(cq->comp_events_reported, 1);
	sim_event_comp(cq, true);
	assert_int_equal(cq->comp_events_reported, 2);
	/* That second event is never read: destroy reports only the first,
	 * and the unread one is gone with the CQ. */
	sim_event_async(cq->uctx, cq->user_handle, IBV_EVENT_CQ_ERR,
			&cq->async_events_reported);
	d.cq_handle = h;
	assert_true(cmd(f, IB_USER_VERBS_CMD_DESTROY_CQ, &d, sizeof(d), NULL,
			0, &dr, sizeof(dr)) > 0);
	assert_int_equal(dr.comp_events_reported, 1);
	assert_int_equal(dr.async_events_reported, 0);
	assert_int_equal(read((int)ccr.fd, &ev, sizeof(ev)), -1);
	assert_null(sim_table_get(&dev.cqs, cqn));
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_DESTROY_CQ, &d, sizeof(d),
			     NULL, 0, &dr, sizeof(dr)), -1);
	assert_int_equal(errno, ENOENT);
	uverbs_close(f);
	close((int)ccr.fd);
}

/* A ring buffer of almost 4 GiB needs more pages than the page directory
 * holds: refused, not wrapped around to a small page count. */
static void test_ring_size_no_wrap(void **state)
{
	struct ib_uverbs_create_cq c = { .cqe = 4, .comp_channel = -1 };
	struct pvrdma_create_cq u = { 0 };
	struct {
		struct ib_uverbs_create_cq_resp r;
		struct pvrdma_create_cq_resp u;
	} resp;
	const size_t len = 0x100000000ull;
	struct sim_file *f;
	void *p;

	dev_setup(18, false);
	f = open_ctx();
	p = mmap(NULL, len, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(p != MAP_FAILED);
	u.buf_addr = (uintptr_t)p;
	u.buf_size = 0xffffffffu;
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c),
			     &u, sizeof(u), &resp, sizeof(resp)), -1);
	assert_int_equal(errno, EINVAL);
	munmap(p, len);
	uverbs_close(f);
	close(last_async_fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cq_sizes_and_events),
		cmocka_unit_test(test_ring_size_no_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
