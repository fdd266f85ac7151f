// SPDX-License-Identifier: BSD-2-Clause
/*
 * The sysfs tree libibverbs reads: every file it needs to find, match and
 * query a simulated adapter, with the kernel's formats.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "options.h"
#include "fds.h"
#include "host.h"

static char rundir[64];

/* The file's text without the trailing newline; "" if unreadable. */
static const char *rd(const char *rel)
{
	static char buf[256];
	char path[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", getenv("SYSFS_PATH"), rel);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return "";
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return "";
	buf[n] = '\0';
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return buf;
}

static bool exists(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", getenv("SYSFS_PATH"), rel);
	return access(path, F_OK) == 0;
}

static int setup(void **state)
{
	setenv(SIM_ENV_RUNDIR, rundir, 1);
	setenv(SIM_ENV_ADAPTERS, "2", 1);
	setenv(SIM_ENV_MAC, "00:50:56:12:34:56", 1);
	unsetenv("SYSFS_PATH");
	if (sim_config_load() || sim_sysfs_write())
		return -1;
	return 0;
}

static void test_root(void **state)
{
	char want[300];

	char path[300], link[300];
	ssize_t n;

	snprintf(want, sizeof(want), "%s/sysfs-%d", rundir, (int)getpid());
	assert_string_equal(sim_global.sysfs_root, want);
	/* SYSFS_PATH: the tree through the sim's own descriptor. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", sim_global.sysfs_fd);
	assert_string_equal(getenv("SYSFS_PATH"), path);
	assert_true(sim_fd_is_own(sim_global.sysfs_fd));
	n = readlink(path, link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = 0;
	assert_string_equal(link, want);
	assert_string_equal(rd("class/infiniband_verbs/abi_version"), "6");
}

static void test_uverbs(void **state)
{
	assert_string_equal(rd("class/infiniband_verbs/uverbs0/ibdev"),
			    "vmw_pvrdma0");
	assert_string_equal(rd("class/infiniband_verbs/uverbs0/abi_version"),
			    "3");
	assert_string_equal(rd("class/infiniband_verbs/uverbs0/dev"),
			    "231:192");
	assert_string_equal(rd("class/infiniband_verbs/uverbs1/ibdev"),
			    "vmw_pvrdma1");
	assert_string_equal(rd("class/infiniband_verbs/uverbs1/dev"),
			    "231:193");
	assert_false(exists("class/infiniband_verbs/uverbs2"));
}

static void test_ibdev(void **state)
{
	const char *d = "class/infiniband/vmw_pvrdma0/";
	char p[128];

#define F(name) (snprintf(p, sizeof(p), "%s%s", d, name), rd(p))
	assert_string_equal(F("node_type"), "1: CA");
	assert_string_equal(F("node_guid"), "0050:56ff:fe12:3456");
	assert_string_equal(F("sys_image_guid"), "0050:56ff:fe12:3456");
	assert_string_equal(F("fw_ver"), "3.0.0");
	assert_string_equal(F("hw_rev"), "1");
	assert_string_equal(F("device/modalias"),
		"pci:v000015ADd00000820sv000015ADsd00000820bc02sc07i00");
	assert_string_equal(F("device/vendor"), "0x15ad");
	assert_string_equal(F("device/device"), "0x0820");
	assert_string_equal(F("ports/1/state"), "4: ACTIVE");
	assert_string_equal(F("ports/1/phys_state"), "5: LinkUp");
	assert_string_equal(F("ports/1/link_layer"), "Ethernet");
	assert_string_equal(F("ports/1/pkeys/0"), "0xffff");
	assert_string_equal(F("ports/1/pkeys/127"), "0x0000");
	assert_false(exists("class/infiniband/vmw_pvrdma0/ports/1/pkeys/128"));
	/* The second adapter counts up from --mac. */
	assert_string_equal(rd("class/infiniband/vmw_pvrdma1/node_guid"),
			    "0050:56ff:fe12:3457");
#undef F
}

static void test_gids(void **state)
{
	const char *g = "class/infiniband/vmw_pvrdma0/ports/1/";
	char p[128];

#define F(name) (snprintf(p, sizeof(p), "%s%s", g, name), rd(p))
	assert_string_equal(F("gids/0"),
			    "fe80:0000:0000:0000:0250:56ff:fe12:3456");
	assert_string_equal(F("gids/1"),
			    "0000:0000:0000:0000:0000:ffff:7f12:3456");
	assert_string_equal(F("gids/2"),
			    "0000:0000:0000:0000:0000:0000:0000:0000");
	assert_string_equal(F("gids/5"),
			    "0000:0000:0000:0000:0000:0000:0000:0000");
	assert_string_equal(F("gid_attrs/types/0"), "RoCE v2");
	assert_string_equal(F("gid_attrs/types/1"), "RoCE v2");
	/* The port's own netdev (netdev.c), the same for every GID. */
	assert_string_equal(F("gid_attrs/ndevs/0"), "pvrdma0");
	assert_string_equal(F("gid_attrs/ndevs/1"), "pvrdma0");
#undef F
	assert_true(exists("class/infiniband/vmw_pvrdma0/device/net/pvrdma0/"
			   "ifindex"));
	assert_true(exists("class/net/pvrdma0/address"));
	/* Unused slots: no type (devfile.c reports EINVAL for them). */
	assert_false(exists("class/infiniband/vmw_pvrdma0/ports/1/"
			    "gid_attrs/types/2"));
	assert_false(exists("class/infiniband/vmw_pvrdma0/ports/1/gids/6"));
}

static void test_rewrite_roce_v1(void **state)
{
	setenv(SIM_ENV_ROCE, "1", 1);
	assert_int_equal(sim_config_load(), 0);
	assert_int_equal(sim_sysfs_write(), 0);
	assert_string_equal(rd("class/infiniband/vmw_pvrdma0/ports/1/"
			       "gid_attrs/types/0"), "IB/RoCE v1");
	unsetenv(SIM_ENV_ROCE);
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf /tmp/pvrdma-test-sysfs-%d",
		 (int)getpid());
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root),
		cmocka_unit_test(test_uverbs),
		cmocka_unit_test(test_ibdev),
		cmocka_unit_test(test_gids),
		cmocka_unit_test(test_rewrite_roce_v1),
	};

	snprintf(rundir, sizeof(rundir), "/tmp/pvrdma-test-sysfs-%d",
		 (int)getpid());
	return cmocka_run_group_tests(tests, setup, teardown);
}
