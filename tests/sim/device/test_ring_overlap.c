// SPDX-License-Identifier: BSD-2-Clause
/*
 * Rings whose state the device's own writes rewrite: a QP whose ring-state
 * page lies in its CQ's buffer has its receive ring's indices in the very
 * words of the CQ's ring (offset 8 of the page). Flushing a receive then
 * consumes a CQ entry and produces one, so the receive ring never empties.
 * The device must stop after a ring's worth of WQEs, never spin (with the
 * device lock held) forever. An alarm turns a hang into a failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "ring.h"
#include "engine_harness.h"

static struct harness H;

static void test_flush_with_overlapping_ring_state(void **unused)
{
	struct pvrdma_rq_wqe_hdr *w;

	harness_init(&H);
	harness_qp_pair(&H, IBV_QPT_RC);
	alarm(60);

	harness_lock(&H);
	/* What the device sees when sbuf_addr is the CQ's buffer. */
	H.a.qp.sq.state = &H.a.cq.rs.tx;
	H.a.qp.rq.state = &H.a.cq.rs.rx;
	/* As many receive WQEs as CQEs, so both rings wrap alike (the
	 * harness's RQ memory holds 64 of 32 bytes). */
	H.a.qp.rq.nelems = H_CQ_N;
	H.a.qp.rq.elem_size = 32;
	H.a.qp.rq.max_sge = 1;
	/* One receive WQE posted on that ring. */
	w = sim_ring_elem(&H.a.qp.rq, 0);
	memset(w, 0, sizeof(*w));
	w->wr_id = 42;
	__atomic_store_n(&H.a.cq.rs.rx.prod_tail, 1, __ATOMIC_RELEASE);
	h_modify(&H, &H.a.qp, IBV_QPS_ERR);
	harness_unlock(&H);

	assert_int_equal(H.a.qp.attr.state, IBV_QPS_ERR);
	alarm(0);
	/* The harness's teardown of a QP whose rings are its CQ's. */
	H.a.qp.sq.state = &H.a.rs.tx;
	H.a.qp.rq.state = &H.a.rs.rx;
	H.a.qp.rq.nelems = H_RQ_N;
	H.a.qp.rq.elem_size = H_RQ_ELEM;
	harness_fini(&H);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flush_with_overlapping_ring_state),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
