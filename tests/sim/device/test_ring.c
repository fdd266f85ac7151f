// SPDX-License-Identifier: BSD-2-Clause
/* Ring index rules of the device, above all at wrap-around. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ring.h"

#define N 4u

struct test_ring {
	struct pvrdma_ring state;
	uint32_t elems[N];
	struct sim_ring ring;
};

static void test_ring_init(struct test_ring *t)
{
	t->state.prod_tail = 0;
	t->state.cons_head = 0;
	t->ring.state = &t->state;
	t->ring.elems = (uint8_t *)t->elems;
	t->ring.nelems = N;
	t->ring.elem_size = sizeof(uint32_t);
}

static void test_index_validity(void **unused)
{
	assert_true(sim_ring_idx_valid(0, N));
	assert_true(sim_ring_idx_valid(2 * N - 1, N));
	assert_false(sim_ring_idx_valid(2 * N, N));
	assert_false(sim_ring_idx_valid(0x80000000u, N));
	assert_int_equal(sim_ring_idx_next(2 * N - 1, N), 0);
	assert_int_equal(sim_ring_idx_next(N - 1, N), N);
	assert_int_equal(sim_ring_slot(N + 1, N), 1);
}

static void test_empty_full(void **unused)
{
	assert_true(sim_ring_is_empty(3, 3));
	assert_false(sim_ring_is_full(3, 3, N));
	/* Same slot, other generation: full, not empty. */
	assert_true(sim_ring_is_full(3 ^ N, 3, N));
	assert_false(sim_ring_is_empty(3 ^ N, 3));
	assert_int_equal(sim_ring_used(3 ^ N, 3, N), N);
	/* Tail wrapped past 2N, head not yet. */
	assert_int_equal(sim_ring_used(1, 2 * N - 1, N), 2);
}

/* Produce and consume 3N elements through a ring of N: every element comes
 * out once, in order, and full/empty are reported at each generation. */
static void test_produce_consume_wrap(void **unused)
{
	struct test_ring t;
	uint32_t produced = 0, consumed = 0;
	void *e;
	int round;

	test_ring_init(&t);
	for (round = 0; round < 3; round++) {
		while (sim_ring_reserve(&t.ring, &e) == SIM_RING_READY) {
			*(uint32_t *)e = produced++;
			sim_ring_produce(&t.ring);
		}
		assert_int_equal(produced, (round + 1) * N);
		assert_int_equal(sim_ring_count(&t.ring), N);
		assert_int_equal(sim_ring_reserve(&t.ring, &e), SIM_RING_NONE);
		while (sim_ring_peek(&t.ring, &e) == SIM_RING_READY) {
			assert_int_equal(*(uint32_t *)e, consumed);
			consumed++;
			sim_ring_consume(&t.ring);
		}
		assert_int_equal(consumed, produced);
		assert_int_equal(sim_ring_count(&t.ring), 0);
	}
	/* 3N increments modulo 2N. */
	assert_int_equal(t.state.prod_tail, (3 * N) % (2 * N));
	assert_int_equal(t.state.cons_head, t.state.prod_tail);
}

static void test_invalid_index_refused(void **unused)
{
	struct test_ring t;
	void *e;

	test_ring_init(&t);
	t.state.prod_tail = 2 * N;
	assert_int_equal(sim_ring_peek(&t.ring, &e), SIM_RING_INVALID);
	assert_int_equal(sim_ring_reserve(&t.ring, &e), SIM_RING_INVALID);
	assert_int_equal(sim_ring_count(&t.ring), -1);
	t.state.prod_tail = 0;
	t.state.cons_head = 0xffffffffu;
	assert_int_equal(sim_ring_peek(&t.ring, &e), SIM_RING_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index_validity),
		cmocka_unit_test(test_empty_full),
		cmocka_unit_test(test_produce_consume_wrap),
		cmocka_unit_test(test_invalid_index_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
