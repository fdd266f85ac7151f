// SPDX-License-Identifier: BSD-2-Clause
/*
 * The device's accesses to application memory (sim/device/dma.c): copies that
 * report a page that is gone or not accessible instead of faulting, and
 * the pin check of a registration.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "common.h"

#define PG	SIM_PAGE_SIZE

static uint8_t *map(int prot)
{
	uint8_t *p = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	memset(p, 0x11, 2 * PG);
	assert_int_equal(mprotect(p, 2 * PG, prot), 0);
	return p;
}

static void test_copies(void **unused)
{
	uint8_t *rw = map(PROT_READ | PROT_WRITE), *none = map(PROT_NONE);
	uint8_t *ro = map(PROT_READ), buf[64];
	struct iovec v[2] = {
		{ .iov_base = rw, .iov_len = 16 },
		{ .iov_base = rw + PG, .iov_len = 16 },
	};

	/* gather / scatter, bounded by len */
	memset(buf, 0x22, sizeof(buf));
	assert_true(sim_app_write(v, 2, buf, 24));
	assert_int_equal(rw[15], 0x22);
	assert_int_equal(rw[PG + 7], 0x22);
	assert_int_equal(rw[PG + 8], 0x11);
	memset(buf, 0, sizeof(buf));
	assert_true(sim_app_read(buf, v, 2, sizeof(buf)));
	assert_int_equal(buf[23], 0x22);
	assert_int_equal(buf[31], 0x11);

	/* what a memcpy would die of is a false */
	v[1].iov_base = none;
	assert_false(sim_app_read(buf, v, 2, sizeof(buf)));
	assert_false(sim_app_write(v, 2, buf, 32));
	v[0].iov_base = ro;
	v[1].iov_base = ro + PG;
	assert_true(sim_app_read(buf, v, 2, sizeof(buf)));
	assert_false(sim_app_write(v, 2, buf, 32));
	assert_int_equal(ro[0], 0x11);

	assert_true(sim_app_writable(rw + 8, 8));
	assert_false(sim_app_writable(ro + 8, 8));
	assert_false(sim_app_writable(none + 8, 8));
	munmap(rw, 2 * PG);
	munmap(none, 2 * PG);
	munmap(ro, 2 * PG);
}

/* One call for many pieces: a fault is found where it is, by the bytes
 * copied before it (device/place.c fails the packet there). */
static void test_scatter(void **unused)
{
	uint8_t *rw = map(PROT_READ | PROT_WRITE), *ro = map(PROT_READ);
	uint8_t a[100], b[300];
	struct iovec src[2] = {
		{ .iov_base = a, .iov_len = sizeof(a) },
		{ .iov_base = b, .iov_len = sizeof(b) },
	};
	struct iovec dst[3] = {
		{ .iov_base = rw + PG - 50, .iov_len = 150 },	/* spans */
		{ .iov_base = rw + 8, .iov_len = 200 },
		{ .iov_base = rw + 1000, .iov_len = 50 },
	};

	memset(a, 0x33, sizeof(a));
	memset(b, 0x44, sizeof(b));
	assert_int_equal(sim_app_scatter(dst, 3, src, 2), 400);
	assert_int_equal(rw[PG - 50], 0x33);
	assert_int_equal(rw[PG + 49], 0x33);
	assert_int_equal(rw[PG + 99], 0x44);
	assert_int_equal(rw[8 + 199], 0x44);
	assert_int_equal(rw[1049], 0x44);
	assert_int_equal(rw[1050], 0x11);

	/* the third piece faults: the first two are in place */
	memset(rw, 0x11, 2 * PG);
	dst[2].iov_base = ro;
	assert_int_equal(sim_app_scatter(dst, 3, src, 2), 350);
	assert_int_equal(rw[8 + 199], 0x44);
	assert_int_equal(ro[0], 0x11);
	/* the first does: nothing is */
	dst[0].iov_base = ro + 8;
	assert_int_equal(sim_app_scatter(dst, 3, src, 2), 0);
	assert_int_equal(sim_app_scatter(dst, 0, src, 2), 0);
	munmap(rw, 2 * PG);
	munmap(ro, 2 * PG);
}

static void test_pin(void **unused)
{
	uint8_t *rw = map(PROT_READ | PROT_WRITE), *none = map(PROT_NONE);
	uint8_t *ro = map(PROT_READ);

	assert_int_equal(sim_app_pin(rw + 1, 2 * PG - 2, true), 0);
	assert_int_equal(sim_app_pin(ro, 2 * PG, false), 0);
	assert_int_equal(sim_app_pin(ro + 10, 1, true), EFAULT);
	assert_int_equal(sim_app_pin(none, PG, false), EFAULT);
	/* one bad page fails the range */
	assert_int_equal(mprotect(rw + PG, PG, PROT_READ), 0);
	assert_int_equal(sim_app_pin(rw, 2 * PG, true), EFAULT);
	assert_int_equal(munmap(rw + PG, PG), 0);
	assert_int_equal(sim_app_pin(rw, 2 * PG, false), EFAULT);
	munmap(rw, PG);
	munmap(none, 2 * PG);
	munmap(ro, 2 * PG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copies),
		cmocka_unit_test(test_scatter),
		cmocka_unit_test(test_pin),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
