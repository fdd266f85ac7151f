// SPDX-License-Identifier: BSD-2-Clause
/*
 * Doorbells that come before the device started (it starts with the first
 * QP): an SRQ filled and a CQ armed and polled right after their creation
 * are taken as the device would take them, not a crash. A process of its
 * own, so that no engine runs yet.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ring.h"

static struct sim_dev dev;
static struct sim_ucontext uctx;
static struct sim_cq cq;
static struct sim_srq srq;
static struct pvrdma_ring_state cq_rs, srq_rs;
static struct pvrdma_cqe cqes[16];
static uint8_t srq_elems[16 * 128];

static void test_doorbells_before_the_first_qp(void **unused)
{
	uint32_t handle, next = 1;

	sim_dev_lock_init(&dev);
	dev.index = 1;
	uctx.dev = &dev;
	uctx.async_fd_dev = -1;
	cq.uctx = &uctx;
	cq.ring = (struct sim_ring){ .state = &cq_rs.rx,
				     .elems = (uint8_t *)cqes, .nelems = 16,
				     .elem_size = sizeof(cqes[0]) };
	srq.uctx = &uctx;
	srq.ring = (struct sim_ring){ .state = &srq_rs.rx,
				      .elems = srq_elems, .nelems = 16,
				      .elem_size = 128, .max_sge = 4 };
	pthread_mutex_lock(&dev.lock);
	assert_int_equal(sim_table_alloc(&dev.cqs, 1, 1000, &next, &cq, &handle), 0);
	cq.cqn = handle;
	assert_int_equal(sim_table_alloc(&dev.srqs, 1, 1000, &next, &srq, &handle), 0);
	srq.srqn = handle;
	pthread_mutex_unlock(&dev.lock);

	/* A receive posted to the SRQ: the doorbell only says "look". */
	sim_ring_store(&srq_rs.rx.prod_tail, 1);
	engine_doorbell(&uctx, PVRDMA_UAR_SRQ_OFFSET,
			SIM_UAR_SRQ_RECV | srq.srqn);
	/* The application polls the empty CQ, then arms it. */
	engine_doorbell(&uctx, PVRDMA_UAR_CQ_OFFSET,
			SIM_UAR_CQ_POLL | cq.cqn);
	engine_doorbell(&uctx, PVRDMA_UAR_CQ_OFFSET, SIM_UAR_CQ_ARM | cq.cqn);

	pthread_mutex_lock(&dev.lock);
	assert_int_equal(cq.armed, SIM_CQ_ARM_NEXT);
	assert_int_equal(atomic_load(&dev.stats.db_bad), 0);
	assert_int_equal(atomic_load(&dev.stats.db_srq_recv), 1);
	pthread_mutex_unlock(&dev.lock);
	/* The receive waits in the ring for a message. */
	assert_int_equal(sim_ring_count(&srq.ring), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doorbells_before_the_first_qp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
