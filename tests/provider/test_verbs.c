// SPDX-License-Identifier: BSD-2-Clause
/*
 * verbs.c: the firmware version as ibv_query_device prints it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>

#include "pvrdma.h"

static void test_fw_ver(void **state)
{
	char buf[64];

	pvrdma_format_fw_ver(buf, sizeof(buf),
			     (3ull << 32) | (14ull << 16) | 7);
	assert_string_equal(buf, "3.14.007");
	pvrdma_format_fw_ver(buf, sizeof(buf), 0);
	assert_string_equal(buf, "0.0.000");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fw_ver),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
