// SPDX-License-Identifier: BSD-2-Clause
/* Handle tables: lowest free handle, a floor for the first one, growth. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "sim.h"

static void test_lowest_free_and_reuse(void **state)
{
	struct sim_table t = { 0 };
	int a, b, c;
	uint32_t h;

	assert_int_equal(sim_table_add(&t, &a, &h), 0);
	assert_int_equal(h, 0);
	assert_int_equal(sim_table_add(&t, &b, &h), 0);
	assert_int_equal(h, 1);
	sim_table_del(&t, 0);
	assert_null(sim_table_get(&t, 0));
	assert_int_equal(sim_table_add(&t, &c, &h), 0);
	assert_int_equal(h, 0);
	assert_ptr_equal(sim_table_get(&t, 0), &c);
	assert_ptr_equal(sim_table_get(&t, 1), &b);
	assert_null(sim_table_get(&t, 12345));
	free(t.slot);
}

static void test_first_beyond_initial_size(void **state)
{
	struct sim_table t = { .first = 100 };
	int a;
	uint32_t h;

	assert_int_equal(sim_table_add(&t, &a, &h), 0);
	assert_int_equal(h, 100);
	assert_ptr_equal(sim_table_get(&t, 100), &a);
	free(t.slot);
}

static void test_growth_keeps_objects(void **state)
{
	struct sim_table t = { .first = 2 };
	static int obj[300];
	uint32_t h;

	for (int i = 0; i < 300; i++) {
		assert_int_equal(sim_table_add(&t, &obj[i], &h), 0);
		assert_int_equal(h, (uint32_t)i + 2);
	}
	for (int i = 0; i < 300; i++)
		assert_ptr_equal(sim_table_get(&t, (uint32_t)i + 2), &obj[i]);
	free(t.slot);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lowest_free_and_reuse),
		cmocka_unit_test(test_first_beyond_initial_size),
		cmocka_unit_test(test_growth_keeps_objects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
