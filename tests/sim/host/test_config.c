// SPDX-License-Identifier: BSD-2-Clause
/*
 * Configuration and identities: the option parsers, the defaults and
 * combination rules of the virtual hardware, and how MAC, node GUID, GIDs
 * and IPv4 address are derived.
 */
#include <errno.h>
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
#include "host.h"

static char rundir[64];

static const char *const all_env[] = {
	SIM_ENV_ADAPTERS, SIM_ENV_HW_VERSION, SIM_ENV_ROCE, SIM_ENV_NAMESPACES,
	SIM_ENV_MAX_UD_QPS, SIM_ENV_MTU, SIM_ENV_MAC, SIM_ENV_IPV4,
	SIM_ENV_STATS, SIM_ENV_STATS_FILE, SIM_ENV_PROVIDER, SIM_ENV_NETDEV,
	SIM_ENV_TCP_PORT, SIM_ENV_SINGLE_COPY, SIM_ENV_ASYNC_MODE,
};

static int clean_env(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(all_env) / sizeof(all_env[0]); i++)
		unsetenv(all_env[i]);
	setenv(SIM_ENV_RUNDIR, rundir, 1);
	return 0;
}

static void expect_bytes(const uint8_t *got, const uint8_t *want, size_t n)
{
	assert_memory_equal(got, want, n);
}

static void test_mac_per_process(void **state)
{
	uint8_t a[6], b[6], c[6];

	sim_derive_mac(0x12345, 2, a);
	expect_bytes(a, (const uint8_t[]){ 0x00, 0x50, 0x56, 0x04, 0x8d, 0x16 },
		     6);
	sim_derive_mac(0x12345, 3, b);
	sim_derive_mac(0x12346, 2, c);
	assert_memory_not_equal(a, b, 6);
	assert_memory_not_equal(a, c, 6);
	/* The highest pid Linux hands out still fits. */
	sim_derive_mac((1 << 22) - 1, 3, a);
	expect_bytes(a, (const uint8_t[]){ 0x00, 0x50, 0x56, 0xff, 0xff, 0xff },
		     6);
}

static const uint8_t mac_x[6] = { 0x00, 0x50, 0x56, 0xaa, 0xbb, 0xcc };

static void test_node_guid(void **state)
{
	uint64_t guid = sim_node_guid_from_mac(mac_x);

	expect_bytes((const uint8_t *)&guid,
		     (const uint8_t[]){ 0x00, 0x50, 0x56, 0xff, 0xfe, 0xaa,
					0xbb, 0xcc }, 8);
}

static void test_gids(void **state)
{
	union ibv_gid gid;

	/* Link-local, modified EUI-64: the universal/local bit flipped. */
	sim_gid_from_mac(mac_x, &gid);
	expect_bytes(gid.raw, (const uint8_t[]){ 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
		     0x02, 0x50, 0x56, 0xff, 0xfe, 0xaa, 0xbb, 0xcc }, 16);

	assert_int_equal(ntohl(sim_ipv4_from_mac(mac_x)), 0x7faabbcc);
	sim_gid_from_ipv4(htonl(0x7faabbcc), &gid);
	expect_bytes(gid.raw, (const uint8_t[]){ 0, 0, 0, 0, 0, 0, 0, 0,
		     0, 0, 0xff, 0xff, 0x7f, 0xaa, 0xbb, 0xcc }, 16);

	/* Network and broadcast addresses are never chosen. */
	assert_int_equal(sim_ipv4_from_mac((const uint8_t[]){ 0, 0x50, 0x56,
							     0, 0, 0 }), 0);
	assert_int_equal(sim_ipv4_from_mac((const uint8_t[]){ 0, 0x50, 0x56,
						0xff, 0xff, 0xff }), 0);
}

/* The way back, for neighbour resolution: the MAC of either GID. */
static void test_mac_from_gid(void **state)
{
	union ibv_gid gid;
	uint8_t mac[6];

	sim_gid_from_mac(mac_x, &gid);
	assert_true(sim_mac_from_gid(gid.raw, mac));
	expect_bytes(mac, mac_x, 6);

	memset(mac, 0, sizeof(mac));
	sim_gid_from_ipv4(sim_ipv4_from_mac(mac_x), &gid);
	assert_true(sim_mac_from_gid(gid.raw, mac));
	expect_bytes(mac, mac_x, 6);

	/* Not a GID of the sim's: a global IPv6 address, 10.0.0.1. */
	gid.raw[0] = 0x20;
	assert_false(sim_mac_from_gid(gid.raw, mac));
	sim_gid_from_ipv4(htonl(0x0a000001), &gid);
	assert_false(sim_mac_from_gid(gid.raw, mac));
}

static void test_defaults(void **state)
{
	struct sim_dev *dev = &sim_devs[0];
	union ibv_gid gid;
	struct stat st;
	uint8_t mac[6];

	assert_int_equal(sim_config_load(), 0);
	assert_int_equal(sim_global.num_adapters, 1);
	assert_string_equal(sim_global.rundir, rundir);
	assert_int_equal(stat(rundir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_false(sim_global.stats_at_exit);
	assert_false(sim_global.single_copy_off);
	assert_false(sim_global.async_mode);

	assert_string_equal(dev->cfg.ibdev, "vmw_pvrdma0");
	assert_int_equal(dev->index, 0);
	assert_int_equal(dev->cfg.hw_version, 18);
	assert_int_equal(dev->cfg.roce, 2);
	assert_true(dev->cfg.namespaces);
	assert_int_equal(dev->cfg.max_ud_qps, 3);
	assert_int_equal(dev->cfg.mtu, IBV_MTU_1024);

	sim_derive_mac(getpid(), 0, mac);
	assert_memory_equal(dev->cfg.mac, mac, 6);
	assert_int_equal(dev->cfg.ipv4, sim_ipv4_from_mac(mac));

	/* A RoCE v2 port: only RoCE v2 GIDs, MAC-based first. */
	assert_int_equal(dev->gid_count, 2);
	sim_gid_from_mac(mac, &gid);
	assert_memory_equal(&dev->gid[0], &gid, 16);
	assert_int_equal(dev->gid_type[0], SIM_GID_TYPE_ROCE_V2);
	sim_gid_from_ipv4(dev->cfg.ipv4, &gid);
	assert_memory_equal(&dev->gid[1], &gid, 16);
	assert_int_equal(dev->gid_type[1], SIM_GID_TYPE_ROCE_V2);
	memset(&gid, 0, sizeof(gid));
	assert_memory_equal(&dev->gid[2], &gid, 16);
	assert_true(dev->node_guid == sim_node_guid_from_mac(mac));
}

static void test_hw13_defaults(void **state)
{
	setenv(SIM_ENV_HW_VERSION, "13", 1);
	assert_int_equal(sim_config_load(), 0);
	assert_int_equal(sim_devs[0].cfg.roce, 1);
	assert_false(sim_devs[0].cfg.namespaces);
	assert_int_equal(sim_devs[0].gid_type[0], SIM_GID_TYPE_ROCE_V1);
	assert_int_equal(sim_devs[0].gid_type[1], SIM_GID_TYPE_ROCE_V1);
}

static void test_hw14(void **state)
{
	setenv(SIM_ENV_HW_VERSION, "14", 1);
	assert_int_equal(sim_config_load(), 0);
	assert_int_equal(sim_devs[0].cfg.roce, 2);
	assert_false(sim_devs[0].cfg.namespaces);
	setenv(SIM_ENV_ROCE, "1", 1);
	assert_int_equal(sim_config_load(), 0);
	assert_int_equal(sim_devs[0].cfg.roce, 1);
}

static void test_conflicts(void **state)
{
	setenv(SIM_ENV_HW_VERSION, "13", 1);
	setenv(SIM_ENV_ROCE, "2", 1);
	assert_int_equal(sim_config_load(), -EINVAL);
	unsetenv(SIM_ENV_ROCE);
	setenv(SIM_ENV_HW_VERSION, "14", 1);
	setenv(SIM_ENV_NAMESPACES, "on", 1);
	assert_int_equal(sim_config_load(), -EINVAL);
	assert_non_null(sim_opt_conflict(13, 2, false));
	assert_non_null(sim_opt_conflict(14, 2, true));
	assert_null(sim_opt_conflict(18, 2, true));
	assert_null(sim_opt_conflict(13, 1, false));
}

static void expect_bad(const char *name, const char *value)
{
	clean_env(NULL);
	setenv(name, value, 1);
	assert_int_equal(sim_config_load(), -EINVAL);
}

static void test_bad_values(void **state)
{
	expect_bad(SIM_ENV_ADAPTERS, "0");
	expect_bad(SIM_ENV_ADAPTERS, "11");
	expect_bad(SIM_ENV_ADAPTERS, "1x");
	expect_bad(SIM_ENV_ADAPTERS, "-1");
	expect_bad(SIM_ENV_HW_VERSION, "15");
	expect_bad(SIM_ENV_ROCE, "3");
	expect_bad(SIM_ENV_NAMESPACES, "maybe");
	expect_bad(SIM_ENV_MTU, "1000");
	expect_bad(SIM_ENV_MTU, "");
	expect_bad(SIM_ENV_MAX_UD_QPS, "many");
	expect_bad(SIM_ENV_MAC, "00:50:56:aa:bb");
	expect_bad(SIM_ENV_MAC, "00:50:56:aa:bb:cg");
	expect_bad(SIM_ENV_MAC, "00-50-56-aa-bb-cc");
	expect_bad(SIM_ENV_MAC, "01:00:5e:00:00:01");	/* multicast */
	expect_bad(SIM_ENV_MAC, "00:00:00:00:00:00");
	expect_bad(SIM_ENV_IPV4, "224.0.0.1");		/* multicast */
	expect_bad(SIM_ENV_IPV4, "255.255.255.255");
	expect_bad(SIM_ENV_IPV4, "0.1.2.3");
	expect_bad(SIM_ENV_NETDEV, "no-such-if0");
	expect_bad(SIM_ENV_TCP_PORT, "0");
	expect_bad(SIM_ENV_TCP_PORT, "65536");
	expect_bad(SIM_ENV_IPV4, "127.0.0.0");
	expect_bad(SIM_ENV_IPV4, "127.1");
	expect_bad(SIM_ENV_STATS, "loud");
	expect_bad(SIM_ENV_SINGLE_COPY, "sometimes");
	expect_bad(SIM_ENV_ASYNC_MODE, "fast");
}

static void test_parsers(void **state)
{
	enum ibv_mtu mtu;
	uint8_t mac[6];
	uint32_t ip;
	bool autoip;

	assert_int_equal(sim_opt_mtu("256", &mtu), 0);
	assert_int_equal(mtu, IBV_MTU_256);
	assert_int_equal(sim_opt_mtu("4096", &mtu), 0);
	assert_int_equal(mtu, IBV_MTU_4096);
	assert_int_equal(sim_opt_mac("0A:1b:2C:3d:4E:5f", mac), 0);
	expect_bytes(mac, (const uint8_t[]){ 0x0a, 0x1b, 0x2c, 0x3d, 0x4e,
					     0x5f }, 6);
	assert_int_equal(sim_opt_mac(" 0:1b:2c:3d:4e:5f", mac), EINVAL);
	assert_int_equal(sim_opt_ipv4("auto", &ip, &autoip), 0);
	assert_true(autoip);
	assert_int_equal(sim_opt_ipv4("127.1.2.3", &ip, &autoip), 0);
	assert_false(autoip);
	assert_int_equal(ntohl(ip), 0x7f010203);
	assert_int_equal(sim_opt_ipv4("198.51.100.7", &ip, &autoip), 0);
	assert_int_equal(ntohl(ip), 0xc6336407);
}

static void test_explicit_mac_counts_up(void **state)
{
	setenv(SIM_ENV_ADAPTERS, "3", 1);
	setenv(SIM_ENV_MAC, "00:50:56:aa:bb:ff", 1);
	assert_int_equal(sim_config_load(), 0);
	assert_int_equal(sim_global.num_adapters, 3);
	expect_bytes(sim_devs[0].cfg.mac,
		     (const uint8_t[]){ 0, 0x50, 0x56, 0xaa, 0xbb, 0xff }, 6);
	expect_bytes(sim_devs[1].cfg.mac,
		     (const uint8_t[]){ 0, 0x50, 0x56, 0xaa, 0xbc, 0x00 }, 6);
	expect_bytes(sim_devs[2].cfg.mac,
		     (const uint8_t[]){ 0, 0x50, 0x56, 0xaa, 0xbc, 0x01 }, 6);
	assert_string_equal(sim_devs[2].cfg.ibdev, "vmw_pvrdma2");
	assert_int_equal(sim_devs[2].index, 2);
	assert_int_equal(ntohl(sim_devs[1].cfg.ipv4), 0x7faabc00);
	assert_true(sim_devs[0].node_guid != sim_devs[1].node_guid);
}

/* Ten adapters: MACs and node GUIDs all distinct, and distinct from
 * every other process's; loopback addresses for the first four only. */
static void test_ten_adapters(void **state)
{
	uint8_t other[6];
	unsigned int i, j;

	setenv(SIM_ENV_ADAPTERS, "10", 1);
	assert_int_equal(sim_config_load(), 0);
	assert_int_equal(sim_global.num_adapters, 10);
	assert_string_equal(sim_devs[9].cfg.ibdev, "vmw_pvrdma9");
	for (i = 0; i < 10; i++) {
		for (j = 0; j < i; j++) {
			assert_memory_not_equal(sim_devs[i].cfg.mac,
						sim_devs[j].cfg.mac, 6);
			assert_true(sim_devs[i].node_guid !=
				    sim_devs[j].node_guid);
		}
		/* the next pid's adapters */
		for (j = 0; j < 10; j++) {
			sim_derive_mac(getpid() + 1, j, other);
			assert_memory_not_equal(sim_devs[i].cfg.mac, other, 6);
		}
		assert_int_equal(sim_devs[i].gid_count, i < 4 ? 2 : 1);
	}

	setenv(SIM_ENV_IPV4, "127.9.0.1", 1);
	assert_int_equal(sim_config_load(), 0);
	assert_int_equal(ntohl(sim_devs[9].cfg.ipv4), 0x7f09000a);
}

static void test_ipv4_choices(void **state)
{
	setenv(SIM_ENV_IPV4, "off", 1);
	assert_int_equal(sim_config_load(), 0);
	assert_int_equal(sim_devs[0].cfg.ipv4, 0);
	assert_int_equal(sim_devs[0].gid_count, 1);

	setenv(SIM_ENV_IPV4, "127.9.0.1", 1);
	setenv(SIM_ENV_ADAPTERS, "2", 1);
	assert_int_equal(sim_config_load(), 0);
	assert_int_equal(ntohl(sim_devs[0].cfg.ipv4), 0x7f090001);
	assert_int_equal(ntohl(sim_devs[1].cfg.ipv4), 0x7f090002);
	/* a 127/8 address is simulated: the port's netdev is pvrdma1 */
	assert_string_equal(sim_devs[1].cfg.netdev, "");
	assert_int_equal(sim_global.tcp_port, SIM_TCP_PORT_DEFAULT);

	/* the loopback interface's address: in 127/8, so still simulated */
	unsetenv(SIM_ENV_IPV4);
	setenv(SIM_ENV_NETDEV, "lo", 1);
	setenv(SIM_ENV_TCP_PORT, "5000", 1);
	assert_int_equal(sim_config_load(), 0);
	assert_int_equal(ntohl(sim_devs[0].cfg.ipv4), 0x7f000001);
	assert_string_equal(sim_devs[0].cfg.netdev, "");
	assert_int_equal(sim_global.tcp_port, 5000);
}

static void test_other_values(void **state)
{
	setenv(SIM_ENV_MTU, "4096", 1);
	setenv(SIM_ENV_MAX_UD_QPS, "7", 1);
	setenv(SIM_ENV_NAMESPACES, "off", 1);
	setenv(SIM_ENV_STATS_FILE, "/tmp/x-%p", 1);
	setenv(SIM_ENV_SINGLE_COPY, "off", 1);
	setenv(SIM_ENV_ASYNC_MODE, "on", 1);
	assert_int_equal(sim_config_load(), 0);
	assert_true(sim_global.single_copy_off);
	assert_true(sim_global.async_mode);
	assert_int_equal(sim_devs[0].cfg.mtu, IBV_MTU_4096);
	assert_int_equal(sim_devs[0].cfg.max_ud_qps, 7);
	assert_false(sim_devs[0].cfg.namespaces);
	assert_true(sim_global.stats_at_exit);
	assert_string_equal(sim_global.stats_file, "/tmp/x-%p");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mac_per_process),
		cmocka_unit_test(test_node_guid),
		cmocka_unit_test(test_gids),
		cmocka_unit_test(test_mac_from_gid),
		cmocka_unit_test(test_parsers),
		cmocka_unit_test_setup(test_defaults, clean_env),
		cmocka_unit_test_setup(test_hw13_defaults, clean_env),
		cmocka_unit_test_setup(test_hw14, clean_env),
		cmocka_unit_test_setup(test_conflicts, clean_env),
		cmocka_unit_test_setup(test_bad_values, clean_env),
		cmocka_unit_test_setup(test_explicit_mac_counts_up, clean_env),
		cmocka_unit_test_setup(test_ipv4_choices, clean_env),
		cmocka_unit_test_setup(test_ten_adapters, clean_env),
		cmocka_unit_test_setup(test_other_values, clean_env),
	};
	int ret;

	snprintf(rundir, sizeof(rundir), "/tmp/pvrdma-test-config-%d/run",
		 (int)getpid());
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(rundir);
	*strrchr(rundir, '/') = '\0';
	rmdir(rundir);
	return ret;
}
