// SPDX-License-Identifier: BSD-2-Clause
/*
 * The QP commands of the uverbs ABI (uverbs_qp.c, qp_state.c): creation
 * rules, QP numbers with namespaces, modify, query and destroy.
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

static void test_qp_create_rules(void **state)
{
	struct sim_file *f;
	struct qp_out q;
	uint32_t pd, cq;
	struct sim_qp *qp;
	int i;

	dev_setup(13, false);
	f = open_ctx();
	pd = alloc_pd(f, NULL);
	assert_int_equal(create_cq(f, 64, -1, 2, &cq, NULL, NULL), 0);

	assert_int_equal(create_qp(f, IBV_QPT_UC, pd, cq, 4, 0, 0, NULL),
			 EOPNOTSUPP);
	assert_int_equal(create_qp(f, IBV_QPT_XRC_RECV, pd, cq, 4, 0, 0,
				   NULL), EINVAL);
	assert_int_equal(create_qp(f, 1 /* GSI */, pd, cq, 4, 0, 0, NULL),
			 EINVAL);
	assert_int_equal(create_qp(f, IBV_QPT_RC, pd + 7, cq, 4, 0, 0, NULL),
			 EINVAL);
	assert_int_equal(create_qp(f, IBV_QPT_RC, pd, cq,
				   8192 + 1, 0, 0, NULL), EINVAL);
	/* 64 send WQEs of 128 bytes need 2 pages after the state page. */
	assert_int_equal(create_qp(f, IBV_QPT_RC, pd, cq, 64,
				   2 * SIM_PAGE_SIZE, 0, NULL), EINVAL);
	assert_int_equal(create_qp(f, IBV_QPT_RC, pd, cq, 256, 0,
				   SIM_PAGE_SIZE, NULL), EINVAL);

	assert_int_equal(create_qp(f, IBV_QPT_RC, pd, cq, 64, 0, 0, &q), 0);
	/* Without namespaces the QPN is the device's QP handle. */
	assert_int_equal(q.qpn, q.qp_handle);
	assert_true(q.qp_handle >= 2 && q.qp_handle < SIM_MAX_QP);
	qp = sim_table_get(&dev.qp_by_qp_handle, q.qp_handle);
	assert_non_null(qp);
	assert_int_equal(qp->sq.nelems, 64);
	assert_int_equal(qp->sq.elem_size, 128);
	assert_int_equal(qp->rq.nelems, 64);
	assert_int_equal(qp->rq.elem_size, 32);
	assert_ptr_equal((uint8_t *)qp->rq.state, (uint8_t *)qp->sq.state + 8);
	assert_ptr_equal(qp->sq.elems, (uint8_t *)qp->sq.state +
			 SIM_PAGE_SIZE);

	/* Three UD QPs, not four. */
	for (i = 0; i < 3; i++)
		assert_int_equal(create_qp(f, IBV_QPT_UD, pd, cq, 4, 0, 0,
					   NULL), 0);
	assert_int_equal(create_qp(f, IBV_QPT_UD, pd, cq, 4, 0, 0, NULL),
			 ENOMEM);

	/* No SRQs on HWv13. */
	{
		struct ib_uverbs_create_srq c = { .pd_handle = pd,
						  .max_wr = 4, .max_sge = 1 };
		uint8_t u[16] = { 0 }, resp[24];

		assert_int_equal(cmd(f, IB_USER_VERBS_CMD_CREATE_SRQ, &c,
				     sizeof(c), u, sizeof(u), resp,
				     sizeof(resp)), -1);
		assert_int_equal(errno, EOPNOTSUPP);
	}
	/* The CQ is in use. */
	{
		struct ib_uverbs_destroy_cq d = { .cq_handle = cq };
		struct ib_uverbs_destroy_cq_resp dr;

		assert_int_equal(cmd(f, IB_USER_VERBS_CMD_DESTROY_CQ, &d,
				     sizeof(d), NULL, 0, &dr, sizeof(dr)), -1);
		assert_int_equal(errno, EBUSY);
	}
	uverbs_close(f);
	assert_int_equal(dev.num_ud_qps, 0);
	assert_null(sim_table_get(&dev.qp_by_qp_handle, q.qp_handle));
}

static void test_qp_namespaces(void **state)
{
	struct sim_file *f;
	struct qp_out q;
	uint32_t pd, cq = 0;	/* set by create_cq */

	dev_setup(18, true);
	f = open_ctx();
	pd = alloc_pd(f, NULL);
	assert_int_equal(create_cq(f, 64, -1, 2, &cq, NULL, NULL), 0);
	assert_int_equal(create_qp(f, IBV_QPT_RC, pd, cq, 4, 0, 0, &q), 0);
	assert_int_not_equal(q.qpn, q.qp_handle);
	assert_true(q.qp_handle < SIM_MAX_QP);
	assert_non_null(sim_table_get(&dev.qps, q.qpn));
	uverbs_close(f);
}

static void test_qp_modify_query_destroy(void **state)
{
	struct ib_uverbs_modify_qp m;
	struct ib_uverbs_query_qp qq = { 0 };
	struct ib_uverbs_query_qp_resp qr;
	struct ib_uverbs_destroy_qp d = { 0 };
	struct ib_uverbs_destroy_qp_resp dr;
	struct ib_uverbs_async_event_desc ev;
	struct sim_file *f;
	struct sim_qp *qp;
	struct qp_out q;
	uint32_t pd, cq;
	int init = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		   IBV_QP_ACCESS_FLAGS;
	int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		  IBV_QP_MIN_RNR_TIMER;
	int async_fd;

	dev_setup(18, false);
	f = open_ctx();
	async_fd = last_async_fd;
	pd = alloc_pd(f, NULL);
	assert_int_equal(create_cq(f, 64, -1, 2, &cq, NULL, NULL), 0);
	assert_int_equal(create_qp(f, IBV_QPT_RC, pd, cq, 4, 0, 0, &q), 0);
	qp = sim_table_get(&dev.qp_by_qp_handle, q.qp_handle);

	memset(&m, 0, sizeof(m));
	m.qp_state = IBV_QPS_INIT;
	m.port_num = 1;
	m.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	/* Missing the access flags. */
	assert_int_equal(modify_qp(f, q.handle, init & ~IBV_QP_ACCESS_FLAGS,
				   &m), EINVAL);
	/* Bad port, bad P_Key index. */
	m.port_num = 2;
	assert_int_equal(modify_qp(f, q.handle, init, &m), EINVAL);
	m.port_num = 1;
	m.pkey_index = 128;
	assert_int_equal(modify_qp(f, q.handle, init, &m), EINVAL);
	m.pkey_index = 0;
	/* Straight to RTS. */
	m.qp_state = IBV_QPS_RTS;
	assert_int_equal(modify_qp(f, q.handle, IBV_QP_STATE, &m), EINVAL);
	assert_int_equal(qp->attr.state, IBV_QPS_RESET);
	m.qp_state = IBV_QPS_INIT;
	assert_int_equal(modify_qp(f, q.handle, init, &m), 0);
	assert_int_equal(qp->attr.state, IBV_QPS_INIT);

	/* RTR with an MTU beyond the port's: nothing is applied. */
	m.qp_state = IBV_QPS_RTR;
	m.path_mtu = IBV_MTU_4096 + 1;
	m.dest_qp_num = 77;
	m.rq_psn = 5;
	m.min_rnr_timer = 12;
	m.max_dest_rd_atomic = 1;
	m.dest.is_global = 1;
	m.dest.port_num = 1;
	m.dest.hop_limit = 64;
	assert_int_equal(modify_qp(f, q.handle, rtr, &m), EINVAL);
	assert_int_equal(qp->attr.state, IBV_QPS_INIT);
	assert_int_equal(qp->attr.dest_qp_num, 0);
	m.path_mtu = IBV_MTU_1024;
	m.max_dest_rd_atomic = 200;
	assert_int_equal(modify_qp(f, q.handle, rtr, &m), EINVAL);
	m.max_dest_rd_atomic = 1;
	m.dest.sgid_index = 5;		/* no such GID */
	assert_int_equal(modify_qp(f, q.handle, rtr, &m), EINVAL);
	m.dest.sgid_index = 0;
	assert_int_equal(modify_qp(f, q.handle, rtr, &m), 0);

	qq.qp_handle = q.handle;
	{
		uint8_t resp[sizeof(qr)];

		assert_true(cmd(f, IB_USER_VERBS_CMD_QUERY_QP, &qq, sizeof(qq),
				NULL, 0, resp, sizeof(resp)) > 0);
		memcpy(&qr, resp, sizeof(qr));
	}
	assert_int_equal(qr.qp_state, IBV_QPS_RTR);
	assert_int_equal(qr.dest_qp_num, 77);
	assert_int_equal(qr.path_mtu, IBV_MTU_1024);
	assert_int_equal(qr.dest.hop_limit, 64);
	assert_int_equal(qr.max_send_wr, 4);
	assert_int_equal(qr.qp_access_flags, IBV_ACCESS_REMOTE_WRITE);

	/* Two async events: the first read, the second not. */
	sim_event_async(qp->uctx, qp->user_handle, IBV_EVENT_QP_FATAL,
			&qp->async_events_reported);
	assert_true(async_fd >= 0);
	assert_int_equal(recv(async_fd, &ev, sizeof(ev), MSG_DONTWAIT),
			 sizeof(ev));
	assert_int_equal(ev.event_type, IBV_EVENT_QP_FATAL);
	assert_int_equal(ev.element, qp->user_handle);
	sim_event_async(qp->uctx, qp->user_handle, IBV_EVENT_QP_LAST_WQE_REACHED,
			&qp->async_events_reported);
	d.qp_handle = q.handle;
	assert_true(cmd(f, IB_USER_VERBS_CMD_DESTROY_QP, &d, sizeof(d), NULL,
			0, &dr, sizeof(dr)) > 0);
	assert_int_equal(dr.events_reported, 1);
	assert_int_equal(recv(async_fd, &ev, sizeof(ev), MSG_DONTWAIT), -1);
	assert_int_equal(cmd(f, IB_USER_VERBS_CMD_QUERY_QP, &qq, sizeof(qq),
			     NULL, 0, &qr, sizeof(qr)), -1);
	assert_int_equal(errno, EINVAL);
	uverbs_close(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qp_create_rules),
		cmocka_unit_test(test_qp_namespaces),
		cmocka_unit_test(test_qp_modify_query_destroy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
