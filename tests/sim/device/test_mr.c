// SPDX-License-Identifier: BSD-2-Clause
/* Memory checks of the device: key, PD, bounds, access rights; pages an
 * MR keeps when the application gives them up. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "host.h"

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

static bool all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return false;
	return true;
}

/*
 * The application unmaps the middle page of a registered range and maps a
 * new one there: the MR keeps the old page's content, an access across
 * the three pages becomes three pieces, and nothing the device writes
 * reaches the new page.
 */
static void test_given_up_pages(void **unused)
{
	const size_t pg = SIM_PAGE_SIZE;
	struct sim_dev *d = &sim_devs[0];
	struct sim_mr mr;
	struct iovec iov[4];
	uint8_t *base, *p;
	int i, n;

	sim_global.num_adapters = 1;
	memset(d, 0, sizeof(*d));
	sim_dev_lock_init(d);
	base = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(base != MAP_FAILED);
	for (i = 0; i < 3; i++)
		memset(base + i * pg, 'a' + i, pg);
	mr = (struct sim_mr){
		.handle = 0x300, .pd = &pd1, .addr = (uintptr_t)base + 100,
		.iova = 0x40000 + 100, .length = 3 * pg - 200,
		.lkey = 0x300, .rkey = 0x300,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	assert_int_equal(sim_table_put(&d->mrs, mr.handle, &mr), 0);
	sim_mr_pin_track(&mr);

	/* an unaligned address: the call fails, nothing is given up */
	sim_mr_pin_give_up(base + pg + 1, pg);
	assert_null(mr.shadow);
	sim_mr_pin_give_up(base + pg, pg);
	assert_int_equal(munmap(base + pg, pg), 0);
	assert_ptr_equal(mmap(base + pg, pg, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
			 base + pg);
	memset(base + pg, 'z', pg);

	n = 4;
	assert_int_equal(sim_mr_map(d, &pd1, 0x300, false, mr.addr,
				    mr.length, IBV_ACCESS_LOCAL_WRITE, iov,
				    &n), SIM_ACCESS_OK);
	assert_int_equal(n, 3);
	assert_ptr_equal(iov[0].iov_base, base + 100);
	assert_int_equal(iov[0].iov_len, pg - 100);
	assert_int_equal(iov[1].iov_len, pg);
	assert_true(iov[1].iov_base != base + pg);
	assert_true(all_bytes(iov[1].iov_base, pg, 'b'));
	assert_ptr_equal(iov[2].iov_base, base + 2 * pg);
	assert_int_equal(iov[2].iov_len, pg - 100);
	/* the device writes the kept page, never the new one */
	memset(iov[1].iov_base, 'q', pg);
	assert_true(all_bytes(base + pg, pg, 'z'));

	/* the same through the rkey and the I/O address */
	n = 4;
	assert_int_equal(sim_mr_map(d, &pd1, 0x300, true, 0x40000 + pg, pg,
				    IBV_ACCESS_REMOTE_READ, iov, &n),
			 SIM_ACCESS_OK);
	assert_int_equal(n, 1);
	assert_true(all_bytes(iov[0].iov_base, pg, 'q'));

	/* too many pieces for the caller, or for one pointer */
	n = 2;
	assert_int_equal(sim_mr_map(d, &pd1, 0x300, false, mr.addr,
				    mr.length, 0, iov, &n), SIM_ACCESS_FAULT);
	assert_int_equal(sim_mr_check(d, &pd1, 0x300, false, mr.addr,
				      mr.length, 0, &p), SIM_ACCESS_FAULT);
	assert_int_equal(sim_mr_check(d, &pd1, 0x300, false,
				      (uintptr_t)base + pg + 8, 8, 0, &p),
			 SIM_ACCESS_OK);
	assert_true(p != base + pg + 8 && *p == 'q');

	/* giving the page up again keeps what the MR has */
	sim_mr_pin_give_up(base + pg, pg);
	assert_int_equal(sim_mr_check(d, &pd1, 0x300, false,
				      (uintptr_t)base + pg, 1, 0, &p),
			 SIM_ACCESS_OK);
	assert_int_equal(*p, 'q');

	sim_table_del(&d->mrs, mr.handle);
	sim_mr_pin_release(&mr);
	assert_null(mr.shadow);
	free(d->mrs.slot);
	munmap(base, 3 * pg);
}

static bool is_uar(const void *addr)
{
	return sim_uar_lookup(addr) != NULL;
}

/* A doorbell page is device memory: it never pins, whatever the access. */
static void test_pin_check_uar(void **unused)
{
	struct sim_ucontext uctx = { 0 };
	uint8_t *uar;

	sim_kernel_init(&(struct sim_kernel_host){ .is_uar = is_uar });
	uar = sim_uar_map(&uctx, NULL);

	assert_true(uar != MAP_FAILED);
	assert_int_equal(sim_mr_pin_check((uintptr_t)uar, 8, 0), -EFAULT);
	assert_int_equal(sim_mr_pin_check((uintptr_t)buf, sizeof(buf),
					  IBV_ACCESS_LOCAL_WRITE), 0);
	sim_uar_unmap(&uctx, uar);
	assert_int_equal(sim_mr_pin_check((uintptr_t)buf, sizeof(buf), 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_local_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remote_uses_iova, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_key_and_pd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_access_rights, setup, teardown),
		cmocka_unit_test(test_given_up_pages),
		cmocka_unit_test(test_pin_check_uar),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
