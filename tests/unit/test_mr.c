// SPDX-License-Identifier: BSD-2-Clause
/* Memory checks of the device: key, PD, bounds, access rights. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sim.h"

static uint8_t buf[4096];
static struct sim_dev dev;
static struct sim_pd pd1, pd2;
static struct sim_mr mr_rw, mr_ro;

static int setup(void **unused)
{
	memset(&dev, 0, sizeof(dev));
	dev.index = 0;
	mr_rw = (struct sim_mr){
		.pd = &pd1, .addr = (uintptr_t)buf, .iova = 0x10000,
		.length = 1024, .lkey = 0x100, .rkey = 0x200,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ,
	};
	mr_ro = (struct sim_mr){
		.pd = &pd1, .addr = (uintptr_t)buf + 2048, .iova = 0x20000,
		.length = 1024, .lkey = 0x101, .rkey = 0x201, .access = 0,
	};
	mr_rw.handle = mr_rw.lkey;
	assert_int_equal(sim_table_put(&dev.mrs, mr_rw.handle, &mr_rw), 0);
	mr_ro.handle = mr_ro.lkey;
	assert_int_equal(sim_table_put(&dev.mrs, mr_ro.handle, &mr_ro), 0);
	return 0;
}

static int teardown(void **unused)
{
	free(dev.mrs.slot);
	return 0;
}

static void test_local_ok(void **unused)
{
	uint8_t *p;

	assert_int_equal(sim_mr_check(&dev, &pd1, 0x100, false,
				      (uintptr_t)buf + 10, 100,
				      IBV_ACCESS_LOCAL_WRITE, &p),
			 SIM_ACCESS_OK);
	assert_ptr_equal(p, buf + 10);
	/* Local read needs no right at all. */
	assert_int_equal(sim_mr_check(&dev, &pd1, 0x101, false,
				      (uintptr_t)buf + 2048, 1024, 0, &p),
			 SIM_ACCESS_OK);
	assert_ptr_equal(p, buf + 2048);
}

static void test_remote_uses_iova(void **unused)
{
	uint8_t *p;

	assert_int_equal(sim_mr_check(&dev, &pd1, 0x200, true, 0x10000 + 1000,
				      24, IBV_ACCESS_REMOTE_WRITE, &p),
			 SIM_ACCESS_OK);
	assert_ptr_equal(p, buf + 1000);
	/* The lkey is no rkey, and the rkey is no lkey. */
	assert_int_equal(sim_mr_check(&dev, &pd1, 0x100, true, 0x10000, 8,
				      IBV_ACCESS_REMOTE_WRITE, &p),
			 SIM_ACCESS_BAD_KEY);
	assert_int_equal(sim_mr_check(&dev, &pd1, 0x200, false,
				      (uintptr_t)buf, 8, 0, &p),
			 SIM_ACCESS_BAD_KEY);
}

static void test_bad_key_and_pd(void **unused)
{
	uint8_t *p = buf;

	assert_int_equal(sim_mr_check(&dev, &pd1, 0x999, false,
				      (uintptr_t)buf, 8, 0, &p),
			 SIM_ACCESS_BAD_KEY);
	assert_null(p);
	assert_int_equal(sim_mr_check(&dev, &pd2, 0x100, false,
				      (uintptr_t)buf, 8, 0, &p),
			 SIM_ACCESS_BAD_KEY);
	/* A deregistered MR is gone, even after a cached hit. */
	assert_int_equal(sim_mr_check(&dev, &pd1, 0x101, false,
				      (uintptr_t)buf + 2048, 8, 0, &p),
			 SIM_ACCESS_OK);
	sim_table_del(&dev.mrs, mr_ro.handle);
	assert_int_equal(sim_mr_check(&dev, &pd1, 0x101, false,
				      (uintptr_t)buf + 2048, 8, 0, &p),
			 SIM_ACCESS_BAD_KEY);
}

static void test_bounds(void **unused)
{
	uint8_t *p;

	assert_int_equal(sim_mr_check(&dev, &pd1, 0x100, false,
				      (uintptr_t)buf + 1000, 24, 0, &p),
			 SIM_ACCESS_OK);
	assert_int_equal(sim_mr_check(&dev, &pd1, 0x100, false,
				      (uintptr_t)buf + 1000, 25, 0, &p),
			 SIM_ACCESS_BAD_RANGE);
	assert_int_equal(sim_mr_check(&dev, &pd1, 0x100, false,
				      (uintptr_t)buf - 1, 2, 0, &p),
			 SIM_ACCESS_BAD_RANGE);
	assert_int_equal(sim_mr_check(&dev, &pd1, 0x200, true, 0x10000 + 8,
				      UINT64_MAX - 4, IBV_ACCESS_REMOTE_READ,
				      &p),
			 SIM_ACCESS_BAD_RANGE);
}

static void test_access_rights(void **unused)
{
	uint8_t *p;

	assert_int_equal(sim_mr_check(&dev, &pd1, 0x200, true, 0x10000, 8,
				      IBV_ACCESS_REMOTE_ATOMIC, &p),
			 SIM_ACCESS_DENIED);
	assert_int_equal(sim_mr_check(&dev, &pd1, 0x201, true, 0x20000, 8,
				      IBV_ACCESS_REMOTE_READ, &p),
			 SIM_ACCESS_DENIED);
	assert_int_equal(sim_mr_check(&dev, &pd1, 0x101, false,
				      (uintptr_t)buf + 2048, 8,
				      IBV_ACCESS_LOCAL_WRITE, &p),
			 SIM_ACCESS_DENIED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_local_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remote_uses_iova, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_key_and_pd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_access_rights, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
