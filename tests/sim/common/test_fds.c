// SPDX-License-Identifier: BSD-2-Clause
/*
 * The sim's own fds (fds.c): each is moved to the top of the fd space,
 * close-on-exec, and known as the sim's until sim_fd_close(); the search
 * the application's close_range() goes around them with finds each one in
 * a range and no other. One the sim placed itself is taken where it is,
 * and one abandoned is forgotten and left open.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/resource.h>
#include <cmocka.h>

#include "fds.h"

static void test_moved_high(void **state)
{
	struct rlimit rl;
	int p[2], a, b;
	char c = 0;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	assert_int_equal(pipe(p), 0);
	a = sim_fd_own(p[0]);
	b = sim_fd_own(p[1]);
	/* Out of the way of the lowest-free numbers the program gets. */
	assert_true(a > p[1] && b > p[1]);
	assert_true((rlim_t)a < rl.rlim_cur && (rlim_t)b < rl.rlim_cur);
	assert_true(sim_fd_is_own(a) && sim_fd_is_own(b));
	assert_false(sim_fd_is_own(p[0]) || sim_fd_is_own(p[1]));
	/* The old numbers are free again, the new ones close on exec. */
	assert_int_equal(fcntl(p[0], F_GETFD), -1);
	assert_int_equal(fcntl(a, F_GETFD), FD_CLOEXEC);
	/* Still the same pipe. */
	assert_int_equal(write(b, "z", 1), 1);
	assert_int_equal(read(a, &c, 1), 1);
	assert_int_equal(c, 'z');

	assert_int_equal(sim_fd_close(a), 0);
	assert_int_equal(sim_fd_close(b), 0);
	assert_false(sim_fd_is_own(a) || sim_fd_is_own(b));
	assert_int_equal(fcntl(a, F_GETFD), -1);
}

static void test_next_own(void **state)
{
	int p[2], lo, hi;

	assert_int_equal(pipe(p), 0);
	lo = sim_fd_own(p[0]);
	hi = sim_fd_own(p[1]);
	if (lo > hi) {
		int t = lo;

		lo = hi;
		hi = t;
	}
	assert_int_equal(sim_fd_next_own(0, ~0U), lo);
	assert_int_equal(sim_fd_next_own(lo, ~0U), lo);
	assert_int_equal(sim_fd_next_own(lo + 1, ~0U), hi);
	assert_int_equal(sim_fd_next_own(hi + 1, ~0U), -1);
	assert_int_equal(sim_fd_next_own(0, lo - 1), -1);
	assert_int_equal(sim_fd_next_own(lo + 1, hi - 1), -1);
	assert_int_equal(sim_fd_next_own(hi, hi), hi);
	/* Negative results and numbers beyond the table are nobody's. */
	assert_int_equal(sim_fd_own(-1), -1);
	assert_false(sim_fd_is_own(-1));
	assert_false(sim_fd_is_own(SIM_FD_BITMAP_FDS));
	sim_fd_close(lo);
	sim_fd_close(hi);
	assert_int_equal(sim_fd_next_own(0, ~0U), -1);
}

static void test_adopt_abandon(void **unused)
{
	int p[2];

	assert_int_equal(pipe(p), 0);
	assert_int_equal(sim_fd_adopt(p[0]), p[0]);
	assert_true(sim_fd_is_own(p[0]));
	assert_int_equal(sim_fd_next_own(p[0], p[0]), p[0]);
	sim_fd_abandon(p[0]);
	assert_false(sim_fd_is_own(p[0]));
	assert_true(fcntl(p[0], F_GETFD) >= 0);	/* still open */
	assert_int_equal(sim_fd_adopt(p[1]), p[1]);
	assert_int_equal(sim_fd_close(p[1]), 0);
	assert_false(sim_fd_is_own(p[1]));
	assert_int_equal(fcntl(p[1], F_GETFD), -1);
	close(p[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_moved_high),
		cmocka_unit_test(test_next_own),
		cmocka_unit_test(test_adopt_abandon),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
