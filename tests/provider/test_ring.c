// SPDX-License-Identifier: BSD-2-Clause
/* Ring index arithmetic: generation bit, wrap, full/empty. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "ring.h"

static void test_valid_range(void **state)
{
	assert_true(pvrdma_ring_idx_valid(0, 8));
	assert_true(pvrdma_ring_idx_valid(15, 8));	/* slot 7, gen 1 */
	assert_false(pvrdma_ring_idx_valid(16, 8));
	assert_false(pvrdma_ring_idx_valid(0xffffffffu, 8));
}

static void test_next_wraps_twice_the_size(void **state)
{
	assert_int_equal(pvrdma_ring_next(6, 8), 7);
	assert_int_equal(pvrdma_ring_next(7, 8), 8);	/* gen flips */
	assert_int_equal(pvrdma_ring_slot(8, 8), 0);
	assert_int_equal(pvrdma_ring_next(15, 8), 0);	/* back to gen 0 */
	assert_int_equal(pvrdma_ring_prev(0, 8), 15);
	assert_int_equal(pvrdma_ring_add(14, 3, 8), 1);
}

static void test_full_and_empty(void **state)
{
	/* empty: equal indices, any generation */
	assert_int_equal(pvrdma_ring_used(5, 5, 8), 0);
	assert_false(pvrdma_ring_full(5, 5, 8));
	/* full: same slot, other generation */
	assert_true(pvrdma_ring_full(13, 5, 8));
	assert_true(pvrdma_ring_full(5, 13, 8));
	assert_int_equal(pvrdma_ring_used(13, 5, 8), 8);
	assert_int_equal(pvrdma_ring_used(5, 13, 8), 8);
	/* across the wrap of the index space */
	assert_int_equal(pvrdma_ring_used(1, 14, 8), 3);
	assert_false(pvrdma_ring_full(1, 14, 8));
}

static void test_fill_whole_ring_from_any_start(void **state)
{
	uint32_t n = 4, start, tail, i;

	for (start = 0; start < 2 * n; start++) {
		tail = start;
		for (i = 0; i < n; i++) {
			assert_false(pvrdma_ring_full(tail, start, n));
			tail = pvrdma_ring_next(tail, n);
		}
		assert_true(pvrdma_ring_full(tail, start, n));
		assert_int_equal(pvrdma_ring_used(tail, start, n), n);
	}
}

static void test_one_element_ring(void **state)
{
	assert_true(pvrdma_ring_idx_valid(1, 1));
	assert_false(pvrdma_ring_idx_valid(2, 1));
	assert_int_equal(pvrdma_ring_slot(1, 1), 0);
	assert_true(pvrdma_ring_full(1, 0, 1));
	assert_int_equal(pvrdma_ring_next(1, 1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_range),
		cmocka_unit_test(test_next_wraps_twice_the_size),
		cmocka_unit_test(test_full_and_empty),
		cmocka_unit_test(test_fill_whole_ring_from_any_start),
		cmocka_unit_test(test_one_element_ring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
