// SPDX-License-Identifier: BSD-2-Clause
/*
 * The pvrdma-sim launcher as a user runs it: option errors exit 2 with a
 * message, the configuration reaches the program's environment, the
 * program keeps the launcher's pid and its exit status is the launcher's.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>

/* A sanitized sim library cannot be preloaded into uninstrumented tools. */
#if defined(__SANITIZE_ADDRESS__)
#define PRELOAD_OK 0
#else
#define PRELOAD_OK 1
#endif

static char launcher[PATH_MAX];
static char rundir[64];
static char out[8192];
static pid_t last_pid;

/* Runs the launcher with args; returns its exit status, output in out. */
static int run(const char *const *args)
{
	const char *argv[32];
	int fds[2], status, n = 0, i;
	ssize_t r;
	size_t len = 0;
	pid_t pid;

	argv[n++] = launcher;
	argv[n++] = "--rundir";
	argv[n++] = rundir;
	for (i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		execv(launcher, (char *const *)argv);
		_exit(99);
	}
	last_pid = pid;
	close(fds[1]);
	while ((r = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += r;
	out[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

#define RUN(...) run((const char *const[]){ __VA_ARGS__, NULL })

static void expect_usage_error(const char *const *args, const char *msg)
{
	assert_int_equal(run(args), 2);
	if (!strstr(out, msg))
		fail_msg("expected \"%s\" in: %s", msg, out);
}

#define BAD(msg, ...) \
	expect_usage_error((const char *const[]){ __VA_ARGS__, NULL }, msg)

static void test_bad_options(void **state)
{
	BAD("--adapters 11", "--adapters", "11", "--", "true");
	BAD("--adapters 0", "--adapters", "0", "--", "true");
	BAD("--hw-version 15", "--hw-version", "15", "--", "true");
	BAD("--roce 3", "--roce", "3", "--", "true");
	BAD("--mtu 999", "--mtu", "999", "--", "true");
	BAD("--mac zz", "--mac", "zz", "--", "true");
	BAD("--namespaces sometimes", "--namespaces", "sometimes", "--",
	    "true");
	BAD("--max-ud-qps x", "--max-ud-qps", "x", "--", "true");
	BAD("--ipv4 224.1.1.1", "--ipv4", "224.1.1.1", "--", "true");
	BAD("--netdev no-such-if0", "--netdev", "no-such-if0", "--", "true");
	BAD("--netdev lo: --ipv4 and --netdev exclude each other", "--ipv4",
	    "127.0.0.9", "--netdev", "lo", "--", "true");
	BAD("pvrdma-sim: unrecognized option '--bogus'", "--bogus", "--",
	    "true");
	/* named as every other message, not by the path it was run as */
	assert_memory_equal(out, "pvrdma-sim: ", 12);
	BAD("pvrdma-sim: option '--adapters' needs a value", "--adapters");
	BAD("--tcp-port 0", "--tcp-port", "0", "--", "true");
	BAD("--provider nonsense", "--provider", "nonsense", "--", "true");
	BAD("--provider /nonexistent/x.so", "--provider",
	    "/nonexistent/x.so", "--", "true");
	BAD("RoCE v2 needs", "--hw-version", "13", "--roce", "2", "--",
	    "true");
	BAD("namespaces need", "--hw-version", "14", "--namespaces", "on",
	    "--", "true");
	BAD("no program", "--stats");
	BAD("--help", "--no-such-option", "--", "true");
}

static void test_help_version(void **state)
{
	assert_int_equal(RUN("--help"), 0);
	assert_non_null(strstr(out, "Usage:"));
	assert_int_equal(RUN("--version"), 0);
	assert_non_null(strstr(out, "pvrdma-sim "));
}

static void test_exit_status_and_pid(void **state)
{
	char want[32];

	if (!PRELOAD_OK)
		skip();
	assert_int_equal(RUN("--", "sh", "-c", "exit 7"), 7);
	assert_int_equal(RUN("--", "sh", "-c", "echo $$"), 0);
	snprintf(want, sizeof(want), "%d\n", (int)last_pid);
	assert_string_equal(out, want);
	assert_int_equal(RUN("--", "/nonexistent/program"), 127);
}

static void test_environment(void **state)
{
	const char *show = "echo $PVRDMA_SIM_HW_VERSION $PVRDMA_SIM_ROCE "
			   "$PVRDMA_SIM_NAMESPACES $PVRDMA_SIM_MTU; "
			   "case $LD_PRELOAD in *libpvrdma-sim.so) echo ok;; "
			   "esac";

	if (!PRELOAD_OK)
		skip();
	assert_int_equal(RUN("--hw-version", "13", "--mtu", "2048", "--",
			     "sh", "-c", show), 0);
	assert_string_equal(out, "13 1 off 2048\nok\n");
	assert_int_equal(RUN("--", "sh", "-c", show), 0);
	assert_string_equal(out, "2 on\nok\n");
}

static void test_ibv_devices(void **state)
{
	if (!PRELOAD_OK || access("/usr/bin/ibv_devices", X_OK))
		skip();
	assert_int_equal(RUN("--adapters", "2", "--mac", "00:50:56:ab:cd:ef",
			     "--", "ibv_devices"), 0);
	assert_non_null(strstr(out, "vmw_pvrdma0"));
	assert_non_null(strstr(out, "005056fffeabcdef"));
	assert_non_null(strstr(out, "vmw_pvrdma1"));
	assert_non_null(strstr(out, "005056fffeabcdf0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_help_version),
		cmocka_unit_test(test_exit_status_and_pid),
		cmocka_unit_test(test_environment),
		cmocka_unit_test(test_ibv_devices),
	};
	char cmd[128];
	ssize_t n;
	int ret;

	/* The launcher is built next to the tests (build/bin). */
	n = readlink("/proc/self/exe", launcher, sizeof(launcher) - 16);
	if (n <= 0)
		return 1;
	launcher[n] = '\0';
	strcpy(strrchr(launcher, '/') + 1, "pvrdma-sim");
	snprintf(rundir, sizeof(rundir), "/tmp/pvrdma-test-launcher-%d",
		 (int)getpid());
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", rundir);
	if (system(cmd))
		ret = ret ? ret : 1;
	return ret;
}
