// SPDX-License-Identifier: BSD-2-Clause
/*
 * The fast path against in-memory queues: what reaches the ring, the
 * producer index and the doorbell register, for good and bad WR lists.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>

#include "fake_queues.h"

static struct ibv_sge sge = { .addr = 0x1000, .length = 8, .lkey = 1 };

static void chain(struct ibv_send_wr *wr, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		wr[i] = (struct ibv_send_wr) {
			.wr_id = 100 + i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND,
			.next = i + 1 < n ? &wr[i + 1] : NULL,
		};
	}
}

static void test_list_posts_with_one_doorbell(void **state)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC, 8, 1);
	struct ibv_send_wr wr[3], *bad = NULL;
	uint32_t i;

	chain(wr, 3);
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, wr, &bad), 0);
	assert_null(bad);
	assert_int_equal(f->rs.tx.prod_tail, 3);
	assert_int_equal(f->doorbell, 0x42 | PVRDMA_DB_QP_SEND);
	for (i = 0; i < 3; i++) {
		struct pvrdma_sq_wqe_hdr *h = (void *)fake_sq_wqe(f, i);

		assert_int_equal(h->wr_id, 100 + i);
	}
	assert_true(fake_untouched(fake_sq_wqe(f, 3), 128));
	fake_qp_free(f);
}

static void test_bad_wr_posts_good_prefix(void **state)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC, 8, 1);
	struct ibv_send_wr wr[3], *bad = NULL;

	chain(wr, 3);
	wr[1].num_sge = 2;			/* more than max_sge */
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr[1]);
	assert_int_equal(f->rs.tx.prod_tail, 1);
	assert_int_equal(f->doorbell, 0x42 | PVRDMA_DB_QP_SEND);
	assert_true(fake_untouched(fake_sq_wqe(f, 1), 2 * 128));
	fake_qp_free(f);
}

static void test_bad_first_wr_touches_nothing(void **state)
{
	static const enum ibv_wr_opcode bad_ops[] = {
		IBV_WR_LOCAL_INV, IBV_WR_BIND_MW, IBV_WR_TSO,
		(enum ibv_wr_opcode)77,
	};
	size_t i;

	for (i = 0; i < sizeof(bad_ops) / sizeof(bad_ops[0]); i++) {
		struct fake_qp *f = fake_qp_new(IBV_QPT_RC, 8, 1);
		struct ibv_send_wr wr[2], *bad = NULL;

		chain(wr, 2);
		wr[0].opcode = bad_ops[i];
		assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, wr, &bad),
				 EINVAL);
		assert_ptr_equal(bad, &wr[0]);
		assert_int_equal(f->rs.tx.prod_tail, 0);
		assert_int_equal(f->doorbell, 0);	/* never rung */
		assert_true(fake_untouched(f->sq_mem, f->sq_bytes));
		fake_qp_free(f);
	}
}

static void test_wrong_state(void **state)
{
	static const enum ibv_qp_state states[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR,
	};
	size_t i;

	for (i = 0; i < 3; i++) {
		struct fake_qp *f = fake_qp_new(IBV_QPT_RC, 8, 1);
		struct ibv_send_wr wr[1], *bad = NULL;

		chain(wr, 1);
		f->qp.ibv_qp.state = states[i];
		assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, wr, &bad),
				 EINVAL);
		assert_ptr_equal(bad, &wr[0]);
		assert_int_equal(f->doorbell, 0);
		assert_true(fake_untouched(f->sq_mem, f->sq_bytes));
		fake_qp_free(f);
	}
}

static void test_full_ring(void **state)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC, 4, 1);
	struct ibv_send_wr wr[6], *bad = NULL;

	chain(wr, 6);
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, wr, &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[4]);
	assert_int_equal(f->rs.tx.prod_tail, 4);	/* full: 4 ^ 0 */

	/* the device consumed two: room for two more */
	f->rs.tx.cons_head = 2;
	f->doorbell = 0;
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, &wr[4], &bad), 0);
	assert_int_equal(f->rs.tx.prod_tail, 6);
	assert_int_equal(f->doorbell, 0x42 | PVRDMA_DB_QP_SEND);
	/* slots 0 and 1 were reused */
	assert_int_equal(((struct pvrdma_sq_wqe_hdr *)fake_sq_wqe(f, 0))->wr_id,
			 104);
	fake_qp_free(f);
}

/* Posts n single WRs and lets the device consume them all. */
static void post_and_consume(struct fake_qp *f, int n)
{
	struct ibv_send_wr wr[1], *bad = NULL;
	int i;

	chain(wr, 1);
	for (i = 0; i < n; i++) {
		assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, wr, &bad), 0);
		f->rs.tx.cons_head = f->rs.tx.prod_tail;
	}
}

static void test_index_wrap(void **state)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC, 4, 1);
	struct ibv_send_wr wr[3], *bad = NULL;

	post_and_consume(f, 7);
	assert_int_equal(f->rs.tx.prod_tail, 7);	/* slot 3, generation 1 */
	chain(wr, 3);
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, wr, &bad), 0);
	assert_int_equal(f->rs.tx.prod_tail, 2);
	assert_int_equal(((struct pvrdma_sq_wqe_hdr *)fake_sq_wqe(f, 3))->wr_id,
			 100);
	assert_int_equal(((struct pvrdma_sq_wqe_hdr *)fake_sq_wqe(f, 0))->wr_id,
			 101);
	assert_int_equal(((struct pvrdma_sq_wqe_hdr *)fake_sq_wqe(f, 1))->wr_id,
			 102);
	assert_int_equal(fake_wq_stats(&f->qp.sq).wqes, 10);
	assert_int_equal(fake_wq_stats(&f->qp.sq).posts, 8);
	fake_qp_free(f);
}

/* The device's index is read when the ring looks full: a corrupted one
 * stops the post there, with nothing written. */
static void test_corrupt_ring_state(void **state)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC, 4, 1);
	struct ibv_send_wr wr[5], *bad = NULL;

	chain(wr, 5);
	wr[3].next = NULL;
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, wr, &bad), 0);
	assert_int_equal(f->rs.tx.prod_tail, 4);
	f->doorbell = 0;
	memset(f->sq_mem, FAKE_FILL, f->sq_bytes);
	f->rs.tx.cons_head = 9;		/* not below 2 * 4 */
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, &wr[4], &bad), EIO);
	assert_ptr_equal(bad, &wr[4]);
	assert_int_equal(f->doorbell, 0);
	assert_int_equal(f->rs.tx.prod_tail, 4);
	assert_true(fake_untouched(f->sq_mem, f->sq_bytes));

	/* an index that is valid but claims more than the ring holds */
	f->rs.tx.cons_head = 3;		/* 4 - 3 = 1 used: fine */
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, &wr[4], &bad), 0);
	assert_int_equal(f->rs.tx.prod_tail, 5);
	fake_qp_free(f);
}

static void test_ud_rules(void **state)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_UD, 4, 1);
	struct pvrdma_ah ah = { .av.port_pd = 0x01000001 };
	struct ibv_send_wr wr[2], *bad = NULL;

	chain(wr, 2);
	wr[0].wr.ud.ah = &ah.ibv_ah;
	/* second one has no AH */
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr[1]);
	assert_int_equal(f->rs.tx.prod_tail, 1);

	wr[1].wr.ud.ah = &ah.ibv_ah;
	wr[1].opcode = IBV_WR_RDMA_WRITE;
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, &wr[1], &bad),
			 EINVAL);
	assert_ptr_equal(bad, &wr[1]);
	assert_int_equal(f->rs.tx.prod_tail, 1);
	fake_qp_free(f);
}

static void test_recv(void **state)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC, 4, 2);
	struct ibv_recv_wr wr[3] = {
		{ .wr_id = 1, .sg_list = &sge, .num_sge = 1, .next = &wr[1] },
		{ .wr_id = 2, .sg_list = &sge, .num_sge = 1, .next = &wr[2] },
		{ .wr_id = 3, .sg_list = &sge, .num_sge = 3 },
	};
	struct ibv_recv_wr *bad = NULL;

	/* INIT and RTR accept receives, RESET does not */
	f->qp.ibv_qp.state = IBV_QPS_RESET;
	assert_int_equal(pvrdma_post_recv(&f->qp.ibv_qp, wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr[0]);
	assert_int_equal(f->doorbell, 0);

	f->qp.ibv_qp.state = IBV_QPS_INIT;
	assert_int_equal(pvrdma_post_recv(&f->qp.ibv_qp, wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr[2]);
	assert_int_equal(f->rs.rx.prod_tail, 2);
	assert_int_equal(f->rs.tx.prod_tail, 0);
	assert_int_equal(f->doorbell, (uint32_t)(0x42 | PVRDMA_DB_QP_RECV));
	assert_int_equal(((struct pvrdma_rq_wqe_hdr *)fake_rq_wqe(f, 1))->wr_id,
			 2);
	assert_true(fake_untouched(fake_rq_wqe(f, 2), 2 * 64));
	fake_qp_free(f);
}

static void test_recv_on_srq_qp(void **state)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC, 4, 1);
	struct pvrdma_srq srq = {};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	f->qp.srq = &srq;
	assert_int_equal(pvrdma_post_recv(&f->qp.ibv_qp, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	assert_int_equal(f->doorbell, 0);
	fake_qp_free(f);
}

static void test_reset_clears_indices(void **state)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC, 4, 1);
	struct ibv_send_wr wr[1], *bad = NULL;

	post_and_consume(f, 3);
	assert_int_equal(f->rs.tx.prod_tail, 3);
	pvrdma_wq_reset(&f->qp.sq);
	assert_int_equal(f->rs.tx.prod_tail, 0);
	assert_int_equal(f->rs.tx.cons_head, 0);
	/* posting starts over at slot 0, and the count of WQEs goes on */
	chain(wr, 1);
	wr[0].wr_id = 77;
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, wr, &bad), 0);
	assert_int_equal(f->rs.tx.prod_tail, 1);
	assert_int_equal(((struct pvrdma_sq_wqe_hdr *)fake_sq_wqe(f, 0))->wr_id,
			 77);
	assert_int_equal(fake_wq_stats(&f->qp.sq).wqes, 4);
	fake_qp_free(f);
}

/* Thread domain: the lock is a no-op, the general case counts takes. */
static void test_thread_domain_takes_no_lock(void **state)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC, 8, 1);
	struct ibv_sge sg = { 0x1000, 8, 1 };
	struct ibv_send_wr wr = { .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	int i;

	for (i = 0; i < 3; i++)
		assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, &wr, &bad),
				 0);
	assert_int_equal(fake_wq_stats(&f->qp.sq).lock_acquisitions, 3);

	fake_qp_free(f);

	f = fake_qp_new(IBV_QPT_RC, 8, 1);
	fake_qp_single_thread(f);
	/* a spinlock held elsewhere would hang a locking post */
	pvrdma_spin_lock(&f->qp.sq.lock);
	for (i = 0; i < 3; i++)
		assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, &wr, &bad),
				 0);
	pvrdma_spin_unlock(&f->qp.sq.lock);
	assert_int_equal(fake_wq_stats(&f->qp.sq).lock_acquisitions, 0);
	assert_int_equal(fake_wq_stats(&f->qp.sq).wqes, 3);
	assert_int_equal(fake_wq_stats(&f->qp.sq).posts, 3);
	fake_qp_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_posts_with_one_doorbell),
		cmocka_unit_test(test_bad_wr_posts_good_prefix),
		cmocka_unit_test(test_bad_first_wr_touches_nothing),
		cmocka_unit_test(test_wrong_state),
		cmocka_unit_test(test_full_ring),
		cmocka_unit_test(test_index_wrap),
		cmocka_unit_test(test_corrupt_ring_state),
		cmocka_unit_test(test_ud_rules),
		cmocka_unit_test(test_recv),
		cmocka_unit_test(test_recv_on_srq_qp),
		cmocka_unit_test(test_reset_clears_indices),
		cmocka_unit_test(test_thread_domain_takes_no_lock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
