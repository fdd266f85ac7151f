// SPDX-License-Identifier: BSD-2-Clause
/*
 * The memory file a pinned ring keeps for same-host requesters (pin.c):
 *
 *   - it is sealed at its size: whoever holds it (the application finds it
 *     in its fd table) cannot shrink or grow it, so a requester's mapping
 *     of it never faults;
 *   - the kept files are bounded by the fd limit: under a low
 *     RLIMIT_NOFILE, far more rings than the limit are pinned, at most an
 *     eighth of the limit keep a file, and the process still opens files
 *     up to the rest of its limit;
 *   - with no descriptor free at all, a ring is still pinned (the kernel
 *     needs none): the device's view and the program's pages are one
 *     memory, and no file is kept;
 *   - the kept file is the sim's own descriptor, and unpinning closes its
 *     number only while the number still names it: a number closed behind
 *     the sim and given to another file keeps that file open.
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "fds.h"
#include "pin.h"

#define PAGE		4096u
#define LOW_LIMIT	256u
/* More rings than the limit has descriptors. */
#define MANY_RINGS	(2 * LOW_LIMIT)

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

static unsigned int open_fds(void)
{
	unsigned int fd, n = 0;

	for (fd = 0; fd < LOW_LIMIT; fd++)
		n += fcntl((int)fd, F_GETFD) >= 0;
	return n;
}

static void test_bounded_under_low_limit(void **unused)
{
	static struct sim_pin pins[MANY_RINGS];
	static struct sim_pin_range rings[MANY_RINGS];
	struct rlimit old, rl;
	unsigned int i, kept = 0, before, opened = 0;
	int fds[LOW_LIMIT], fd;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	rl = old;
	rl.rlim_cur = LOW_LIMIT;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	before = open_fds();
	for (i = 0; i < MANY_RINGS; i++) {
		rings[i] = ring_buffer();
		/* never fails for want of descriptors */
		assert_int_equal(sim_pin_rings(&pins[i], &rings[i], 1), 0);
		if (pins[i].fd >= 0) {
			kept++;
			assert_true(sim_fd_is_own(pins[i].fd));
			assert_true(pins[i].fd >= (int)LOW_LIMIT / 2);
		}
	}
	assert_true(kept > 0);
	assert_true(kept <= LOW_LIMIT / 8);
	/* The process's own files: everything but the kept ones. */
	while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		fds[opened++] = fd;
	assert_int_equal(errno, EMFILE);
	assert_int_equal(opened, LOW_LIMIT - before - kept);
	while (opened)
		close(fds[--opened]);
	for (i = 0; i < MANY_RINGS; i++) {
		sim_unpin(&pins[i]);
		ring_free(&rings[i]);
	}
	assert_int_equal(open_fds(), before);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
}

static void test_no_descriptor_free(void **unused)
{
	struct sim_pin_range r = ring_buffer();
	uint8_t *app = (uint8_t *)(uintptr_t)r.addr;
	struct rlimit old, rl;
	unsigned int opened = 0;
	int fds[LOW_LIMIT], fd;
	struct sim_pin pin;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	rl = old;
	rl.rlim_cur = LOW_LIMIT;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		fds[opened++] = fd;
	assert_int_equal(errno, EMFILE);
	assert_int_equal(sim_pin_rings(&pin, &r, 1), 0);
	assert_int_equal(pin.fd, -1);
	assert_int_equal(pin.base[PAGE + 7], 0x5a);
	/* one memory: the program's stores are the device's */
	app[PAGE + 7] = 0x11;
	assert_int_equal(pin.base[PAGE + 7], 0x11);
	pin.base[3] = 0x22;
	assert_int_equal(app[3], 0x22);
	sim_unpin(&pin);
	assert_int_equal(app[PAGE + 7], 0x11);
	while (opened)
		close(fds[--opened]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	ring_free(&r);
}

static void test_unpin_spares_a_reused_number(void **unused)
{
	struct sim_pin_range r = ring_buffer();
	struct sim_pin pin;
	struct stat st;
	int null, kept;

	assert_int_equal(sim_pin_rings(&pin, &r, 1), 0);
	kept = pin.fd;
	assert_true(kept >= 0 && sim_fd_is_own(kept));
	/* Closed where no library sees it, the number given to another
	 * file. */
	assert_int_equal(close(kept), 0);
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(null >= 0);
	assert_int_equal(dup2(null, kept), kept);
	close(null);
	sim_unpin(&pin);
	assert_int_equal(fstat(kept, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_false(sim_fd_is_own(kept));
	close(kept);
	ring_free(&r);

	/* Still its file: closed. */
	r = ring_buffer();
	assert_int_equal(sim_pin_rings(&pin, &r, 1), 0);
	kept = pin.fd;
	assert_true(kept >= 0);
	sim_unpin(&pin);
	assert_int_equal(fcntl(kept, F_GETFD), -1);
	assert_false(sim_fd_is_own(kept));
	ring_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sealed),
		cmocka_unit_test(test_bounded_under_low_limit),
		cmocka_unit_test(test_no_descriptor_free),
		cmocka_unit_test(test_unpin_spares_a_reused_number),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
