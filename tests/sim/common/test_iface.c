// SPDX-License-Identifier: BSD-2-Clause
/* The IB MTU a port takes from its interface's MTU, at the edges where a
 * RoCE packet of the next size up starts to fit, and the loopback's MTU
 * read from the kernel. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "common.h"

static void test_ethernet_and_jumbo_frames(void **state)
{
	assert_int_equal(sim_ib_mtu_of_iface(1500), IBV_MTU_1024);
	assert_int_equal(sim_ib_mtu_of_iface(9000), IBV_MTU_4096);
	assert_int_equal(sim_ib_mtu_of_iface(65536), IBV_MTU_4096);
}

/* Each size needs its payload and the 80 bytes of headers. */
static void test_edges(void **state)
{
	static const struct { int bytes; enum ibv_mtu mtu; } edge[] = {
		{ 512 + 80, IBV_MTU_512 }, { 1024 + 80, IBV_MTU_1024 },
		{ 2048 + 80, IBV_MTU_2048 }, { 4096 + 80, IBV_MTU_4096 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		assert_int_equal(sim_ib_mtu_of_iface(edge[i].bytes),
				 edge[i].mtu);
		assert_int_equal(sim_ib_mtu_of_iface(edge[i].bytes - 1),
				 edge[i].mtu - 1);
	}
}

/* 256 is the least, however small the interface's MTU. */
static void test_floor(void **state)
{
	assert_int_equal(sim_ib_mtu_of_iface(576), IBV_MTU_256);
	assert_int_equal(sim_ib_mtu_of_iface(68), IBV_MTU_256);
	assert_int_equal(sim_ib_mtu_of_iface(0), IBV_MTU_256);
}

static void test_iface_mtu(void **state)
{
	assert_true(sim_iface_mtu("lo") >= 68);
	assert_int_equal(sim_iface_mtu("no-such-if0"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ethernet_and_jumbo_frames),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_floor),
		cmocka_unit_test(test_iface_mtu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
