// SPDX-License-Identifier: BSD-2-Clause
/*
 * poll_cq against an in-memory CQ: the test plays the device (writes CQEs
 * and prod_tail). Also the removal of one QP's CQEs and the empty-poll
 * doorbell policy.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>

#include "fake_ctx.h"
#include "fake_queues.h"

#define NCQE 8

struct fake_cq {
	struct pvrdma_context ctx;
	struct pvrdma_cq cq;
	struct pvrdma_ring_state rs;
	struct pvrdma_cqe cqes[NCQE];
	struct pvrdma_qp *table[16];
	struct pvrdma_qp qp_a, qp_b;
	uint32_t doorbell;
};

static struct fake_cq *fake_cq_new(uint32_t poll_db_interval)
{
	struct fake_cq *f = pvrdma_calloc_aligned(_Alignof(struct fake_cq),
						  sizeof(*f));

	f->ctx.qp_table = f->table;
	f->ctx.qp_table_mask = 15;
	pthread_mutex_init(&f->ctx.qp_table_lock, NULL);
	f->ctx.cq_poll_db_interval = poll_db_interval;
	f->cq.ring = &f->rs.rx;
	f->cq.cqes = f->cqes;
	f->cq.cqe_cnt = NCQE;
	f->cq.idx_mask = 2 * NCQE - 1;
	f->cq.cqn = 5;
	f->cq.doorbell = &f->doorbell;
	f->cq.ctx = &f->ctx;
	pvrdma_lock_init(&f->cq.lock, false);
	pvrdma_cq_init_fast(&f->cq);

	f->qp_a.qp_handle = 3;
	f->qp_a.ibv_qp.qp_num = 0x300;
	f->qp_b.qp_handle = 4;
	f->qp_b.ibv_qp.qp_num = 0x400;
	assert_int_equal(pvrdma_qp_table_add(&f->ctx, &f->qp_a), 0);
	assert_int_equal(pvrdma_qp_table_add(&f->ctx, &f->qp_b), 0);
	return f;
}

static void fake_cq_free(struct fake_cq *f)
{
	pvrdma_lock_destroy(&f->cq.lock);
	pthread_mutex_destroy(&f->ctx.qp_table_lock);
	free(f);
}

/* The device side: append one CQE. */
static void produce(struct fake_cq *f, uint32_t qp_handle, uint64_t wr_id)
{
	uint32_t tail = f->rs.rx.prod_tail;

	f->cqes[tail & (NCQE - 1)] = (struct pvrdma_cqe) {
		.wr_id = wr_id, .qp = qp_handle, .opcode = PVRDMA_WC_RECV,
		.byte_len = (uint32_t)wr_id,
	};
	f->rs.rx.prod_tail = pvrdma_ring_next(tail, NCQE);
}

static void test_poll_in_order_with_wrap(void **state)
{
	struct fake_cq *f = fake_cq_new(0);
	struct ibv_wc wc[4];
	int i;

	f->rs.rx.prod_tail = f->rs.rx.cons_head = 14;	/* near the wrap */
	for (i = 0; i < 5; i++)
		produce(f, i & 1 ? 4 : 3, 10 + i);

	assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 4, wc), 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(wc[i].wr_id, 10 + i);
		assert_int_equal(wc[i].qp_num, i & 1 ? 0x400 : 0x300);
		assert_int_equal(wc[i].byte_len, 10 + i);
		assert_int_equal(wc[i].opcode, IBV_WC_RECV);
	}
	assert_int_equal(f->rs.rx.cons_head, 2);
	assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 4, wc), 1);
	assert_int_equal(wc[0].wr_id, 14);
	assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 4, wc), 0);
	assert_int_equal(f->rs.rx.cons_head, f->rs.rx.prod_tail);
	assert_int_equal(f->doorbell, 0);	/* policy: never */
	fake_cq_free(f);
}

static void assert_same_wc(const struct ibv_wc *got,
			   const struct ibv_wc *want)
{
	assert_int_equal(got->wr_id, want->wr_id);
	assert_int_equal(got->status, want->status);
	assert_int_equal(got->opcode, want->opcode);
	assert_int_equal(got->vendor_err, want->vendor_err);
	assert_int_equal(got->byte_len, want->byte_len);
	assert_int_equal(got->imm_data, want->imm_data);
	assert_int_equal(got->qp_num, want->qp_num);
	assert_int_equal(got->src_qp, want->src_qp);
	assert_int_equal(got->wc_flags, want->wc_flags);
	assert_int_equal(got->pkey_index, want->pkey_index);
	assert_int_equal(got->slid, want->slid);
	assert_int_equal(got->sl, want->sl);
	assert_int_equal(got->dlid_path_bits, want->dlid_path_bits);
}

/* poll_cq's fast decoding of common CQEs and its general one for the rest
 * give exactly what the full mapping gives, field for field: one CQE per
 * call (the single-entry path) and several per call (the batch path). */
static void test_poll_decodes_as_cqe_to_wc(void **state)
{
	static const struct { uint32_t op, status, flags; } c[] = {
		{ PVRDMA_WC_SEND, PVRDMA_WC_SUCCESS, 0 },
		{ PVRDMA_WC_RDMA_WRITE, PVRDMA_WC_SUCCESS, PVRDMA_WC_GRH },
		{ PVRDMA_WC_RECV, PVRDMA_WC_SUCCESS,
		  PVRDMA_WC_GRH | PVRDMA_WC_WITH_IMM | PVRDMA_WC_WITH_SMAC },
		{ PVRDMA_WC_RECV_RDMA_WITH_IMM, PVRDMA_WC_SUCCESS,
		  PVRDMA_WC_WITH_IMM | PVRDMA_WC_WITH_NETWORK_HDR_TYPE },
		{ PVRDMA_WC_RECV_RDMA_WITH_IMM, PVRDMA_WC_WR_FLUSH_ERR,
		  PVRDMA_WC_WITH_IMM },
		{ PVRDMA_WC_SEND, PVRDMA_WC_LOC_LEN_ERR, 0 },
		{ PVRDMA_WC_LSO, PVRDMA_WC_SUCCESS, PVRDMA_WC_IP_CSUM_OK },
		{ PVRDMA_WC_LOCAL_INV, PVRDMA_WC_SUCCESS,
		  PVRDMA_WC_WITH_INVALIDATE },
		{ PVRDMA_WC_RDMA_READ, 77, 0 },		/* unknown status */
		{ PVRDMA_WC_MASKED_FETCH_ADD, PVRDMA_WC_GENERAL_ERR, 0 },
		{ PVRDMA_WC_BIND_MW, PVRDMA_WC_REM_ACCESS_ERR,
		  PVRDMA_WC_WITH_VLAN },
		{ PVRDMA_WC_RECV + 2, PVRDMA_WC_SUCCESS, 0 },	/* unknown op */
	};
	const int n = sizeof(c) / sizeof(c[0]);
	size_t i;
	int batch;

	for (i = 0; i < (size_t)n; i++) {
		for (batch = 0; batch < 2; batch++) {
			struct fake_cq *f = fake_cq_new(0);
			struct pvrdma_cqe cqe = {
				.wr_id = 1000 + i, .qp = 3, .opcode = c[i].op,
				.status = c[i].status, .byte_len = 17,
				.imm_data = 0x01020304, .src_qp = 0x99,
				.wc_flags = c[i].flags, .vendor_err = 5,
				.pkey_index = 6, .slid = 7, .sl = 8,
				.dlid_path_bits = 9,
			};
			struct ibv_wc got[4], want;

			/* slot 2 and 3 of 8: no wrap */
			f->rs.rx.prod_tail = f->rs.rx.cons_head = 2;
			f->cqes[2] = cqe;
			f->cqes[3] = cqe;
			f->cqes[3].wr_id++;
			f->rs.rx.prod_tail = 4;
			memset(got, 0xee, sizeof(got));
			memset(&want, 0xee, sizeof(want));
			pvrdma_cqe_to_wc(&cqe, 0x300, &want);
			if (batch) {
				assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq,
								4, got), 2);
			} else {
				assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq,
								1, got), 1);
				assert_int_equal(f->rs.rx.cons_head, 3);
				assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq,
								1, &got[1]),
						 1);
			}
			assert_same_wc(&got[0], &want);
			want.wr_id++;
			assert_same_wc(&got[1], &want);
			assert_int_equal(f->rs.rx.cons_head, 4);
			assert_int_equal(fake_cq_stats(&f->cq).cqes, 2);
			assert_int_equal(fake_cq_stats(&f->cq).polls,
					 batch ? 1 : 2);
			fake_cq_free(f);
		}
	}
}

/* A batch whose later CQE is not a plain one is decoded from its start by
 * the general path: the plain CQEs before it come out once, in order. */
static void test_poll_mixed_batch(void **state)
{
	struct fake_cq *f = fake_cq_new(0);
	struct ibv_wc wc[4], want;
	int i;

	for (i = 0; i < 3; i++)
		produce(f, 3, 20 + i);
	f->cqes[1].status = PVRDMA_WC_WR_FLUSH_ERR;
	f->cqes[2].opcode = PVRDMA_WC_LOCAL_INV;
	assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 4, wc), 3);
	for (i = 0; i < 3; i++) {
		pvrdma_cqe_to_wc(&f->cqes[i], 0x300, &want);
		assert_same_wc(&wc[i], &want);
	}
	assert_int_equal(wc[1].status, IBV_WC_WR_FLUSH_ERR);
	assert_int_equal(wc[2].opcode, IBV_WC_LOCAL_INV);
	assert_int_equal(f->rs.rx.cons_head, 3);
	assert_int_equal(fake_cq_stats(&f->cq).cqes, 3);
	fake_cq_free(f);
}

static void test_cqe_of_unknown_qp_is_dropped(void **state)
{
	struct fake_cq *f = fake_cq_new(0);
	struct ibv_wc wc[4];

	produce(f, 9, 1);	/* nobody's */
	produce(f, 3, 2);
	assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 4, wc), 1);
	assert_int_equal(wc[0].wr_id, 2);
	assert_int_equal(f->rs.rx.cons_head, 2);
	fake_cq_free(f);
}

static void test_remove_qp_keeps_others_in_order(void **state)
{
	struct fake_cq *f = fake_cq_new(0);
	struct ibv_wc wc[8];
	int i;

	f->rs.rx.prod_tail = f->rs.rx.cons_head = 13;
	/* a b a a b b a: wraps the index space */
	produce(f, 3, 1);
	produce(f, 4, 2);
	produce(f, 3, 3);
	produce(f, 3, 4);
	produce(f, 4, 5);
	produce(f, 4, 6);
	produce(f, 3, 7);

	pvrdma_cq_remove_qp(&f->cq, 3);
	assert_int_equal(pvrdma_ring_used(f->rs.rx.prod_tail,
					  f->rs.rx.cons_head, NCQE), 3);
	assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 8, wc), 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(wc[i].qp_num, 0x400);
	assert_int_equal(wc[0].wr_id, 2);
	assert_int_equal(wc[1].wr_id, 5);
	assert_int_equal(wc[2].wr_id, 6);
	fake_cq_free(f);
}

static void test_remove_all_and_none(void **state)
{
	struct fake_cq *f = fake_cq_new(0);
	struct ibv_wc wc[8];

	produce(f, 3, 1);
	produce(f, 3, 2);
	pvrdma_cq_remove_qp(&f->cq, 4);		/* none of b's */
	assert_int_equal(f->rs.rx.cons_head, 0);
	pvrdma_cq_remove_qp(&f->cq, 3);
	assert_int_equal(f->rs.rx.cons_head, 2);
	assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 8, wc), 0);
	fake_cq_free(f);
}

static void test_empty_poll_doorbell_spacing(void **state)
{
	struct fake_cq *f = fake_cq_new(3);
	struct ibv_wc wc[1];
	int i, rung = 0;

	assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 1, wc), 0);
	assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 1, wc), 0);
	assert_int_equal(f->doorbell, 0);
	assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 1, wc), 0);
	assert_int_equal(f->doorbell, (uint32_t)(5 | PVRDMA_DB_CQ_POLL));

	/* then every N/2 (1) more: 22 doorbells in 24 polls */
	for (i = 4; i <= 24; i++) {
		f->doorbell = 0;
		assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 1, wc), 0);
		if (f->doorbell)
			rung++;
	}
	assert_int_equal(rung, 21);
	assert_int_equal(fake_cq_stats(&f->cq).db_poll, 22);
	assert_int_equal(fake_cq_stats(&f->cq).empty_polls, 24);

	/* a successful poll restarts the count */
	f->doorbell = 0;
	produce(f, 3, 1);
	assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 1, wc), 1);
	assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 1, wc), 0);
	assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 1, wc), 0);
	assert_int_equal(f->doorbell, 0);
	assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 1, wc), 0);
	assert_int_equal(f->doorbell, (uint32_t)(5 | PVRDMA_DB_CQ_POLL));
	assert_int_equal(fake_cq_stats(&f->cq).polls, 28);
	assert_int_equal(fake_cq_stats(&f->cq).cqes, 1);
	fake_cq_free(f);
}

/* N = 8: at 8 empty polls, then every 4 more until one finds a CQE. */
static void test_empty_poll_doorbell_every_half(void **state)
{
	struct fake_cq *f = fake_cq_new(8);
	struct ibv_wc wc[1];
	int i;

	for (i = 1; i <= 40; i++) {
		f->doorbell = 0;
		assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 1, wc), 0);
		if (i >= 8 && !(i % 4))
			assert_int_equal(f->doorbell,
					 (uint32_t)(5 | PVRDMA_DB_CQ_POLL));
		else
			assert_int_equal(f->doorbell, 0);
	}
	assert_int_equal(fake_cq_stats(&f->cq).db_poll, 9);
	fake_cq_free(f);
}

static void test_empty_poll_never_with_0(void **state)
{
	struct fake_cq *f = fake_cq_new(0);
	struct ibv_wc wc[1];
	int i;

	for (i = 0; i < 1000; i++)
		assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 1, wc), 0);
	assert_int_equal(f->doorbell, 0);
	fake_cq_free(f);
}

static void test_arm_doorbells(void **state)
{
	struct fake_cq *f = fake_cq_new(0);

	f->ctx.cq_arm_dedup = false;	/* every request rings */
	assert_int_equal(pvrdma_req_notify_cq(&f->cq.ibv_cq, 0), 0);
	assert_int_equal(f->doorbell, 5 | PVRDMA_DB_CQ_ARM);
	f->doorbell = 0;
	assert_int_equal(pvrdma_req_notify_cq(&f->cq.ibv_cq, 0), 0);
	assert_int_equal(f->doorbell, 5 | PVRDMA_DB_CQ_ARM);
	assert_int_equal(pvrdma_req_notify_cq(&f->cq.ibv_cq, 1), 0);
	assert_int_equal(f->doorbell, 5 | PVRDMA_DB_CQ_ARM_SOL);
	fake_cq_free(f);
}

/* An armed CQ is not armed again until an event of it was consumed. */
static void test_arm_not_repeated(void **state)
{
	struct fake_cq *f = fake_cq_new(0);

	f->ctx.cq_arm_dedup = true;
	assert_int_equal(pvrdma_req_notify_cq(&f->cq.ibv_cq, 1), 0);
	assert_int_equal(f->doorbell, 5 | PVRDMA_DB_CQ_ARM_SOL);
	f->doorbell = 0;
	/* same scope again: still armed, no doorbell */
	assert_int_equal(pvrdma_req_notify_cq(&f->cq.ibv_cq, 1), 0);
	assert_int_equal(f->doorbell, 0);
	/* wider scope: must ring */
	assert_int_equal(pvrdma_req_notify_cq(&f->cq.ibv_cq, 0), 0);
	assert_int_equal(f->doorbell, 5 | PVRDMA_DB_CQ_ARM);
	f->doorbell = 0;
	/* ARM covers solicited-only */
	assert_int_equal(pvrdma_req_notify_cq(&f->cq.ibv_cq, 1), 0);
	assert_int_equal(pvrdma_req_notify_cq(&f->cq.ibv_cq, 0), 0);
	assert_int_equal(f->doorbell, 0);
	/* the event was consumed: the device disarmed, ring again */
	pvrdma_cq_event(&f->cq.ibv_cq);
	assert_int_equal(pvrdma_req_notify_cq(&f->cq.ibv_cq, 0), 0);
	assert_int_equal(f->doorbell, 5 | PVRDMA_DB_CQ_ARM);
	assert_int_equal(fake_cq_stats(&f->cq).db_arm, 2);
	assert_int_equal(fake_cq_stats(&f->cq).db_arm_sol, 1);
	assert_int_equal(fake_cq_stats(&f->cq).arms_skipped, 3);
	fake_cq_free(f);
}

/*
 * The device disarms a CQ when it raises the event, which may be long
 * before the application reads it: a CQE written since the last ARM means
 * the next request must ring, read event or not.
 */
static void test_arm_after_unread_event(void **state)
{
	struct fake_cq *f = fake_cq_new(0);

	f->ctx.cq_arm_dedup = true;
	assert_int_equal(pvrdma_req_notify_cq(&f->cq.ibv_cq, 0), 0);
	assert_int_equal(f->doorbell, 5 | PVRDMA_DB_CQ_ARM);
	f->doorbell = 0;
	produce(f, 3, 1);	/* the device raises the event here */
	assert_int_equal(pvrdma_req_notify_cq(&f->cq.ibv_cq, 0), 0);
	assert_int_equal(f->doorbell, 5 | PVRDMA_DB_CQ_ARM);
	f->doorbell = 0;
	/* nothing written since: still armed */
	assert_int_equal(pvrdma_req_notify_cq(&f->cq.ibv_cq, 0), 0);
	assert_int_equal(f->doorbell, 0);
	assert_int_equal(fake_cq_stats(&f->cq).arms_skipped, 1);
	fake_cq_free(f);
}

/* prod_tail back at the same index after 2 * cqe_cnt CQEs, all polled. */
static void test_arm_after_tail_wrapped(void **state)
{
	struct fake_cq *f = fake_cq_new(0);
	struct ibv_wc wc;
	unsigned int i;

	f->ctx.cq_arm_dedup = true;
	assert_int_equal(pvrdma_req_notify_cq(&f->cq.ibv_cq, 0), 0);
	f->doorbell = 0;
	for (i = 0; i < 2 * NCQE; i++) {
		produce(f, 3, i);
		assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 1, &wc), 1);
	}
	assert_int_equal(pvrdma_req_notify_cq(&f->cq.ibv_cq, 0), 0);
	assert_int_equal(f->doorbell, 5 | PVRDMA_DB_CQ_ARM);
	fake_cq_free(f);
}

static void test_corrupt_index(void **state)
{
	struct fake_cq *f = fake_cq_new(0);
	struct ibv_wc wc[1];

	f->rs.rx.prod_tail = 99;
	assert_int_equal(pvrdma_poll_cq(&f->cq.ibv_cq, 1, wc), -EIO);
	assert_int_equal(f->rs.rx.cons_head, 0);
	fake_cq_free(f);
}

static void test_qp_table_refuses_collision(void **state)
{
	struct fake_cq *f = fake_cq_new(0);
	struct pvrdma_qp other = { .qp_handle = 3 };
	struct pvrdma_qp big = { .qp_handle = 16 };

	assert_int_equal(pvrdma_qp_table_add(&f->ctx, &other), EEXIST);
	assert_int_equal(pvrdma_qp_table_add(&f->ctx, &big), EEXIST);
	assert_ptr_equal(pvrdma_qp_lookup(&f->ctx, 3), &f->qp_a);
	pvrdma_qp_table_del(&f->ctx, &other);	/* not its slot: no-op */
	assert_ptr_equal(pvrdma_qp_lookup(&f->ctx, 3), &f->qp_a);
	pvrdma_qp_table_del(&f->ctx, &f->qp_a);
	assert_null(pvrdma_qp_lookup(&f->ctx, 3));
	fake_cq_free(f);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_poll_in_order_with_wrap),
		cmocka_unit_test(test_poll_decodes_as_cqe_to_wc),
		cmocka_unit_test(test_poll_mixed_batch),
		cmocka_unit_test(test_cqe_of_unknown_qp_is_dropped),
		cmocka_unit_test(test_remove_qp_keeps_others_in_order),
		cmocka_unit_test(test_remove_all_and_none),
		cmocka_unit_test(test_empty_poll_doorbell_spacing),
		cmocka_unit_test(test_empty_poll_doorbell_every_half),
		cmocka_unit_test(test_empty_poll_never_with_0),
		cmocka_unit_test(test_arm_not_repeated),
		cmocka_unit_test(test_arm_after_unread_event),
		cmocka_unit_test(test_arm_after_tail_wrapped),
		cmocka_unit_test(test_arm_doorbells),
		cmocka_unit_test(test_corrupt_index),
		cmocka_unit_test(test_qp_table_refuses_collision),
		cmocka_unit_test(test_create_cq_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
