// SPDX-License-Identifier: BSD-2-Clause
/*
 * Every libc way of duplicating or closing a uverbs fd keeps the sim's fd
 * table true in a preloaded process: fcntl(F_DUPFD*) makes another fd of
 * the same open file, and close_range()/closefrom() forget the fds they
 * close, so a later unrelated fd with the same number is not taken for a
 * uverbs file.
 *
 * The test runs itself under the launcher ("--child SCENARIO"); the child
 * checks through fstat() and write(), which the sim answers only for fds
 * it tracks, and exits 0 when all held.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <cmocka.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* A sanitized sim library cannot be preloaded into this binary. */
#if defined(__SANITIZE_ADDRESS__)
#define PRELOAD_OK 0
#else
#define PRELOAD_OK 1
#endif

#define UVERBS0		"/dev/infiniband/uverbs0"
#define UVERBS_MAJOR	231
#define UVERBS_MINOR0	192

static char self[PATH_MAX];
static char launcher[PATH_MAX];
static char rundir[64];

/* ---- the child, under the sim ---- */

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: failed: %s (errno %d)\n", \
				__FILE__, __LINE__, #cond, errno);	\
			exit(1);					\
		}							\
	} while (0)

/* fd is what the sim shows for an open uverbs0. */
static bool is_uverbs(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return false;
	return S_ISCHR(st.st_mode) && major(st.st_rdev) == UVERBS_MAJOR &&
	       minor(st.st_rdev) == UVERBS_MINOR0;
}

/* A write shorter than a command header: only uverbs refuses it. */
static bool write_refused(int fd)
{
	uint8_t half[2] = { 0 };

	errno = 0;
	return write(fd, half, sizeof(half)) == -1 && errno == EINVAL;
}

/* fd (a uverbs file the child gave up) now names a fresh pipe's end. */
static void expect_number_reused_by_pipe(int fd)
{
	int p[2];
	struct stat st;
	char c = 'x';

	CHECK(pipe(p) == 0);
	CHECK(p[0] == fd || p[1] == fd);
	CHECK(fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode));
	CHECK(write(p[1], &c, 1) == 1);
	c = 0;
	CHECK(read(p[0], &c, 1) == 1 && c == 'x');
	close(p[0]);
	close(p[1]);
}

static void child_fcntl_dup(int cmd, bool large)
{
	int fd, dupfd;

	fd = open(UVERBS0, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0 && is_uverbs(fd));
	dupfd = large ? fcntl64(fd, cmd, 100) : fcntl(fd, cmd, 100);
	CHECK(dupfd >= 100);
	CHECK(is_uverbs(dupfd));
	CHECK(write_refused(dupfd));
	CHECK(fcntl(dupfd, F_GETFD) ==
	      (cmd == F_DUPFD_CLOEXEC ? FD_CLOEXEC : 0));
	/* The file stays open as long as one of its fds does. */
	CHECK(close(fd) == 0);
	CHECK(is_uverbs(dupfd) && write_refused(dupfd));
	CHECK(close(dupfd) == 0);
	/* Both numbers are plain fds again. */
	CHECK(dup2(STDERR_FILENO, dupfd) == dupfd && !is_uverbs(dupfd));
	close(dupfd);
	expect_number_reused_by_pipe(fd);
}

static void child_fcntl(void)
{
	/* Other commands still reach libc on a uverbs fd. */
	int fd = open(UVERBS0, O_RDWR | O_CLOEXEC);

	CHECK(fd >= 0 && fcntl(fd, F_GETFD) == FD_CLOEXEC);
	CHECK(fcntl(fd, F_SETFD, 0) == 0 && fcntl(fd, F_GETFD) == 0);
	CHECK(close(fd) == 0);

	child_fcntl_dup(F_DUPFD, false);
	child_fcntl_dup(F_DUPFD_CLOEXEC, false);
	child_fcntl_dup(F_DUPFD, true);
	child_fcntl_dup(F_DUPFD_CLOEXEC, true);
}

static void child_close_range(void)
{
	int fd, dupfd, other;

	/* A single fd. */
	fd = open(UVERBS0, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0 && is_uverbs(fd));
	CHECK(close_range(fd, fd, 0) == 0);
	expect_number_reused_by_pipe(fd);

	/* Only marked close-on-exec: still the same uverbs file. */
	fd = open(UVERBS0, O_RDWR);
	CHECK(fd >= 0 && fcntl(fd, F_GETFD) == 0);
	CHECK(close_range(fd, fd, CLOSE_RANGE_CLOEXEC) == 0);
	CHECK(fcntl(fd, F_GETFD) == FD_CLOEXEC);
	CHECK(is_uverbs(fd) && write_refused(fd));

	/* A range holding the fd, a dup of it and an unrelated fd. */
	dupfd = dup2(fd, fd + 3);
	CHECK(dupfd == fd + 3 && is_uverbs(dupfd));
	other = dup2(STDERR_FILENO, fd + 1);
	CHECK(other == fd + 1);
	CHECK(close_range(fd, ~0U, 0) == 0);
	CHECK(fcntl(other, F_GETFD) == -1 && errno == EBADF);
	expect_number_reused_by_pipe(fd);
	CHECK(dup2(STDERR_FILENO, dupfd) == dupfd && !is_uverbs(dupfd));
	close(dupfd);

	/* Bad arguments change nothing. */
	fd = open(UVERBS0, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(close_range(fd + 1, fd, 0) == -1 && errno == EINVAL);
	CHECK(is_uverbs(fd) && write_refused(fd));
	CHECK(close(fd) == 0);
}

static void child_closefrom(void)
{
	int a, b;

	a = open(UVERBS0, O_RDWR | O_CLOEXEC);
	b = open(UVERBS0, O_RDWR | O_CLOEXEC);
	CHECK(a >= 0 && b > a && is_uverbs(a) && is_uverbs(b));
	closefrom(a);
	CHECK(fcntl(b, F_GETFD) == -1 && errno == EBADF);
	expect_number_reused_by_pipe(a);
	CHECK(dup2(STDERR_FILENO, b) == b && !is_uverbs(b));
}

static int child_main(const char *scenario)
{
	if (!strcmp(scenario, "fcntl"))
		child_fcntl();
	else if (!strcmp(scenario, "close_range"))
		child_close_range();
	else if (!strcmp(scenario, "closefrom"))
		child_closefrom();
	else
		return 3;
	return 0;
}

/* ---- the test, running the child under the launcher ---- */

static void run_child(const char *scenario)
{
	int status;
	pid_t pid;

	if (!PRELOAD_OK)
		skip();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(launcher, launcher, "--rundir", rundir, "--", self,
		      "--child", scenario, (char *)NULL);
		_exit(99);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("child %s: status 0x%x", scenario, status);
}

static void test_fcntl_dupfd(void **state)
{
	run_child("fcntl");
}

static void test_close_range(void **state)
{
	run_child("close_range");
}

static void test_closefrom(void **state)
{
	run_child("closefrom");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fcntl_dupfd),
		cmocka_unit_test(test_close_range),
		cmocka_unit_test(test_closefrom),
	};
	char cmd[128];
	ssize_t n;
	int ret;

	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child_main(argv[2]);

	/* The launcher is built next to the tests (build/bin). */
	n = readlink("/proc/self/exe", self, sizeof(self) - 16);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	strcpy(launcher, self);
	strcpy(strrchr(launcher, '/') + 1, "pvrdma-sim");
	snprintf(rundir, sizeof(rundir), "/tmp/pvrdma-test-fd-lifetime-%d",
		 (int)getpid());
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", rundir);
	if (system(cmd))
		ret = ret ? ret : 1;
	return ret;
}
