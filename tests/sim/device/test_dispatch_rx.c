// SPDX-License-Identifier: BSD-2-Clause
/*
 * A doorbell the application traps does the receive work pending on the
 * adapter's fabric, not only a POLL doorbell: our provider rings none on
 * an empty poll, and the receive side must not wait for the device thread.
 *
 * A CQ arm always runs on the trapping thread (it waits for dev->lock), and
 * it runs what earlier traps queued first: when it returns, the SEND rung
 * before it has left the requester, and its packet has been read and
 * executed by the responder, so the receive CQE is already in the ring.
 * Without the inline receive, the CQE would only appear once the device
 * thread got around to it; no waiting happens between the arm and the
 * check below.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ring.h"
#include "engine_harness.h"

static struct harness H;

static int setup(void **unused)
{
	harness_init(&H);
	harness_qp_pair(&H, IBV_QPT_RC);
	return 0;
}

static int teardown(void **unused)
{
	harness_fini(&H);
	return 0;
}

static void arm(struct h_cq *c)
{
	engine_doorbell(&H.uctx, PVRDMA_UAR_CQ_OFFSET,
			SIM_UAR_CQ_ARM | c->cq.cqn);
}

/* Takes the CQE the ring holds now: it must be there already. */
static void take_now(struct h_cq *c, struct pvrdma_cqe *out)
{
	void *e = NULL;

	assert_int_equal(sim_ring_peek(&c->cq.ring, &e), SIM_RING_READY);
	memcpy(out, e, sizeof(*out));
	sim_ring_consume(&c->cq.ring);
}

static void test_arm_trap_receives_what_the_fabric_holds(void **unused)
{
	struct pvrdma_cqe c;
	uint64_t i;

	for (i = 0; i < 32; i++) {
		post_recv(&H.b, 100 + i, H.buf_b, 64, H.mr_b.lkey);
		post_send(&H.a, &(struct send_args){
			.wr_id = i, .opcode = PVRDMA_WR_SEND,
			.addr = H.buf_a, .len = 16, .lkey = H.mr_a.lkey,
			.flags = IBV_SEND_SIGNALED });
		arm(&H.b.cq);
		take_now(&H.b.cq, &c);
		assert_int_equal(c.wr_id, 100 + i);
		assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
		assert_int_equal(c.byte_len, 16);
		/* The ACK may be read by the device thread: wait for it. */
		poll_one(&H.a.cq, &c);
		assert_int_equal(c.wr_id, i);
		assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
	}
}

/* The trap reads the whole adapter's fabric, not only what concerns the
 * CQ it arms: an arm of the sender's CQ completes the receiver's WQE. */
static void test_any_arm_receives_for_every_qp(void **unused)
{
	struct pvrdma_cqe c;
	uint64_t i;

	for (i = 0; i < 8; i++)
		post_recv(&H.b, 200 + i, H.buf_b, 64, H.mr_b.lkey);
	for (i = 0; i < 8; i++) {
		post_send(&H.a, &(struct send_args){
			.wr_id = i, .opcode = PVRDMA_WR_SEND,
			.addr = H.buf_a, .len = 8, .lkey = H.mr_a.lkey,
			.flags = IBV_SEND_SIGNALED });
		arm(&H.a.cq);
		take_now(&H.b.cq, &c);
		assert_int_equal(c.wr_id, 200 + i);
		assert_int_equal(c.status, PVRDMA_WC_SUCCESS);
		poll_one(&H.a.cq, &c);
		assert_int_equal(c.wr_id, i);
	}
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_arm_trap_receives_what_the_fabric_holds),
		T(test_any_arm_receives_for_every_qp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
