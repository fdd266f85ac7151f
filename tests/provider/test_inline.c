// SPDX-License-Identifier: BSD-2-Clause
/*
 * inline.c: inline data goes through the bounce slots; the user's buffer
 * and lkey are not referenced.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>

#include "fake_queues.h"

/* Inline: the data is in the slot, the user's buffer and lkey are not
 * referenced, and the user may scribble right after the post. */
static void test_inline_bounce(void **state)
{
	struct fake_qp *f = fake_qp_new(IBV_QPT_RC, 4, 2);
	uint8_t slots[4 * 64], a[10], b[6];
	struct ibv_sge sg[2] = { { (uintptr_t)a, 10, 0xbad },
				 { (uintptr_t)b, 6, 0xbad } };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = sg, .num_sge = 2,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_INLINE }, *bad;
	struct pvrdma_sge *sge;

	f->qp.max_inline_data = 64;
	f->qp.inl.slots = slots;
	f->qp.inl.slot_shift = 6;
	f->qp.inl.lkey = 0x77;
	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	fake_sq_advance(f, 2);				/* slot 2 */
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, &wr, &bad), 0);
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	sge = sq_sge(f, 2);
	assert_int_equal(sq_hdr(f, 2)->num_sge, 1);
	assert_int_equal(sq_hdr(f, 2)->send_flags & IBV_SEND_INLINE, 0);
	assert_ptr_equal((void *)(uintptr_t)sge->addr, slots + 2 * 64);
	assert_int_equal(sge->length, 16);
	assert_int_equal(sge->lkey, 0x77);
	assert_memory_equal(slots + 128, "aaaaaaaaaabbbbbb", 16);
	assert_int_equal(fake_wq_stats(&f->qp.sq).inline_wqes, 1);

	/* too long, or inline on a read: EINVAL */
	sg[0].length = 60;
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, &wr, &bad), EINVAL);
	sg[0].length = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	assert_int_equal(pvrdma_post_send(&f->qp.ibv_qp, &wr, &bad), EINVAL);

	/* the wr_* form, into the slot of the next WQE (slot 3) */
	pvrdma_qp_ex_init_ops(&f->qp, IBV_QP_EX_WITH_SEND);
	memset(a, 'z', sizeof(a));
	ibv_wr_start(&f->qp.vqp.qp_ex);
	ibv_wr_send(&f->qp.vqp.qp_ex);
	ibv_wr_set_inline_data(&f->qp.vqp.qp_ex, a, 10);
	assert_int_equal(ibv_wr_complete(&f->qp.vqp.qp_ex), 0);
	assert_ptr_equal((void *)(uintptr_t)sq_sge(f, 3)->addr,
			 slots + 3 * 64);
	assert_memory_equal(slots + 192, "zzzzzzzzzz", 10);
	fake_qp_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inline_bounce),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
