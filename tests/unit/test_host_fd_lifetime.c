// SPDX-License-Identifier: BSD-2-Clause
/*
 * Every libc way of duplicating or closing a uverbs fd keeps the sim's fd
 * table true in a preloaded process: fcntl(F_DUPFD*) makes another fd of
 * the same open file.
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

static int child_main(const char *scenario)
{
	if (!strcmp(scenario, "fcntl"))
		child_fcntl();
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fcntl_dupfd),
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
