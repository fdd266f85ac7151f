// SPDX-License-Identifier: BSD-2-Clause
/*
 * The memory file a pinned ring keeps for same-host requesters (pin.c):
 *
 *   - it is sealed at its size: whoever holds it (the application finds it
 *     in its fd table) cannot shrink or grow it, so a requester's mapping
 *     of it never faults.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "pin.h"

#define PAGE		4096u

/* A private two-page ring buffer, as a provider allocates one. */
static struct sim_pin_range ring_buffer(void)
{
	void *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	memset(p, 0x5a, 2 * PAGE);
	return (struct sim_pin_range){ .addr = (uintptr_t)p, .len = 2 * PAGE };
}

static void ring_free(const struct sim_pin_range *r)
{
	munmap((void *)(uintptr_t)r->addr, r->len);
}

static void test_sealed(void **unused)
{
	struct sim_pin_range r = ring_buffer();
	struct sim_pin pin;
	struct stat st;
	int seals;

	assert_int_equal(sim_pin_rings(&pin, &r, 1), 0);
	assert_true(pin.fd >= 0);
	seals = fcntl(pin.fd, F_GET_SEALS);
	assert_true(seals >= 0);
	assert_true(seals & F_SEAL_SHRINK);
	assert_true(seals & F_SEAL_GROW);
	assert_true(seals & F_SEAL_SEAL);
	assert_int_equal(ftruncate(pin.fd, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(pin.fd, 4 * PAGE), -1);
	assert_int_equal(fstat(pin.fd, &st), 0);
	assert_int_equal(st.st_size, 2 * PAGE);
	/* the seals cannot be taken back, nor more added */
	assert_int_equal(fcntl(pin.fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE), -1);
	assert_int_equal(pin.base[0], 0x5a);
	sim_unpin(&pin);
	ring_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sealed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
