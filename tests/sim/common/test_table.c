// SPDX-License-Identifier: BSD-2-Clause
/* Number tables: explicit numbers, growth, and the rotating allocator. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "common.h"

static void test_put_get_del(void **state)
{
	struct sim_table t = { 0 };
	int a, b;

	assert_int_equal(sim_table_put(&t, 5, &a), 0);
	assert_int_equal(sim_table_put(&t, 5, &b), EEXIST);
	assert_ptr_equal(sim_table_get(&t, 5), &a);
	assert_null(sim_table_get(&t, 4));
	assert_null(sim_table_get(&t, 123456));
	sim_table_del(&t, 5);
	assert_null(sim_table_get(&t, 5));
	free(t.slot);
}

static void test_put_grows_and_keeps_objects(void **state)
{
	struct sim_table t = { 0 };
	static int obj[300];

	for (uint32_t i = 0; i < 300; i++)
		assert_int_equal(sim_table_put(&t, i * 7, &obj[i]), 0);
	for (uint32_t i = 0; i < 300; i++)
		assert_ptr_equal(sim_table_get(&t, i * 7), &obj[i]);
	free(t.slot);
}

static void test_alloc_rotates_and_wraps(void **state)
{
	struct sim_table t = { 0 };
	uint32_t next = 0, idx;
	int a, b, c, d;

	assert_int_equal(sim_table_alloc(&t, 2, 4, &next, &a, &idx), 0);
	assert_int_equal(idx, 2);
	assert_int_equal(sim_table_alloc(&t, 2, 4, &next, &b, &idx), 0);
	assert_int_equal(idx, 3);
	/* a number just freed is not handed out again at once */
	sim_table_del(&t, 2);
	assert_int_equal(sim_table_alloc(&t, 2, 4, &next, &c, &idx), 0);
	assert_int_equal(idx, 4);
	/* wraps to the freed number, then the range is full */
	assert_int_equal(sim_table_alloc(&t, 2, 4, &next, &d, &idx), 0);
	assert_int_equal(idx, 2);
	assert_int_equal(sim_table_alloc(&t, 2, 4, &next, &d, &idx), ENOMEM);
	assert_ptr_equal(sim_table_get(&t, 3), &b);
	free(t.slot);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_del),
		cmocka_unit_test(test_put_grows_and_keeps_objects),
		cmocka_unit_test(test_alloc_rotates_and_wraps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
